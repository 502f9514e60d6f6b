"""Feature-based mode (paper §5.3, Table 7; ELMo-style, as the paper's CoNLL-2003 NER): a frozen BERT encoder,
chosen layers, and a small trained head (the paper's: a two-layer BiLSTM). By role: :mod:`.strategies` (Table 7 layer
strategies, ELMo's scalar mix), :mod:`.heads` (task heads by problem type), :mod:`.modeling`
(:class:`BertFeatureBasedModel`, ``Auto``-registered) and :mod:`.cache` (the feature cache ``Trainer`` trains the
head on). ``Trainer`` trains and saves the whole model, so every checkpoint is what ``pipeline()`` loads.
"""

import logging

import transformers

from ... import paper
from .. import TrainingMode, register_training_mode
from .arguments import FeatureBasedArguments
from .cache import (
    FeatureCacheCollator,
    build_feature_cache,
    data_fingerprint,
    encoder_fingerprint,
    find_feature_cache,
    prepare_feature_cache,
)
from .heads import (
    HEAD_REGISTRY,
    HEADS,
    POOLINGS,
    ChoiceHead,
    FeatureHead,
    SequenceHead,
    SpanHead,
    TokenBiLSTMHead,
    TokenLinearHead,
    head_class,
    register_head,
)
from .modeling import AUTO_CLASSES, BertFeatureBasedConfig, BertFeatureBasedModel, build_feature_based_model
from .strategies import STRATEGIES, TABLE7_DEV_F1, LayerCombiner, ScalarMix, Strategy, get_strategy

# Table 7's numbers for Strategy.paper_f1 (strategies.py is also remote code: it imports nothing from the package)
TABLE7_DEV_F1.update(paper.TABLE7_FEATURE_BASED_DEV_F1)
# the config and model registered with AutoConfig / AutoModel and the task Auto classes (idempotent); here, not in
# modeling.py, whose copy in a saved folder (remote code) must not re-register the package's model type
transformers.AutoConfig.register(BertFeatureBasedConfig.model_type, BertFeatureBasedConfig, exist_ok=True)
for _auto in ("AutoModel", *dict.fromkeys(AUTO_CLASSES.values())):
    getattr(transformers, _auto).register(BertFeatureBasedConfig, BertFeatureBasedModel, exist_ok=True)

#: Table 7's fine-tuning rows (CoNLL-2003 dev F1, x100); kept here for importers, the numbers live in ``paper``.
PAPER_FINETUNE_F1 = paper.TABLE7_FINETUNE_DEV_F1


class FeatureBasedMode(TrainingMode):
    """A frozen encoder, a Table 7 layer strategy and a trained head (:mod:`hf_bert_tasks.modes.feature_based.mode`)."""

    name = "feature_based"
    help = "frozen encoder, head only (paper §5.3)"
    card_text = (
        "Training mode: **feature-based** — the encoder was frozen and only the head was trained on its "
        "features (paper §5.3, ELMo-style)."
    )
    arguments_class = FeatureBasedArguments
    default_learning_rate = 1e-3
    report_group = "Feature-based approach (frozen encoder)"
    colour = "tab:orange"

    def check_arguments(self, training_args, selected: bool = True) -> None:
        """Names and sizes are checked from the flags' declarations; ``--padding_free`` is refused (``ValueError``:
        the frozen encoder's cached features are per padded row); a note on ``--gradient_checkpointing``."""
        if getattr(training_args, "padding_free", False):
            raise ValueError(
                "--padding_free: not with --mode feature_based (its cached encoder features are padded rows); use --mode finetune or lora"
            )
        if training_args.gradient_checkpointing:  # a frozen encoder keeps no activations for backward
            logging.getLogger(__name__).info("--gradient_checkpointing has no effect on a frozen encoder")

    def build_model(self, task, model_args, training_args):
        """A :class:`~hf_bert_tasks.modes.feature_based.mode.BertFeatureBasedModel` around ``model_name_or_path``'s encoder."""
        return build_feature_based_model(task, model_args, training_args)

    def prepare_training(self, model, train_dataset, eval_dataset, data_collator, data_args, training_args):
        """With ``--feature_cache`` and a training split: the frozen encoder runs once per split and ``Trainer``
        trains the head on the cached features."""
        if not getattr(training_args, "feature_cache", True) or train_dataset is None:
            return train_dataset, eval_dataset, data_collator, {}
        return prepare_feature_cache(model, train_dataset, eval_dataset, data_collator, data_args, training_args)

    def variant(self, training_args) -> str | None:
        """The layer strategy (``--feature_strategy``)."""
        return getattr(training_args, "feature_strategy", None)

    def describe(self, variant: str | None) -> str:
        return self.card_text + (f" Feature strategy: `{variant}`." if variant else "")

    def compare_arms(self, strategies: list[str]) -> list[dict]:
        """One configuration per layer strategy, labelled ``feature_based:<strategy>``; ``ValueError`` for an unknown
        strategy (lists the known ones)."""
        return [{"label": f"{self.name}:{s}", "mode": self.name, "strategy": get_strategy(s).name} for s in strategies]

    def row_name(self, config: dict) -> str:
        return config["strategy"]

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """Table 7's row for the strategy (CoNLL-2003 dev F1, BERT-BASE); none for other tasks or ``scalar_mix``."""
        value = paper.TABLE7_FEATURE_BASED_DEV_F1.get(config["strategy"]) if task.name == paper.TABLE7_TASK else None
        return value, paper.TABLE7_SOURCE if value is not None else ""


register_training_mode(FeatureBasedMode())


__all__ = [
    "AUTO_CLASSES",
    "HEADS",
    "HEAD_REGISTRY",
    "PAPER_FINETUNE_F1",
    "POOLINGS",
    "STRATEGIES",
    "BertFeatureBasedConfig",
    "BertFeatureBasedModel",
    "ChoiceHead",
    "FeatureBasedMode",
    "FeatureCacheCollator",
    "FeatureHead",
    "LayerCombiner",
    "ScalarMix",
    "SequenceHead",
    "SpanHead",
    "Strategy",
    "TokenBiLSTMHead",
    "TokenLinearHead",
    "build_feature_based_model",
    "build_feature_cache",
    "data_fingerprint",
    "encoder_fingerprint",
    "find_feature_cache",
    "get_strategy",
    "head_class",
    "prepare_feature_cache",
    "register_head",
]
