"""Model cards from a run's records: metrics -> ``EvalResult`` -> ``model-index``, prose in Jinja templates.

``ModelCard.from_template`` fills ``hf_bert_tasks/templates/<kind>.md``; tables come from
``transformers.modelcard.make_markdown_table``. Every declared metric (:attr:`hf_bert_tasks.tasks.base.Task.metrics`)
of ``all_results.json`` becomes an ``EvalResult`` (:func:`eval_results_from_metrics`); everything else comes from
the run record :data:`RUN_INFO_FILE` (nothing is guessed from a folder's files, no pickle is loaded). Each run writes
its card, ``README.md``, with its model (:func:`write_card`); no network call here: merging with the Hub's card is
:mod:`hf_bert_tasks.hub.push`'s.
"""

from __future__ import annotations

import logging
import os
import statistics
from typing import Any

import jinja2
from transformers.modelcard import make_markdown_table, parse_log_history

from ..hub.cards import (
    RUN_INFO_FILE,
    dataset_display_name,
    eval_results_from_metrics,
    format_cell,
    framework_versions,
    grouped_metrics,
    markdown_table,
    read_record,
    render_card,
    split_metrics,
)
from ..hub.cards import write_card as write_card_with
from ..modes import mode_text

logger = logging.getLogger(__name__)


# -------------------------------------------------------------------------------------------- inputs
def card_inputs(output_dir: str, task=None, grid: bool = True) -> dict[str, Any]:
    """Everything a fine-tune card reads from ``output_dir`` and computes, in one call: ``task`` (the registered
    :class:`~hf_bert_tasks.tasks.base.Task`: ``task`` itself, or looked up by name, default the record's),
    ``metrics`` (``all_results.json``), ``info`` (the run record :data:`RUN_INFO_FILE`, ``{}`` without one),
    ``config`` (``config.json``, ``{}``), ``grid`` (``lr_grid_results.json`` with ``grid``, else ``None``),
    ``dataset`` (the record's, with ``max_eval_samples``), ``keys`` / ``per_split`` / ``others`` / ``scored`` /
    ``paper_rows`` (:func:`hf_bert_tasks.hub.cards.grouped_metrics`), ``dataset_name``
    (:func:`dataset_display_name`), ``eval_results`` (:func:`eval_results_from_metrics`) and ``mode_text``
    (:func:`mode_text`).

    Raises:
        FileNotFoundError: ``output_dir`` or its ``all_results.json`` is missing.
        ValueError: no ``task`` and no record naming one; a JSON file is malformed (names it and the line).
    """
    metrics, info, config, grid_file = (
        read_record(output_dir, "all_results.json", "expected a finished fine-tuning run"),
        read_record(output_dir) or {},
        read_record(output_dir, "config.json") or {},
        read_record(output_dir, "lr_grid_results.json") if grid else None,
    )
    if not (task or info.get("task")):
        from ..tasks import list_tasks

        raise ValueError(
            f"{output_dir}: no {RUN_INFO_FILE} names the task (a run of an older version, or one "
            f"that did not finish initialising); pass --task (one of {list_tasks()})"
        )
    if not info:
        logger.warning(
            "%s has no %s (written while training by RunRecordCallback): the card leaves out the base "
            "model (name it with --base_model), training mode, data arguments, seed, hyperparameters and log",
            output_dir,
            RUN_INFO_FILE,
        )
    if task is None or isinstance(task, str):
        from ..tasks import get_task

        task = get_task(task or info["task"])
    dataset = dict(info.get("dataset") or {"id": task.hub_dataset, "config": task.hub_config})
    if dataset.get("user_files") and isinstance(config.get("id2label"), dict):  # the labels the user's files gave
        task = task.with_label_names(config["id2label"][k] for k in sorted(config["id2label"], key=int))
    dataset["max_eval_samples"] = (info.get("data_arguments") or {}).get("max_eval_samples")
    # a user's own files are not the paper's data: no comparison with its table
    grouped = grouped_metrics(task, metrics, paper=not dataset.get("user_files"))
    recorded = info.get("training_mode") or {}
    return {
        "task": task,
        "metrics": metrics,
        "info": info,
        "config": config,
        "grid": grid_file,
        "dataset": dataset,
        **grouped,
        "dataset_name": dataset_display_name(task),
        "description": task.user_data_description() if dataset.get("user_files") else task.description,
        "eval_results": eval_results_from_metrics(task, metrics, dataset, grouped["keys"], grouped["per_split"]),
        # the mode's own words, recorded while training (a record of an older version: looked up in modes)
        "mode_text": recorded.get("description") if "description" in recorded else mode_text(recorded),
    }


