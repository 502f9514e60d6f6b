"""The comparison report of ``hf-bert-tasks compare`` and the quickstart's step 4: ``comparison.json`` (every row),
``comparison.md`` (laid out like the paper's Table 7) and ``comparison.png`` (a bar per arm, the paper's numbers and
the trivial baseline marked)."""

from __future__ import annotations

import itertools
import json
import os
import textwrap

from ..modes import get_training_mode
from ..tasks.metrics import MARGIN


def paper_split(source: str) -> str:
    """``"dev"`` or ``"test"`` when the paper source names one split only (GLUE: "test server"), else ``""``."""
    splits = [s for s in ("dev", "test") if s in source.lower()]
    return splits[0] if len(splits) == 1 else ""


#: the report's columns, ``(row key, format)``; a missing value is ``—`` (the ``mean`` cell is written apart)
_COLUMNS = (
    ("name", "{}"),
    ("paper", "{:.1f}"),
    ("mean", "{}"),
    ("epochs", "{}"),
    ("learning_rate", "{}"),
    ("trainable_parameters", "{:,}"),
    ("wall_seconds", "{:.0f}"),
)


def write_report(task, rows: list[dict], output_dir: str, title: str) -> dict[str, str]:
    """Write ``comparison.md``, ``comparison.json`` and ``comparison.png``; returns their paths. Each row: ``name``,
    ``mode``, ``mean``/``std``/``n`` (0-100 scale), ``paper``/``paper_source``, ``wall_seconds``, ``reused`` and the
    :func:`~hf_bert_tasks.scripts.compare.arm_budget` keys (``—`` when absent)."""
    os.makedirs(output_dir, exist_ok=True)
    paths = {k: os.path.join(output_dir, f"comparison.{k}") for k in ("md", "json", "png")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump(
            {"task": task.name, "metric": task.primary_metric, "title": title, "rows": rows}, f, indent=2, default=str
        )
    baselines = sorted({round(r["baseline"], 1) for r in rows if r.get("baseline") is not None})
    with open(paths["md"], "w", encoding="utf-8") as f:
        f.write("\n".join(report_lines(task, rows, title, baselines)))
    plot_report(task, rows, title, baselines, paths["png"])
    return paths


def _table_row(row: dict) -> str:
    """One arm's line of the Markdown table (:data:`_COLUMNS`; the paper's split and the spread over seeds added)."""
    split = paper_split(row.get("paper_source") or "")
    cells = {col: "—" if row.get(col) is None else fmt.format(row[col]) for col, fmt in _COLUMNS}
    cells["name"] += " (reused)" if row["reused"] else ""
    cells["paper"] += f" ({split})" if split and row["paper"] is not None else ""
    spread = f" ± {row['std']:.1f}" if row["n"] > 1 else ""
    cells["mean"] = f"{row['mean']:.1f}{spread} (n={row['n']})" if row["mean"] is not None else "n/a"
    return "| " + " | ".join(cells.values()) + " |"


def report_lines(task, rows: list[dict], title: str, baselines: list[float]) -> list[str]:
    """``comparison.md`` as lines: title, what the numbers are, the table grouped as Table 7 (each mode's
    ``report_group``), the trivial ``baselines`` (0-100, the arms within :data:`~hf_bert_tasks.tasks.metrics.MARGIN`
    points of them named) and the paper numbers' sources."""
    key = task.primary_metric
    lines = [
        f"# {title}",
        "",
        (
            f"Task `{task.name}`, dev {task.metric_spec(key).display} (`{key}`) on a 0-100 scale: the mean over n runs "
            "(seeds), ± the sample std when n > 1; epochs, peak learning rate and trainable "
            "parameters of each arm; wall time per run (seconds, mean; feature-based runs include "
            "building or reading the feature cache)."
        ),
        "",
        f"| System | Paper | Ours (dev {key}) | epochs | lr | trainable params | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for group, members in itertools.groupby(rows, lambda r: get_training_mode(r["mode"]).report_group):
        lines += [f"| **{group}** | | | | | | |", *map(_table_row, members)]
    if baselines:  # the best constant answer on the same dev examples (hf_bert_tasks.tasks.metrics)
        near = [
            r["name"]
            for r in rows
            if r["mean"] is not None and r.get("baseline") is not None and r["mean"] - r["baseline"] < MARGIN
        ]
        lines += [
            "",
            f"Trivial baseline (the best constant answer on the same dev examples: majority class, all-O or "
            f"empty answer): **{' / '.join(f'{b:.1f}' for b in baselines)}**. "
            + (
                f"Within {MARGIN:g} points of it (learnt next to nothing): {', '.join(near)}."
                if near
                else f"Every arm beats it by {MARGIN:g} points or more."
            ),
        ]
    sources = sorted({r["paper_source"] for r in rows if r["paper_source"]})
    return lines + [
        "",
        "Paper numbers: " + ("; ".join(sources) if sources else "none for this task") + ". The paper used "
        "BERT-BASE/LARGE on full data; ours use the model and sizes named above.",
        "",
    ]


def plot_report(task, rows: list[dict], title: str, baselines: list[float], path: str) -> None:
    """``comparison.png`` at ``path``: a bar per arm (mean ± std, coloured by mode), the paper's numbers as black
    diamonds and each trivial baseline as a dashed line, on a 0-100 axis (gaps not inflated)."""
    from matplotlib.patches import Patch

    from ..utils.plots import new_figure

    fig, ax = new_figure(figsize=(7, 0.45 * len(rows) + 1.8))
    ys = list(range(len(rows)))[::-1]
    ax.barh(
        ys,
        [r["mean"] or 0.0 for r in rows],
        xerr=[r["std"] for r in rows],
        alpha=0.8,
        color=[get_training_mode(r["mode"]).colour for r in rows],
    )
    modes = list(dict.fromkeys(r["mode"] for r in rows))  # one legend entry per bar colour, named as the bars
    handles = [Patch(color=get_training_mode(m).colour, alpha=0.8, label=f"ours: {m} (mean ± std)") for m in modes]
    paper_pts = [(r["paper"], y) for r, y in zip(rows, ys) if r["paper"] is not None]
    if paper_pts:
        handles.append(ax.scatter(*zip(*paper_pts), marker="D", color="black", zorder=3, label="paper"))
    for b in baselines:
        handles.append(
            ax.axvline(b, color="grey", linestyle="--", linewidth=1, label=f"trivial baseline (best constant) {b:.1f}")
        )
    ax.set_yticks(ys, [f"{r['name']} (n={r['n']})" for r in rows])
    ax.set(xlim=(0.0, 100), xlabel=f"dev {task.metric_spec(task.primary_metric).display} (0-100; mean over n seeds)")
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=9)
    # below the axes, so no bar (they reach 80-90 on most tasks) is hidden behind it
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=7, frameon=False)
    fig.savefig(path, dpi=110, bbox_inches="tight")
