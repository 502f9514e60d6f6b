"""Alias: the training-mode contract now lives in :mod:`hf_bert_tasks.modes`."""

from . import TrainingMode  # noqa: F401
