"""The ``Task`` contract: all the recipes know of one of the paper's tasks (data source, columns, labels, model head,
features, scoring). A task family is a :class:`Task` subclass in a module under ``hf_bert_tasks/tasks/`` calling
:func:`hf_bert_tasks.tasks.register_task` at import time (as peft's ``register_peft_method``). Split names are the
Hub dataset's (MNLI ``validation_matched`` …), for local files too."""

from __future__ import annotations

import abc
import difflib
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .files import UserFiles
from .problems import PROBLEM_TYPES


@dataclass(frozen=True)
class MetricSpec:
    """One number a task's evaluation returns, as declared for cards, ``model-index`` and reports: ``key`` in the
    metric dict (no ``eval_`` / split suffix: ``"HasAns_f1"``), ``hub_id`` (``model-index`` ``metric_type``:
    ``"pearsonr"``), ``display`` name, ``scale`` of a perfect score (``1.0``; ``100.0`` for SQuAD's scripts),
    ``higher_is_better`` (to choose among runs), ``is_metric`` (``False`` for thresholds and counts: not in
    model-index), ``config`` (``metric_config`` telling apart results of one metric id on one split: ``"HasAns"``,
    ``"conlleval"``, an entity type; ``None`` for the headline number).

    Raises:
        ValueError: a ``scale`` other than 1 or 100, or a metric without a Hub id.
    """

    key: str
    hub_id: str | None
    display: str
    scale: float = 1.0
    higher_is_better: bool = True
    is_metric: bool = True
    config: str | None = None

    def __post_init__(self):
        if self.scale not in (1.0, 100.0):
            raise ValueError(f"metric {self.key!r}: scale {self.scale!r}; expected 1.0 (values in [0, 1]) or 100.0")
        if self.is_metric and not self.hub_id:
            raise ValueError(f"metric {self.key!r}: a metric needs a Hub metric id (hub_id)")

    def to_percent(self, value: float) -> float:
        """``value`` on the 0-100 scale of the paper's tables: x100 for a 0-1 metric, unchanged for a 0-100 one."""
        return float(value) * (100.0 / self.scale)

    def to_unit(self, value: float) -> float:
        """``value`` on the 0-1 scale: /100 for a 0-100 metric, unchanged for a 0-1 one."""
        return float(value) / self.scale


def not_a_metric(key: str, display: str) -> MetricSpec:
    """Declaration of a reported number that is not a score (a threshold or a count)."""
    return MetricSpec(key, None, display, is_metric=False)


@dataclass
class PaperDefaults:
    """Fine-tuning hyperparameters from the BERT paper for one task (Devlin et al., 2018, §4 and Appendix A.3): the
    defaults (batch in sequences; GLUE §4.1: 32, 3 epochs), ``max_seq_length`` (WordPieces with special tokens; 128
    for GLUE) and ``lr_grid``, the rates the paper selects from on dev (§4.1: {5e-5, 4e-5, 3e-5, 2e-5}; ``--lr_grid``).
    """

    learning_rate: float = 2e-5
    per_device_train_batch_size: int = 32
    num_train_epochs: float = 3.0
    max_seq_length: int = 128
    lr_grid: tuple[float, ...] = (5e-5, 4e-5, 3e-5, 2e-5)