# -------------------------------------------------------------------------------------------- rendering
def _grid_fields(task, grid: dict | None, runs: list[dict], keys: tuple[dict, dict]) -> dict:
    """The template fields of a card for several seeds (``runs``: ``seeds_table``) and the §4.1 grid (``grid``:
    ``lr_grid_results.json``)."""
    return {"seeds_table": _seeds_table(task, runs, keys), **_lr_grid_fields(task, grid, keys[0])}


def _seeds_table(task, runs: list[dict], keys: tuple[dict, dict]) -> str:
    """Mean ± sample std per split and metric over ``runs`` (``[{"seed", "metrics"}]``); ``""`` for fewer than 2."""
    if len(runs) < 2:
        return ""
    per_run = [split_metrics(task, r.get("metrics", r), keys=keys) for r in runs]
    rows = []
    for split in task.eval_splits:
        for name in task.metric_names:
            vals = [p[split][name] for p in per_run if split in p and name in p[split]]
            if len(vals) >= 2:
                spread = f"{statistics.mean(vals):.4f} ± {statistics.stdev(vals):.4f}"
                rows.append([split, display_name(keys[0], name), spread, len(vals)])
    return markdown_table(["split", "metric", "mean ± std", "runs"], rows)


def _lr_grid_fields(task, grid: dict | None, specs: dict) -> dict:
    """The template fields of the §4.1 protocol from ``lr_grid_results.json`` (``grid``; :mod:`hf_bert_tasks.finetune.grid`):
    the grid, its metric's name and its table; ``{}`` without it."""
    if not isinstance(grid, dict) or not grid.get("per_learning_rate"):
        return {}  # no grid, or one written before seeds existed (runs only)
    key = grid.get("selected_on", f"eval_{task.primary_metric}")
    metric = display_name(specs, key.removeprefix("eval_"))
    rows = []
    for s in grid["per_learning_rate"]:
        values = [r.get(key) for r in grid.get("runs", []) if r.get("learning_rate") == s["learning_rate"]]
        mean = "NaN (a degenerate run)" if s.get("mean") is None else format_cell(s["mean"])
        mean = mean if s.get("std") is None else f"{mean} ± {format_cell(s['std'])}"
        rate = f"{s['learning_rate']:g}" + (
            " (selected)" if s["learning_rate"] == grid.get("selected_learning_rate") else ""
        )
        per_seed = ", ".join("NaN" if v is None else format_cell(v) for v in values)
        rows.append([rate, s.get("num_runs", len(values)), mean, per_seed])
    table = markdown_table(["learning rate", "runs", f"dev {metric}: mean ± std", "per seed"], rows)
    return {"grid": grid, "grid_metric": metric, "grid_table": table}


