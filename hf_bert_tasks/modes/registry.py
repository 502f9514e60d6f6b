"""Alias: the training-mode registry now lives in :mod:`hf_bert_tasks.modes` (every name of its ``__all__``)."""

from . import *
