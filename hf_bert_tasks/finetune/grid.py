"""The paper's fine-tuning protocol in one command: a learning-rate grid x random restarts, selected on dev (§4.1).

``--lr_grid 5e-5,4e-5,3e-5,2e-5 --seeds 1,2,3`` runs every (learning rate, seed) in ``output_dir/lr_<lr>/seed_<s>/``,
selects the learning rate with the highest **mean** dev primary metric (:func:`select_learning_rate`) and copies its
best seed up to ``output_dir``. Layout, resume, extension: docs/design.md, 'Grid layout and resume'."""

from __future__ import annotations

import copy
import json
import logging
import math
import os
import shutil
import statistics
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from ..utils.checkpoints import check_output_dir, start_run

logger = logging.getLogger(__name__)

#: Written into every sub-run folder: the settings it was made with (checked before reusing it on resume).
GRID_RUN_FILE = "grid_run.json"
GRID_RESULTS_FILE = "lr_grid_results.json"
#: Arguments that may differ between a grid's first invocation and its resumption.
_RESUME_FREE = {
    "lr_grid",
    "seeds",
    "learning_rate",
    "seed",
    "output_dir",
    "overwrite_output_dir",
    "resume_from_checkpoint",
    "cache_tokenized",
    "tokenized_cache_dir",
    "overwrite_cache",
    "cache_dir",
}


def is_degenerate(value: Any) -> bool:
    """True for a metric value that cannot be ranked: ``None``, not a number, NaN or ±inf."""
    try:
        return isinstance(value, bool) or not math.isfinite(float(value))
    except (TypeError, ValueError):
        return True


def summarize(values: list) -> dict[str, Any]:
    """Mean and sample std (``ddof=1``) of one learning rate's metric over its seeds: ``{"mean", "std", "num_runs",
    "degenerate_runs"}``; ``mean`` is ``None`` (NaN) when any run :func:`is_degenerate`, ``std`` then or with < 2 runs.
    """
    bad = sum(is_degenerate(v) for v in values)
    ok = [float(v) for v in values if not is_degenerate(v)]
    mean = statistics.mean(ok) if ok and not bad else None
    std = statistics.stdev(ok) if len(ok) >= 2 and not bad else None
    return {"mean": mean, "std": std, "num_runs": len(values), "degenerate_runs": bad}


def select_learning_rate(runs: list[dict], key: str) -> tuple[float, list[dict]]:
    """The §4.1 selection: the learning rate with the highest mean ``key`` (``eval_<primary metric>``, higher is
    better) over its seeds in ``runs`` (``[{"learning_rate": lr, key: value, ...}, ...]``). Returns ``(selected_lr,
    per_lr)``, one :func:`summarize` dict (+ ``learning_rate``) per learning rate in grid order. A degenerate run ranks
    its learning rate last; ties go to the first; all degenerate: the first, with a warning. Raises ``ValueError``
    for empty ``runs``."""
    if not runs:
        raise ValueError("no runs to select a learning rate from")
    rates = list(dict.fromkeys(float(r["learning_rate"]) for r in runs))
    per_lr = [
        {"learning_rate": lr, **summarize([r.get(key) for r in runs if float(r["learning_rate"]) == lr])}
        for lr in rates
    ]
    scores = [s["mean"] if s["mean"] is not None else -math.inf for s in per_lr]
    best = scores.index(max(scores))  # first of equal maxima
    if scores[best] == -math.inf:
        logger.warning(
            "every learning rate has a run whose %s is NaN or missing; keeping the first, %g", key, rates[0]
        )
    return rates[best], per_lr


def best_run(runs: list[dict], key: str) -> dict:
    """The run with the highest ``key`` (degenerate values rank last; the first of equal values wins)."""
    scores = [-math.inf if is_degenerate(r.get(key)) else float(r[key]) for r in runs]
    return runs[scores.index(max(scores))]


def run_folder(learning_rate: float, seed: int, with_lr: bool, with_seed: bool) -> str:
    """Sub-folder of one run, relative to ``output_dir``: ``lr_5e-05/seed_1`` (``lr_5e-05`` or ``seed_1`` alone)."""
    parts = ([f"lr_{learning_rate:g}"] if with_lr else []) + ([f"seed_{seed}"] if with_seed else [])
    return os.path.join(*parts)


