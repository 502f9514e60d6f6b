"""Training modes (``--mode``): a registry of :class:`~hf_bert_tasks.modes.base.TrainingMode` objects, one module per
mode, each registering itself like peft's ``register_peft_method``.

* :mod:`.finetune` — every weight trained, the paper's defaults (§3.2, §4, Appendix A.3); the default mode;
* :mod:`.lora` — peft LoRA adapters on the frozen encoder + the task head;
* :mod:`.feature_based` — a frozen encoder, a Table 7 layer strategy and a trained head (§5.3).

A mode owns its flags (a dataclass that :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments` inherits),
``build_model``, its default hyperparameters, its model-card text, what happens after training (LoRA merges its
adapter) and what ``compare`` shows for it. Nothing else in the package branches on a mode's name. A new mode is one
module defining a :class:`TrainingMode` subclass and calling :func:`register_training_mode`, plus one import line
below (flags of its own: add its arguments dataclass to ``FinetuneTrainingArguments``' bases).
"""

from __future__ import annotations

# Registration order is the order of `compare --modes` and of `--mode`'s choices: each module registers its mode.
# isort: off
from . import finetune, lora, feature_based  # noqa: F401
# isort: on
from .base import TrainingMode
from .registry import (
    DEFAULT_TRAINING_MODE,
    TRAINING_MODES,
    arm_from_label,
    get_training_mode,
    infer_training_mode,
    list_training_modes,
    mode_of,
    register_training_mode,
    unregister_training_mode,
)

__all__ = [
    "DEFAULT_TRAINING_MODE",
    "TRAINING_MODES",
    "TrainingMode",
    "arm_from_label",
    "get_training_mode",
    "infer_training_mode",
    "list_training_modes",
    "mode_of",
    "register_training_mode",
    "unregister_training_mode",
]
