"""What a fine-tune card is made of, as data, read and computed once (:func:`card_inputs`: the run's JSON records
(:func:`read_record`), its metrics grouped per split, the paper comparison and ``model-index``'s
``huggingface_hub.EvalResult`` entries, merged in place on a re-push), and the hash line telling a ``README.md`` this package wrote from one edited since.
:mod:`hf_bert_tasks.run.model_card` renders the prose from it (and re-exports these names; the hash line is
:mod:`hf_bert_tasks.run.hub`'s too). One call per card: the task's metric declarations and split suffixes are looked
up once (:func:`metric_keys`), not per metric.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
from typing import Any

from ..tasks.base import TRAINER_KEYS

logger = logging.getLogger(__name__)

#: The run record (written by :class:`hf_bert_tasks.run.run_record.RunRecordCallback`), next to the run's outputs.
RUN_INFO_FILE = "run_info.json"


def read_record(output_dir: str, name: str = RUN_INFO_FILE, missing: str | None = None) -> Any:
    """The JSON file ``output_dir/name`` (the run record by default); ``None`` when there is none, or with ``missing``
    ``FileNotFoundError`` (``<path>: not found; <missing>``); ``ValueError`` (naming the file and line) when it is not
    valid JSON."""
    path = os.path.join(output_dir, name)
    if not os.path.isfile(path):
        if missing:
            raise FileNotFoundError(f"{path}: not found; {missing}")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno}: not valid JSON ({err.msg})") from None


def metric_keys(task) -> tuple[dict, dict[str, str]]:
    """``({metric key: MetricSpec}, {eval split: metric-key suffix})`` of ``task`` (its :attr:`metrics` and
    :meth:`split_metric_suffix` of each eval split), looked up once for a card."""
    return {m.key: m for m in task.metrics}, dict(
        zip(task.eval_splits, map(task.split_metric_suffix, task.eval_splits))
    )


def split_of_key(task, key: str, suffixes: dict[str, str] | None = None) -> tuple[str, str] | None:
    """``eval_f1_test`` -> (``test``, ``f1``) for the task's eval splits; ``None`` for a non-metric key.
    ``suffixes``: :func:`metric_keys`' (looked up when ``None``)."""
    if not key.startswith("eval_"):
        return None
    suffixes = metric_keys(task)[1] if suffixes is None else suffixes
    rest = key[len("eval_") :]
    for split, suffix in sorted(list(suffixes.items())[1:], key=lambda x: -len(x[1])):
        if suffix and rest.endswith(suffix):
            return split, rest[: -len(suffix)]
    return task.eval_splits[0], rest


