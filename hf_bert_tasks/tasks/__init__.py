"""The tasks: each family's registering module (``glue_tasks.py``, ``swag.py``, ``conll2003.py``, ``squad_tasks.py``)
calls :func:`register_task` (in :mod:`.registry`, never this package: no import cycle) for every task it defines, like
peft's ``register_peft_method``; importing them here makes ``get_task``/``list_tasks`` see every task."""

from __future__ import annotations

from .base import PROBLEM_TYPES, MetricSpec, PaperDefaults, Task
from .registry import TASK_REGISTRY, UnknownTaskError, get_task, list_tasks, register_task

# isort: off
# registration order = the order `hf-bert-tasks tasks` shows
from . import glue_tasks, swag, conll2003, squad_tasks  # noqa: F401
# isort: on

__all__ = [
    "PROBLEM_TYPES",
    "TASK_REGISTRY",
    "MetricSpec",
    "PaperDefaults",
    "Task",
    "UnknownTaskError",
    "get_task",
    "list_tasks",
    "register_task",
]
