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

A run whose primary dev metric is within :data:`MARGIN` of its baseline ends with :func:`near_baseline`'s warning.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np

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
        scores = entity_metrics(gold, [["O"] * len(row) for row in gold], mode="strict")
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


def near_baseline(task, metrics: dict, margin: float = MARGIN) -> str | None:
    """The warning for ``metrics`` (``eval_<primary>`` and ``baseline_<primary>``, the task's scale) whose primary
    dev metric beats the constant baseline by less than ``margin`` points (0-100 scale), else ``None``."""
    key = task.primary_metric
    value, base = metrics.get(f"eval_{key}"), metrics.get(f"{PREFIX}{key}")
    if value is None or base is None or not np.isfinite(value):
        return None
    # to the 0-100 scale: x100 for a 0-1 metric (MetricSpec.to_percent of the declared metric; undeclared: 0-1)
    to_percent = next((100.0 / m.scale for m in task.metrics if m.key == key), 100.0)
    value, base = value * to_percent, base * to_percent
    if value - base >= margin:
        return None
    return (
        f"dev {key} {value:.2f} does not beat the trivial baseline "
        f"{base:.2f} (the best constant answer on the same examples) by "
        f"{margin:g} points: the model has learnt next to nothing. Usual causes: a learning rate too low or too high for "
        "this model (try --lr_grid), too few steps (--num_train_epochs / --max_steps), or labels that do not "
        "match the text (check the label column and its order)."
    )


def report(task, metrics: dict) -> str | None:
    """Log :func:`near_baseline`'s warning for ``metrics`` (the run's results) if any, and return it."""
    message = near_baseline(task, metrics)
    if message:
        logger.warning(message)
    return message
