"""Scores of a run's predictions and of the trivial baseline beside them.

Offline GLUE metrics as pure functions over numpy arrays (scikit-learn / scipy; no ``evaluate.load``), named as
the Hub's GLUE metric so Trainer's ``eval_<metric>`` keys are ``run_glue.py``'s. Every function raises
``ValueError`` for arrays of different shapes or of 0 examples.

Trivial baselines: the score of the best *constant* answer on the evaluated split, reported beside every result
(``all_results.json``, the card, ``compare``'s report and charts) so that a model at chance level is seen as one.
Per problem type (the metrics a task declares, on the task's own scale):

- classification (GLUE) and multiple choice (SWAG): each metric of the best constant class, chosen per metric
  (accuracy: the majority share; binary F1: predict the positive class, ``2p / (1 + p)``; Matthews: 0);
- regression (STS-B): 0 for Pearson / Spearman (a constant has no correlation: scipy returns NaN; counted as 0);
- token classification (CoNLL-2003): every word ``O`` (entity precision / recall / F1 0, word accuracy the ``O`` share);
- question answering (SQuAD): the empty answer for every question (v1.1: 0; v2.0: the unanswerable share).

A run whose primary dev metric is within :data:`MARGIN` of its baseline, or whose dev loss is a uniform guess's
``ln k`` (multiple choice and classification), ends with :func:`near_baseline`'s warning.

The metrics as a card, the grid and ``compare`` read them back: Trainer-style keys grouped per split
(:func:`split_metrics`, :func:`metric_keys`; MNLI's ``eval_accuracy_mm``), beside the paper's numbers
(:func:`paper_rows`), all in one call (:func:`grouped_metrics`), and as ``model-index`` entries
(:func:`eval_results_from_metrics`: one ``huggingface_hub.EvalResult`` per declared metric per scored split).
"""

from __future__ import annotations

import logging
import math
import os
import warnings
from typing import Any

import numpy as np

from .base import TRAINER_KEYS

logger = logging.getLogger(__name__)