def grid_settings(model_args, data_args, training_args) -> dict[str, Any]:
    """The settings a sub-run is made with, minus those allowed to change on resume (paths, grid lists, caches)."""
    from .record import non_default_arguments

    out = {
        f"{part}.{f.name}": getattr(args, f.name)
        for part, args in (("model", model_args), ("data", data_args))
        for f in fields(args)
    }
    out.update({f"training.{k}": v for k, v in non_default_arguments(training_args).items()})
    return {k: v for k, v in out.items() if k.split(".", 1)[1] not in _RESUME_FREE}


def _read_json(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check_grid_output_dir(training_args) -> dict | None:
    """The output-dir guard of a grid (:func:`hf_bert_tasks.utils.checkpoints.check_output_dir`, but a finished grid may be
    extended): the earlier ``lr_grid_results.json`` when this command's (lr, seed) runs strictly extend a finished
    grid in the same folder layout, else ``None`` (also with ``--overwrite_output_dir``). Raises ``FileExistsError``
    when they repeat, leave out or move its runs, or in ``check_output_dir``'s cases."""
    top = training_args.output_dir
    path = os.path.join(top, GRID_RESULTS_FILE)
    finished = os.path.isfile(path) and os.path.isfile(os.path.join(top, "all_results.json"))
    if training_args.overwrite_output_dir or not finished:  # an unfinished grid resumes (sub-runs are checked)
        check_output_dir(training_args)
        return None
    previous = _read_json(path)
    with_lr, with_seed = bool(training_args.lr_grid), bool(training_args.seeds)
    old = {(float(r["learning_rate"]), int(r["seed"])): r["path"] for r in previous.get("runs", [])}
    new = {(float(lr), int(seed)) for lr in training_args.learning_rates for seed in training_args.seed_list}
    moved = [
        (p, run_folder(lr, seed, with_lr, with_seed))
        for (lr, seed), p in old.items()
        if os.path.normpath(p) != run_folder(lr, seed, with_lr, with_seed)
    ]
    if moved:
        raise FileExistsError(
            f"--output_dir {top} already holds a finished grid with a run in {moved[0][0]}, but this command would "
            f"put that run in {moved[0][1]} (--lr_grid and --seeds name the folders); repeat the earlier flags "
            "(adding learning rates or seeds extends the grid), pass --overwrite_output_dir to redo it, or choose "
            "another folder"
        )
    if not set(old) < new:
        missing = sorted(set(old) - new)
        why = (
            f"leaves out {len(missing)} of its runs (first: lr {missing[0][0]:g} seed {missing[0][1]})"
            if missing
            else "repeats the same runs"
        )
        raise FileExistsError(
            f"--output_dir {top} already holds a finished grid (lr_grid_results.json) and this command {why}; "
            "to extend it, give every earlier learning rate and seed plus new ones; pass --overwrite_output_dir to "
            "redo it, or choose another folder"
        )
    logger.info(
        "extending the finished grid in %s: %d earlier run(s) reused, %d new; the selection is redone over "
        "all of them",
        top,
        len(old),
        len(new - set(old)),
    )
    return previous


def run_grid(
    task, model_args, data_args, training_args, run_one: Callable[[Any, str | None], dict], extends: dict | None = None
) -> dict[str, Any]:
    """Run every (learning rate, seed) with ``run_one(args, checkpoint) -> metrics`` (``checkpoint``:
    :func:`hf_bert_tasks.utils.checkpoints.start_run`'s), reusing finished sub-runs (docs/design.md), then select and copy
    up. ``extends``: the earlier ``lr_grid_results.json`` (:func:`check_grid_output_dir`), kept as ``extended_from``.
    Returns the top-level ``all_results.json`` content (the selected run's metrics plus the grid keys).

    Raises:
        ValueError: no evaluation split, or ``--resume_from_checkpoint PATH`` with several runs (use ``auto``).
        FileExistsError: a finished sub-run made with other settings, or an unfinished one's checkpoints without
            ``--resume_from_checkpoint auto`` / ``--overwrite_output_dir`` (:func:`~.checkpoints.start_run`).
        FileNotFoundError: a missing ``--resume_from_checkpoint PATH``."""
    from ..tasks.files import write_json

    key = f"eval_{task.primary_metric}"
    rates, seeds = training_args.learning_rates, training_args.seed_list
    resume = training_args.resume_from_checkpoint
    if resume and str(resume).lower() != "auto" and len(rates) * len(seeds) > 1:
        raise ValueError(
            f"--resume_from_checkpoint {resume}: a checkpoint path resumes one run, not a grid of "
            f"{len(rates) * len(seeds)}; use --resume_from_checkpoint auto"
        )
    top = training_args.output_dir
    settings = grid_settings(model_args, data_args, training_args)
    runs = []
    for lr in rates:
        for seed in seeds:
            rel = run_folder(lr, seed, bool(training_args.lr_grid), bool(training_args.seeds))
            metrics = _train_or_reuse(training_args, lr, seed, os.path.join(top, rel), key, settings, run_one)
            scores = {
                k: None if is_degenerate(v) else float(v)
                for k, v in metrics.items()
                if k.startswith("eval_") and k.removeprefix("eval_") in task.metric_names
            }
            runs.append({"learning_rate": lr, "seed": seed, "path": rel, **scores})
    per_lr, grid_keys = _grid_selection(task, runs, key, len(rates), len(seeds))
    if training_args.process_index != 0:
        return grid_keys
    best_dir = os.path.join(top, grid_keys["selected_run"])
    for name in os.listdir(best_dir):
        src = os.path.join(best_dir, name)
        if os.path.isfile(src) and name not in (GRID_RUN_FILE, "README.md"):  # the card: written below
            shutil.copy2(src, os.path.join(top, name))
    record = {
        "selected_on": key,
        "selection": "highest mean over seeds; a NaN/missing run makes its learning rate rank last (BERT §4.1)",
        "std": "sample standard deviation (ddof=1); null with one seed or a degenerate run",
        **{k: grid_keys[k] for k in ("selected_learning_rate", "best_learning_rate", "selected_seed", "selected_run")},
        "learning_rates": rates,
        "seeds": seeds,
        "per_learning_rate": per_lr,
        "runs": runs,
    }
    if extends:
        keys = ("learning_rates", "seeds", "selected_learning_rate", "selected_seed")
        record["extended_from"] = {k: extends.get(k) for k in keys}
    write_json(os.path.join(top, GRID_RESULTS_FILE), record)
    results = {**_read_json(os.path.join(top, "all_results.json")), **grid_keys}
    write_json(os.path.join(top, "all_results.json"), results)
    from .card import write_finetune_card

    write_finetune_card(top, task=task)  # the selected run's card, with the grid's table
    print("\n".join(grid_table_lines(per_lr, key, grid_keys, best_dir)))  # the full record: lr_grid_results.json
    return results


def grid_table_lines(per_lr: list[dict], key: str, grid_keys: dict, best_dir: str, width: int | None = None) -> list:
    """The grid's summary as printed, fitting ``width`` columns (the terminal's when ``None``;
    :func:`hf_bert_tasks.console.render_table`): a row per learning rate (mean and sample std of ``key`` over its
    seeds, runs, degenerate runs, best seed; the selected one marked), then the selection in one line."""
    from ..console import render_table, terminal_width, wrap_words

    width = terminal_width() if width is None else width
    selected = grid_keys["selected_learning_rate"]
    table = []
    for s in per_lr:
        lr = f"{s['learning_rate']:g}" + (" (selected)" if s["learning_rate"] == selected else "")
        mean, std = ("—" if v is None else f"{v:.4f}" for v in (s["mean"], s["std"]))
        table.append((lr, mean, std, str(s["num_runs"]), str(s["degenerate_runs"]), str(s.get("best_seed", "—"))))
    done = (
        f"selected lr {selected:g} (highest mean {key} over seeds, BERT §4.1); its best seed "
        f"{grid_keys['selected_seed']} copied up from {best_dir}; every run: {GRID_RESULTS_FILE}"
    )
    head = ("learning rate", f"mean {key}", "std", "runs", "NaN runs", "best seed")
    return ["", *render_table(head, table, width=width), *wrap_words(done, width)]


def _train_or_reuse(training_args, lr: float, seed: int, folder: str, key: str, settings: dict, run_one) -> dict:
    """The metrics of the sub-run (``lr``, ``seed``) in ``folder``: a finished run's results, reused when it was made
    with the same ``settings`` (:func:`_check_same_settings`), else ``run_one(args, checkpoint)`` trains it (an
    interrupted run's checkpoints resumed or overwritten as :func:`~.checkpoints.start_run` decides; one stopped
    before its evaluation is trained again). Raises ``ValueError`` when the metrics lack ``key`` (no dev split)."""
    from ..tasks.files import write_json

    args = copy.deepcopy(training_args)
    args.learning_rate, args.seed, args.output_dir = lr, seed, folder
    results_path = os.path.join(folder, "all_results.json")
    metrics = None
    if os.path.isfile(results_path) and not training_args.overwrite_output_dir:
        _check_same_settings(folder, json.loads(json.dumps(settings)))  # tuples -> lists, as on disk
        metrics = _read_json(results_path)
        if key in metrics:
            logger.info("lr %g seed %d: %s is finished; reusing its results", lr, seed, folder)
        else:  # stopped between training and evaluation: the same settings and seed train it again
            logger.warning(
                "lr %g seed %d: %s has training results but no %s (stopped before its evaluation); training it again",
                lr,
                seed,
                folder,
                key,
            )
            args.overwrite_output_dir, metrics = True, None
    if metrics is None:
        checkpoint = start_run(args)  # an interrupted sub-run's checkpoints: resume (auto) or overwrite, never lose
        if args.process_index == 0:
            write_json(os.path.join(folder, GRID_RUN_FILE), {"learning_rate": lr, "seed": seed, "settings": settings})
        logger.info("lr %g seed %d: training into %s", lr, seed, folder)
        metrics = run_one(args, checkpoint)
    if key not in metrics:
        raise ValueError(
            f"--lr_grid/--seeds need an evaluation split to select on; {key} was not computed "
            f"(found {sorted(k for k in metrics if k.startswith('eval_'))})"
        )
    return metrics


def _grid_selection(task, runs: list[dict], key: str, num_rates: int, num_seeds: int) -> tuple[list[dict], dict]:
    """The §4.1 selection over ``runs``: each learning rate's summary (:func:`select_learning_rate`, its best seed
    and every metric's mean and std over seeds added) and the grid keys of ``all_results.json`` (the selected learning
    rate, seed and run folder, the grid's size, the selected learning rate's means and stds)."""
    selected, per_lr = select_learning_rate(runs, key)
    chosen = best_run([r for r in runs if r["learning_rate"] == selected], key)
    names = [m for m in task.metric_names if f"eval_{m}" in runs[0]]
    for summary in per_lr:
        lr_runs = [r for r in runs if r["learning_rate"] == summary["learning_rate"]]
        summary["best_seed"] = best_run(lr_runs, key)["seed"]
        for m in names:
            stats = summarize([r.get(f"eval_{m}") for r in lr_runs])
            summary[f"eval_{m}_mean"], summary[f"eval_{m}_std"] = stats["mean"], stats["std"]
    selected_summary = next(s for s in per_lr if s["learning_rate"] == selected)
    grid_keys = {  # best_learning_rate: the key of earlier versions
        "selected_learning_rate": selected,
        "best_learning_rate": selected,
        "selected_seed": chosen["seed"],
        "selected_run": chosen["path"],
        "num_seeds": num_seeds,
        "num_learning_rates": num_rates,
        **{f"eval_{m}_{s}": selected_summary[f"eval_{m}_{s}"] for m in names for s in ("mean", "std")},
    }
    return per_lr, grid_keys


def _check_same_settings(folder: str, stored: dict) -> None:
    path = os.path.join(folder, GRID_RUN_FILE)
    if not os.path.isfile(path):
        raise FileExistsError(
            f"{folder} holds a finished run that no grid made ({GRID_RUN_FILE} missing); "
            "pass --overwrite_output_dir to redo it or choose another --output_dir"
        )
    recorded = _read_json(path).get("settings", {})
    diff = sorted(k for k in set(recorded) | set(stored) if recorded.get(k) != stored.get(k))
    if diff:
        shown = ", ".join(f"{k}: {recorded.get(k)!r} then, {stored.get(k)!r} now" for k in diff[:5])
        raise FileExistsError(
            f"{folder} is a finished run of this grid made with other settings ({shown}); "
            "pass --overwrite_output_dir to redo the grid or choose another --output_dir"
        )


def load_seed_runs(output_dirs: list[str]) -> list[dict]:
    """``[{"seed", "metrics"}]`` from finished output dirs (``all_results.json``, the record's seed or ``"?"``);
    ``FileNotFoundError`` for a folder without ``all_results.json``."""
    from ..hub.cards import read_record

    expected = "every --seed_runs folder must hold a finished run"
    return [
        {"seed": (read_record(d) or {}).get("seed", "?"), "metrics": read_record(d, "all_results.json", expected)}
        for d in output_dirs
    ]
