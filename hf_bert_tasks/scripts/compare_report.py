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
    ``mode``, ``mean``/``std``/``n`` (0-100 scale), ``paper``/``paper_source``, ``wall_seconds``, ``reused``, the
    :func:`~hf_bert_tasks.scripts.compare.arm_budget` keys (``—`` when absent) and, where the runs recorded them,
    ``train_examples``, ``dev_examples``, ``steps``, ``cache_build_seconds``."""
    os.makedirs(output_dir, exist_ok=True)
    paths = {k: os.path.join(output_dir, f"comparison.{k}") for k in ("md", "json", "png")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump(
            {"task": task.name, "metric": task.primary_metric, "title": title, "verdict": verdict(rows), "rows": rows},
            f,
            indent=2,
            default=str,
        )
    baselines = trivial_baselines(rows)
    with open(paths["md"], "w", encoding="utf-8") as f:
        f.write("\n".join(report_lines(task, rows, title, baselines)))
    plot_report(task, rows, title, baselines, paths["png"])
    return paths


def trivial_baselines(rows: list[dict]) -> list[float]:
    """The distinct trivial baselines of the arms (0-100, one decimal), sorted."""
    return sorted({round(r["baseline"], 1) for r in rows if r.get("baseline") is not None})


def _cells(row: dict, with_paper: bool, n_apart: bool = False) -> list[str]:
    """One arm's cells (:data:`_COLUMNS`, the paper's only ``with_paper``; its split and the spread over seeds
    added; ``—`` where a value is missing); ``n_apart``: the number of runs in a cell of its own after the mean."""
    split = paper_split(row.get("paper_source") or "")
    cells = {col: "—" if row.get(col) is None else fmt.format(row[col]) for col, fmt in _COLUMNS}
    cells["name"] += " (reused)" if row["reused"] else ""
    cells["paper"] += f" ({split})" if split and row["paper"] is not None else ""
    spread = f" ± {row['std']:.1f}" if row["n"] > 1 else ""
    n = "" if n_apart else f" (n={row['n']})"
    cells["mean"] = f"{row['mean']:.1f}{spread}{n}" if row["mean"] is not None else "n/a"
    if n_apart:
        cells = {**dict(itertools.islice(cells.items(), 3)), "n": str(row["n"]), **dict(list(cells.items())[3:])}
    if not with_paper:
        del cells["paper"]
    return list(cells.values())


def _table_row(row: dict, with_paper: bool = True) -> str:
    """One arm's line of the Markdown table (:func:`_cells`)."""
    return "| " + " | ".join(_cells(row, with_paper)) + " |"


def _header(key: str, with_paper: bool, n_apart: bool = False) -> list[str]:
    """The table's column titles (``Paper`` only ``with_paper``; ``n_apart``: the console's, with ``n``: :func:`_cells`)."""
    if n_apart:  # the console's: short titles, so that the table fits 80 columns
        head = ["system", "paper", f"dev {key}", "n", "epochs", "lr", "trained params", "wall s"]
    else:
        head = ["System", "Paper", f"Ours (dev {key})", "epochs", "lr", "trainable params", "wall s"]
    return head if with_paper else [h for h in head if h.lower() != "paper"]


def _ratio(a: float | None, b: float | None, unit: str) -> str | None:
    """``"29,000x the trainable parameters (58,530 vs 2)"``-style text for ``a`` against ``b``; ``None`` when either
    is missing or ``b`` is 0."""
    if a is None or b is None or not b:
        return None
    ratio = a / b
    shown = f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.2g}"
    number = "{:,.0f}" if unit == "trainable parameters" else "{:.1f} s"
    return f"{shown}x the {unit} ({number.format(a)} vs {number.format(b)})"


