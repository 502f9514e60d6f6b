"""The suite's table (``suite.md``, ``suite.json``): one row per task and scored split, read back from each task's
``all_results.json`` (nothing recomputed): the primary dev metric (mean ± std over seeds at the selected learning
rate for an lr grid or restarts, with n), the task's trivial baseline on the same examples, BERT-base and BERT-large
from the paper beside it (their split labelled: the GLUE server's test set, or dev), on the paper's 0-100 scale; and
the GLUE server's zip of the GLUE tasks' test predictions (:func:`write_glue_zip`)."""

from __future__ import annotations

import json
import os

from ..hub.cards import markdown_table


def task_rows(task, results: dict, strategy: str | None = None) -> list[dict]:
    """One row per scored split of ``task`` (a registered task) from its ``all_results.json`` ``results``: ``task``,
    ``approach`` (``fine-tuning``, or ``feature-based: <strategy>`` for a feature-based run of that layer strategy),
    ``split``, ``metric``, ``ours`` / ``std`` / ``n`` (x100 for a 0-1 metric), ``baseline``, ``paper`` ({label:
    number}; a feature-based row: Table 7's BERT-base number for its strategy, CoNLL-2003 dev only)."""
    spec = next((m for m in task.metrics if m.key == task.primary_metric), None)
    scale = 100.0 / (spec.scale if spec else 1.0)
    rows = []
    for split in task.eval_splits:
        suffix = task.split_metric_suffix(split)
        key = f"eval_{task.primary_metric}{suffix}"
        mean = results.get(f"eval_{task.primary_metric}_mean") if not suffix else None
        value = mean if mean is not None else results.get(key)
        if value is None:
            continue
        std = results.get(f"eval_{task.primary_metric}_std") if mean is not None else None
        baseline = results.get(f"baseline_{task.primary_metric}{suffix}")
        rows.append(
            {
                "task": task.name,
                "approach": "fine-tuning" if strategy is None else f"feature-based: {strategy}",
                "split": split,
                "metric": getattr(spec, "display", task.primary_metric),
                "ours": float(value) * scale,
                "std": None if std is None else float(std) * scale,
                "n": int(results.get("num_seeds", 1)) if mean is not None else 1,
                "baseline": None if baseline is None else float(baseline) * scale,
                "paper": paper_cells(task, split) if strategy is None else table7_cells(task, split, strategy),
            }
        )
    return rows


#: the note under the title of ``suite.md``
NOTE = (
    "Dev scores x100 (F1 for MRPC, QQP, SQuAD and CoNLL-2003, Matthews for CoLA, Spearman for STS-B, accuracy "
    "otherwise); the paper's columns are as it reports them, their split in brackets (GLUE: the test server), so "
    "they compare the encoders, not the splits. The trivial baseline is the best constant answer on "
    "the same examples. Feature-based rows (Table 7): the encoder frozen, a head trained on the strategy's layers; "
    "the paper reports them for BERT-base on CoNLL-2003 dev only."
)


def paper_cells(task, split: str) -> dict[str, str]:
    """``{"BERT-base": "88.9 (test server)", "BERT-large": ...}``: the paper's primary metric for the row of ``split``
    (a label's ``(dev)`` goes on the first dev split, ``(test)`` on the test split; an unlabelled one on the first dev
    split, marked as its :attr:`~hf_bert_tasks.tasks.base.Task.paper_source` says: GLUE's test server, else dev)."""
    cells = {}
    for label, values in (task.paper_results or {}).items():
        if task.primary_metric not in values:
            continue
        model, _, where = label.partition(" (")
        where = where.rstrip(")") or ("test server" if "test server" in (task.paper_source or "") else "dev")
        on = "test" if where == "test" else task.eval_splits[0]
        if on == split:
            cells[model] = f"{values[task.primary_metric]:.1f} ({where})"
    return cells


#: the zip the GLUE server takes (gluebenchmark.com/submit): every test set's file at its root, AX.tsv included
GLUE_ZIP = "glue_submission.zip"


def check_submission_file(path: str, task) -> int:
    """Check one GLUE-server file that ``task`` (a :class:`~hf_bert_tasks.tasks.glue.GlueTask`) wrote against the
    server's format and return its number of rows: a ``index\tprediction`` header, then one row per example with a
    distinct integer index and a prediction the server reads for the task (a class id, a label name, or a score in
    [0, 5]: ``GlueTask.submission_labels``). ``ValueError`` naming the file, the line and what was expected."""
    if task.submission_labels == "name":
        allowed, what = set(task.label_names), f"one of {list(task.label_names)}"
    elif task.submission_labels == "id":
        allowed, what = {str(i) for i in range(task.num_labels)}, f"a class id 0-{task.num_labels - 1}"
    else:
        allowed, what = None, "a score in [0, 5]"
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines or lines[0] != "index\tprediction":
        raise ValueError(f"{path}, line 1: expected the header 'index<TAB>prediction', got {lines[:1]}")
    seen = set()
    for number, line in enumerate(lines[1:], 2):
        index, sep, value = line.partition("\t")
        if not sep or not index.isdigit() or index in seen:
            raise ValueError(f"{path}, line {number}: expected a new integer index, a tab and a prediction: {line!r}")
        seen.add(index)
        try:
            ok = value in allowed if allowed is not None else 0.0 <= float(value) <= 5.0
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"{path}, line {number}: expected {what} as {task.name}'s prediction, got {value!r}")
    if not seen:
        raise ValueError(f"{path}: no prediction rows under the header")
    return len(seen)