def _check(predictions: np.ndarray, references: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    predictions = np.asarray(predictions)
    references = np.asarray(references)
    if predictions.shape != references.shape:
        raise ValueError(f"predictions shape {predictions.shape} != references shape {references.shape}")
    if predictions.size == 0:
        raise ValueError("cannot compute a metric on 0 examples")
    return predictions, references


def accuracy(predictions: np.ndarray, references: np.ndarray) -> float:
    """Fraction of exact matches. Inputs: int arrays of shape ``[n]``."""
    predictions, references = _check(predictions, references)
    return float(np.mean(predictions == references))


def binary_f1(predictions: np.ndarray, references: np.ndarray, pos_label: int = 1) -> float:
    """F1 of the positive class (GLUE MRPC/QQP: ``equivalent``/``duplicate`` = 1). Inputs: int arrays ``[n]``.
    No positive prediction nor reference gives 0.0 (scikit-learn's ``zero_division=0``)."""
    from sklearn.metrics import f1_score

    predictions, references = _check(predictions, references)
    return float(f1_score(references, predictions, pos_label=pos_label, average="binary", zero_division=0))


def matthews_correlation(predictions: np.ndarray, references: np.ndarray) -> float:
    """Matthews correlation coefficient (CoLA). Inputs: int arrays ``[n]``. Constant predictions (or references)
    give ``0.0`` (scikit-learn's convention)."""
    from sklearn.metrics import matthews_corrcoef

    predictions, references = _check(predictions, references)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(matthews_corrcoef(references, predictions))
    return 0.0 if np.isnan(value) else value


def _correlation(fn: str, name: str, predictions: np.ndarray, references: np.ndarray) -> float:
    import scipy.stats

    predictions, references = _check(predictions.astype(np.float64), references.astype(np.float64))
    if predictions.size < 2 or np.all(predictions == predictions[0]) or np.all(references == references[0]):
        warnings.warn(f"{name} is undefined when an input is constant (or has < 2 values); reporting nan", UserWarning)
        return float("nan")
    return float(getattr(scipy.stats, fn)(predictions, references)[0])


def pearson(predictions: np.ndarray, references: np.ndarray) -> float:
    """Pearson correlation (STS-B). Inputs: float arrays ``[n]``. Constant input (undefined) -> ``nan`` with a warning."""
    return _correlation("pearsonr", "Pearson correlation", predictions, references)


def spearman(predictions: np.ndarray, references: np.ndarray) -> float:
    """Spearman rank correlation (STS-B). Inputs: float arrays ``[n]``. Constant input -> ``nan`` with a warning."""
    return _correlation("spearmanr", "Spearman correlation", predictions, references)


#: metric name -> function(predictions, references) -> float
METRIC_FUNCTIONS = {
    "accuracy": accuracy,
    "f1": binary_f1,
    "matthews_correlation": matthews_correlation,
    "pearson": pearson,
    "spearmanr": spearman,
}


def compute_task_metrics(task, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
    """``{name: float}`` of the :data:`METRIC_FUNCTIONS` named by ``task.metric_names``: the ``compute_metrics`` of a
    task scored by these functions alone (``GlueTask.compute_metrics`` is this function)."""
    return {name: METRIC_FUNCTIONS[name](predictions, references) for name in task.metric_names}


# --------------------------------------------------------------------------------------------- trivial baselines
#: "a clear margin": 2 points on the 0-100 scale (0.02 on a 0-1 one)
MARGIN = 2.0
#: prefix of the baseline keys in ``all_results.json`` (``baseline_accuracy``, ``baseline_f1_mm`` …)
PREFIX = "baseline_"


def constant_scores(task, raw) -> dict[str, float]:
    """``{metric: score}`` of the best constant answer on the raw split ``raw`` (a ``datasets.Dataset`` in the task's
    columns), for each of ``task.metric_names`` (same scale as the task's metrics); ``{}`` without labelled rows.

    Sources: the rules of the module docstring; scores computed by the task's own metric functions on the constant
    predictions (so they are what the model would get by answering that constant).
    """
    kind = task.problem_type
    if task.label_column not in raw.column_names or len(raw) == 0:
        return {}
    if kind == "regression":
        return {m: 0.0 for m in task.metric_names} if np.any(np.asarray(raw[task.label_column]) != -1) else {}
    if kind in ("single_label_classification", "multiple_choice"):
        labels = np.asarray(raw[task.label_column])
        labels = labels[labels >= 0]
        if not len(labels):
            return {}
        per_class = [task.compute_metrics(np.full(len(labels), c), labels) for c in range(len(task.label_names))]
        return {m: max(float(s[m]) for s in per_class) for m in task.metric_names}
    if kind == "token_classification":
        from ..tasks.conll2003.metrics import entity_metrics

        gold = [[task.label_names[i] for i in row] for row in raw[task.label_column]]
        scheme = getattr(task, "tag_scheme", "IOB2")
        scores = entity_metrics(gold, [["O"] * len(row) for row in gold], mode="strict", scheme=scheme)
        return {m: float(scores.get(m, 0.0)) for m in task.metric_names}
    if kind == "question_answering":
        answers = raw[task.label_column]
        if not any(a["text"] for a in answers):
            return {}
        references = {i: list(a["text"]) for i, a in zip(raw["id"], answers)}
        scores = task.compute_metrics({i: "" for i in references}, references)
        return {m: float(scores[m]) for m in task.metric_names if m in scores}
    return {}


def baseline_metrics(task, raw_splits: dict, suffixes: dict[str, str] | None = None) -> dict[str, float]:
    """``all_results.json`` keys ``baseline_<metric><split suffix>`` of :func:`constant_scores` on each evaluated raw
    split of ``raw_splits`` (split name -> ``datasets.Dataset``), and ``examples_scored<suffix>``: the examples scored
    (sentences, questions; ``eval_samples`` counts features). ``suffixes``: split -> metric-key suffix, as the caller
    has them (default: :meth:`Task.split_metric_suffix` of each split)."""
    out: dict[str, float] = {}
    for split, raw in raw_splits.items():
        suffix = task.split_metric_suffix(split) if suffixes is None else suffixes[split]
        out.update({f"{PREFIX}{m}{suffix}": v for m, v in constant_scores(task, raw).items()})
        out[f"examples_scored{suffix}"] = len(raw)
    return out


#: a dev loss within this fraction of the uniform guess's ``ln k`` (:func:`chance_loss`) is a model at chance
LOSS_MARGIN = 0.02


def chance_loss(task) -> tuple[float, int] | None:
    """``(ln k, k)``: the cross-entropy (nats) of a uniform guess over the ``k`` choices (multiple choice: SWAG's 4
    endings) or classes (single-label classification); flat logits score exactly this, whatever the data. ``None``
    for other problem types (regression, QA, NER: their constant answers are :func:`constant_scores`)."""
    if task.problem_type not in ("multiple_choice", "single_label_classification") or not task.label_names:
        return None
    k = len(task.label_names)
    return math.log(k), k


def near_baseline(task, metrics: dict, margin: float = MARGIN, advice: str | None = None) -> str | None:
    """The warning for ``metrics`` (``eval_<primary>`` and ``baseline_<primary>``, the task's scale; ``eval_loss``)
    whose primary dev metric beats the constant baseline by less than ``margin`` points (0-100 scale), or whose
    dev loss is within :data:`LOSS_MARGIN` of a uniform guess's ``ln k`` (:func:`chance_loss`: a model at chance,
    flat logits, even where its accuracy drifts above the most frequent answer's), else ``None``. Multiple choice
    names chance ``1/k`` beside the most frequent position. ``advice``: what can help this model
    (:func:`chance_advice`; default: its generic text)."""
    key = task.primary_metric
    value, base = metrics.get(f"eval_{key}"), metrics.get(f"{PREFIX}{key}")
    loss, uniform = metrics.get("eval_loss"), chance_loss(task)
    at_chance_loss = (
        uniform is not None and loss is not None and np.isfinite(loss) and loss >= (1 - LOSS_MARGIN) * uniform[0]
    )
    # to the 0-100 scale: x100 for a 0-1 metric (MetricSpec.to_percent of the declared metric; undeclared: 0-1)
    to_percent = next((100.0 / m.scale for m in task.metrics if m.key == key), 100.0)
    scored = value is not None and base is not None and np.isfinite(value)
    if scored and value * to_percent - base * to_percent >= margin and not at_chance_loss:
        return None
    if not scored and not at_chance_loss:
        return None
    parts = []
    if scored:
        value, base = value * to_percent, base * to_percent
        what = "the most frequent position" if task.problem_type == "multiple_choice" else "the best constant answer"
        chance = f", chance 1/{uniform[1]} = {100 / uniform[1]:.2f}" if uniform and key == "accuracy" else ""
        parts.append(
            f"dev {key} {value:.2f} against the trivial baseline {base:.2f} ({what} on the same examples{chance})"
        )
    if at_chance_loss:
        choices = "choices" if task.problem_type == "multiple_choice" else "classes"
        parts.append(
            f"dev loss {loss:.4f} is a uniform guess's (ln {uniform[1]} = {uniform[0]:.4f} over {uniform[1]} {choices})"
        )
    return (
        "; ".join(parts)
        + f": the model has learnt next to nothing (a clear margin is {margin:g} points). "
        + (advice or chance_advice())
    )


def chance_advice(hidden_size: int | None = None, learning_rates=(), steps: int | None = None) -> str:
    """What can help a model at chance, for the model at hand: ``hidden_size`` (its config; a small model, hidden <=
    256 as the ``tiny`` preset, learns at ``utils.modeling.suggested_learning_rate``, 1e-3, which the paper's
    ``--lr_grid`` of 5e-5..2e-5 cannot reach), the ``learning_rates`` it ran and its optimizer ``steps``."""
    from ..utils.modeling import suggested_learning_rate

    tips = []
    suggested = suggested_learning_rate(hidden_size) if hidden_size else None
    if suggested is not None and (not learning_rates or max(learning_rates) < suggested / 2):
        ran = ", ".join(f"{lr:g}" for lr in learning_rates) or "the paper's"
        tips.append(
            f"a learning rate for this small model (hidden size {hidden_size}): --learning_rate {suggested:g} "
            f"(it ran at {ran}; the paper's grid, --lr_grid, stops at 5e-5, too low for it)"
        )
    elif hidden_size is None or suggested is None:
        tips.append("a learning rate that suits this model (--lr_grid for BERT-base sizes)")
    tips.append("more steps (--num_train_epochs / --max_steps" + (f"; this run: {steps})" if steps else ")"))
    tips.append("labels that match the text (check the label column and its order)")
    return "What can help: " + "; ".join(tips) + "."


def report(task, metrics: dict, **model) -> str | None:
    """Log :func:`near_baseline`'s warning for ``metrics`` (the run's results) if any, and return it; ``model``:
    :func:`chance_advice`'s arguments (``hidden_size``, ``learning_rates``, ``steps``)."""
    message = near_baseline(task, metrics, advice=chance_advice(**model))
    if message:
        logger.warning(message)
    return message


# Metric keys per split (``eval_f1_mm`` -> split, metric): the card, the grid and compare read them
def metric_keys(task) -> tuple[dict, dict[str, str]]:
    """``({metric key: MetricSpec}, {eval split: metric-key suffix})`` of ``task`` (its :attr:`metrics` and
    :meth:`split_metric_suffix` of each eval split), looked up once for a card."""
    return {m.key: m for m in task.metrics}, dict(
        zip(task.eval_splits, map(task.split_metric_suffix, task.eval_splits))
    )


def split_of_key(task, key: str, suffixes: dict[str, str] | None = None) -> tuple[str, str] | None:
    """``eval_f1_test`` -> (``test``, ``f1``) for the task's eval splits; ``None`` for a non-metric key.
    ``suffixes``: :func:`metric_keys`' (looked up when ``None``)."""
    if not key.startswith("eval_"):
        return None
    suffixes = metric_keys(task)[1] if suffixes is None else suffixes
    rest = key[len("eval_") :]
    for split, suffix in sorted(list(suffixes.items())[1:], key=lambda x: -len(x[1])):
        if suffix and rest.endswith(suffix):
            return split, rest[: -len(suffix)]
    return task.eval_splits[0], rest


def _grid_aggregate(name: str, specs: dict) -> bool:
    """``accuracy_mean`` / ``accuracy_std`` of a declared metric: the §4.1 grid's mean and std over seeds
    (:mod:`hf_bert_tasks.finetune.grid` adds them to ``all_results.json``); the card shows them in its grid table, so
    they are neither results of their own nor undeclared keys."""
    base, _, stat = name.rpartition("_")
    return stat in ("mean", "std") and base in specs


def split_metrics(
    task, metrics: dict[str, Any], non_metrics: bool = False, keys: tuple[dict, dict] | None = None
) -> dict[str, dict[str, float]]:
    """Group Trainer-style ``eval_*`` metrics by split: ``{"validation": {"f1": 0.9, ...}, "test": {...}}``.

    Only declared keys are kept, :attr:`metric_names` first; ``non_metrics=True`` returns the declared non-metrics
    instead (thresholds, counts). Trainer's keys (``eval_loss`` …) and the lr grid's ``<metric>_mean`` /
    ``<metric>_std`` are dropped, undeclared ones with a warning.
    ``keys``: :func:`metric_keys`' (looked up when ``None``).
    """
    specs, suffixes = metric_keys(task) if keys is None else keys
    out: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        parsed = split_of_key(task, key, suffixes)
        if parsed is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        split, name = parsed
        if name in TRAINER_KEYS or name.endswith("_samples") or _grid_aggregate(name, specs):
            continue
        spec = specs.get(name)
        if spec is None:
            logger.warning("%s is not declared by task %r (Task.metrics); left out of the card", key, task.name)
        elif spec.is_metric != non_metrics:
            out.setdefault(split, {})[name] = float(value)
    order = {m: i for i, m in enumerate(task.metric_names)}
    return {
        s: dict(sorted(v.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
        for s, v in sorted(out.items(), key=lambda kv: task.eval_splits.index(kv[0]))
    }


def paper_rows(task, metrics: dict[str, Any], keys: tuple[dict, dict]) -> list[tuple]:
    """``(paper model, metric key, our split, ours x100 or None, paper)`` per number of
    :attr:`~hf_bert_tasks.tasks.base.Task.paper_results` (``keys``: :func:`metric_keys`')."""
    specs, suffixes = keys
    rows = []
    for label, values in (task.paper_results or {}).items():
        for metric, paper in values.items():
            split, base = split_of_key(task, f"eval_{metric}", suffixes)
            if "(test)" in label and split == task.eval_splits[0] and "test" in task.eval_splits:
                split = "test"  # "BERT-base (test)": compared on our test split when it was scored
            ours, spec = metrics.get(f"eval_{base}{suffixes.get(split, '')}"), specs.get(base)
            # on the paper's 0-100 scale (MetricSpec.to_percent: x100 for a 0-1 metric)
            ours = None if ours is None or spec is None else float(ours) * (100.0 / spec.scale)
            rows.append((label, base, split, ours, paper))
    return rows


def grouped_metrics(task, metrics: dict[str, Any], paper: bool = True) -> dict[str, Any]:
    """Every grouping a card needs of ``metrics`` (``all_results.json``), in one call: ``keys`` (:func:`metric_keys`),
    ``per_split`` / ``others`` (:func:`split_metrics`: the declared metrics / non-metrics), ``scored`` (examples
    scored per split) and ``paper_rows`` (:func:`paper_rows`; ``[]`` with ``paper=False``)."""
    keys = metric_keys(task)
    per_split = split_metrics(task, metrics, keys=keys)
    return {
        "keys": keys,
        "per_split": per_split,
        "others": split_metrics(task, metrics, non_metrics=True, keys=keys),
        "scored": {s: metrics.get(f"examples_scored{keys[1].get(s, '')}") for s in per_split},
        "paper_rows": paper_rows(task, metrics, keys) if paper else [],
    }


# model-index: one huggingface_hub.EvalResult per declared metric per scored split (the card's data)
def dataset_display_name(task) -> str:
    """A readable dataset name: ``GLUE MRPC``, ``CoNLL-2003``, ``SQuAD v1.1`` (from the task description)."""
    head = task.description.split(":")[0].strip()
    return f"GLUE {head}" if task.hub_dataset.endswith("/glue") else head


def _source(task, dataset: dict, split: str) -> dict:
    """The ``dataset_*`` fields of a result on ``split``: the Hub dataset, or the user's own file for that split
    (then no claim about the Hub dataset)."""
    user_file = (dataset.get("user_files") or {}).get(split)
    if user_file:
        ext = os.path.splitext(user_file)[1].lstrip(".").lower()
        kind = "json" if ext in ("json", "jsonl") else ext or "csv"
        return {"dataset_type": kind, "dataset_name": f"{user_file} (user file)"}
    return {
        "dataset_type": dataset.get("id") or task.hub_dataset,
        "dataset_name": dataset_display_name(task),
        "dataset_config": dataset.get("config", task.hub_config),
        "dataset_revision": dataset.get("revision"),
    }


def eval_results_from_metrics(
    task,
    metrics: dict[str, Any],
    dataset: dict[str, Any] | None = None,
    keys: tuple[dict, dict] | None = None,
    per_split: dict[str, dict[str, float]] | None = None,
) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    ``metrics``: ``all_results.json``'s ``eval_<metric>[<split suffix>]`` -> float (``examples_scored<suffix>``: the
    examples scored, stated as ``dataset.args.num_examples``); ``dataset``: ``{"id", "config", "revision"}``
    overriding the task's Hub dataset, ``user_files`` (split -> file name: the file is the dataset) and
    ``max_eval_samples`` (the split is then ``validation[:300]``, the ``datasets`` slice actually scored).
    ``task_type`` is the pipeline tag, ``metric_type`` the declared Hub metric id, ``metric_value`` on the declared
    scale rounded to 6 digits; NaN values are skipped with a warning. ``keys`` / ``per_split``: :func:`metric_keys`' /
    :func:`split_metrics`' of ``metrics`` (computed when ``None``).
    """
    from huggingface_hub import EvalResult

    keys = metric_keys(task) if keys is None else keys
    dataset, results, (specs, suffixes) = dataset or {}, [], keys
    limit = dataset.get("max_eval_samples")
    per_split = split_metrics(task, metrics, keys=keys) if per_split is None else per_split
    for split, values in per_split.items():
        scored = metrics.get(f"examples_scored{suffixes[split]}")
        sliced = limit and scored is not None and int(scored) == int(limit)
        for name, value in values.items():
            if math.isnan(value):
                logger.warning("%s on %s is NaN; left out of model-index", name, split)
                continue
            spec = specs[name]
            results.append(
                EvalResult(
                    task_type=task.pipeline_tag,
                    task_name=task.pipeline_tag.replace("-", " ").title(),
                    **_source(task, dataset, split),
                    dataset_split=f"{split}[:{int(scored)}]" if sliced else split,
                    dataset_args={"num_examples": int(scored)} if scored is not None else None,
                    metric_type=spec.hub_id,
                    metric_name=spec.display,
                    metric_config=spec.config,
                    metric_value=round(value, 6),
                )
            )
    return results
