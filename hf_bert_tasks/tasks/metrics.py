"""Offline GLUE metrics as pure functions over numpy arrays (scikit-learn / scipy; no ``evaluate.load``), named as
the Hub's GLUE metric so Trainer's ``eval_<metric>`` keys are ``run_glue.py``'s. Every function raises
``ValueError`` for arrays of different shapes or of 0 examples."""

from __future__ import annotations

import warnings

import numpy as np


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