def write_glue_zip(output_dir: str, tasks: list[str]) -> dict | None:
    """:data:`GLUE_ZIP` in ``output_dir`` from the GLUE-server files of the suite's GLUE tasks (each task folder's
    ``GlueTask.submission_files``, checked by :func:`check_submission_file`), at the zip's root; written anew each
    time (a new file, then renamed over the old one). Returns ``{"zip", "files", "missing"}`` (file names; ``zip``
    ``None`` when no file exists yet), or ``None`` for a suite without GLUE tasks. The server scores a zip only
    with all eleven files (AX.tsv: the MNLI model on the diagnostic set)."""
    import zipfile

    from .. import get_task
    from ..tasks.glue import GlueTask

    glue = [task for task in map(get_task, tasks) if isinstance(task, GlueTask)]
    if not glue:
        return None
    expected = {name: task for task in glue for name in task.submission_files.values()}
    found = {
        name: path
        for name, task in expected.items()
        if os.path.isfile(path := os.path.join(output_dir, task.name, name))
    }
    for name, path in found.items():
        check_submission_file(path, expected[name])
    target = os.path.join(output_dir, GLUE_ZIP)
    if found:
        with zipfile.ZipFile(target + ".tmp", "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name, path in found.items():
                zf.write(path, arcname=name)
        os.replace(target + ".tmp", target)
    return {
        "zip": GLUE_ZIP if found else None,
        "files": list(found),
        "missing": [n for n in expected if n not in found],
    }


def _glue_zip_line(glue: dict | None) -> list[str]:
    if glue is None:
        return []
    if not glue["zip"]:
        return ["GLUE server files: none yet (a GLUE task writes its file when its data has a test split).", ""]
    n, total = len(glue["files"]), len(glue["files"]) + len(glue["missing"])
    missing = f"; missing {', '.join(glue['missing'])}: the server scores a zip only with all of them" * bool(
        n < total
    )
    return [f"GLUE server zip: `{glue['zip']}`, {n} of {total} files{missing}.", ""]


def table7_cells(task, split: str, strategy: str) -> dict[str, str]:
    """``{"BERT-base": "96.1 (dev)"}``: Table 7's feature-based CoNLL-2003 dev F1 of ``strategy`` on the first dev
    split (the paper reports BERT-base only, and no test number); ``{}`` elsewhere."""
    from .. import paper

    value = paper.TABLE7_FEATURE_BASED_DEV_F1.get(strategy)
    if task.name != paper.TABLE7_TASK or value is None or split != task.eval_splits[0]:
        return {}
    return {"BERT-base": f"{value:.1f} (dev)"}


def _cell(value, std=None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}" + (f" ± {std:.1f}" if std is not None else "")


#: the chart beside ``suite.md`` (:func:`plot_suite`)
SUITE_CHART = "suite.png"


def suite_table(rows: list[dict]) -> str:
    """The suite's Markdown table of ``rows`` (:func:`task_rows`'): ours (mean ± std), n, the trivial baseline and a
    column per paper model that any row has (default BERT-base and BERT-large); ``suite.md``'s and the card's."""
    labels = sorted({label for r in rows for label in r["paper"]}) or ["BERT-base", "BERT-large"]
    return markdown_table(
        ["task", "approach", "split", "metric", "ours (mean ± std)", "n", "trivial baseline", *labels],
        [
            [r["task"], r["approach"], r["split"], r["metric"], _cell(r["ours"], r["std"]), r["n"]]
            + [_cell(r["baseline"])]
            + [r["paper"].get(label, "—") for label in labels]
            for r in rows
        ],
    )


#: Table 1's average: its nine score columns (task, split), WNLI excluded ("the problematic WNLI set"), MNLI twice
TABLE1_AVERAGE = (
    ("mnli", "validation_matched"),
    ("mnli", "validation_mismatched"),
    ("qqp", "validation"),
    ("qnli", "validation"),
    ("sst2", "validation"),
    ("cola", "validation"),
    ("stsb", "validation"),
    ("mrpc", "validation"),
    ("rte", "validation"),
)


def glue_average(rows: list[dict]) -> dict:
    """Table 1's "Average" for the suite: the mean of the nine primary scores of :data:`TABLE1_AVERAGE` (x100; MNLI
    matched and mismatched both count, WNLI not), from the fine-tuning ``rows`` (:func:`task_rows`'), and the paper's
    own average of each model recomputed from the tasks' ``paper_results`` (BERT-base 79.6, BERT-large 82.1, as
    Table 1 prints them). Returns ``{"ours": mean or None, "scored": n of 9, "missing": ["mnli validation_matched",
    ...], "paper": {"BERT-base": 79.6, ...}}``: ``ours`` only when all nine are scored (a partial mean would not be
    Table 1's)."""
    from .. import get_task

    ours = {(r["task"], r["split"]): r["ours"] for r in rows if r["approach"] == "fine-tuning"}
    missing = [f"{task} {split}" for task, split in TABLE1_AVERAGE if (task, split) not in ours]
    paper: dict[str, list[float]] = {}
    for name, split in TABLE1_AVERAGE:  # the paper's number of the column: primary metric + split suffix (_mm)
        task = get_task(name)
        key = task.primary_metric + task.split_metric_suffix(split)
        for label, values in (task.paper_results or {}).items():
            if key in values:
                paper.setdefault(label, []).append(float(values[key]))
    return {
        "ours": None if missing else sum(ours[key] for key in TABLE1_AVERAGE) / len(TABLE1_AVERAGE),
        "scored": len(TABLE1_AVERAGE) - len(missing),
        "missing": missing,
        "paper": {label: round(sum(v) / len(v), 1) for label, v in paper.items() if len(v) == len(TABLE1_AVERAGE)},
    }


def glue_average_line(average: dict | None) -> list[str]:
    """The line ``suite.md`` and the card print under the table for :func:`glue_average`'s result (none without a
    GLUE task of Table 1)."""
    if not average or not average["scored"]:
        return []
    paper = ", ".join(f"{label} {value:.1f}" for label, value in sorted(average["paper"].items()))
    if average["ours"] is None:
        head = f"needs all nine scores; {average['scored']} here, missing {', '.join(average['missing'])}"
    else:
        head = f"ours **{average['ours']:.1f}**"
    return [f"GLUE average (Table 1's: the nine columns, MNLI m and mm, WNLI excluded): {head}; paper: {paper}.", ""]


def paper_value(cell: str) -> float:
    """The number of a paper cell (:func:`paper_cells`' ``"88.9 (test server)"`` -> 88.9); ``ValueError`` naming the
    cell when it does not start with one."""
    try:
        return float(cell.split(" ", 1)[0])
    except ValueError:
        raise ValueError(f"paper cell {cell!r}: expected a number then its split, e.g. '88.9 (test server)'") from None


#: the paper's models on the chart: marker and colour
PAPER_MARKERS = {"BERT-base": ("D", "black"), "BERT-large": ("^", "dimgrey")}


def plot_suite(rows: list[dict], path: str, model: str):
    """``suite.png`` at ``path``: one horizontal bar per row of ``rows`` (:func:`task_rows`': ours on the 0-100 scale,
    coloured by approach), the std as an error bar where a row is a mean over n > 1 runs, the paper's BERT-base and
    BERT-large as markers on the rows they report, each row's trivial baseline as a short dashed line across its bar;
    ``model`` names the encoder in the title. Drawn with :func:`hf_bert_tasks.utils.plots.new_figure` (Agg, no pyplot
    state); a suite with no row yet says so. Returns the ``Figure``."""
    import textwrap

    from matplotlib.patches import Patch

    from ..utils.plots import new_figure

    height = 0.45 * max(len(rows), 1) + 2.0  # inches: a row per 0.45 in, title and axis below
    fig, ax = new_figure(figsize=(10, height))
    ys = list(range(len(rows)))[::-1]
    kinds = [r["approach"].partition(":")[0] for r in rows]  # fine-tuning, or feature-based (any strategy)
    colour = {"fine-tuning": "C0", "feature-based": "C1"}
    ax.barh(ys, [r["ours"] for r in rows], height=0.7, alpha=0.8, color=[colour[k] for k in kinds])
    handles = [Patch(color=colour[k], alpha=0.8, label=f"ours: {k}") for k in dict.fromkeys(kinds)]
    spread = [(r["ours"], y, r["std"]) for r, y in zip(rows, ys) if r["n"] > 1 and r["std"] is not None]
    if spread:
        x, y, err = zip(*spread)
        handles.append(ax.errorbar(x, y, xerr=err, fmt="none", ecolor="black", capsize=3, label="± std over n runs"))
    for label, (marker, colour) in PAPER_MARKERS.items():
        points = [(paper_value(r["paper"][label]), y) for r, y in zip(rows, ys) if label in r["paper"]]
        if points:
            handles.append(ax.scatter(*zip(*points), marker=marker, color=colour, zorder=3, label=f"paper: {label}"))
    base = [(r["baseline"], y) for r, y in zip(rows, ys) if r["baseline"] is not None]
    if base:
        handles.append(
            ax.vlines(
                [b for b, _ in base],
                [y - 0.4 for _, y in base],
                [y + 0.4 for _, y in base],
                colors="grey",
                linestyles="--",
                linewidth=1.5,
                zorder=4,
                label="trivial baseline (best constant)",
            )
        )
    ax.set_yticks(ys, [_row_label(r) for r in rows])
    lowest = min([0.0] + [r["ours"] - (r["std"] or 0.0) for r in rows] + [b for b, _ in base])
    ax.set(xlim=(lowest, 100.0), xlabel="score x100 on the row's split (suite.md names each row's metric)")
    ax.set_title("\n".join(textwrap.wrap(f"The BERT paper's tasks for {model}", 70)), fontsize=9)
    if rows:
        # under the x label, about 0.5 in below the axes whatever the number of rows (an axes fraction of the height)
        below = -0.5 / max(height - 1.5, 0.5)
        ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, below), ncol=3, fontsize=8, frameon=False)
    else:
        ax.text(0.5, 0.5, "No task has finished yet.", ha="center", va="center", transform=ax.transAxes)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return fig


