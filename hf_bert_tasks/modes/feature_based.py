"""The flags of ``--mode feature_based`` (paper §5.3, Table 7: a frozen encoder, only a head trained on its
features). The mode itself (:class:`hf_bert_tasks.feature_based.FeatureBasedMode`) is imported only when used.

The model is :class:`~hf_bert_tasks.feature_based.BertFeatureBasedModel` (frozen encoder + layer strategy + head);
with ``--feature_cache`` (default) the training split (and the in-training eval split) are replaced by their cached
encoder features before ``Trainer`` is built (:func:`hf_bert_tasks.feature_based.prepare_feature_cache`). Default
learning rate 1e-3: a randomly initialised head on frozen features needs a much larger step than the paper's
fine-tuning grid {5e-5 … 2e-5}; an explicit ``--learning_rate`` wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

NAME = "feature_based"


@dataclass
class FeatureBasedArguments:
    """The feature-based mode's flags (the head's and the cache's); a base class of
    :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments`."""

    #: (flag, lowest, upper bound (excluded) or None, what is expected), checked by ``FinetuneTrainingArguments``
    bounds = (("head_hidden_size", 1, None, "a positive integer"),)

    feature_strategy: str = field(
        default="concat_last_four",
        metadata={"help": "feature_based: which hidden_states feed the head (paper Table 7).",
                  "choices": ["embeddings", "second_to_last", "last", "sum_last_four", "concat_last_four", "sum_all",
                              "scalar_mix"]},
    )
    head: str = field(
        default="auto",
        metadata={"help": "feature_based head: auto (BiLSTM for tokens, linear otherwise), linear, mlp, bilstm.",
                  "choices": ["auto", "linear", "mlp", "bilstm"]},
    )
    pooling: str = field(default="cls", metadata={"help": "feature_based sentence head input: [CLS] or mean.",
                                                 "choices": ["cls", "mean"]})
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
        metadata={"help": "feature_based: cache the strategy's layers or all (shared by strategies).",
                  "choices": ["strategy", "all"]},
    )
