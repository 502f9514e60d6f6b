"""Model cards from a run's records: metrics -> ``EvalResult`` -> ``model-index``, prose in Jinja templates.

``ModelCard.from_template`` fills ``hf_bert_tasks/templates/<kind>.md``; tables come from
``transformers.modelcard.make_markdown_table``. Every declared metric (:attr:`hf_bert_tasks.tasks.base.Task.metrics`)
of ``all_results.json`` becomes an ``EvalResult``; everything else comes from the run record :data:`RUN_INFO_FILE`
(nothing is guessed, no pickle is loaded). No network call: merging with the Hub's card is :mod:`hf_bert_tasks.hub`'s.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import statistics
from fnmatch import fnmatch
from typing import Any

from transformers.modelcard import make_markdown_table, parse_log_history

from .run_record import HIDDEN_ARGUMENTS, RUN_INFO_FILE, framework_versions, non_default_arguments, read_record  # noqa: F401

logger = logging.getLogger(__name__)

#: Written by the pretraining recipe (:mod:`hf_bert_tasks.pretraining`).
PRETRAINING_SUMMARY_FILE = "pretraining_summary.json"

#: Files pushed with a card, described in its file list (shell patterns; the first that matches wins).
FILE_DESCRIPTIONS = {
    "model.safetensors": "weights (safetensors)",
    "adapter_model.safetensors": "LoRA adapter weights (safetensors)",
    "config.json": "model configuration (label names in `id2label`)",
    "vocab.txt": "WordPiece vocabulary",
    **dict.fromkeys(
        ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"), "tokenizer"
    ),
    "all_results.json": "all train / eval metrics",
    "eval_results.json": "eval metrics",
    "train_results.json": "train metrics",
    RUN_INFO_FILE: "the run record (task, data, arguments, training log)",
    "comparison.md": "fine-tuning vs frozen-feature comparison report",
    "comparison.json": "comparison numbers",
    "lr_grid_results.json": "every (learning rate, seed) run of the §4.1 selection, mean ± std per learning rate",
    PRETRAINING_SUMMARY_FILE: "pretraining summary (corpus, masking, steps, accuracies)",
    "trainer_state.json": "training log history",
    "training_curves.png": "loss and eval metric against step",
    "*.png": "comparison chart",
    "*.tsv": "predictions",
    "*predictions*": "predictions",
    **dict.fromkeys(("modeling.py", "heads.py", "strategies.py"), "frozen-feature model code (`trust_remote_code`)"),
}


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else f"{value:.{digits}g}"
            if abs(value) < 1e-3 and value
            else f"{value:.{digits}f}"
        )
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    """``make_markdown_table`` of ``rows`` under ``header`` (floats shown with :func:`_fmt`)."""
    return make_markdown_table([dict(zip(header, (_fmt(v) for v in row))) for row in rows]).rstrip("\n")


def _display(task, key: str) -> str:
    """The declared display name of ``key`` (the key itself for an undeclared one)."""
    return getattr(task.metric_spec(key), "display", key)


# ------------------------------------------------------------------------------------------ eval results
def _split_of_key(task, key: str) -> tuple[str, str] | None:
    """``eval_f1_test`` -> (``test``, ``f1``) for the task's eval splits; ``None`` for a non-metric key."""
    if not key.startswith("eval_"):
        return None
    rest = key[len("eval_") :]
    others = [(s, task.split_metric_suffix(s)) for s in task.eval_splits[1:]]
    for split, suffix in sorted(others, key=lambda x: -len(x[1])):
        if suffix and rest.endswith(suffix):
            return split, rest[: -len(suffix)]
    return task.eval_splits[0], rest


