"""hf_bert_tasks: the BERT paper (Devlin et al., 2018) runnable on today's Hugging Face stack.

Public API:
    get_task(name), list_tasks(), register_task(task), Task — the task registry (see ``hf_bert_tasks.tasks``).
    create_pretraining_examples, DataCollatorForBertPretraining — BERT pretraining data (MLM + NSP, whole-word masking).
"""

__version__ = "0.1.0"

from .tasks import PaperDefaults, Task, get_task, list_tasks, register_task

__all__ = ["__version__", "PaperDefaults", "Task", "get_task", "list_tasks", "register_task"]

# Pretraining (lazy: importing hf_bert_tasks stays cheap; these pull in torch/transformers on first use).
_LAZY = {"create_pretraining_examples": "pretraining_data", "DataCollatorForBertPretraining": "collators"}
__all__ += list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
