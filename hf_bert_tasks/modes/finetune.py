"""Alias: ``--mode finetune`` and the task model of full fine-tuning live in :mod:`hf_bert_tasks.modes`."""

from . import FinetuneMode, declare_batch_mean_loss, load_task_model, reinit_top_layers  # noqa: F401

NAME = "finetune"