def verdict(rows: list[dict]) -> str | None:
    """The line that answers "which arm should I use?": the best arm by mean (0-100), its margin over the next one,
    whether that margin exceeds the seeds' spread (the two arms' sample stds summed; unknown with n = 1, so a gap may
    be noise), and its cost against the next one in trainable parameters and wall time per run. ``None`` with fewer
    than two arms scored; "none yet" when even the best arm is within :data:`~hf_bert_tasks.tasks.metrics.MARGIN`
    points of its trivial baseline."""
    scored = sorted((r for r in rows if r["mean"] is not None), key=lambda r: r["mean"], reverse=True)
    if len(scored) < 2:
        return None
    best, nxt = scored[:2]
    margin = best["mean"] - nxt["mean"]
    if min(best["n"], nxt["n"]) < 2:
        noise = "one seed (n = 1), so the seeds' spread is unknown and the gap may be noise: run --seeds 1,2,3"
    elif margin > best["std"] + nxt["std"]:
        noise = f"more than the seeds' spread (std {best['std']:.1f} + {nxt['std']:.1f})"
    else:
        noise = f"within the seeds' spread (std {best['std']:.1f} + {nxt['std']:.1f}): not a real difference"
    head = (
        f"Verdict: {best['name']} {best['mean']:.1f} ties with {nxt['name']}"
        if margin == 0
        else f"Verdict: {best['name']} is best, {best['mean']:.1f}, {margin:+.1f} points over {nxt['name']} "
        f"({nxt['mean']:.1f})"
    )
    costs = [
        c
        for c in (
            _ratio(best.get("trainable_parameters"), nxt.get("trainable_parameters"), "trainable parameters"),
            _ratio(best.get("wall_seconds"), nxt.get("wall_seconds"), "time per run"),
        )
        if c
    ]
    if best.get("baseline") is not None and best["mean"] - best["baseline"] < MARGIN:
        return (
            f"Verdict: none yet: the best arm, {best['name']} ({best['mean']:.1f}), is within {MARGIN:g} points of "
            f"the trivial baseline ({best['baseline']:.1f}); no arm has learnt the task (see each arm's hint)."
        )
    return f"{head}; {noise}" + (f"; cost: {', '.join(costs)}." if costs else ".")


def sizes_line(rows: list[dict]) -> str | None:
    """ "Trained on N examples, scored on M dev examples (each run)" from the runs' ``train_examples`` /
    ``dev_examples`` (several sizes listed when arms differ); ``None`` when no run recorded them."""
    train = sorted({r["train_examples"] for r in rows if r.get("train_examples") is not None})
    dev = sorted({r["dev_examples"] for r in rows if r.get("dev_examples") is not None})
    if not train and not dev:
        return None
    train_text, dev_text = (" / ".join(f"{n:,}" for n in sizes) or "?" for sizes in (train, dev))
    return f"Trained on {train_text} examples, scored on {dev_text} dev examples (each run)."


def cache_line(rows: list[dict]) -> str | None:
    """The feature cache's one-off build (seconds, the arm and seed that built it), apart from the strategies it
    serves (their ``wall s`` leave it out); ``None`` when no arm built one."""
    built = [r for r in rows if r.get("cache_build_seconds")]
    if not built:
        return None
    users = [r["name"] for r in rows if r.get("strategy")]
    seconds = sum(r["cache_build_seconds"] for r in built)
    return (
        f"Feature cache (every layer of the frozen encoder): built once in {seconds:.2f} s, by "
        f"{', '.join(r['name'] for r in built)}; shared by {', '.join(users)}, whose wall s leave the build out."
    )


def arm_notes(row: dict) -> list[str]:
    """What a reader needs under an arm: ``n = 1`` (no spread), and for an arm within
    :data:`~hf_bert_tasks.tasks.metrics.MARGIN` points of its trivial baseline, its steps and learning rate with what
    to try."""
    notes = []
    if row["n"] == 1:
        notes.append("n = 1: one seed, no spread; a gap to another arm may be noise.")
    if row["mean"] is not None and row.get("baseline") is not None and row["mean"] - row["baseline"] < MARGIN:
        steps = f"{row['steps']} step(s)" if row.get("steps") is not None else f"{row.get('epochs', '?')} epoch(s)"
        notes.append(
            f"at the trivial baseline ({row['baseline']:.1f}): it trained {steps} at learning rate "
            f"{row.get('learning_rate', '?')}; try more steps (--num_train_epochs / --max_steps) or --lr_grid."
        )
    return notes