def _results_fields(inputs: dict) -> dict:
    """The table of metrics per split of :func:`card_inputs`' ``inputs`` (as computed; a ``<split>: trivial
    baseline`` row from the metrics' ``baseline_*`` keys), its scale and the declared non-metrics; ``{}`` when none."""
    per_split, metrics, (specs, suffixes) = inputs["per_split"], inputs["metrics"], inputs["keys"]
    if not per_split:
        return {}
    names = list(dict.fromkeys(n for v in per_split.values() for n in v))
    rows = [[split] + [v.get(n, "") for n in names] for split, v in per_split.items()]
    for split in per_split:  # the best constant answer on the same split (tasks/metrics.py), when recorded
        suffix = suffixes[split]
        if any(f"baseline_{n}{suffix}" in metrics for n in names):
            rows.append([f"{split}: trivial baseline"] + [metrics.get(f"baseline_{n}{suffix}", "") for n in names])
    scales = sorted({specs[n].scale for n in names})
    return {
        "results_table": markdown_table(["split"] + [display_name(specs, n) for n in names], rows),
        "scale": " and ".join("0-1" if s == 1.0 else "0-100" for s in scales),
        "reported": [
            f"{display_name(specs, n)} = {format_cell(int(v) if float(v).is_integer() else v)} ({split})"
            for split, vals in inputs["others"].items()
            for n, v in vals.items()
        ],
    }


def _paper_table(inputs: dict) -> str:
    """Ours beside :attr:`~hf_bert_tasks.tasks.base.Task.paper_results` (x100; :func:`card_inputs`' ``paper_rows``);
    ``""`` when the paper has none."""
    specs = inputs["keys"][0]
    rows = [
        [label, display_name(specs, base), split, "" if ours is None else f"{ours:.1f}", f"{float(paper):.1f}"]
        for label, base, split, ours, paper in inputs["paper_rows"]
    ]
    return markdown_table(["paper model", "metric", "our split", "ours", "paper"], rows) if rows else ""


def _record_fields(info: dict, base_model: str | None, dataset: dict, mode_paragraph: str) -> dict:
    """The template fields read from the run record ``info`` (``{}`` for a folder without one): base model and its
    source, ``dataset`` and ``mode_paragraph`` (:func:`card_inputs`'), seed, data arguments, hyperparameters table and
    training log."""
    if base_model:
        base, base_source = base_model, "given with --base_model"
    else:
        base, base_source = info.get("base_model"), info.get("base_model_source", "not recorded by the run")
    hyper, log_history = info.get("hyperparameters") or {}, info.get("log_history")
    # Trainer's log as transformers' cards show it; the template falls back to the final training loss
    train_log, log_lines, _ = parse_log_history(log_history) if log_history else (None, None, None)
    rows = [[k, f"`{v}`"] for k, v in sorted(hyper.items())]
    return {
        "base": base,
        "base_source": base_source,
        "dataset": dataset,
        "seed": info.get("seed"),
        "training_mode": mode_paragraph,
        "data_arguments": info.get("data_arguments"),
        "hyperparameters_table": markdown_table(["argument", "value"], rows) if rows else "",
        "log_history": log_history,
        "train_log": train_log,
        "log_table": make_markdown_table(log_lines).rstrip("\n") if log_lines else "",
    }


