"""Problem types: what every consumer needs to know about a kind of task, declared once by the task family that
introduces it (``glue/`` sentence classification and regression, ``swag/`` multiple choice, ``conll2003/`` token
classification, ``squad/`` question answering) with :func:`register_problem_type`, as peft registers a method. A new
problem type is its family folder: the fine-tune ``Trainer``'s loss unit, the LoRA mode's peft task type, the
sampler default, the model card's usage code, the flags its tasks refuse, whether its evaluation has a loss, the
trivial baseline's rule, the model's Auto class, the card's Hub task and pipeline tag and
:func:`hf_bert_tasks.hub.push.pipeline_for`'s pipeline and options are read from here (:func:`get_problem_type`,
``Task.problem``), not from tables in their modules. Light: no torch, transformers or peft."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")
#: the card's "How to use" code of a problem type that declares none: load the model and tokenizer
GENERIC_CARD_USAGE = """from transformers import AutoTokenizer, {{ task.model_head }}

model = {{ task.model_head }}.from_pretrained("{{ target }}"{{ remote }})
tokenizer = AutoTokenizer.from_pretrained("{{ target }}"{{ remote }})"""
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
        model_head: the ``transformers`` Auto class of the fine-tuned model (``"AutoModelForSequenceClassification"``;
            ``Task.model_class``); its ``For...`` suffix also maps a saved model's architecture back to its problem
            type (:func:`hf_bert_tasks.hub.push.problem_type_of`; a problem type sharing a head with another is told
            apart only by ``config.problem_type``, which transformers limits to its own names, or by a feature-based
            model's ``task_problem_type``).
        hub_task: the Hub's task category of its models (``"text-classification"``...): ``Task.pipeline_tag``, a
            card tag and the ``task_type`` of its ``model-index`` results.
        pipeline: the ``transformers.pipeline`` task that serves its models in transformers 5: the card's
            ``pipeline_tag`` and :func:`~hf_bert_tasks.hub.push.pipeline_for`'s. Usually :attr:`hub_task`; the
            package's own where transformers 5 has none (question answering: ``"extractive-question-answering"``,
            registered by :attr:`pipeline_module`); ``None`` where no pipeline serves it (multiple choice: the card
            names no tag). ``tests/test_problem_types.py`` checks each against the installed transformers.
        pipeline_module: the module whose import registers :attr:`pipeline` with transformers (``None``: transformers'
            own pipeline).
        pipeline_options: ``(keyword, value)`` pairs :func:`~hf_bert_tasks.hub.push.pipeline_for` passes to
            ``pipeline()`` (``truncation``; regression's ``function_to_apply="none"``: the raw score; token
            classification's ``aggregation_strategy="first"``, paper §5.3).
        refused_flags: ``(TrainingArguments field, the line a user sees)`` pairs: a truthy value of the field is
            refused for its tasks once the task is known, before any data is loaded
            (:func:`hf_bert_tasks.finetune.config.finalize_arguments`; the line may use ``{value}`` and ``{task}``):
            label smoothing on regression, ``--prediction_loss_only`` on question answering.
        eval_loss: whether its evaluation reports a loss (``eval_loss``, a valid ``--metric_for_best_model``); not
            for question answering, whose evaluation windows carry no answer positions.
        baseline: ``(task, raw) -> {metric: score}``: the scores of the best constant answer on a labelled raw split
            (a ``datasets.Dataset`` in the task's columns; ``{}`` when it has no labels), on the task's own scale:
            the trivial baseline beside every result (:func:`hf_bert_tasks.tasks.metrics.constant_scores`);
            ``None``: no baseline is reported.
        card_usage: the model card's "How to use" code for its models, a Jinja template rendered with ``target`` (the
            repo id or folder), ``remote`` (``', trust_remote_code=True'`` for a frozen-feature model with its own
            code, else ``''``) and ``task`` (:func:`hf_bert_tasks.finetune.card.build_finetune_card`); it must run as
            written (``tests/test_serving.py`` runs it for every built-in family). Default:
            :data:`GENERIC_CARD_USAGE` (loads the model head and tokenizer, prints nothing).
        label_text: what a user file's label column holds, for ``hf-bert-tasks tasks`` (``Task.label_description``);
            ``{labels}``: the task's label names, ``{last_id}``: its last label id.
        baseline_answer: the baseline's constant answer in words, for the warning of a run near it
            (:func:`hf_bert_tasks.tasks.metrics.near_baseline`): ``"the most frequent position"`` (multiple choice).
        chance_over: what a uniform guess spreads over, ``"classes"`` or ``"choices"``, where flat logits have the
            known loss ``ln k`` (:func:`hf_bert_tasks.tasks.metrics.chance_loss`: single-label classification,
            multiple choice); ``None`` for the others (regression, token classification, question answering).

    Raises:
        ValueError: a name not ``[a-z][a-z0-9_]*``, a ``loss_unit``, ``train_sampling_strategy``, ``model_head`` or
            ``chance_over`` outside its values, a ``label_text`` or refused-flag line that ``str.format`` cannot
            fill, a ``pipeline_module`` without a ``pipeline`` (one line naming the problem type and the field).
        TypeError: ``model_head``, ``hub_task`` or ``pipeline`` not given (keyword-only, required).
    """

    name: str
    loss_unit: str
    peft_task_type: str | None = None
    sentence_level: bool = False
    train_sampling_strategy: str = "group_by_length"
    model_head: str = field(kw_only=True)
    hub_task: str = field(kw_only=True)
    pipeline: str | None = field(kw_only=True)
    pipeline_module: str | None = field(default=None, kw_only=True)
    pipeline_options: tuple[tuple[str, Any], ...] = field(default=(), kw_only=True)
    refused_flags: tuple[tuple[str, str], ...] = field(default=(), kw_only=True)
    eval_loss: bool = field(default=True, kw_only=True)
    baseline: Callable[[Any, Any], dict[str, float]] | None = field(default=None, kw_only=True, repr=False)
    card_usage: str = field(default=GENERIC_CARD_USAGE, kw_only=True, repr=False)
    label_text: str = field(default="{labels} (names or ids 0-{last_id})", kw_only=True)
    baseline_answer: str = field(default="the best constant answer", kw_only=True)
    chance_over: str | None = field(default=None, kw_only=True)

    def __hash__(self) -> int:  # by name: the registry's key (pipeline options may hold dicts)
        return hash(self.name)

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
        if not re.fullmatch(r"AutoModelFor[A-Za-z]+", self.model_head):
            raise ValueError(
                f"problem type {self.name!r}: model_head {self.model_head!r}; expected a transformers Auto class name "
                "like 'AutoModelForSequenceClassification'"
            )
        if self.chance_over not in (None, "classes", "choices"):
            raise ValueError(
                f"problem type {self.name!r}: chance_over {self.chance_over!r}; expected 'classes', 'choices' or None"
            )
        for text, what, example in (
            (self.label_text, "label_text", {"labels": "a, b", "last_id": 1}),
            *((line, f"refused_flags[{flag!r}]", {"value": 1, "task": "t"}) for flag, line in self.refused_flags),
        ):
            try:
                text.format(**example)
            except (KeyError, IndexError, ValueError) as e:
                raise ValueError(
                    f"problem type {self.name!r}: {what} {text!r} is not a str.format template with only "
                    f"{sorted(example)} ({e!r}); expected literal braces doubled"
                ) from None
        if self.pipeline_module and not self.pipeline:
            raise ValueError(
                f"problem type {self.name!r}: pipeline_module {self.pipeline_module!r} without a pipeline"
            )

    @property
    def architecture_suffix(self) -> str:
        """The ``For...`` ending of the architectures :attr:`model_head` loads (``"ForSequenceClassification"``)."""
        return self.model_head.removeprefix("AutoModel")


#: name -> :class:`ProblemType`, in registration order (filled by the task families when they are imported)
PROBLEM_TYPES: dict[str, ProblemType] = {}


def register_problem_type(problem: ProblemType) -> ProblemType:
    """Add ``problem`` to :data:`PROBLEM_TYPES` and return it; registering an equal one again is a no-op.
    ``ValueError`` for a different problem type under a name already registered."""
    known = PROBLEM_TYPES.setdefault(problem.name, problem)
    if known != problem:
        differ = [f.name for f in fields(problem) if getattr(known, f.name) != getattr(problem, f.name)]
        raise ValueError(f"problem type {problem.name!r} is already registered, with other {', '.join(differ)}")
    return problem


def get_problem_type(name: str) -> ProblemType:
    """The registered problem type called ``name``; ``ValueError`` listing the registered ones for another name."""
    if name not in PROBLEM_TYPES:
        raise ValueError(f"unknown problem type {name!r}; expected one of {list(PROBLEM_TYPES)}")
    return PROBLEM_TYPES[name]
