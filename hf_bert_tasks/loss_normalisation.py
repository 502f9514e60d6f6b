"""Alias: the fine-tuning loss over the global batch now lives in :mod:`hf_bert_tasks.batching` (the recipe's
``Trainer``, ``compute_loss_func=global_batch_loss``)."""

from .batching import (  # noqa: F401
    LOSS_UNITS,
    TARGET_KEYS,
    UNITS,
    GlobalLossTrainer,
    count_loss_terms,
    cross_entropy_sum,
    gather_step_batches,
    global_batch_loss,
    loss_unit,
)