def build_finetune_card(
    output_dir: str,
    *,
    task=None,
    base_model: str | None = None,
    repo_id: str | None = None,
    seed_runs: list[dict] | None = None,
    license: str = "apache-2.0",
    tags: list[str] | None = None,
    files: list[str] | None = None,
):
    """The model card of a fine-tuning output dir, from its run record (no network call, no pickle).

    Args:
        output_dir: a finished run: ``all_results.json`` and the run record :data:`RUN_INFO_FILE`; ``config.json``
            and ``lr_grid_results.json`` are read when present.
        task: registered task (a :class:`~hf_bert_tasks.tasks.base.Task` or its name); default: the record's. Required for a folder without a record (whose card
            then has no base model, mode, seed, hyperparameters or log: nothing is guessed).
        base_model: Hub id of the starting checkpoint, overriding the record's (none for a local folder:
            :func:`hf_bert_tasks.hub.cards.model_origin`).
        repo_id: the Hub repo the card is for (title and usage snippet); default: the folder name.
        seed_runs: ``[{"seed": s, "metrics": {...all_results...}}, ...]`` (this run included): mean ± std table.
        license, tags: the card's license and extra tags.
        files: the files being pushed (for the file list); default: the folder's listing.

    Returns:
        ``huggingface_hub.ModelCard`` whose ``data`` holds ``model-index`` with every metric.

    Raises:
        FileNotFoundError: ``output_dir`` or its ``all_results.json`` is missing.
        ValueError: no ``task`` and no record naming one; a JSON file is malformed (names it and the line).
    """
    inputs = card_inputs(output_dir, task, grid=not seed_runs)  # every file read and every number grouped, once
    the_task, info, keys, dataset = inputs["task"], inputs["info"], inputs["keys"], inputs["dataset"]
    problem = the_task.problem  # its Hub task, the pipeline that serves the model and its usage code
    pipeline_tag, hub_task = problem.pipeline, problem.hub_task
    feature_based = inputs["config"].get("model_type") == "bert_feature_based"
    remote_code = bool(inputs["config"].get("auto_map"))  # its own modeling code
    remote = ", trust_remote_code=True" if feature_based and remote_code else ""
    usage = jinja2.Template(problem.card_usage, undefined=jinja2.StrictUndefined)  # a misspelt name fails here
    usage_code = usage.render(target=repo_id or output_dir, remote=remote, task=the_task)
    fields = _record_fields(info, base_model, dataset, inputs["mode_text"])
    # LoRA runs save the merged (plain) model too; only an adapter-only folder is a peft repo
    adapter_only = os.path.isfile(os.path.join(output_dir, "adapter_config.json")) and not os.path.isfile(
        os.path.join(output_dir, "model.safetensors")
    )
    per_split, runs, specs = inputs["per_split"], [r for r in (seed_runs or []) if r], keys[0]
    grid_fields = {"seeds_table": ""}
    if len(runs) > 1 or inputs["grid"]:  # the seeds' mean ± std, the §4.1 grid's table (lr_grid_results.json)
        grid_fields = _grid_fields(the_task, inputs["grid"], runs, keys)
    return render_card(
        "finetuned",
        output_dir,
        repo_id,
        [the_task.name, hub_task, *(tags or [])],
        files,
        info.get("framework_versions") or framework_versions(),
        "framework_versions" in info,
        {
            "base_model": fields["base"],
            "datasets": None if dataset.get("user_files") else [dataset.get("id") or the_task.hub_dataset],
            "license": license,
            "library_name": "peft" if adapter_only else "transformers",
            "pipeline_tag": pipeline_tag,
            "metrics": list(dict.fromkeys(specs[m].hub_id for m in the_task.metric_names)),
            "eval_results": inputs["eval_results"] or None,
        },
        task=the_task,
        pipeline_tag=pipeline_tag,
        hub_task=hub_task,
        dataset_name=inputs["dataset_name"],
        description=inputs["description"],
        primary_name=display_name(specs, the_task.primary_metric),
        primary=per_split.get(the_task.eval_splits[0], {}).get(the_task.primary_metric),
        **_results_fields(inputs),
        scored=inputs["scored"],
        paper_table=_paper_table(inputs),
        seed_runs=runs,
        **grid_fields,
        feature_based=feature_based,
        remote_code=remote_code,
        usage_code=usage_code,
        needs_package=bool(problem.pipeline_module),  # the package's pipeline serves it (SQuAD)
        **fields,
    )


def write_finetune_card(output_dir: str, **kwargs) -> str | None:
    """``README.md`` of a finished fine-tuning run: :func:`hf_bert_tasks.hub.cards.write_card` with
    :func:`build_finetune_card` (``kwargs``: its, e.g. ``task``); returns the path, ``None`` for a kept edited card."""
    return write_card_with(output_dir, build_finetune_card, **kwargs)


def display_name(specs: dict, key: str) -> str:
    """The declared display name of ``key`` (``specs``: {key: MetricSpec}; the key itself for an undeclared one)."""
    return getattr(specs.get(key), "display", key)
