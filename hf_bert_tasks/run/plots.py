"""Every matplotlib plot of the package: ``training_curves.png`` (fine-tuning), ``pretraining_curves.png``, and the
shared helpers :func:`new_figure` (a bare Agg ``Figure``: no pyplot state, no backend switch) and :func:`plot_lines`.
The series are pure functions of the logs (:func:`curve_series`, :func:`pretraining_curves`).
"""

from __future__ import annotations

import json
import math
import os
from typing import Any

CURVES_FILE = "training_curves.png"
STATE_FILE = "trainer_state.json"
PRETRAINING_CURVES_FILE = "pretraining_curves.png"
#: the four panels of ``pretraining_curves.png``; each is logged as ``<metric>`` (train) and ``eval_<metric>``.
CURVE_METRICS = ("mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy")


def new_figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (9, 3.4)):
    """``(figure, axes)``: a ``matplotlib.figure.Figure`` (constrained layout, Agg canvas, no ``plt.close`` needed)
    and its ``nrows x ncols`` axes (one ``Axes`` when both are 1, else an array)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols)


def _number(value) -> float | None:
    """``value`` as a finite float, else ``None`` (bools, strings, NaN and inf are not plotted)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if number else None


def curve_series(log_history: list[dict[str, Any]], metric: str | None = None) -> dict[str, Any]:
    """The points to plot from a ``Trainer`` ``log_history``.

    Args:
        log_history: ``trainer_state.json["log_history"]``: dicts with ``step`` and some of ``loss``, ``eval_loss``
            and ``eval_<metric>`` (the final summary entry has no ``loss`` and is skipped).
        metric: the eval metric, with or without ``eval_`` (``"accuracy"``); ``None``: the first logged ``eval_*``
            key that is not a loss, runtime or count.

    Returns:
        ``{"train_loss": (steps, values), "eval_loss": (steps, values), "eval_metric": (steps, values),
        "metric": "eval_<name>" or None}``, lists in log order; missing or non-finite values are left out.
        ``ValueError`` for an entry without an integer ``step`` (not a ``Trainer`` log history).
    """
    skip = ("eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "eval_samples")
    if metric is None:
        metric = next(
            (
                k
                for entry in log_history
                for k in entry
                if k.startswith("eval_") and k not in skip and _number(entry[k]) is not None
            ),
            None,
        )
    elif not metric.startswith("eval_"):
        metric = f"eval_{metric}"
    series: dict[str, Any] = {"train_loss": ([], []), "eval_loss": ([], []), "eval_metric": ([], []), "metric": metric}
    for i, entry in enumerate(log_history):
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            raise ValueError(f"log_history[{i}]: expected an integer 'step', got {step!r}")
        for name, key in (("train_loss", "loss"), ("eval_loss", "eval_loss"), ("eval_metric", metric)):
            value = _number(entry.get(key)) if key else None
            if value is not None:
                series[name][0].append(step)
                series[name][1].append(value)
    return series


def plot_lines(ax, lines, title: str | None = None, ylabel: str | None = None, empty: str = "nothing logged"):
    """Draw ``lines`` (``(label, (steps, values), matplotlib style)``) on the ``Axes`` ``ax`` against the step; lines
    without points are skipped, and a panel left empty says ``empty`` instead of drawing a blank frame."""
    for label, (steps, values), style in lines:
        if steps:
            ax.plot(steps, values, style, label=label)
    ax.set(xlabel="step", title=title or "", ylabel=ylabel or "")
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)


