"""hf_bert_tasks: the BERT paper (Devlin et al., 2018) runnable on today's Hugging Face stack.

Public API:
    get_task(name), list_tasks(), register_task(task), Task — the task registry (see ``hf_bert_tasks.tasks``).
"""

__version__ = "0.1.0"

from .tasks import PaperDefaults, Task, get_task, list_tasks, register_task

__all__ = ["__version__", "PaperDefaults", "Task", "get_task", "list_tasks", "register_task"]
