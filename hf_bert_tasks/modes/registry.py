"""Alias: the training-mode registry now lives in :mod:`hf_bert_tasks.modes`."""

from . import (  # noqa: F401
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
