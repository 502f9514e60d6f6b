"""Scores of a run's predictions and of the trivial baseline beside them.

Offline GLUE metrics as pure functions over numpy arrays (scikit-learn / scipy; no ``evaluate.load``), named as
the Hub's GLUE metric so Trainer's ``eval_<metric>`` keys are ``run_glue.py``'s. Every function raises
``ValueError`` for arrays of different shapes or of 0 examples.

Trivial baselines: the score of the best *constant* answer on the evaluated split, reported beside every result
(``all_results.json``, the card, ``compare``'s report and charts) so that a model at chance level is seen as one.
Each problem type declares its rule (``ProblemType.baseline``, registered by its family; the metrics a task declares,
on the task's own scale):

- classification (GLUE) and multiple choice (SWAG): each metric of the best constant class, chosen per metric
  (accuracy: the majority share; binary F1: predict the positive class, ``2p / (1 + p)``; Matthews: 0;
  :func:`best_constant_class`);
- regression (STS-B): 0 for Pearson / Spearman (a constant has no correlation: scipy returns NaN; counted as 0;
  :func:`constant_correlation`);
- token classification (CoNLL-2003): every word ``O`` (entity precision / recall / F1 0, word accuracy the ``O`` share;
  ``tasks/conll2003/metrics.py``);
- question answering (SQuAD): the empty answer for every question (v1.1: 0; v2.0: the unanswerable share;
  ``tasks/squad/metrics.py``).

A run whose primary dev metric is within :data:`MARGIN` of its baseline, or whose dev loss is a uniform guess's
``ln k`` (multiple choice and classification), ends with :func:`near_baseline`'s warning.

The adapter a ``Trainer`` scores a task with is the task side's too (:class:`TaskMetrics`, every evaluation layout:
:func:`join_batches`): :meth:`hf_bert_tasks.tasks.base.Task.trainer_compute_metrics` builds it. Reading the metrics back
as a card does (grouped per split, ``model-index`` entries) is :mod:`hf_bert_tasks.hub.cards`'.
"""

from __future__ import annotations

import logging
import math
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
    columns), for each of ``task.metric_names`` (same scale as the task's metrics); ``{}`` without labelled rows or
    for a problem type that declares no rule.

    Sources: the rule its problem type declares (``task.problem.baseline``; the list in the module docstring); scores
    computed by the task's own metric functions on the constant predictions (so they are what the model would get by
    answering that constant).
    """
    rule = task.problem.baseline
    if rule is None or task.label_column not in raw.column_names or len(raw) == 0:
        return {}
    return rule(task, raw)


def best_constant_class(task, raw) -> dict[str, float]:
    """Classification and multiple choice: each metric of the best constant class (or choice position) over the
    labelled rows of ``raw`` (labels ``>= 0``), chosen per metric; ``{}`` without labelled rows."""
    labels = np.asarray(raw[task.label_column])
    labels = labels[labels >= 0]
    if not len(labels):
        return {}
    per_class = [task.compute_metrics(np.full(len(labels), c), labels) for c in range(len(task.label_names))]
    return {m: max(float(s[m]) for s in per_class) for m in task.metric_names}


def constant_correlation(task, raw) -> dict[str, float]:
    """Regression: 0 for each correlation metric (a constant has none), when ``raw`` has a score other than the
    unlabelled ``-1``; else ``{}``."""
    return {m: 0.0 for m in task.metric_names} if np.any(np.asarray(raw[task.label_column]) != -1) else {}


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
    endings) or classes (single-label classification): the problem types that declare ``chance_over``; flat logits
    score exactly this, whatever the data. ``None`` for the others (regression, QA, NER: their constant answers are
    :func:`constant_scores`)."""
    if task.problem.chance_over is None or not task.label_names:
        return None
    k = len(task.label_names)
    return math.log(k), k


def near_baseline(task, metrics: dict, margin: float = MARGIN, advice: str | None = None) -> str | None:
    """The warning for ``metrics`` (``eval_<primary>`` and ``baseline_<primary>``, the task's scale; ``eval_loss``)
    whose primary dev metric beats the constant baseline by less than ``margin`` points (0-100 scale), or whose
    dev loss is within :data:`LOSS_MARGIN` of a uniform guess's ``ln k`` (:func:`chance_loss`: a model at chance,
    flat logits, even where its accuracy drifts above the most frequent answer's), else ``None``. Multiple choice
    names chance ``1/k`` beside the most frequent position (the constant answer's words: its problem type's
    ``baseline_answer``). ``advice``: what can help this model
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
        what = task.problem.baseline_answer
        chance = f", chance 1/{uniform[1]} = {100 / uniform[1]:.2f}" if uniform and key == "accuracy" else ""
        parts.append(
            f"dev {key} {value:.2f} against the trivial baseline {base:.2f} ({what} on the same examples{chance})"
        )
    if at_chance_loss:
        over = task.problem.chance_over
        parts.append(
            f"dev loss {loss:.4f} is a uniform guess's (ln {uniform[1]} = {uniform[0]:.4f} over {uniform[1]} {over})"
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


def join_batches(values, pad_index: int = -100):
    """One array from what ``Trainer`` gathered per batch: ``values`` as given when already joined (an array, a tuple
    of arrays, ``None``); a list of per-batch arrays / tensors (``--eval_do_concat_batches False``, or the batches
    collected under ``--batch_eval_metrics``) concatenated along rows, a ragged second dimension padded with
    ``pad_index`` (``Trainer``'s own cross-batch pad); a list of per-batch tuples (SQuAD's start and end logits)
    joined per element. Shapes: ``[b_i, L_i, ...]`` -> ``[sum b_i, max L_i, ...]``."""
    if values is None or not isinstance(values, list):
        return values
    if not values:
        return None
    if isinstance(values[0], (tuple, list)):
        return type(values[0])(join_batches(list(parts), pad_index) for parts in zip(*values))
    arrays = [v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v) for v in values]  # torch or numpy
    if arrays[0].ndim < 2:
        return np.concatenate(arrays)
    width = max(a.shape[1] for a in arrays)
    return np.concatenate(
        [
            np.pad(a, [(0, 0), (0, width - a.shape[1])] + [(0, 0)] * (a.ndim - 2), constant_values=pad_index)
            for a in arrays
        ]
    )


class TaskMetrics:
    """``Trainer(compute_metrics=...)`` of a task's ``score(predictions, label_ids) -> {name: float}`` for every
    evaluation layout Trainer has: whole-split arrays (``compute_result`` not given), separate per-batch arrays
    (``--eval_do_concat_batches False``: joined by :func:`join_batches`) and ``--batch_eval_metrics`` (Trainer passes
    ``compute_result``: each batch's tensors are kept on the CPU, the split is scored when it is ``True``; the
    metrics of the paper's tasks, F1 / Matthews / Spearman / span F1, do not decompose into batch sums). The
    contract is transformers' (``Trainer`` docstring, ``compute_metrics``)."""

    def __init__(self, score):
        self.score = score
        self._batches: list[tuple] = []

    def __call__(self, eval_pred, compute_result: bool | None = None) -> dict[str, float]:
        predictions, label_ids = eval_pred.predictions, eval_pred.label_ids
        if compute_result is None:
            return self.score(join_batches(predictions), join_batches(label_ids))
        self._batches.append((predictions, label_ids))
        if not compute_result:
            return {}
        batches, self._batches = self._batches, []
        return self.score(join_batches([b[0] for b in batches]), join_batches([b[1] for b in batches]))
