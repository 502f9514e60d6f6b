"""What a card holds that is compared rather than read: its ``model-index`` (``all_results.json`` metrics and the
pretraining summary's accuracies as ``huggingface_hub.EvalResult`` entries, merged in place on a re-push) and the
hash line telling a ``README.md`` this package wrote from one edited since. Split out of
:mod:`hf_bert_tasks.run.model_card` (which re-exports these names; the hash line is :mod:`hf_bert_tasks.run.hub`'s too):
this part is data, light to import; the other renders prose.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from typing import Any

logger = logging.getLogger(__name__)


def split_of_key(task, key: str) -> tuple[str, str] | None:
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
    from ..tasks.base import TRAINER_KEYS

    out: dict[str, dict[str, float]] = {}
    specs = {m.key: m for m in task.metrics}  # Task.metric_spec, once
    for key, value in metrics.items():
        parsed = split_of_key(task, key)
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


def eval_results_from_metrics(task, metrics: dict[str, Any], dataset: dict[str, Any] | None = None) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    ``metrics``: ``all_results.json``'s ``eval_<metric>[<split suffix>]`` -> float (``examples_scored<suffix>``: the
    examples scored, stated as ``dataset.args.num_examples``); ``dataset``: ``{"id", "config", "revision"}``
    overriding the task's Hub dataset, ``user_files`` (split -> file name: the file is the dataset) and
    ``max_eval_samples`` (the split is then ``validation[:300]``, the ``datasets`` slice actually scored).
    ``task_type`` is the pipeline tag, ``metric_type`` the declared Hub metric id, ``metric_value`` on the declared
    scale rounded to 6 digits; NaN values are skipped with a warning.
    """
    from huggingface_hub import EvalResult

    dataset, results = dataset or {}, []
    limit, specs = dataset.get("max_eval_samples"), {m.key: m for m in task.metrics}
    for split, values in split_metrics(task, metrics).items():
        scored = metrics.get(f"examples_scored{task.split_metric_suffix(split)}")
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
