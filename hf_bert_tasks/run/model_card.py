"""Model cards from a run's records: metrics -> ``EvalResult`` -> ``model-index``, prose in Jinja templates.

``ModelCard.from_template`` fills ``hf_bert_tasks/templates/<kind>.md``; tables come from
``transformers.modelcard.make_markdown_table``. Every declared metric (:attr:`hf_bert_tasks.tasks.base.Task.metrics`)
of ``all_results.json`` becomes an ``EvalResult`` (:mod:`hf_bert_tasks.run.model_card_index`); everything else comes from
the run record :data:`RUN_INFO_FILE` (nothing is guessed from a folder's files, no pickle is loaded). Each run writes
its card, ``README.md``, with its model (:func:`write_card`); no network call here: merging with the Hub's card is
:mod:`hf_bert_tasks.run.hub`'s.
"""

from __future__ import annotations

import json
import logging
import math
import os
import statistics
from fnmatch import fnmatch
from typing import Any

from transformers.modelcard import make_markdown_table, parse_log_history

from .model_card_index import (  # noqa: F401 - re-exported: the model-index part of the card
    card_inputs,
    card_text,
    dataset_display_name,
    eval_result_key,
    eval_results_from_metrics,
    merge_eval_results,
    metric_keys,
    mode_text,
    pretraining_eval_results,
    readme_edited,
    split_metrics,
    split_of_key,
)
from .run_record import HIDDEN_ARGUMENTS, RUN_INFO_FILE, framework_versions, non_default_arguments, read_record  # noqa: F401

logger = logging.getLogger(__name__)

#: Written by the pretraining recipe (:mod:`hf_bert_tasks.pretraining.recipe`).
PRETRAINING_SUMMARY_FILE = "pretraining_summary.json"
#: The card, written into a run's output dir with its model (:func:`write_card`) and pushed with it.
README_FILE = "README.md"

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
    """A table cell: floats with ``digits`` decimals (significant digits below 1e-3), anything else as ``str``."""
    if not isinstance(value, float) or math.isnan(value):
        return "nan" if isinstance(value, float) else str(value)
    return f"{value:.{digits}g}" if value and abs(value) < 1e-3 else f"{value:.{digits}f}"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    """``make_markdown_table`` of ``rows`` under ``header`` (floats shown with :func:`_fmt`)."""
    return make_markdown_table([dict(zip(header, (_fmt(v) for v in row))) for row in rows]).rstrip("\n")


def _display(specs: dict, key: str) -> str:
    """The declared display name of ``key`` (``specs``: {key: MetricSpec}; the key itself for an undeclared one)."""
    return getattr(specs.get(key), "display", key)


# -------------------------------------------------------------------------------------------- rendering
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
        "results_table": _table(["split"] + [_display(specs, n) for n in names], rows),
        "scale": " and ".join("0-1" if s == 1.0 else "0-100" for s in scales),
        "reported": [
            f"{_display(specs, n)} = {_fmt(int(v) if float(v).is_integer() else v)} ({split})"
            for split, vals in inputs["others"].items()
            for n, v in vals.items()
        ],
    }


def _paper_table(inputs: dict) -> str:
    """Ours beside :attr:`~hf_bert_tasks.tasks.base.Task.paper_results` (x100; :func:`card_inputs`' ``paper_rows``);
    ``""`` when the paper has none."""
    specs = inputs["keys"][0]
    rows = [
        [label, _display(specs, base), split, "" if ours is None else f"{ours:.1f}", f"{float(paper):.1f}"]
        for label, base, split, ours, paper in inputs["paper_rows"]
    ]
    return _table(["paper model", "metric", "our split", "ours", "paper"], rows) if rows else ""


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
                rows.append([split, _display(keys[0], name), spread, len(vals)])
    return _table(["split", "metric", "mean ± std", "runs"], rows)