def _row_label(row: dict) -> str:
    approach = "" if row["approach"] == "fine-tuning" else f", {row['approach']}"
    return f"{row['task']} {row['split']}{approach} (n={row['n']})"


def write_suite(
    output_dir: str, runs: list[dict], status: dict[str, str], model: str, flags: dict | None = None
) -> dict:
    """``suite.json`` (every row, every run and its status, the suite's ``flags``, the encoder), ``suite.md`` (the
    table, :func:`suite_table`), ``suite.png`` (:func:`plot_suite`) and :data:`GLUE_ZIP` (:func:`write_glue_zip`) in
    ``output_dir``, written anew each time, from the finished runs' ``all_results.json`` (``runs``: ``{"run", "task",
    "strategy"}``, ``suite.suite_runs``); the card, which reads them, is the suite's next step
    (:func:`hf_bert_tasks.scripts.suite_card.build_suite_card` through ``write_card``, ``suite.main``). ``model``: ``--model_name_or_path``, recorded
    as :func:`hf_bert_tasks.hub.cards.model_origin` names it (a local folder by its last two path parts; call this in
    the suite's current directory); ``flags``: the suite's command-line flags (``suite.recorded_flags``). Returns the
    summary written to ``suite.json``. ``ValueError`` naming a malformed ``all_results.json``."""
    from .. import get_task
    from ..hub.cards import SUITE_SUMMARY_FILE, model_origin

    rows = []
    tasks = list(dict.fromkeys(spec["task"] for spec in runs))
    for spec in runs:
        path = os.path.join(output_dir, spec["run"], "all_results.json")
        if not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                results = json.load(f)
        except ValueError as err:
            raise ValueError(f"{path}: not JSON ({err}); expected a finished run's all_results.json") from None
        rows += task_rows(get_task(spec["task"]), results, spec["strategy"])
    glue = write_glue_zip(output_dir, tasks)
    origin = model_origin(model)
    summary = {
        "model": origin["model_name_or_path"],
        "base_model": origin["base_model"],
        "model_origin": origin["model_origin"],
        "flags": dict(flags or {}),
        "tasks": tasks,
        "runs": [spec["run"] for spec in runs],
        "run_specs": [{k: spec[k] for k in ("run", "task", "strategy")} for spec in runs],
        "status": status,
        "rows": rows,
        "glue_submission": glue,
        "glue_average": glue_average(rows),
    }
    os.makedirs(output_dir, exist_ok=True)
    with open(os.path.join(output_dir, SUITE_SUMMARY_FILE), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    lines = [
        f"# The BERT paper's tasks for `{summary['model']}`",
        "",
        NOTE,
        "",
        suite_table(rows) if rows else "No task has finished yet.",
        "",
        *glue_average_line(summary["glue_average"]),
        *run_status_table(summary),
        "",
        *_glue_zip_line(glue),
    ]
    with open(os.path.join(output_dir, "suite.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    plot_suite(rows, os.path.join(output_dir, SUITE_CHART), summary["model"])
    return summary


def run_status_table(summary: dict) -> list[str]:
    """The lines of ``suite.md``'s table of runs: each run of ``summary`` (``suite.json``'s) and its status."""
    status = summary["status"]
    return ["| run | status |", "|---|---|", *[f"| {run} | {status.get(run, 'not run')} |" for run in summary["runs"]]]
