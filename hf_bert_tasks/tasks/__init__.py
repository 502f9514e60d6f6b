"""The tasks: each family's registering module (``glue/tasks.py``, ``swag/``, ``conll2003/``, ``squad/tasks.py``)
calls :func:`register_task` (in :mod:`.base`, never this package: no import cycle) for every task it defines, like
peft's ``register_peft_method``; importing them here makes ``get_task``/``list_tasks`` see every task. An installed
package adds its own family through the entry point group ``hf_bert_tasks.tasks`` (a module that registers tasks when
imported: :func:`hf_bert_tasks.load_entry_points`), loaded by the package's ``__init__`` once its public names exist."""

from __future__ import annotations

from .base import (
    TASK_REGISTRY,
    MetricSpec,
    PaperDefaults,
    Task,
    UnknownTaskError,
    get_task,
    list_tasks,
    register_task,
)
from .problems import PROBLEM_TYPES, ProblemType, get_problem_type, register_problem_type

# isort: off
# registration order = the order `hf-bert-tasks tasks` shows
from .glue import tasks as glue_tasks  # noqa: F401
from . import swag, conll2003  # noqa: F401
from .squad import tasks as squad_tasks  # noqa: F401
# isort: on

__all__ = [
    "PROBLEM_TYPES",
    "TASK_REGISTRY",
    "MetricSpec",
    "PaperDefaults",
    "ProblemType",
    "Task",
    "UnknownTaskError",
    "get_problem_type",
    "get_task",
    "list_tasks",
    "register_problem_type",
    "register_task",
]
