"""Task registry: one dict, filled by the task modules themselves when they are imported.

Each task family lives in its own module (``glue.py``, later ``squad.py``, ``swag.py``, ``conll2003.py``) and calls
:func:`register_task` for every task it defines, like peft's ``register_peft_method``. The modules are imported
below, so ``get_task``/``list_tasks`` always see every task.
"""

from __future__ import annotations

import re

from .base import PROBLEM_TYPES, PaperDefaults, Task

#: The only central state: task name -> Task instance.
TASK_REGISTRY: dict[str, Task] = {}

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def register_task(task: Task) -> Task:
    """Add ``task`` to the registry and return it.

    Raises:
        ValueError: if the name is not lower-case ``[a-z][a-z0-9_]*``, is already registered, the problem type is
            unknown, or the primary metric is not among ``metric_names``.
    """
    if not _NAME_RE.match(task.name):
        raise ValueError(f"task name {task.name!r} must match {_NAME_RE.pattern}")
    if task.name in TASK_REGISTRY:
        raise ValueError(f"task {task.name!r} is already registered")
    if task.problem_type not in PROBLEM_TYPES:
        raise ValueError(f"task {task.name!r}: problem_type {task.problem_type!r} is not one of {PROBLEM_TYPES}")
    if task.primary_metric not in task.metric_names:
        raise ValueError(
            f"task {task.name!r}: primary_metric {task.primary_metric!r} is not in metric_names {task.metric_names}"
        )
    TASK_REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task:
    """Return the registered task called ``name`` (case-insensitive; ``-`` is read as ``_``, so ``sst-2`` works).

    Raises:
        KeyError: for an unknown name; the message lists the known tasks.
    """
    key = name.strip().lower().replace("-", "")
    for candidate in (name.strip().lower().replace("-", "_"), key):
        if candidate in TASK_REGISTRY:
            return TASK_REGISTRY[candidate]
    raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(list_tasks())}")


def list_tasks() -> list[str]:
    """Names of all registered tasks, in registration order."""
    return list(TASK_REGISTRY)


# Task families register themselves on import (order = order shown by `hf-bert-tasks tasks`).
from . import glue  # noqa: E402,F401
from . import swag, conll2003  # noqa: E402,F401
from . import squad  # noqa: E402,F401

__all__ = ["TASK_REGISTRY", "PROBLEM_TYPES", "PaperDefaults", "Task", "get_task", "list_tasks", "register_task"]
