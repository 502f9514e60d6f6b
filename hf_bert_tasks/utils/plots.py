"""Matplotlib helpers the recipes and reports draw with (Agg canvas, no pyplot state): a figure, lines with a
placeholder for an empty panel, a grid of panels."""

from __future__ import annotations


def new_figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (9, 3.4)):
    """``(figure, axes)``: a ``matplotlib.figure.Figure`` (constrained layout, Agg canvas, no ``plt.close`` needed)
    and its ``nrows x ncols`` axes (one ``Axes`` when both are 1, else an array)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots(nrows, ncols)


def plot_panels(path: str, panels, nrows: int, ncols: int, figsize: tuple[float, float]):
    """Write a PNG of ``nrows x ncols`` panels (``panels``: ``(title, lines, empty)`` each, or ``(title, lines, empty,
    references)`` with ``references`` a list of ``(Axes method, args, kwargs)`` drawn first, e.g. ``("axhline",
    (0.5,), {"label": "chance 0.5"})``; then :func:`plot_lines` with a light grid) to ``path``; returns the
    ``Figure``."""
    fig, axes = new_figure(nrows, ncols, figsize=figsize)
    for ax, (title, lines, empty, *references) in zip(getattr(axes, "flat", [axes]), panels):
        for method, args, kwargs in references[0] if references else []:
            getattr(ax, method)(*args, **kwargs)
        plot_lines(ax, lines, title=title, empty=empty)
        ax.grid(alpha=0.3)
    fig.savefig(path, dpi=100)
    return fig


def plot_lines(ax, lines, title: str | None = None, ylabel: str | None = None, empty: str = "nothing logged"):
    """Draw ``lines`` (``(label, (steps, values), matplotlib style)``) on the ``Axes`` ``ax`` against the step; lines
    without points are skipped (so no legend entry names a series that is not drawn), a single point gets a marker
    (a line style alone draws nothing for it), and a panel left empty says ``empty`` instead of drawing a blank
    frame."""
    for label, (steps, values), style in lines:
        if len(steps) == 1 and not any(marker in style for marker in "o.sD^v*x+"):
            style += "o"
        if steps:
            ax.plot(steps, values, style, label=label)
    ax.set(xlabel="step", title=title or "", ylabel=ylabel or "")
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes)
