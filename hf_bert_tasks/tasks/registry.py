"""The task registry: one dict, :func:`register_task`, :func:`get_task`, :func:`list_tasks`. Apart from the package
``__init__`` so that a task module imports it without importing the package that imports the task (no cycle)."""

from __future__ import annotations

import difflib
import re

from .base import PROBLEM_TYPES, Task

#: The only central state: task name -> Task instance.
TASK_REGISTRY: dict[str, Task] = {}

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class UnknownTaskError(KeyError, ValueError):
    """An unknown task name. A ``KeyError`` (registry lookup) and a ``ValueError`` (bad input: the CLI's error
    boundary prints it as one ``error:`` line); ``str()`` is the message itself, not its ``repr``."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def register_task(task: Task) -> Task:
    """Add ``task`` to the registry and return it.

    Raises:
        ValueError: a name not ``[a-z][a-z0-9_]*`` or already registered, an unknown problem type, a primary metric
            not in ``metric_names``, a metric key declared twice, or a ``metric_names`` entry not declared as a metric.
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
    keys = [m.key for m in task.metrics]
    if len(set(keys)) != len(keys):
        raise ValueError(f"task {task.name!r}: metric keys declared twice in {keys}")
    undeclared = [m for m in task.metric_names if task.metric_spec(m) is None or not task.metric_spec(m).is_metric]
    if undeclared:
        raise ValueError(
            f"task {task.name!r}: metric_names {undeclared} have no MetricSpec with is_metric=True in "
            "`metrics`; declare each (key, Hub id, display name, scale, direction)"
        )
    TASK_REGISTRY[task.name] = task
    return task


def get_task(name: str) -> Task:
    """The registered task called ``name`` (case-insensitive; ``-`` is read as ``_``, so ``sst-2`` works).

    Raises:
        UnknownTaskError: an unknown name; the message suggests the closest names (``difflib``, as argparse's "did you
            mean") and lists the known tasks.
    """
    lowered = name.strip().lower()
    key = lowered.replace("-", "_")
    if found := next((TASK_REGISTRY[c] for c in (key, lowered.replace("-", "")) if c in TASK_REGISTRY), None):
        return found
    close = difflib.get_close_matches(key, list_tasks(), n=2, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    raise UnknownTaskError(f"unknown task {name!r}{hint}; known tasks: {', '.join(list_tasks())}")


def list_tasks() -> list[str]:
    """Names of all registered tasks, in registration order."""
    return list(TASK_REGISTRY)