def split_metrics(
    task, metrics: dict[str, Any], non_metrics: bool = False, keys: tuple[dict, dict] | None = None
) -> dict[str, dict[str, float]]:
    """Group Trainer-style ``eval_*`` metrics by split: ``{"validation": {"f1": 0.9, ...}, "test": {...}}``.

    Only declared keys are kept, :attr:`metric_names` first; ``non_metrics=True`` returns the declared non-metrics
    instead (thresholds, counts). Trainer's keys (``eval_loss`` …) are dropped, undeclared ones with a warning.
    ``keys``: :func:`metric_keys`' (looked up when ``None``).
    """
    specs, suffixes = metric_keys(task) if keys is None else keys
    out: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        parsed = split_of_key(task, key, suffixes)
        if parsed is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        split, name = parsed
        if name in TRAINER_KEYS or name.endswith("_samples"):
            continue
        spec = specs.get(name)
        if spec is None:
            logger.warning("%s is not declared by task %r (Task.metrics); left out of the card", key, task.name)
        elif spec.is_metric != non_metrics:
            out.setdefault(split, {})[name] = float(value)
    order = {m: i for i, m in enumerate(task.metric_names)}
    return {
        s: dict(sorted(v.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
        for s, v in sorted(out.items(), key=lambda kv: task.eval_splits.index(kv[0]))
    }


def paper_rows(task, metrics: dict[str, Any], keys: tuple[dict, dict]) -> list[tuple]:
    """``(paper model, metric key, our split, ours x100 or None, paper)`` per number of
    :attr:`~hf_bert_tasks.tasks.base.Task.paper_results` (``keys``: :func:`metric_keys`')."""
    specs, suffixes = keys
    rows = []
    for label, values in (task.paper_results or {}).items():
        for metric, paper in values.items():
            split, base = split_of_key(task, f"eval_{metric}", suffixes)
            if "(test)" in label and split == task.eval_splits[0] and "test" in task.eval_splits:
                split = "test"  # "BERT-base (test)": compared on our test split when it was scored
            ours, spec = metrics.get(f"eval_{base}{suffixes.get(split, '')}"), specs.get(base)
            # on the paper's 0-100 scale (MetricSpec.to_percent: x100 for a 0-1 metric)
            ours = None if ours is None or spec is None else float(ours) * (100.0 / spec.scale)
            rows.append((label, base, split, ours, paper))
    return rows


def mode_text(mode: dict | None) -> str:
    """The training-mode paragraph of the record's ``training_mode`` (``{"mode", "strategy"}``); ``""`` (the card
    then has no mode paragraph) when the run recorded none: a mode is never guessed from a folder's files."""
    from ..modes import TRAINING_MODES

    if not (mode or {}).get("mode"):
        return ""
    if mode["mode"] in TRAINING_MODES:
        return TRAINING_MODES[mode["mode"]].describe(mode.get("strategy"))
    strategy = f" Feature strategy: `{mode['strategy']}`." if mode.get("strategy") else ""
    return f"Training mode: **{mode['mode']}**.{strategy}"


def card_inputs(output_dir: str, task=None, grid: bool = True) -> dict[str, Any]:
    """Everything a fine-tune card reads from ``output_dir`` and computes, in one call: ``task`` (the registered
    :class:`~hf_bert_tasks.tasks.base.Task`: ``task`` itself, or looked up by name, default the record's),
    ``metrics`` (``all_results.json``), ``info`` (the run record :data:`RUN_INFO_FILE`, ``{}`` without one),
    ``config`` (``config.json``, ``{}``), ``grid`` (``lr_grid_results.json`` with ``grid``, else ``None``), ``keys``
    (:func:`metric_keys`), ``dataset`` (the record's, with ``max_eval_samples``), ``dataset_name``
    (:func:`dataset_display_name`), ``per_split`` / ``others``
    (:func:`split_metrics`: metrics / declared non-metrics), ``scored`` (examples scored per split), ``paper_rows``
    (:func:`paper_rows`), ``eval_results`` (:func:`eval_results_from_metrics`) and ``mode_text``
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
    keys = metric_keys(task)
    dataset = dict(info.get("dataset") or {"id": task.hub_dataset, "config": task.hub_config})
    dataset["max_eval_samples"] = (info.get("data_arguments") or {}).get("max_eval_samples")
    per_split = split_metrics(task, metrics, keys=keys)
    return {
        "task": task,
        "metrics": metrics,
        "info": info,
        "config": config,
        "grid": grid_file,
        "keys": keys,
        "dataset": dataset,
        "dataset_name": dataset_display_name(task),
        "per_split": per_split,
        "others": split_metrics(task, metrics, non_metrics=True, keys=keys),
        "scored": {s: metrics.get(f"examples_scored{keys[1].get(s, '')}") for s in per_split},
        "paper_rows": [] if dataset.get("user_files") else paper_rows(task, metrics, keys),  # not the paper's data
        "eval_results": eval_results_from_metrics(task, metrics, dataset, keys),
        "mode_text": mode_text(info.get("training_mode")),  # the mode's own words (modes): last
    }


def dataset_display_name(task) -> str:
    """A readable dataset name: ``GLUE MRPC``, ``CoNLL-2003``, ``SQuAD v1.1`` (from the task description)."""
    head = task.description.split(":")[0].strip()
    return f"GLUE {head}" if task.hub_dataset.endswith("/glue") else head


def _source(task, dataset: dict, split: str) -> dict:
    """The ``dataset_*`` fields of a result on ``split``: the Hub dataset, or the user's own file for that split
    (then no claim about the Hub dataset)."""
    user_file = (dataset.get("user_files") or {}).get(split)
    if user_file:
        ext = os.path.splitext(user_file)[1].lstrip(".").lower()
        kind = "json" if ext in ("json", "jsonl") else ext or "csv"
        return {"dataset_type": kind, "dataset_name": f"{user_file} (user file)"}
    return {
        "dataset_type": dataset.get("id") or task.hub_dataset,
        "dataset_name": dataset_display_name(task),
        "dataset_config": dataset.get("config", task.hub_config),
        "dataset_revision": dataset.get("revision"),
    }


def eval_results_from_metrics(
    task, metrics: dict[str, Any], dataset: dict[str, Any] | None = None, keys: tuple[dict, dict] | None = None
) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    ``metrics``: ``all_results.json``'s ``eval_<metric>[<split suffix>]`` -> float (``examples_scored<suffix>``: the
    examples scored, stated as ``dataset.args.num_examples``); ``dataset``: ``{"id", "config", "revision"}``
    overriding the task's Hub dataset, ``user_files`` (split -> file name: the file is the dataset) and
    ``max_eval_samples`` (the split is then ``validation[:300]``, the ``datasets`` slice actually scored).
    ``task_type`` is the pipeline tag, ``metric_type`` the declared Hub metric id, ``metric_value`` on the declared
    scale rounded to 6 digits; NaN values are skipped with a warning. ``keys``: :func:`metric_keys`' (looked up
    when ``None``).
    """
    from huggingface_hub import EvalResult

    keys = metric_keys(task) if keys is None else keys
    dataset, results, (specs, suffixes) = dataset or {}, [], keys
    limit = dataset.get("max_eval_samples")
    for split, values in split_metrics(task, metrics, keys=keys).items():
        scored = metrics.get(f"examples_scored{suffixes[split]}")
        sliced = limit and scored is not None and int(scored) == int(limit)
        for name, value in values.items():
            if math.isnan(value):
                logger.warning("%s on %s is NaN; left out of model-index", name, split)
                continue
            spec = specs[name]
            results.append(
                EvalResult(
                    task_type=task.pipeline_tag,
                    task_name=task.pipeline_tag.replace("-", " ").title(),
                    **_source(task, dataset, split),
                    dataset_split=f"{split}[:{int(scored)}]" if sliced else split,
                    dataset_args={"num_examples": int(scored)} if scored is not None else None,
                    metric_type=spec.hub_id,
                    metric_name=spec.display,
                    metric_config=spec.config,
                    metric_value=round(value, 6),
                )
            )
    return results


def pretraining_eval_results(summary: dict, corpus_files: list[str]) -> list:
    """The final MLM and NSP accuracies of ``pretraining_summary.json`` (``final_mlm_accuracy``,
    ``final_nsp_accuracy``; 0-1) as ``fill-mask`` results on the held-out documents; a missing or NaN one is left
    out."""
    from huggingface_hub import EvalResult

    return [
        EvalResult(
            task_type="fill-mask",
            task_name="Masked language modelling + next sentence prediction",
            dataset_type="text",
            dataset_name=", ".join(corpus_files) or "pretraining corpus",
            dataset_split="held-out documents",
            metric_type="accuracy",
            metric_name=f"{config.upper()} accuracy",
            metric_config=config,
            metric_value=round(float(summary[f"final_{config}_accuracy"]), 6),
        )
        for config in ("mlm", "nsp")
        if isinstance(value := summary.get(f"final_{config}_accuracy"), (int, float)) and not math.isnan(value)
    ]


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


#: the last line of every card this package writes: the SHA-256 of the text above it (an edit changes the text)
CARD_HASH = re.compile(r"<!-- hf_bert_tasks card sha256:([0-9a-f]{64}) -->\n?\Z")


def card_text(card) -> str:
    """``card`` as the ``README.md`` this package writes: its text (less an earlier hash line), then a line with the
    text's SHA-256."""
    text = CARD_HASH.sub("", str(card)).rstrip("\n") + "\n"
    return f"{text}<!-- hf_bert_tasks card sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()} -->\n"


def readme_edited(text: str) -> bool:
    """True when a ``README.md`` was not written by :func:`card_text` or was edited since (its hash line missing or
    no longer the hash of the text above it)."""
    found = CARD_HASH.search(text)
    return not found or hashlib.sha256(text[: found.start()].encode("utf-8")).hexdigest() != found.group(1)
