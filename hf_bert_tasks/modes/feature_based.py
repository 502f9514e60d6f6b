"""``--mode feature_based`` (paper §5.3, Table 7): the encoder is frozen and only a head is trained on its features.

The model is :class:`~hf_bert_tasks.feature_based.BertFeatureBasedModel` (frozen encoder + layer strategy + head);
with ``--feature_cache`` (default) the training split (and the in-training eval split) are replaced by their cached
encoder features before ``Trainer`` is built (:func:`hf_bert_tasks.feature_based.prepare_feature_cache`). Default
learning rate 1e-3: a randomly initialised head on frozen features needs a much larger step than the paper's
fine-tuning grid {5e-5 … 2e-5}; an explicit ``--learning_rate`` wins.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from .. import paper
from . import TrainingMode, register_training_mode

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


class FeatureBasedMode(TrainingMode):
    """A frozen encoder, a Table 7 layer strategy and a trained head (:mod:`hf_bert_tasks.feature_based`)."""

    name = NAME
    help = "frozen encoder, head only (paper §5.3)"
    card_text = ("Training mode: **feature-based** — the encoder was frozen and only the head was trained on its "
                 "features (paper §5.3, ELMo-style).")
    arguments_class = FeatureBasedArguments
    default_learning_rate = 1e-3
    report_group = "Feature-based approach (frozen encoder)"
    colour = "tab:orange"

    def check_arguments(self, training_args, selected: bool = True) -> None:
        """Names and sizes are checked from the flags' declarations; only a note on ``--gradient_checkpointing``."""
        if training_args.gradient_checkpointing:
            # Nothing in the frozen encoder keeps activations for backward; checkpointing it would only cost time.
            logging.getLogger(__name__).info("--gradient_checkpointing has no effect on a frozen encoder")

    def build_model(self, task, model_args, training_args):
        """A :class:`~hf_bert_tasks.feature_based.BertFeatureBasedModel` around ``model_name_or_path``'s encoder."""
        from ..feature_based import build_feature_based_model

        return build_feature_based_model(task, model_args, training_args)

    def prepare_training(self, model, train_dataset, eval_dataset, data_collator, data_args, training_args):
        """With ``--feature_cache`` and a training split: the frozen encoder runs once per split and ``Trainer``
        trains the head on the cached features."""
        if not getattr(training_args, "feature_cache", True) or train_dataset is None:
            return train_dataset, eval_dataset, data_collator, {}
        from ..feature_based import prepare_feature_cache

        return prepare_feature_cache(model, train_dataset, eval_dataset, data_collator, data_args, training_args)

    def variant(self, training_args) -> str | None:
        """The layer strategy (``--feature_strategy``)."""
        return getattr(training_args, "feature_strategy", None)

    def describe(self, variant: str | None) -> str:
        return self.card_text + (f" Feature strategy: `{variant}`." if variant else "")

    def recognizes(self, output_dir: str, config: dict) -> dict | None:
        """A saved ``BertFeatureBasedModel`` (``model_type`` ``bert_feature_based`` in ``config.json``)."""
        if config.get("model_type") == "bert_feature_based":
            return {"mode": self.name, "strategy": config.get("feature_strategy")}
        return None

    def compare_arms(self, strategies: list[str]) -> list[dict]:
        """One configuration per layer strategy, labelled ``feature_based:<strategy>``.

        Raises:
            ValueError: an unknown strategy (lists the known ones).
        """
        from ..feature_based import get_strategy

        arms = []
        for s in strategies:
            get_strategy(s)
            arms.append({"label": f"{self.name}:{s}", "mode": self.name, "strategy": s})
        return arms

    def row_name(self, config: dict) -> str:
        return config["strategy"]

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """Table 7's row for the strategy (CoNLL-2003 dev F1, BERT-BASE); none for other tasks or ``scalar_mix``."""
        if task.name != paper.TABLE7_TASK:
            return None, ""
        value = paper.TABLE7_FEATURE_BASED_DEV_F1.get(config["strategy"])
        return value, paper.TABLE7_SOURCE if value is not None else ""


register_training_mode(FeatureBasedMode())
