"""Task registry: one dict, filled by the task modules themselves when they are imported.

Each task family lives in its own module (``glue.py``, ``squad.py``, ``swag.py``, ``conll2003.py``) and calls
:func:`register_task` for every task it defines, like peft's ``register_peft_method``. The modules are imported
below, so ``get_task``/``list_tasks`` always see every task. The registry lives in :mod:`.registry`, which task
modules import (``from .registry import register_task``), never this package: no import cycle.
"""

from __future__ import annotations

from .base import PROBLEM_TYPES, MetricSpec, PaperDefaults, Task
from .registry import TASK_REGISTRY, UnknownTaskError, get_task, list_tasks, register_task

# Task families register themselves on import (order = order shown by `hf-bert-tasks tasks`).
# isort: off
from . import glue  # noqa: F401 - after the registry: each family registers itself
from . import swag, conll2003  # noqa: F401
from . import squad  # noqa: F401
# isort: on

__all__ = ["TASK_REGISTRY", "PROBLEM_TYPES", "MetricSpec", "PaperDefaults", "Task", "UnknownTaskError", "get_task",
           "list_tasks", "register_task"]
