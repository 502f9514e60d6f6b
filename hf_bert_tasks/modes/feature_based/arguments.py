"""The flags of ``--mode feature_based`` (paper §5.3, Table 7: a frozen encoder, only a head trained on its
features); the mode, :class:`hf_bert_tasks.modes.feature_based.mode.FeatureBasedMode`, is imported only when used. Its default
learning rate is 1e-3 (a random head on frozen features needs a larger step than the fine-tuning grid)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

NAME = "feature_based"


@dataclass
class FeatureBasedArguments:
    """The feature-based mode's flags (the head's and the cache's), registered with the mode
    (``modes._BUILTIN_FLAGS``). Checked where declared (``__post_init__``, as peft's configs): ``ValueError``
    ``--<flag> <value>: expected ...`` for a value outside a field's ``choices`` or a ``head_hidden_size`` below 1
    (argparse checks the choices of a command line; a script's or ``compare``'s dict is checked here)."""

    feature_strategy: str = field(
        default="concat_last_four",
        metadata={
            "help": "feature_based: which hidden_states feed the head (paper Table 7).",
            "choices": [
                "embeddings",
                "second_to_last",
                "last",
                "sum_last_four",
                "concat_last_four",
                "sum_all",
                "scalar_mix",
            ],
        },
    )
    head: str = field(
        default="auto",
        metadata={
            "help": "feature_based head: auto (BiLSTM for tokens, linear otherwise), linear, mlp, bilstm.",
            "choices": ["auto", "linear", "mlp", "bilstm"],
        },
    )
    pooling: str = field(
        default="cls",
        metadata={"help": "feature_based sentence head input: [CLS] or mean.", "choices": ["cls", "mean"]},
    )
    head_hidden_size: int = field(
        default=768, metadata={"help": "feature_based: BiLSTM units per direction / MLP width."}
    )
    feature_cache: bool = field(
        default=True, metadata={"help": "feature_based: run the frozen encoder once and train the head from disk."}
    )
    feature_cache_dir: str | None = field(
        default=None, metadata={"help": "feature_based: cache folder (default: <output_dir>/../feature_cache)."}
    )
    feature_cache_layers: str = field(
        default="strategy",
        metadata={
            "help": "feature_based: cache the strategy's layers or all (shared by strategies).",
            "choices": ["strategy", "all"],
        },
    )

    def __post_init__(self):
        for f in fields(FeatureBasedArguments):
            choices, value = f.metadata.get("choices"), getattr(self, f.name)
            if choices is not None and value is not None and value not in choices:
                raise ValueError(f"--{f.name} {value!r}: expected one of {list(choices)}")
        if self.head_hidden_size < 1:
            raise ValueError(f"--head_hidden_size {self.head_hidden_size}: expected a positive integer")
        if hasattr(super(), "__post_init__"):  # the recipe's arguments class (finetune_arguments_class) goes on
            super().__post_init__()
