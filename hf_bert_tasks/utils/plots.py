"""Matplotlib helpers both recipes draw their curves with (Agg canvas, no pyplot state): a figure, the loss / metric
series of a ``trainer_state.json`` log history, lines with a placeholder for an empty panel, a grid of panels."""

from __future__ import annotations

import math
from typing import Any


def new_figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (9, 3.4)):
    """``(figure, axes)``: a ``matplotlib.figure.Figure`` (constrained layout, Agg canvas, no ``plt.close`` needed)
    and its ``nrows x ncols`` axes (one ``Axes`` when both are 1, else an array)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols)


def finite_number(value) -> float | None:
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
                if k.startswith("eval_") and k not in skip and finite_number(entry[k]) is not None
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
            value = finite_number(entry.get(key)) if key else None
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


def plot_panels(path: str, panels, nrows: int, ncols: int, figsize: tuple[float, float]):
    """Write a PNG of ``nrows x ncols`` panels (``panels``: ``(title, lines, empty)`` each, drawn by
    :func:`plot_lines` with a light grid) to ``path``; returns the ``Figure``."""
    fig, axes = new_figure(nrows, ncols, figsize=figsize)
    for ax, (title, lines, empty) in zip(getattr(axes, "flat", [axes]), panels):
        plot_lines(ax, lines, title=title, empty=empty)
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=100)
    return fig