def split_metrics(task, metrics: dict[str, Any], non_metrics: bool = False) -> dict[str, dict[str, float]]:
    """Group Trainer-style ``eval_*`` metrics by split: ``{"validation": {"f1": 0.9, ...}, "test": {...}}``.

    Only declared keys are kept, :attr:`metric_names` first; ``non_metrics=True`` returns the declared non-metrics
    instead (thresholds, counts). Trainer's keys (``eval_loss`` …) are dropped, undeclared ones with a warning.
    """
    from .tasks.base import TRAINER_KEYS

    out: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        parsed = _split_of_key(task, key)
        if parsed is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        split, name = parsed
        if name in TRAINER_KEYS or name.endswith("_samples"):
            continue
        spec = task.metric_spec(name)
        if spec is None:
            logger.warning("%s is not declared by task %r (Task.metrics); left out of the card", key, task.name)
        elif spec.is_metric != non_metrics:
            out.setdefault(split, {})[name] = float(value)
    order = {m: i for i, m in enumerate(task.metric_names)}
    return {
        s: dict(sorted(v.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
        for s, v in sorted(out.items(), key=lambda kv: task.eval_splits.index(kv[0]))
    }


def dataset_display_name(task) -> str:
    """A readable dataset name: ``GLUE MRPC``, ``CoNLL-2003``, ``SQuAD v1.1`` (from the task description)."""
    head = task.description.split(":")[0].strip()
    return f"GLUE {head}" if task.hub_dataset.endswith("/glue") else head


def eval_results_from_metrics(task, metrics: dict[str, Any], dataset: dict[str, Any] | None = None) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    ``metrics``: ``all_results.json``'s ``eval_<metric>[<split suffix>]`` -> float (``examples_scored<suffix>``: the
    examples scored, stated as ``dataset.args.num_examples``); ``dataset``: ``{"id", "config", "revision"}``
    overriding the task's Hub dataset, ``user_files`` (split -> file name: the file is the dataset) and
    ``max_eval_samples`` (the split is then ``validation[:300]``, the ``datasets`` slice actually scored). ``task_type`` is the pipeline tag, ``metric_type`` the
    declared Hub metric id, ``metric_value`` on the declared scale; NaN values are skipped with a warning.
    """
    from huggingface_hub import EvalResult

    dataset = dataset or {}
    files, limit = dataset.get("user_files") or {}, dataset.get("max_eval_samples")
    results = []
    for split, values in split_metrics(task, metrics).items():
        scored = metrics.get(f"examples_scored{task.split_metric_suffix(split)}")
        source = {
            "dataset_type": dataset.get("id") or task.hub_dataset,
            "dataset_name": dataset_display_name(task),
            "dataset_config": dataset.get("config", task.hub_config),
            "dataset_revision": dataset.get("revision"),
        }
        if split in files:  # the user's own file: no claim about the Hub dataset
            ext = os.path.splitext(files[split])[1].lstrip(".").lower()
            source = {
                "dataset_type": "json" if ext in ("json", "jsonl") else ext or "csv",
                "dataset_name": f"{files[split]} (user file)",
                "dataset_config": None,
                "dataset_revision": None,
            }
        subset = f"{split}[:{int(scored)}]" if limit and scored is not None and int(scored) == int(limit) else split
        for name, value in values.items():
            if math.isnan(value):
                logger.warning("%s on %s is NaN; left out of model-index", name, split)
                continue
            spec = task.metric_spec(name)
            results.append(
                EvalResult(
                    task_type=task.pipeline_tag,
                    task_name=task.pipeline_tag.replace("-", " ").title(),
                    **source,
                    dataset_split=subset,
                    dataset_args={"num_examples": int(scored)} if scored is not None else None,
                    metric_type=spec.hub_id,
                    metric_name=spec.display,
                    metric_config=spec.config,
                    metric_value=round(value, 6),
                )
            )
    return results


def eval_result_key(result) -> tuple:
    """What identifies one result in ``model-index``: task, dataset (id, config, split), metric type and config."""
    return (
        result.task_type,
        result.dataset_type,
        result.dataset_config,
        result.dataset_split,
        result.metric_type,
        result.metric_config,
    )


def merge_eval_results(existing: list, new: list) -> list:
    """``existing`` with each result of ``new`` replacing the one with its :func:`eval_result_key` in place, the
    others of ``new`` appended: one entry per key."""
    merged = {eval_result_key(r): r for r in existing or []}
    merged.update((eval_result_key(r), r) for r in new)
    return list(merged.values())


# -------------------------------------------------------------------------------------------- rendering
def _results_fields(
    task, per_split: dict[str, dict[str, float]], others: dict[str, dict[str, float]], metrics: dict | None = None
) -> dict:
    """The table of metrics per split (as computed; a ``<split>: trivial baseline`` row from ``metrics``'
    ``baseline_*`` keys), its scale and the declared non-metrics; ``{}`` when none."""
    metrics = metrics or {}
    if not per_split:
        return {}
    names = list(dict.fromkeys(n for v in per_split.values() for n in v))
    rows = [[split] + [v.get(n, "") for n in names] for split, v in per_split.items()]
    for split in per_split:  # the best constant answer on the same split (baselines.py), when recorded
        suffix = task.split_metric_suffix(split)
        if any(f"baseline_{n}{suffix}" in metrics for n in names):
            rows.append([f"{split}: trivial baseline"] + [metrics.get(f"baseline_{n}{suffix}", "") for n in names])
    scales = sorted({task.metric_spec(n).scale for n in names})
    return {
        "results_table": _table(["split"] + [_display(task, n) for n in names], rows),
        "scale": " and ".join("0-1" if s == 1.0 else "0-100" for s in scales),
        "reported": [
            f"{_display(task, n)} = {_fmt(int(v) if float(v).is_integer() else v)} ({split})"
            for split, vals in others.items()
            for n, v in vals.items()
        ],
    }


def _paper_table(task, metrics: dict[str, Any]) -> str:
    """Ours beside :attr:`~hf_bert_tasks.tasks.base.Task.paper_results` (x100); ``""`` when the paper has none."""
    rows = []
    for label, values in (task.paper_results or {}).items():
        for metric, paper in values.items():
            split, base = _split_of_key(task, f"eval_{metric}")
            labelled = re.search(r"\((dev|test|validation)\)", label)  # "BERT-base (test)": compare on test if scored
            if (
                split == task.eval_splits[0]
                and labelled
                and labelled.group(1) == "test"
                and "test" in task.eval_splits
            ):
                split = "test"
            ours = metrics.get(f"eval_{base}{task.split_metric_suffix(split)}")
            spec = task.metric_spec(base)
            rows.append(
                [
                    label,
                    _display(task, base),
                    split,
                    "" if ours is None or spec is None else f"{spec.to_percent(float(ours)):.1f}",
                    f"{float(paper):.1f}",
                ]
            )
    return _table(["paper model", "metric", "our split", "ours", "paper"], rows) if rows else ""


def _seeds_table(task, runs: list[dict]) -> str:
    """Mean ± sample std per split and metric over ``runs`` (``[{"seed", "metrics"}]``); ``""`` for fewer than 2."""
    if len(runs) < 2:
        return ""
    per_run = [split_metrics(task, r.get("metrics", r)) for r in runs]
    rows = []
    for split in task.eval_splits:
        for name in task.metric_names:
            vals = [p[split][name] for p in per_run if split in p and name in p[split]]
            if len(vals) >= 2:
                rows.append(
                    [
                        split,
                        _display(task, name),
                        f"{statistics.mean(vals):.4f} ± {statistics.stdev(vals):.4f}",
                        len(vals),
                    ]
                )
    return _table(["split", "metric", "mean ± std", "runs"], rows)


def _lr_grid_fields(task, output_dir: str) -> dict:
    """The template fields of the §4.1 protocol from ``lr_grid_results.json`` (:mod:`hf_bert_tasks.lr_grid`): the
    grid, its metric's name and its table; ``{}`` without it."""
    grid = read_record(output_dir, "lr_grid_results.json")
    if not isinstance(grid, dict) or not grid.get("per_learning_rate"):
        return {}  # no grid, or one written before seeds existed (runs only)
    key = grid.get("selected_on", f"eval_{task.primary_metric}")
    metric = _display(task, key.removeprefix("eval_"))
    rows = []
    for s in grid["per_learning_rate"]:
        values = [r.get(key) for r in grid.get("runs", []) if r.get("learning_rate") == s["learning_rate"]]
        mean = "NaN (a degenerate run)" if s.get("mean") is None else _fmt(s["mean"])
        selected = " (selected)" if s["learning_rate"] == grid.get("selected_learning_rate") else ""
        rows.append(
            [
                f"{s['learning_rate']:g}{selected}",
                s.get("num_runs", len(values)),
                mean if s.get("std") is None else f"{mean} ± {_fmt(s['std'])}",
                ", ".join("NaN" if v is None else _fmt(v) for v in values),
            ]
        )
    table = _table(["learning rate", "runs", f"dev {metric}: mean ± std", "per seed"], rows)
    return {"grid": grid, "grid_metric": metric, "grid_table": table}


def _mode_text(mode: dict | None, output_dir: str, config: dict | None = None) -> str:
    """The training-mode paragraph from the record's ``training_mode`` (``{"mode", "strategy"}``), else from the
    folder's files (:func:`hf_bert_tasks.modes.infer_training_mode`)."""
    from .modes import TRAINING_MODES, infer_training_mode

    mode = dict(mode or {}) if (mode or {}).get("mode") else infer_training_mode(output_dir, config)
    if mode["mode"] in TRAINING_MODES:
        return TRAINING_MODES[mode["mode"]].describe(mode.get("strategy"))
    return f"Training mode: **{mode['mode']}**." + (
        f" Feature strategy: `{mode['strategy']}`." if mode.get("strategy") else ""
    )


def _render(
    kind: str,
    output_dir: str,
    repo_id: str | None,
    tags: list[str],
    files: list[str] | None,
    versions: dict[str, str],
    recorded: bool,
    data: dict,
    **fields,
):
    """``templates/<kind>.md`` filled with ``ModelCardData(**data)`` and ``fields``, plus what both cards share:
    the name (``repo_id``'s or the folder's), the usage target, tags, the described ``files`` (default: the folder's
    listing) and versions. ``FileNotFoundError`` for a ``kind`` with no template."""
    from huggingface_hub import ModelCard, ModelCardData

    path = os.path.join(os.path.dirname(__file__), "templates", f"{kind}.md")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model card template {kind!r}: {path} not found (expected finetuned or pretrained)")

    name = (repo_id or os.path.basename(os.path.normpath(output_dir))).split("/")[-1]
    tags = list(dict.fromkeys(["bert", "hf_bert_tasks", *tags]))
    listed = files if files is not None else sorted(os.listdir(output_dir))
    described = [(n, next((d for p, d in FILE_DESCRIPTIONS.items() if fnmatch(n, p)), None)) for n in listed]
    return ModelCard.from_template(
        ModelCardData(model_name=name, language="en", tags=tags, **data),
        template_path=path,
        name=name,
        target=repo_id or output_dir,
        fmt=_fmt,
        files=[(n, d) for n, d in described if d],
        versions=versions,
        recorded=recorded,
        **fields,
    )


def build_finetune_card(
    output_dir: str,
    *,
    task: str | None = None,
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
        task: registered task name; default: the record's. Required for a folder without a record.
        base_model: Hub id of the starting checkpoint, overriding the record's (none for a local folder:
            :func:`hf_bert_tasks.run_record.model_origin`).
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
    from .tasks import get_task, list_tasks

    metrics = read_record(output_dir, "all_results.json", "expected a finished fine-tuning run")
    info = read_record(output_dir) or {}
    if not (task or info.get("task")):
        raise ValueError(
            f"{output_dir}: no {RUN_INFO_FILE} names the task (a run of an older version, or one "
            f"that did not finish initialising); pass --task (one of {list_tasks()})"
        )
    if not info:
        logger.warning(
            "%s has no %s (written while training by RunRecordCallback): the card leaves out the base "
            "model (name it with --base_model), data arguments, seed, hyperparameters and training log",
            output_dir,
            RUN_INFO_FILE,
        )
    the_task = get_task(task or info["task"])
    if base_model:
        base, base_source = base_model, "given with --base_model"
    else:
        base, base_source = info.get("base_model"), info.get("base_model_source", "not recorded by the run")
    versions = info.get("framework_versions") or framework_versions()
    dataset = dict(info.get("dataset") or {"id": the_task.hub_dataset, "config": the_task.hub_config})
    dataset["max_eval_samples"] = (info.get("data_arguments") or {}).get("max_eval_samples")
    # LoRA runs save the merged (plain) model too; only an adapter-only folder is a peft repo
    adapter_only = os.path.isfile(os.path.join(output_dir, "adapter_config.json")) and not os.path.isfile(
        os.path.join(output_dir, "model.safetensors")
    )
    per_split = split_metrics(the_task, metrics)
    hyper = info.get("hyperparameters") or {}
    runs = [r for r in (seed_runs or []) if r]
    log_history = info.get("log_history")
    # Trainer's log as transformers' cards show it; the template falls back to the final training loss
    train_log, log_lines, _ = parse_log_history(log_history) if log_history else (None, None, None)
    return _render(
        "finetuned",
        output_dir,
        repo_id,
        [the_task.name, the_task.pipeline_tag, *(tags or [])],
        files,
        versions,
        "framework_versions" in info,
        {
            "base_model": base,
            "datasets": None if dataset.get("user_files") else [dataset.get("id") or the_task.hub_dataset],
            "license": license,
            "library_name": "peft" if adapter_only else "transformers",
            "pipeline_tag": the_task.pipeline_tag,
            "metrics": list(dict.fromkeys(the_task.metric_spec(m).hub_id for m in the_task.metric_names)),
            "eval_results": eval_results_from_metrics(the_task, metrics, dataset) or None,
        },
        task=the_task,
        base=base,
        base_source=base_source,
        dataset=dataset,
        dataset_name=dataset_display_name(the_task),
        primary_name=_display(the_task, the_task.primary_metric),
        primary=per_split.get(the_task.eval_splits[0], {}).get(the_task.primary_metric),
        **_results_fields(the_task, per_split, split_metrics(the_task, metrics, non_metrics=True), metrics),
        scored={s: metrics.get(f"examples_scored{the_task.split_metric_suffix(s)}") for s in per_split},
        paper_table="" if dataset.get("user_files") else _paper_table(the_task, metrics),  # not the paper's data
        seed=info.get("seed"),
        seed_runs=runs,
        seeds_table=_seeds_table(the_task, runs),
        **({} if seed_runs else _lr_grid_fields(the_task, output_dir)),
        training_mode=_mode_text(info.get("training_mode"), output_dir, read_record(output_dir, "config.json")),
        feature_based=(read_record(output_dir, "config.json") or {}).get("model_type") == "bert_feature_based",
        remote_code=bool((read_record(output_dir, "config.json") or {}).get("auto_map")),  # its own modeling code
        data_arguments=info.get("data_arguments"),
        hyperparameters_table=_table(["argument", "value"], [[k, f"`{v}`"] for k, v in sorted(hyper.items())])
        if hyper
        else "",
        log_history=log_history,
        train_log=train_log,
        log_table=make_markdown_table(log_lines).rstrip("\n") if log_lines else "",
    )


def build_pretraining_card(
    output_dir: str,
    *,
    repo_id: str | None = None,
    license: str = "apache-2.0",
    tags: list[str] | None = None,
    files: list[str] | None = None,
    base_model: str | None = None,
):
    """The card of a pretraining output dir from its ``pretraining_summary.json`` (no network call).

    Shows the corpus (file names only, no local paths), the masking recipe, the steps per phase and the final MLM /
    NSP accuracy, which ``model-index`` holds (``fill-mask``, dataset ``text``, held-out documents). ``base_model``:
    ``--base_model``, else the summary's ``model.base_model`` (:func:`hf_bert_tasks.run_record.model_origin`).
    ``FileNotFoundError`` without ``pretraining_summary.json`` in ``output_dir``.
    """
    from huggingface_hub import EvalResult

    summary = read_record(output_dir, PRETRAINING_SUMMARY_FILE, "expected a finished pretraining run")
    corpus, model, recipe = summary.get("corpus", {}), summary.get("model", {}), summary.get("masking_recipe") or {}
    corpus_files = [os.path.basename(p) for p in corpus.get("files", [])]
    init, base = model.get("init"), base_model or model.get("base_model")
    if not base and init not in (None, "random") and "base_model" not in model:
        logger.warning(
            "%s does not record whether %r was a Hub id; the card names no base model (pass --base_model)",
            PRETRAINING_SUMMARY_FILE,
            init,
        )
    results = [
        EvalResult(
            task_type="fill-mask",
            task_name="Masked language modelling + next sentence prediction",
            dataset_type="text",
            dataset_name=", ".join(corpus_files) or "pretraining corpus",
            dataset_split="held-out documents",
            metric_type="accuracy",
            metric_name=metric,
            metric_config=config,
            metric_value=round(float(summary[key]), 6),
        )
        for key, metric, config in (
            ("final_mlm_accuracy", "MLM accuracy", "mlm"),
            ("final_nsp_accuracy", "NSP accuracy", "nsp"),
        )
        if isinstance(summary.get(key), (int, float)) and not math.isnan(summary[key])
    ]
    phase_rows = [
        [
            p.get("phase"),
            p.get("max_seq_length"),
            p.get("steps"),
            p.get("batch_size"),
            p.get("learning_rate"),
            p.get("train_instances"),
            p.get("final_eval", {}).get("eval_mlm_accuracy", ""),
            p.get("final_eval", {}).get("eval_nsp_accuracy", ""),
        ]
        for p in summary.get("phases", [])
    ]
    model_rows = [
        ["preset", model.get("preset", "?")],
        ["vocab_size", model.get("vocab_size", "?")],
        ["initialisation", init or "?"],
    ] + [[k, v] for k, v in (model.get("overrides") or {}).items()]
    return _render(
        "pretrained",
        output_dir,
        repo_id,
        ["pretraining", "fill-mask", *(tags or [])],
        files,
        framework_versions(),
        False,
        {
            "base_model": base,
            "license": license,
            "library_name": "transformers",
            "pipeline_tag": "fill-mask",
            "eval_results": results or None,
        },
        summary=summary,
        corpus=corpus,
        corpus_files=corpus_files,
        init=init,
        base=base,
        pretraining_table=_table(
            ["phase", "max_seq_length", "steps", "batch", "learning rate", "train instances", "MLM acc.", "NSP acc."],
            phase_rows,
        )
        if phase_rows
        else "",
        masking_table=_table(
            ["setting", "value"], [[k, json.dumps(v) if isinstance(v, (list, dict)) else v] for k, v in recipe.items()]
        )
        if recipe
        else "",
        model_table=_table(["setting", "value"], model_rows),
    )


def build_card(output_dir: str, **kwargs):
    """:func:`build_pretraining_card` for a folder with ``pretraining_summary.json`` and no ``all_results.json``,
    else :func:`build_finetune_card`; keyword arguments the pretraining card does not take (``task``,
    ``seed_runs``) are dropped for it."""
    if os.path.isfile(os.path.join(output_dir, PRETRAINING_SUMMARY_FILE)) and not os.path.isfile(
        os.path.join(output_dir, "all_results.json")
    ):
        return build_pretraining_card(
            output_dir, **{k: v for k, v in kwargs.items() if k not in ("task", "seed_runs")}
        )
    return build_finetune_card(output_dir, **kwargs)


def load_seed_runs(output_dirs: list[str]) -> list[dict]:
    """``[{"seed", "metrics"}]`` from finished output dirs (``all_results.json``, the record's seed or ``"?"``);
    ``FileNotFoundError`` for a folder without ``all_results.json``."""
    expected = "every --seed_runs folder must hold a finished run"
    return [
        {"seed": (read_record(d) or {}).get("seed", "?"), "metrics": read_record(d, "all_results.json", expected)}
        for d in output_dirs
    ]
