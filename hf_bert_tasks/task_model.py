"""Alias: the task model of full fine-tuning now lives in :mod:`hf_bert_tasks.modes`."""

from .modes import declare_batch_mean_loss, load_task_model, reinit_top_layers  # noqa: F401