def plot_training_curves(
    log_history: list[dict[str, Any]],
    path: str,
    metric: str | None = None,
    title: str | None = None,
    baseline: float | None = None,
) -> dict[str, Any]:
    """Draw the losses (nats, left) and ``eval_<metric>`` (as logged, right) against step (from 0) into the PNG
    ``path``, the metric's trivial ``baseline`` (:mod:`hf_bert_tasks.tasks.metrics`; default: the log's
    ``baseline_<metric>``) as a dashed line; returns the series."""
    series = curve_series(log_history, metric)
    name = (series["metric"] or "").removeprefix("eval_")
    if baseline is None:
        baseline = next(
            (
                _number(e[f"baseline_{name}"])
                for e in reversed(log_history)
                if _number(e.get(f"baseline_{name}")) is not None
            ),
            None,
        )
    fig, (left, right) = new_figure(1, 2)
    if baseline is not None and series["eval_metric"][0]:
        right.axhline(
            baseline,
            color="grey",
            linestyle="--",
            linewidth=1,
            label=f"trivial baseline (best constant) {baseline:.3g}",
        )
    plot_lines(
        left,
        [("train loss", series["train_loss"], "-"), ("eval loss", series["eval_loss"], "o--")],
        ylabel="loss",
        empty="no loss logged",
    )
    plot_lines(
        right, [(f"dev {name}", series["eval_metric"], "o-")], ylabel=series["metric"], empty="no evaluation logged"
    )
    last = max([*series["train_loss"][0], *series["eval_loss"][0], *series["eval_metric"][0], 1])
    for ax in (left, right):  # one eval point is not drawn on a 190-210 axis
        ax.set_xlim(0, last * 1.05)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=100)
    return series


def write_training_curves(
    output_dir: str, metric: str | None = None, title: str | None = None, baseline: float | None = None
) -> str:
    """Read ``output_dir/trainer_state.json`` (``FileNotFoundError`` without it) and write
    ``output_dir/training_curves.png`` (:func:`plot_training_curves`); returns the PNG's path."""
    with open(os.path.join(output_dir, STATE_FILE), encoding="utf-8") as f:
        history = json.load(f).get("log_history", [])
    plot_training_curves(history, os.path.join(output_dir, CURVES_FILE), metric, title, baseline)
    return os.path.join(output_dir, CURVES_FILE)


def finish_training_curves(trainer, eval_metrics: dict[str, Any], metric: str, title: str | None = None) -> str | None:
    """After a run's last evaluation: log the final eval metrics if no ``Trainer`` log has them (SQuAD and NER score
    outside ``trainer.evaluate``), save ``trainer_state.json`` and write the curves; the PNG's path (main process
    only, else ``None``)."""
    if not trainer.is_world_process_zero():
        return None
    state = trainer.state
    step = max([state.global_step] + [e.get("step", 0) for e in state.log_history])
    key = f"eval_{metric}"
    if key in eval_metrics and not any(e.get("step") == step and key in e for e in state.log_history):
        numbers = {k: v for k, v in eval_metrics.items() if _number(v) is not None}
        state.log_history.append({**numbers, "epoch": state.epoch, "step": step})
    trainer.save_state()
    return write_training_curves(
        trainer.args.output_dir, metric, title, _number(eval_metrics.get(f"baseline_{metric}"))
    )


def pretraining_curves(summary: dict) -> dict:
    """The series of ``pretraining_curves.png`` from a summary's phase histories (steps continue across phases):
    ``{metric: {"train": (steps, values), "eval": (steps, values)}}`` per :data:`CURVE_METRICS` entry, from the
    logged ``metric`` and ``eval_<metric>`` (lists in log order; empty for NSP in an MLM-only run)."""
    data = {m: {"train": ([], []), "eval": ([], [])} for m in CURVE_METRICS}
    offset = 0
    for phase in summary.get("phases", []):
        for entry in phase.get("history", []):
            for metric in CURVE_METRICS:
                for split, key in (("train", metric), ("eval", f"eval_{metric}")):
                    if key in entry:
                        data[metric][split][0].append(offset + entry["step"])
                        data[metric][split][1].append(entry[key])
        offset += phase.get("steps", 0)
    return data


def plot_pretraining_curves(curves: dict, path: str):
    """Write :func:`pretraining_curves` data as a 2 x 2 PNG (MLM loss, MLM accuracy, NSP loss, NSP accuracy against
    the optimizer step; train and eval lines). Returns the ``Figure``."""
    fig, axes = new_figure(2, 2, figsize=(10, 7))
    for ax, metric in zip(axes.flatten(), CURVE_METRICS):
        title = metric.replace("_", " ").replace("mlm", "MLM").replace("nsp", "NSP")
        plot_lines(
            ax,
            [(split, curves[metric][split], style) for split, style in (("train", "-"), ("eval", "o-"))],
            title=title,
            empty="not logged (MLM only)" if metric.startswith("nsp") else "not logged",
        )
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=100)
    return fig
