"""Problem types: what every consumer needs to know about a kind of task, declared once by the task family that
introduces it (``glue/`` sentence classification and regression, ``swag/`` multiple choice, ``conll2003/`` token
classification, ``squad/`` question answering) with :func:`register_problem_type`, as peft registers a method. A new
problem type is its family folder: the fine-tune ``Trainer``'s loss unit and the LoRA mode's peft task type are read
from here (:func:`get_problem_type`), not from tables in their modules. Light: no torch, transformers or peft."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
#: ``--train_sampling_strategy`` values (``TrainingArguments``'); ``batch_rebalance`` is the package's own
SAMPLERS = ("group_by_length", "random", "sequential", "batch_rebalance")


@dataclass(frozen=True)
class ProblemType:
    """One kind of task.

    Attributes:
        name: ``Task.problem_type`` (``[a-z][a-z0-9_]*``), also ``config.problem_type``-like names of transformers.
        loss_unit: what one loss term is, for the loss over the global batch (docs/design.md, "finetune/trainer.py:
            Loss normalisation"): ``"labels"`` (a mean over target labels: class
            labels, token labels, the gold ending) or ``"examples"`` (a mean over examples: MSE, SQuAD's start + end).
        peft_task_type: peft's ``TaskType`` name for LoRA (``"SEQ_CLS"``...); ``None`` where peft has none (the task
            head is then trained through ``modules_to_save`` only).
        sentence_level: one prediction per example from the pooled ``[CLS]`` (classification, regression), as
            opposed to per token, per span or per choice.
        train_sampling_strategy: the training sampler without ``--train_sampling_strategy`` / ``--group_by_length``:
            ``"group_by_length"`` (less padding: multiple choice, level with run_swag.py in 0.7x the time,
            docs/parity.md) or ``"random"`` (the reference examples' batches: GLUE and token classification, where
            length-grouped batches cost accuracy against run_glue.py and run_ner.py, docs/parity.md and
            docs/results.md; SQuAD, against run_qa.py, docs/parity-squad.md). Chosen per problem type by accuracy
            against the family's reference example.
    """

    name: str
    loss_unit: str
    peft_task_type: str | None = None
    sentence_level: bool = False
    train_sampling_strategy: str = "group_by_length"

    def __post_init__(self):
        if not _NAME_RE.match(self.name):
            raise ValueError(f"problem type name {self.name!r} must match {_NAME_RE.pattern}")
        if self.loss_unit not in ("labels", "examples"):
            raise ValueError(
                f"problem type {self.name!r}: loss_unit {self.loss_unit!r}; expected 'labels' or 'examples'"
            )
        if self.train_sampling_strategy not in SAMPLERS:
            raise ValueError(
                f"problem type {self.name!r}: train_sampling_strategy {self.train_sampling_strategy!r}; "
                f"expected one of {list(SAMPLERS)}"
            )


#: name -> :class:`ProblemType`, in registration order (filled by the task families when they are imported)
PROBLEM_TYPES: dict[str, ProblemType] = {}


def register_problem_type(problem: ProblemType) -> ProblemType:
    """Add ``problem`` to :data:`PROBLEM_TYPES` and return it; registering an equal one again is a no-op.
    ``ValueError`` for a different problem type under a name already registered."""
    known = PROBLEM_TYPES.setdefault(problem.name, problem)
    if known != problem:
        raise ValueError(f"problem type {problem.name!r} is already registered as {known}")
    return problem


def get_problem_type(name: str) -> ProblemType:
    """The registered problem type called ``name``; ``ValueError`` listing the registered ones for another name."""
    if name not in PROBLEM_TYPES:
        raise ValueError(f"unknown problem type {name!r}; expected one of {list(PROBLEM_TYPES)}")
    return PROBLEM_TYPES[name]