def _lr_grid_fields(task, grid: dict | None, specs: dict) -> dict:
    """The template fields of the §4.1 protocol from ``lr_grid_results.json`` (``grid``; :mod:`hf_bert_tasks.run.lr_grid`):
    the grid, its metric's name and its table; ``{}`` without it."""
    if not isinstance(grid, dict) or not grid.get("per_learning_rate"):
        return {}  # no grid, or one written before seeds existed (runs only)
    key = grid.get("selected_on", f"eval_{task.primary_metric}")
    metric = _display(specs, key.removeprefix("eval_"))
    rows = []
    for s in grid["per_learning_rate"]:
        values = [r.get(key) for r in grid.get("runs", []) if r.get("learning_rate") == s["learning_rate"]]
        mean = "NaN (a degenerate run)" if s.get("mean") is None else _fmt(s["mean"])
        mean = mean if s.get("std") is None else f"{mean} ± {_fmt(s['std'])}"
        rate = f"{s['learning_rate']:g}" + (
            " (selected)" if s["learning_rate"] == grid.get("selected_learning_rate") else ""
        )
        per_seed = ", ".join("NaN" if v is None else _fmt(v) for v in values)
        rows.append([rate, s.get("num_runs", len(values)), mean, per_seed])
    table = _table(["learning rate", "runs", f"dev {metric}: mean ± std", "per seed"], rows)
    return {"grid": grid, "grid_metric": metric, "grid_table": table}


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

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates", f"{kind}.md")
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
        "hyperparameters_table": _table(["argument", "value"], rows) if rows else "",
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
            :func:`hf_bert_tasks.run.run_record.model_origin`).
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
    fields = _record_fields(info, base_model, dataset, inputs["mode_text"])
    # LoRA runs save the merged (plain) model too; only an adapter-only folder is a peft repo
    adapter_only = os.path.isfile(os.path.join(output_dir, "adapter_config.json")) and not os.path.isfile(
        os.path.join(output_dir, "model.safetensors")
    )
    per_split, runs, specs = inputs["per_split"], [r for r in (seed_runs or []) if r], keys[0]
    return _render(
        "finetuned",
        output_dir,
        repo_id,
        [the_task.name, the_task.pipeline_tag, *(tags or [])],
        files,
        info.get("framework_versions") or framework_versions(),
        "framework_versions" in info,
        {
            "base_model": fields["base"],
            "datasets": None if dataset.get("user_files") else [dataset.get("id") or the_task.hub_dataset],
            "license": license,
            "library_name": "peft" if adapter_only else "transformers",
            "pipeline_tag": the_task.pipeline_tag,
            "metrics": list(dict.fromkeys(specs[m].hub_id for m in the_task.metric_names)),
            "eval_results": inputs["eval_results"] or None,
        },
        task=the_task,
        dataset_name=inputs["dataset_name"],
        primary_name=_display(specs, the_task.primary_metric),
        primary=per_split.get(the_task.eval_splits[0], {}).get(the_task.primary_metric),
        **_results_fields(inputs),
        scored=inputs["scored"],
        paper_table=_paper_table(inputs),
        seed_runs=runs,
        seeds_table=_seeds_table(the_task, runs, keys),
        **_lr_grid_fields(the_task, inputs["grid"], specs),
        feature_based=inputs["config"].get("model_type") == "bert_feature_based",
        remote_code=bool(inputs["config"].get("auto_map")),  # its own modeling code
        **fields,
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
    ``--base_model``, else the summary's ``model.base_model`` (:func:`hf_bert_tasks.run.run_record.model_origin`).
    ``FileNotFoundError`` without ``pretraining_summary.json`` in ``output_dir``.
    """
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
    columns = ("phase", "max_seq_length", "steps", "batch_size", "learning_rate", "train_instances")
    phase_rows = [
        [p.get(c) for c in columns] + [p.get("final_eval", {}).get(f"eval_{k}_accuracy", "") for k in ("mlm", "nsp")]
        for p in summary.get("phases", [])
    ]
    model_rows = [
        ["preset", model.get("preset", "?")],
        ["vocab_size", model.get("vocab_size", "?")],
        ["initialisation", init or "?"],
    ] + [[k, v] for k, v in (model.get("overrides") or {}).items()]
    recipe_rows = [[k, json.dumps(v) if isinstance(v, (list, dict)) else v] for k, v in recipe.items()]
    header = ["phase", "max_seq_length", "steps", "batch", "learning rate", "train instances", "MLM acc.", "NSP acc."]
    results = pretraining_eval_results(summary, corpus_files)
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
        pretraining_table=_table(header, phase_rows) if phase_rows else "",
        masking_table=_table(["setting", "value"], recipe_rows) if recipe_rows else "",
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


def write_card(output_dir: str, **kwargs) -> str | None:
    """Write the card of a finished run (:func:`build_card` with ``kwargs``, e.g. ``task``; its file list: the
    folder's listing) to ``output_dir/README.md`` with :func:`card_text` (last line: the text's SHA-256); returns the
    path, or ``None`` when a ``README.md`` there was edited or not written by this package (:func:`readme_edited`):
    it is kept and a warning says so. Errors: :func:`build_card`'s. Call it on the main process only.

    The recipes call it right after their final metrics are saved: ``all_results.json`` complete
    (:func:`hf_bert_tasks.scripts.finetune.train_evaluate_predict`), the grid's table and top-level results
    (:func:`hf_bert_tasks.run.lr_grid.run_grid`), ``pretraining_summary.json``
    (:func:`hf_bert_tasks.pretraining.recipe.run_pretrain`). As in sentence-transformers, the card data is recorded while
    training (:class:`~hf_bert_tasks.run.run_record.RunRecordCallback`) and the card written with the model; not by the
    callback itself: ``Trainer`` has no event after the recipe's final evaluation (it runs after ``save_model``),
    and ``model-index`` must hold exactly those final numbers.
    """
    path = os.path.join(output_dir, README_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            if readme_edited(f.read()):
                logger.warning(
                    "%s was edited or not written by hf_bert_tasks: kept, this run's card not written", path
                )
                return None
    card = build_card(output_dir, **kwargs)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(card_text(card))
    os.replace(path + ".tmp", path)
    return path


def load_seed_runs(output_dirs: list[str]) -> list[dict]:
    """``[{"seed", "metrics"}]`` from finished output dirs (``all_results.json``, the record's seed or ``"?"``);
    ``FileNotFoundError`` for a folder without ``all_results.json``."""
    expected = "every --seed_runs folder must hold a finished run"
    return [
        {"seed": (read_record(d) or {}).get("seed", "?"), "metrics": read_record(d, "all_results.json", expected)}
        for d in output_dirs
    ]
