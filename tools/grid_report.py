"""Markdown report of ``--lr_grid ... --seeds ...`` runs: mean ± std per learning rate, per seed, per epoch.

Reads what ``hf-bert-tasks finetune --lr_grid ... --seeds ...`` wrote (issue 15, BERT §4.1 protocol) and prints the
tables that go into ``docs/results.md``:

    python tools/grid_report.py runs/grid/rte runs/grid/mrpc --data_dir rte=../shared/data/glue/RTE \
        --data_dir mrpc=../shared/data/glue/MRPC

Per grid folder it reads every finished sub-run (``lr_<lr>/seed_<s>/all_results.json``, with ``grid_run.json`` for
the task and ``trainer_state.json`` for the per-epoch dev metric), so an interrupted grid is reported as far as it
got: unfinished sub-runs are listed, never averaged in. The selection uses the recipe's own rule
(:func:`hf_bert_tasks.finetune.grid.select_learning_rate`: highest mean over seeds, a NaN run ranks its learning rate
last), over the learning rates whose seeds all finished.

With ``--data_dir TASK=DIR`` the constant-prediction baseline of the primary metric is computed on the same dev file
(every example given the dev set's most frequent label, scored by the task's own metric): the "chance" line that
says whether a task left it (RTE majority class = 52.7 % accuracy; MRPC always-"paraphrase" F1 = 81.2).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys
from collections import Counter


def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def collect(grid_dir: str) -> tuple[str | None, list[dict], list[str]]:
    """Finished and unfinished sub-runs of one grid folder.

    Returns:
        ``(task_name, runs, unfinished)``: ``runs`` has one dict per finished sub-run with ``learning_rate``,
        ``seed``, ``path``, its ``all_results.json`` keys and ``epochs`` (``[(epoch, {eval_*: value}), ...]`` from
        ``trainer_state.json``, empty when absent); ``unfinished`` lists sub-run folders without ``all_results.json``.
    """
    runs, unfinished, task = [], [], None
    for run_json in sorted(glob.glob(os.path.join(grid_dir, "lr_*", "seed_*", "grid_run.json"))):
        folder = os.path.dirname(run_json)
        info = _read(run_json)
        task = task or info.get("settings", {}).get("data.task")
        results_path = os.path.join(folder, "all_results.json")
        if not os.path.isfile(results_path):
            unfinished.append(os.path.relpath(folder, grid_dir))
            continue
        run = {
            "learning_rate": float(info["learning_rate"]),
            "seed": int(info["seed"]),
            "path": os.path.relpath(folder, grid_dir),
            **_read(results_path),
        }
        state_path = os.path.join(folder, "trainer_state.json")
        history = _read(state_path).get("log_history", []) if os.path.isfile(state_path) else []
        run["epochs"] = [(h["epoch"], h) for h in history if any(k.startswith("eval_") for k in h)]
        runs.append(run)
    return task, runs, unfinished


def constant_baseline(task_name: str, data_dir: str) -> tuple[str, float, int]:
    """Primary dev metric of predicting the dev set's most frequent label for every example, and the dev size.

    Raises:
        ValueError: the task has no ``label`` column on its validation split (not a classification task).
    """
    import numpy as np

    from hf_bert_tasks.tasks.base import get_task

    task = get_task(task_name)
    dev = task.read_local(data_dir)["validation"]
    if "label" not in dev.column_names:
        raise ValueError(f"{task_name}: no 'label' column in the validation split of {data_dir}")
    labels = np.asarray(dev["label"])
    majority = Counter(labels.tolist()).most_common(1)[0][0]
    metrics = task.compute_metrics(np.full_like(labels, majority), labels)
    names = getattr(dev.features["label"], "names", None)
    shown = names[majority] if names else majority
    return f"every dev example labelled {shown!r}", float(metrics[task.primary_metric]), len(labels)


def binomial_line(runs: list[dict], rates: list[float], key: str, chance: float, n: int) -> str:
    """Per learning rate, the one-sided exact binomial p-value of its mean dev accuracy against the constant
    prediction's (``scipy.stats.binomtest``, ``k = round(mean * n)`` correct of ``n``): does it leave chance?
    The seeds share one dev set, so their mean is tested as one set of ``n`` answers, not ``3n``."""
    from scipy.stats import binomtest

    parts = []
    for lr in rates:
        values = [r[key] for r in runs if r["learning_rate"] == lr]
        k = round(statistics.mean(values) * n)
        parts.append(f"{lr:g}: {k}/{n} correct, p = {binomtest(k, n, chance, alternative='greater').pvalue:.3f}")
    return (
        "One-sided binomial test of the mean accuracy against the constant prediction: " + "; ".join(parts) + "."
        if parts
        else ""
    )


def _pm(values: list[float]) -> str:
    if not values:
        return "–"
    if len(values) == 1:
        return f"{100 * values[0]:.1f} (n=1)"
    return f"{100 * statistics.mean(values):.1f} ± {100 * statistics.stdev(values):.1f} (n={len(values)})"


def report(grid_dir: str, data_dirs: dict[str, str], grid_seeds: list[int] | None = None) -> str:
    from hf_bert_tasks.finetune.grid import is_degenerate, select_learning_rate
    from hf_bert_tasks.tasks.base import get_task

    task_name, runs, unfinished = collect(grid_dir)
    if not runs:
        return f"### {grid_dir}\n\nno finished sub-run ({len(unfinished)} unfinished)\n"
    task = get_task(task_name)
    key = f"eval_{task.primary_metric}"
    seeds = sorted(set(grid_seeds or []) | {r["seed"] for r in runs} | {int(p.split("seed_")[1]) for p in unfinished})
    rates = sorted({r["learning_rate"] for r in runs}, reverse=True)
    complete = [lr for lr in rates if {r["seed"] for r in runs if r["learning_rate"] == lr} >= set(seeds)]
    selected = select_learning_rate([r for r in runs if r["learning_rate"] in complete], key)[0] if complete else None
    max_epoch = max((round(e) for r in runs for e, _ in r["epochs"]), default=0)
    lines = [f"### {task_name}: dev {task.primary_metric} (x100), {len(runs)} finished run(s) in `{grid_dir}`", ""]
    head = [
        "learning rate",
        *[f"seed {s}" for s in seeds],
        "mean ± std (final)",
        *[f"after epoch {e}: mean ± std" for e in range(1, max_epoch)],
        "train s / run (median)",
    ]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lr in rates:
        lr_runs = {r["seed"]: r for r in runs if r["learning_rate"] == lr}
        cells = [f"**{lr:g}** (selected)" if lr == selected else f"{lr:g}"]
        cells += [
            "NaN"
            if s in lr_runs and is_degenerate(lr_runs[s].get(key))
            else f"{100 * lr_runs[s][key]:.1f}"
            if s in lr_runs
            else "not run"
            for s in seeds
        ]
        finals = [r[key] for r in lr_runs.values() if not is_degenerate(r.get(key))]
        cells.append(_pm(finals) + ("" if lr in complete else " (incomplete)"))
        for e in range(1, max_epoch):
            cells.append(
                _pm(
                    [
                        h[key]
                        for r in lr_runs.values()
                        for ep, h in r["epochs"]
                        if round(ep) == e and not is_degenerate(h.get(key))
                    ]
                )
            )
        times = [r["train_runtime"] for r in lr_runs.values() if "train_runtime" in r]
        cells.append(f"{statistics.median(times):.0f}" if times else "–")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    if task_name in data_dirs:
        what, value, n = constant_baseline(task_name, data_dirs[task_name])
        lines.append(f"Constant prediction ({what}): {task.primary_metric} {100 * value:.1f}.")
        if task.primary_metric == "accuracy" and complete:
            lines.append(binomial_line(runs, complete, key, value, n))
    if selected is None:
        lines.append("No learning rate has all its seeds finished: nothing selected.")
    if unfinished:
        lines.append(f"Unfinished (not averaged): {', '.join(unfinished)}.")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grid_dirs", nargs="+", help="output_dir of a --lr_grid/--seeds run")
    parser.add_argument(
        "--data_dir",
        action="append",
        default=[],
        metavar="TASK=DIR",
        help="dev data of TASK, for the constant-prediction baseline (repeatable)",
    )
    parser.add_argument(
        "--seeds",
        default=None,
        help="the grid's --seeds (e.g. 1,2,3): seeds not started show as "
        "'not run' and make their learning rate incomplete",
    )
    args = parser.parse_args(argv)
    data_dirs = dict(item.split("=", 1) for item in args.data_dir)
    for grid_dir in args.grid_dirs:
        seeds = [int(s) for s in args.seeds.split(",")] if args.seeds else None
        sys.stdout.write(report(grid_dir, data_dirs, seeds) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