def report_lines(task, rows: list[dict], title: str, baselines: list[float]) -> list[str]:
    """``comparison.md`` as lines: title, what the numbers are, the verdict (:func:`verdict`), the sizes, the table
    grouped as Table 7 (each mode's ``report_group``; the ``Paper`` column only where a paper number exists, i.e. on
    the paper's data), each arm's :func:`arm_notes`, the feature cache's build, the trivial ``baselines`` (0-100, the
    arms within :data:`~hf_bert_tasks.tasks.metrics.MARGIN` points of them named) and the paper numbers' sources."""
    key = task.primary_metric
    with_paper = any(r["paper"] is not None for r in rows)
    head = _header(key, with_paper)
    lines = [f"# {title}", "", _intro(task), ""]
    lines += [f"**{line}**" for line in (verdict(rows),) if line] + [line for line in (sizes_line(rows),) if line]
    lines += ["", "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for group, members in itertools.groupby(rows, lambda r: get_training_mode(r["mode"]).report_group):
        lines += [f"| **{group}** |" + " |" * (len(head) - 1), *(_table_row(r, with_paper) for r in members)]
    notes = [f"- {r['name']}: {note}" for r in rows for note in arm_notes(r)]
    lines += ["", *notes] if notes else []
    lines += ["", cache_line(rows)] if cache_line(rows) else []
    lines += ["", baseline_text(rows, baselines)] if baselines else []
    sources = sorted({r["paper_source"] for r in rows if r["paper_source"]})
    if sources:
        lines += ["", f"Paper numbers: {'; '.join(sources)}. The paper used BERT-BASE/LARGE on full data."]
    return lines + [""]


def _intro(task) -> str:
    """What the numbers of the report are."""
    key = task.primary_metric
    return (
        f"Task `{task.name}`, dev {task.metric_spec(key).display} (`{key}`) on a 0-100 scale: the mean over n runs "
        "(seeds), ± the sample std when n > 1; epochs, peak learning rate and trainable parameters of each arm; "
        "wall time per run (seconds, mean; feature-based runs include reading the feature cache, its one-off build "
        "is shown apart)."
    )


def baseline_text(rows: list[dict], baselines: list[float]) -> str:
    """The trivial baselines (0-100) and the arms within :data:`~hf_bert_tasks.tasks.metrics.MARGIN` of them."""
    near = [
        r["name"]
        for r in rows
        if r["mean"] is not None and r.get("baseline") is not None and r["mean"] - r["baseline"] < MARGIN
    ]
    return (
        f"Trivial baseline (the best constant answer on the same dev examples: majority class, all-O or "
        f"empty answer): **{' / '.join(f'{b:.1f}' for b in baselines)}**. "
        + (
            f"Within {MARGIN:g} points of it (learnt next to nothing): {', '.join(near)}."
            if near
            else f"Every arm beats it by {MARGIN:g} points or more."
        )
    )


def console_lines(task, rows: list[dict], title: str, baselines: list[float], width: int | None = None) -> list[str]:
    """The report as printed: :func:`report_lines`' content as plain text fitting ``width`` columns (the
    terminal's when ``None``, :func:`hf_bert_tasks.console.render_table`), the verdict first, each arm's notes under
    it, Table 7's groups as headings."""
    from ..console import render_table, terminal_width, wrap_words

    width = terminal_width() if width is None else width
    with_paper = any(r["paper"] is not None for r in rows)
    groups = [get_training_mode(r["mode"]).report_group for r in rows]
    headings = [g if i == 0 or g != groups[i - 1] else None for i, g in enumerate(groups)]
    texts = [verdict(rows), sizes_line(rows)]
    lines = ["", *wrap_words(title, width), "", *(line for t in texts if t for line in wrap_words(t, width)), ""]
    table = [_cells(r, with_paper, n_apart=True) for r in rows]
    head = _header(task.primary_metric, with_paper, n_apart=True)
    lines += render_table(head, table, width=width, notes=[arm_notes(r) for r in rows], headings=headings)
    extra = [cache_line(rows), baseline_text(rows, baselines).replace("**", "") if baselines else None]
    sources = sorted({r["paper_source"] for r in rows if r["paper_source"]})
    extra.append(f"Paper numbers: {'; '.join(sources)}." if sources else None)
    return lines + [line for t in extra if t for line in ("", *wrap_words(t, width))]


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