@dataclass
class Task(UserFiles, abc.ABC):
    """Base class of every registered task (the contract of ``tests/test_task_contract.py``).

    Attributes:
        name, description: registry key and ``--task`` value (lower-case, ``"mrpc"``); one line for the task list.
        hub_dataset, hub_config: Hub dataset id and config (or ``None``) loaded without ``--data_dir``.
        problem_type, text_columns: a registered problem type (:mod:`.problems`); text columns, segment A first.
        label_names: class names in the Hub dataset's label order (``None`` for regression and QA).
        metric_names, primary_metric: the floats of :meth:`compute_metrics`, and the one choosing among runs.
        paper_defaults, paper_results, paper_source: the paper's fine-tuning defaults, its numbers
            (``{"BERT-base": {"accuracy": 84.6}, ...}``, metric keys as ours, x100) and where they come from.
        local_files: canonical split -> file name(s) searched in ``--data_dir`` (first existing one wins).
        hub_test_configs: extra test split -> Hub config of :attr:`hub_dataset` whose ``test`` split it is, loaded
            beside :attr:`hub_config` when the task's own Hub dataset is read (MNLI: ``{"test_ax": "ax"}``, the GLUE
            diagnostic set, which the server scores with the MNLI model's predictions, ``AX.tsv``).
        metric_suffixes: extra eval split -> suffix of its metric keys (MNLI ``validation_mismatched`` -> ``"_mm"``).
        metrics: a :class:`MetricSpec` for every number :meth:`evaluate` returns besides Trainer's bookkeeping
            (:data:`TRAINER_KEYS`), metric or not; every name of :attr:`metric_names` is one (``register_task``).
    """

    name: str
    description: str
    hub_dataset: str
    hub_config: str | None
    problem_type: str
    text_columns: tuple[str, ...]
    label_names: tuple[str, ...] | None
    metric_names: tuple[str, ...]
    primary_metric: str
    label_column: str = "label"
    train_split: str = "train"
    eval_splits: tuple[str, ...] = ("validation",)
    test_splits: tuple[str, ...] = ("test",)
    paper_defaults: PaperDefaults = field(default_factory=PaperDefaults)
    paper_results: dict[str, dict[str, float]] = field(default_factory=dict)
    paper_source: str = ""
    local_files: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hub_test_configs: dict[str, str] = field(default_factory=dict)
    metric_suffixes: dict[str, str] = field(default_factory=dict)
    metrics: tuple[MetricSpec, ...] = ()
    #: ``--train_file`` / ``--validation_file`` / ``--test_file``: canonical split -> path (set by :meth:`configure`)
    user_files: dict[str, str] = field(default_factory=dict)
    #: ``--text_column_names`` / ``--label_column_name``: canonical column -> the file's column (:meth:`configure`)
    user_columns: dict[str, str] = field(default_factory=dict)
    #: ``--label_list``: the user's label names in id order (:meth:`configure`); empty: the task's, or the train
    #: file's where its labels are not the task's (:meth:`labels_from_records`)
    user_labels: tuple[str, ...] = ()
    #: the ``transformers`` collator class :meth:`data_collator` builds (a class attribute, not a field)
    collator_class = "DataCollatorWithPadding"
    #: the recipe's ``DataArguments`` that :meth:`configure` copies into fields of the task (a class attribute)
    data_options = ()

    def read_local(self, data_dir: str) -> datasets.DatasetDict:  # noqa: F821
        """:meth:`read_file` of the first existing file of each split of :attr:`local_files` in ``data_dir`` (all found
        first; a split without a file is left out).

        Raises:
            FileNotFoundError: ``data_dir`` missing, or none of the files of :attr:`local_files` in it.
            ValueError: a malformed row (the message names file, line and what was expected; :meth:`read_file`).
        """
        import datasets

        if not os.path.isdir(data_dir):
            raise FileNotFoundError(f"--data_dir {data_dir}: no such folder")
        paths = {
            split: path
            for split, names in self.local_files.items()
            if (path := next((p for p in (os.path.join(data_dir, n) for n in names) if os.path.isfile(p)), None))
        }
        if not paths:
            wanted = sorted({n for names in self.local_files.values() for n in names})
            raise FileNotFoundError(f"--data_dir {data_dir}: none of the {self.name} files {wanted} found")
        return datasets.DatasetDict({split: self.read_file(path, split) for split, path in paths.items()})

    def read_file(self, path: str, split: str | None = None) -> datasets.Dataset:  # noqa: F821
        """One original file of ``split`` as a ``datasets.Dataset`` with the Hub dataset's columns.

        Raises:
            ValueError: this task has no reader for local files (the default).
        """
        raise ValueError(f"task {self.name!r} has no reader for local files; load it from the Hub instead")

    def load(
        self,
        data_dir: str | None = None,
        dataset_name: str | None = None,
        dataset_config_name: str | None = None,
        revision: str | None = None,
        cache_dir: str | None = None,
    ):
        """The raw splits as a ``DatasetDict`` of canonical split names: :meth:`read_local` of ``data_dir`` when given,
        else ``datasets.load_dataset`` of ``dataset_name`` / ``dataset_config_name`` (default :attr:`hub_dataset` /
        :attr:`hub_config`) at ``revision`` into ``cache_dir``, with each :attr:`hub_test_configs` split when neither
        is overridden; :meth:`read_user_files` when :attr:`user_files`."""
        if self.user_files:
            return self.read_user_files(data_dir)
        if data_dir is not None:
            return self.read_local(data_dir)
        import datasets

        config = dataset_config_name if dataset_config_name is not None else self.hub_config
        raw = datasets.load_dataset(dataset_name or self.hub_dataset, config, revision=revision, cache_dir=cache_dir)
        own = dataset_name is None and dataset_config_name is None  # the task's own Hub dataset and config
        for split, extra in self.hub_test_configs.items() if own else ():
            raw[split] = datasets.load_dataset(
                self.hub_dataset, extra, split="test", revision=revision, cache_dir=cache_dir
            )
        return raw

    def configure(self, data_args) -> Task:
        """A copy (``dataclasses.replace``; the registry holds shared instances) holding the :attr:`data_options` of
        ``data_args`` (``doc_stride``, ``label_all_tokens`` …) and its files / column names (:attr:`user_files`,
        :attr:`user_columns`) and ``--label_list`` (:attr:`user_labels`); the task itself when it has none. The label
        set a user's files give (:meth:`labels_from_records`) is set on this copy when they are read.

        Raises:
            ValueError: ``--text_column_names`` with more names than the task has text columns; ``--label_list``
                without a user file.
        """
        files = {
            split: getattr(data_args, flag, None)
            for split, flag in (
                (self.train_split, "train_file"),
                (self.eval_splits[0], "validation_file"),
                (self.test_splits[0], "test_file"),
            )
        }
        files = {split: path for split, path in files.items() if path}
        names = [n.strip() for n in (getattr(data_args, "text_column_names", None) or "").split(",") if n.strip()]
        if len(names) > len(self.text_columns):
            raise ValueError(
                f"--text_column_names {','.join(names)}: {len(names)} names, task {self.name!r} has "
                f"{len(self.text_columns)} text column(s); expected names for {list(self.text_columns)}"
            )
        columns = dict(zip(self.text_columns, names))
        if label := getattr(data_args, "label_column_name", None):
            columns[self.label_column] = label
        labels = tuple(n.strip() for n in (getattr(data_args, "label_list", None) or "").split(",") if n.strip())
        if labels and not files:
            raise ValueError(
                f"--label_list {','.join(labels)}: label names are read with --train_file/--validation_file/"
                "--test_file; expected one of them (the Hub dataset and --data_dir have their own labels)"
            )
        options = {name: getattr(data_args, name, getattr(self, name)) for name in self.data_options}
        if not options and not files and not columns:
            return self
        return replace(self, **options, user_files=files, user_columns=columns, user_labels=labels)

    @property
    def num_labels(self) -> int:
        """Size of the classifier output: ``len(label_names)``, 1 for regression."""
        return 1 if self.problem_type == "regression" else len(self.label_names or ())

    def model_config_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``AutoConfig.from_pretrained``: ``id2label``/``label2id`` make ``pipeline()`` of a
        saved model return label names instead of ``LABEL_0``; ``task_problem_type`` (saved in ``config.json``, as a
        feature-based model's) lets ``hub.push.problem_type_of`` serve it by its problem type."""
        kwargs: dict[str, Any] = {"task_problem_type": self.problem_type}
        if self.label_names:
            kwargs.update(
                num_labels=len(self.label_names),
                id2label=dict(enumerate(self.label_names)),
                label2id={name: i for i, name in enumerate(self.label_names)},
            )
        if self.problem_type in ("single_label_classification", "regression"):
            kwargs.update(problem_type=self.problem_type, num_labels=self.num_labels)
        return kwargs

    def model_class(self):
        """The ``transformers`` Auto class named by :attr:`model_head`."""
        import transformers

        return getattr(transformers, self.model_head)

    @abc.abstractmethod
    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Tokenize one raw split into model features (a ``datasets.Dataset``)."""

    def data_collator(self, tokenizer, pad_to_multiple_of: int | None = None, max_length: int | None = None):
        """The batch collator (:attr:`collator_class`): pads to the longest sequence of the batch, rounded up to
        ``pad_to_multiple_of``, or with ``max_length`` to it (``run_glue.py``'s ``pad_to_max_length``)."""
        import transformers

        collator = getattr(transformers, self.collator_class)
        if max_length is not None:
            return collator(tokenizer, padding="max_length", max_length=max_length)
        return collator(tokenizer, pad_to_multiple_of=pad_to_multiple_of)

    @abc.abstractmethod
    def compute_metrics(self, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
        """Score predictions against references; returns ``{name: float}`` with keys :attr:`metric_names`."""

    def logits_to_predictions(self, logits: np.ndarray) -> np.ndarray:
        """Map model outputs (``[n, num_labels]`` float) to predictions (``[n]``: class ids, or floats for regression)."""
        logits = logits[0] if isinstance(logits, tuple) else logits
        if self.problem_type == "regression":
            return np.squeeze(logits, axis=-1) if logits.ndim > 1 else logits
        return np.argmax(logits, axis=-1)

    def trainer_compute_metrics(self) -> Callable:
        """Adapter for ``Trainer(compute_metrics=...)``: ``EvalPrediction`` -> :meth:`compute_metrics` of
        :meth:`logits_to_predictions`; a :class:`hf_bert_tasks.tasks.metrics.TaskMetrics`, so it also takes separate
        batches (``--eval_do_concat_batches False``) and ``compute_result`` (``--batch_eval_metrics``)."""
        from .metrics import TaskMetrics

        def metrics_of(predictions, label_ids) -> dict[str, float]:
            return self.compute_metrics(self.logits_to_predictions(predictions), np.asarray(label_ids))

        return TaskMetrics(metrics_of)

    def build_trainer(self, trainer_class, eval_raw=None, eval_features=None, **kwargs):
        """The recipe's ``Trainer`` for this task: ``trainer_class(**kwargs)`` (SQuAD: a subclass that evaluates
        with post-processing over ``eval_raw``, the raw examples of the windows ``eval_features``)."""
        return trainer_class(**kwargs)

    def split_metric_suffix(self, split: str) -> str:
        """Suffix added to metric keys of an extra eval split (MNLI mismatched -> ``"_mm"``, as ``run_glue.py``)."""
        return "" if split == self.eval_splits[0] else self.metric_suffixes.get(split, f"_{split}")

    def metric_spec(self, key: str) -> MetricSpec | None:
        """The declared :class:`MetricSpec` of ``key`` (no ``eval_`` prefix or split suffix), else ``None``."""
        return next((m for m in self.metrics if m.key == key), None)

    def evaluate(self, trainer, raw, features, split: str, output_dir: str | None = None) -> dict[str, float]:
        """Trainer-style ``eval_*`` metrics of one preprocessed split (``trainer.predict``, logged as ``evaluate``);
        writes ``<split>_predictions.tsv`` in ``output_dir`` (:meth:`write_eval_predictions`)."""
        output = trainer.predict(features, metric_key_prefix="eval")
        suffix = self.split_metric_suffix(split)
        metrics = {f"{k}{suffix}": v for k, v in output.metrics.items()}
        if output_dir and trainer.is_world_process_zero():
            self.write_eval_predictions(raw, output, os.path.join(output_dir, f"{split}_predictions.tsv"))
        trainer.log(metrics)  # what trainer.evaluate does (history, ``epoch``); an extra split's keys suffixed
        return metrics

    def write_eval_predictions(self, raw, output, path: str) -> str:
        """Write an evaluated split's predictions to the TSV ``path`` and return it: a header, then per example in
        split order ``index`` (``idx``, else the row number), ``prediction`` (class id, or STS-B's score), ``label``
        (gold; ``-100`` = not scored; absent when unlabelled), ``logit_<label name>`` per class (not for regression).
        Floats are ``repr`` (an exact round trip).

        Raises:
            RuntimeError: the number of predictions differs from the number of examples.
        """
        logits = np.asarray(output.predictions[0] if isinstance(output.predictions, tuple) else output.predictions)
        preds = self.logits_to_predictions(logits)
        if len(preds) != len(raw):  # e.g. a distributed gather that kept padding duplicates
            raise RuntimeError(f"{self.name}: got {len(preds)} predictions for {len(raw)} examples")
        index = list(raw["idx"][:]) if "idx" in raw.column_names else list(range(len(raw)))
        labels = None if output.label_ids is None else np.asarray(output.label_ids)
        regression = self.problem_type == "regression"
        number = repr if regression else int  # a float as ``repr``: an exact round trip
        names = [] if regression else list(self.label_names or range(logits.shape[-1]))
        header = ["index", "prediction"] + (["label"] if labels is not None else []) + [f"logit_{n}" for n in names]
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\t".join(header) + "\n")
            for i in range(len(preds)):
                gold = [] if labels is None else [number(labels[i].item())]
                scores = [repr(float(x)) for x in logits[i]] if names else []
                f.write("\t".join(map(str, [index[i], number(preds[i].item()), *gold, *scores])) + "\n")
        return path

    @abc.abstractmethod
    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Predict an (unlabeled) split and write prediction files into ``output_dir``; returns the paths written."""

    @property
    def problem(self):
        """The :class:`~hf_bert_tasks.tasks.problems.ProblemType` of :attr:`problem_type` (loss unit, peft task type,
        model head, Hub task and pipeline: :attr:`model_head` and :attr:`pipeline_tag` are its). ``ValueError``: not
        registered."""
        if self.problem_type not in PROBLEM_TYPES:
            raise ValueError(f"task {self.name!r}: problem type {self.problem_type!r} is not registered")
        return PROBLEM_TYPES[self.problem_type]

    model_head = property(lambda self: self.problem.model_head, doc="The Auto class: ``problem.model_head``.")
    pipeline_tag = property(lambda self: self.problem.hub_task, doc="The Hub task category: ``problem.hub_task``.")

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary (used by ``hf-bert-tasks tasks --json`` and model cards)."""
        plain = ("name", "description", "hub_dataset", "hub_config", "problem_type", "text_columns", "label_names")
        out = {k: list(v) if isinstance(v, tuple) else v for k, v in ((k, getattr(self, k)) for k in plain)}
        return out | {
            "metrics": list(self.metric_names),
            "metric_declarations": [dict(vars(m)) for m in self.metrics],
            "primary_metric": self.primary_metric,
            "model_head": self.model_head,
            "pipeline_tag": self.pipeline_tag,
            "local_files": {k: list(v) for k, v in self.local_files.items()},
            "required_columns": list(self.required_columns().values()),
            "user_file_formats": dict(self.user_file_formats),
            "labels": self.label_description(),
        }

    def label_description(self) -> str:
        """What a user file's label column holds, for ``hf-bert-tasks tasks``: its problem type's ``label_text`` with
        the task's label names (``{labels}``) and last label id (``{last_id}``)."""
        labels = ", ".join(self.label_names or ())
        return self.problem.label_text.format(labels=labels, last_id=self.num_labels - 1)


# The registry: one dict, register_task, get_task, list_tasks (beside the contract: a family module imports it
# without importing the package that imports the family; no cycle)
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
    if task.problem_type not in PROBLEM_TYPES:  # registered by the family (tasks/problems.py)
        raise ValueError(f"task {task.name!r}: problem_type {task.problem_type!r} is not one of {list(PROBLEM_TYPES)}")
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
