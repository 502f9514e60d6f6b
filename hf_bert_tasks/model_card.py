"""Model cards for what the recipes write: metrics -> ``EvalResult`` -> ``model-index``, rendered from templates.

Two kinds of card, each a logic-free template in ``hf_bert_tasks/templates/`` (package data) filled through
``huggingface_hub.ModelCardData`` + ``ModelCard.from_template``; every table is rendered here in Python (the
pattern of setfit's ``model_card.py`` and trl's ``generate_model_card``):

* :func:`build_finetune_card` for a fine-tuning output dir (``all_results.json``): **every** metric of the task on
  every evaluated split becomes one ``EvalResult`` (SQuAD EM and F1, STS-B Pearson and Spearman, CoLA MCC, CoNLL
  entity-level F1/precision/recall, MNLI matched and mismatched as two results), with the dataset id, config, split
  and revision, the task type, ``base_model``, ``pipeline_tag``, library, license and tags; the body holds the
  training mode, the hyperparameters that differ from ``transformers.TrainingArguments``' defaults, seeds (mean ±
  std over several runs), framework versions, the BERT citation and our numbers beside the paper's.
* :func:`build_pretraining_card` for a pretraining output dir (``pretraining_summary.json``, written by
  :func:`hf_bert_tasks.pretraining.run_pretrain`): corpus, masking recipe, steps, MLM / NSP accuracy.

Building a card makes no network call: everything comes from the output dir, :data:`RUN_INFO_FILE` (written by the
fine-tune recipe, see :func:`write_run_info`) and the task registry. Merging with a card already on the Hub is
:mod:`hf_bert_tasks.hub`'s job.

Metrics come from the task's declaration (:attr:`hf_bert_tasks.tasks.base.Task.metrics`, one
:class:`~hf_bert_tasks.tasks.base.MetricSpec` per key), never from guessing: ``metric_type`` is the declared Hub
metric id (``accuracy``, ``f1``, ``matthews_correlation``, ``pearsonr``, ``spearmanr``, ``exact_match``,
``precision``, ``recall``), ``metric_name`` the declared display name, ``metric_config`` tells apart results of one
id on one split (SQuAD v2 ``HasAns``/``NoAns``/``best threshold``, CoNLL ``conlleval`` and entity types). Values are
stored as the task computes them (GLUE, SWAG and CoNLL in [0, 1], SQuAD in [0, 100] like the official script: the
declared ``scale``); tables beside the paper use ``MetricSpec.to_percent``. Numbers declared ``is_metric=False``
(SQuAD v2 thresholds, CoNLL entity counts) and keys no task declares never reach ``model-index``.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import re
import statistics
from dataclasses import MISSING, fields
from typing import Any

logger = logging.getLogger(__name__)

#: What the fine-tune recipe records next to its outputs for the card (task, base model, data, mode, arguments).
RUN_INFO_FILE = "run_info.json"
#: Written by the pretraining recipe (:mod:`hf_bert_tasks.pretraining`).
PRETRAINING_SUMMARY_FILE = "pretraining_summary.json"

BERT_CITATION = """@inproceedings{devlin-etal-2019-bert,
    title = "{BERT}: Pre-training of Deep Bidirectional Transformers for Language Understanding",
    author = "Devlin, Jacob and Chang, Ming-Wei and Lee, Kenton and Toutanova, Kristina",
    booktitle = "Proceedings of the 2019 Conference of the North {A}merican Chapter of the Association for
                 Computational Linguistics: Human Language Technologies, Volume 1 (Long and Short Papers)",
    year = "2019",
    address = "Minneapolis, Minnesota",
    publisher = "Association for Computational Linguistics",
    url = "https://aclanthology.org/N19-1423",
    doi = "10.18653/v1/N19-1423",
    pages = "4171--4186",
}"""

#: model-index ``task.type`` per ``pipeline_tag`` (the Hub's task ids).
TASK_TYPES = {
    "text-classification": ("text-classification", "Text Classification"),
    "question-answering": ("question-answering", "Question Answering"),
    "token-classification": ("token-classification", "Token Classification"),
    "multiple-choice": ("multiple-choice", "Multiple Choice"),
    "fill-mask": ("fill-mask", "Fill-Mask"),
}
#: ``TrainingArguments`` fields never shown on a card (paths, logging, Hub plumbing and the token).
HIDDEN_ARGUMENTS = {
    "output_dir", "logging_dir", "run_name", "report_to", "push_to_hub", "hub_token", "hub_model_id", "hub_strategy",
    "hub_private_repo", "hub_always_push", "hub_revision", "overwrite_output_dir", "do_train", "do_eval",
    "do_predict", "resume_from_checkpoint", "dataloader_pin_memory", "disable_tqdm", "logging_steps",
    "logging_strategy", "save_strategy", "save_steps", "save_total_limit", "eval_strategy", "eval_steps",
    "per_device_eval_batch_size", "trackio_space_id", "trackio_bucket_id", "project", "trackio_static_space_id",
}
#: Files pushed with a card, described in its file list.
FILE_DESCRIPTIONS = {
    "model.safetensors": "weights (safetensors)",
    "adapter_model.safetensors": "LoRA adapter weights (safetensors)",
    "config.json": "model configuration (label names in `id2label`)",
    "tokenizer.json": "tokenizer", "tokenizer_config.json": "tokenizer settings", "vocab.txt": "WordPiece vocabulary",
    "all_results.json": "all train / eval metrics", "eval_results.json": "eval metrics",
    "train_results.json": "train metrics", RUN_INFO_FILE: "how this run was made (task, data, arguments)",
    "comparison.md": "fine-tuning vs frozen-feature comparison report", "comparison.json": "comparison numbers",
    "lr_grid_results.json": "every (learning rate, seed) run of the §4.1 selection, mean ± std per learning rate",
    PRETRAINING_SUMMARY_FILE: "pretraining summary (corpus, masking, steps, accuracies)",
    "trainer_state.json": "training log history",
}


# --------------------------------------------------------------------------------------------- templates
def template_path(kind: str) -> str:
    """Path of the card template ``hf_bert_tasks/templates/<kind>.md`` (``finetuned`` or ``pretrained``), the one
    copy, shipped as package data (the repository's top-level ``model_cards/`` holds generated cards, not templates).

    Raises:
        FileNotFoundError: no template of that name (names the folder).
    """
    from importlib.resources import files

    path = files("hf_bert_tasks") / "templates" / f"{kind}.md"
    if not path.is_file():
        raise FileNotFoundError(f"model card template {kind!r}: {path} not found (expected finetuned or pretrained)")
    return str(path)


# --------------------------------------------------------------------------------------------- helpers
def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno}: not valid JSON ({err.msg})") from None


def _read_optional_json(output_dir: str, name: str) -> Any:
    path = os.path.join(output_dir, name)
    return _read_json(path) if os.path.isfile(path) else None


def _fmt(value: Any, digits: int = 4) -> str:
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{digits}g}" if abs(value) < 1e-3 and value else f"{value:.{digits}f}"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table (values formatted with :func:`_fmt`)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _display(task, key: str) -> str:
    """The declared display name of ``key`` (the key itself for an undeclared one)."""
    spec = task.metric_spec(key)
    return spec.display if spec else key


def framework_versions() -> dict[str, str]:
    """Versions of the libraries a checkpoint depends on (those installed; read from package metadata, no import)."""
    from importlib import metadata

    from . import __version__

    versions = {"hf_bert_tasks": __version__, "python": platform.python_version()}
    for name in ("transformers", "torch", "datasets", "tokenizers", "accelerate", "peft", "huggingface_hub"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


def looks_like_hub_id(value: str | None) -> bool:
    """True for ``name`` or ``org/name`` strings that are not an existing local path."""
    return bool(value) and bool(_HUB_ID.match(value)) and not os.path.exists(value) and ".." not in value


def resolve_base_model(model_name_or_path: str | None, override: str | None = None) -> tuple[str | None, str]:
    """The Hub id a run started from, for ``base_model``, and where that id was read.

    In order: ``override`` (``--base_model``); ``model_name_or_path`` itself when it is a Hub id; a folder inside a
    Hub cache (``.../models--org--name/snapshots/<sha>``); a local folder's ``README.md`` front matter
    ``base_model``; its ``config.json`` ``_name_or_path`` (written by older ``transformers`` versions when a model
    loaded from the Hub was saved). The last two describe the model the *folder* was made from — for a plain copy
    of a Hub model that is the model itself, for a folder that is itself a fine-tune it is that model's parent; pass
    ``--base_model`` in that case (a warning says so).

    Returns:
        ``(hub_id or None, source)`` where ``source`` is a short English phrase for the card.
    """
    if override:
        return override, "given with --base_model"
    if not model_name_or_path:
        return None, "random initialisation"
    if looks_like_hub_id(model_name_or_path):
        return model_name_or_path, "the Hub id the run started from"
    path = os.path.abspath(model_name_or_path)
    m = re.search(r"models--([^/\\]+?)--([^/\\]+)[/\\]snapshots[/\\]", path + os.sep)
    if m:
        return f"{m.group(1)}/{m.group(2)}", "the Hub cache folder the run started from"
    readme = os.path.join(path, "README.md")
    if os.path.isfile(readme):
        try:
            from huggingface_hub import ModelCard

            base = ModelCard.load(readme, ignore_metadata_errors=True).data.to_dict().get("base_model")
        except Exception:  # noqa: BLE001 - a hand-written README without valid front matter: ignore it
            base = None
        if isinstance(base, list):
            base = base[0] if base else None
        if base and looks_like_hub_id(base):
            logger.warning("base_model %s read from %s (the model that folder was made from); pass --base_model to "
                           "name the folder's own Hub id if it differs", base, readme)
            return base, "the `base_model` of the local folder's README"
    config = os.path.join(path, "config.json")
    if os.path.isfile(config):
        name = _read_json(config).get("_name_or_path")
        if name and looks_like_hub_id(name):
            logger.warning("base_model %s read from _name_or_path in %s; pass --base_model to name the folder's own "
                           "Hub id if it differs", name, config)
            return name, "`_name_or_path` in the local folder's config.json"
    return None, f"a local folder ({os.path.basename(path.rstrip(os.sep))}) with no Hub id recorded"


def non_default_arguments(training_args) -> dict[str, Any]:
    """Training arguments whose value differs from ``transformers.TrainingArguments``' own default.

    Paths, logging, Hub plumbing and the Hub token (:data:`HIDDEN_ARGUMENTS`) are never included; private
    attributes neither. Fields only our subclasses have (``lr_grid``, a training mode …) are included when set.
    """
    from transformers import TrainingArguments

    def field_default(f):
        if f.default is not MISSING:
            return f.default
        if f.default_factory is not MISSING:  # type: ignore[misc]
            return f.default_factory()  # type: ignore[misc]
        return None

    # transformers' defaults for its own fields; our subclasses' extra fields (mode, lora_r ...) against their own
    defaults = {f.name: field_default(f) for f in fields(TrainingArguments)}
    out = {}
    for f in fields(training_args):
        name = f.name
        if name.startswith("_") or name in HIDDEN_ARGUMENTS or "token" in name:
            continue
        value = getattr(training_args, name, None)
        default = defaults[name] if name in defaults else field_default(f)
        value, default = (getattr(x, "value", x) for x in (value, default))  # enums -> their string
        if not isinstance(value, (int, float, str, bool, type(None))):
            continue  # config objects (accelerator_config ...) filled in by TrainingArguments.__post_init__
        if default is None and value in (False, "", None):
            continue  # a None default normalised to False / "" by __post_init__ (activation_checkpointing ...)
        if value != default:
            out[name] = value
    return out


def collect_run_info(task, model_args, data_args, training_args, base_model: str | None = None) -> dict[str, Any]:
    """What a fine-tuning run records for its card: task, base model, dataset, training mode, arguments, versions.

    The Hub token never enters this dict (:func:`non_default_arguments` drops every ``*token*`` field).
    """
    resolved, source = resolve_base_model(model_args.model_name_or_path, base_model or getattr(model_args, "base_model", None))
    from .modes import DEFAULT_TRAINING_MODE, TRAINING_MODES

    mode = (getattr(training_args, "mode", None) or getattr(training_args, "training_mode", None)
            or DEFAULT_TRAINING_MODE)
    strategy = TRAINING_MODES[mode].variant(training_args) if mode in TRAINING_MODES else None
    data_defaults = {f.name: f.default for f in fields(type(data_args)) if f.default is not MISSING}
    data_changes = {k: getattr(data_args, k) for k in data_defaults
                    if k not in ("task", "data_dir", "dataset_name", "dataset_config_name", "dataset_revision")
                    and getattr(data_args, k) != data_defaults[k]}
    data_changes.setdefault("max_seq_length", data_args.max_seq_length)
    return {
        "task": task.name,
        # a local folder is recorded by its last two path components only (no home directories in a pushed file)
        "model_name_or_path": model_args.model_name_or_path if looks_like_hub_id(model_args.model_name_or_path)
        else "/".join(os.path.normpath(model_args.model_name_or_path).split(os.sep)[-2:]),
        "model_revision": getattr(model_args, "model_revision", None),
        "base_model": resolved,
        "base_model_source": source,
        "dataset": {
            "id": data_args.dataset_name or task.hub_dataset,
            "config": data_args.dataset_config_name if data_args.dataset_config_name is not None else task.hub_config,
            "revision": data_args.dataset_revision,
            "local_files": bool(data_args.data_dir),
        },
        "data_arguments": data_changes,
        "training_mode": {"mode": mode, "strategy": strategy},
        "seed": training_args.seed,
        "hyperparameters": non_default_arguments(training_args),
        "framework_versions": framework_versions(),
    }


def write_run_info(output_dir: str, task, model_args, data_args, training_args, base_model: str | None = None) -> str:
    """Write :func:`collect_run_info` to ``output_dir/run_info.json``; returns the path."""
    from .tasks.base import write_json

    path = os.path.join(output_dir, RUN_INFO_FILE)
    write_json(path, collect_run_info(task, model_args, data_args, training_args, base_model))
    return path


def infer_task(output_dir: str):
    """The registered task of a fine-tuning output dir, from ``run_info.json`` or the saved config's label names.

    Raises:
        ValueError: no ``run_info.json`` and the labels in ``config.json`` fit no task or several (names them; pass
            ``--task``).
    """
    from .tasks import get_task, list_tasks

    info = _read_optional_json(output_dir, RUN_INFO_FILE)
    if info and info.get("task"):
        return get_task(info["task"])
    config = _read_optional_json(output_dir, "config.json")
    if config is None:
        raise ValueError(f"{output_dir}: no {RUN_INFO_FILE} and no config.json; pass --task to name the task")
    labels = [config.get("id2label", {})[k] for k in sorted(config.get("id2label", {}), key=int)]
    regression = config.get("problem_type") == "regression"
    matches = []
    for name in list_tasks():
        task = get_task(name)
        if regression and task.problem_type == "regression" or not regression and task.label_names and list(task.label_names) == labels:
            matches.append(name)
    if len(matches) != 1:
        raise ValueError(
            f"{output_dir}/config.json: label names {labels} fit {matches or 'no registered task'}; pass --task"
        )
    return get_task(matches[0])


# ------------------------------------------------------------------------------------------ eval results
def _split_of_key(task, key: str) -> tuple[str, str] | None:
    """``eval_f1_test`` -> (``test``, ``f1``) for the task's eval splits; ``None`` for a non-metric key."""
    if not key.startswith("eval_"):
        return None
    rest = key[len("eval_"):]
    others = [(s, task.split_metric_suffix(s)) for s in task.eval_splits[1:]]
    for split, suffix in sorted(others, key=lambda x: -len(x[1])):
        if suffix and rest.endswith(suffix):
            return split, rest[: -len(suffix)]
    return task.eval_splits[0], rest


def split_metrics(task, metrics: dict[str, Any], non_metrics: bool = False) -> dict[str, dict[str, float]]:
    """Group Trainer-style ``eval_*`` metrics by split: ``{"validation": {"f1": 0.9, ...}, "test": {...}}``.

    Only keys the task declares (:attr:`~hf_bert_tasks.tasks.base.Task.metrics`) are kept: its :attr:`metric_names`
    first in their order, then the other declared metrics (per-entity F1 …). ``non_metrics=True`` returns the
    declared numbers that are not metrics instead (thresholds, counts). Trainer's bookkeeping keys (``eval_loss``,
    ``eval_runtime`` …) are dropped; an undeclared key is dropped with a warning.
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
            continue
        if spec.is_metric == non_metrics:
            continue
        out.setdefault(split, {})[name] = float(value)
    order = {m: i for i, m in enumerate(task.metric_names)}
    return {s: dict(sorted(v.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))
            for s, v in sorted(out.items(), key=lambda kv: task.eval_splits.index(kv[0]))}


def dataset_display_name(task) -> str:
    """A readable dataset name: ``GLUE MRPC``, ``CoNLL-2003``, ``SQuAD v1.1`` (from the task description)."""
    head = task.description.split(":")[0].strip()
    return f"GLUE {head}" if task.hub_dataset.endswith("/glue") else head


def eval_results_from_metrics(task, metrics: dict[str, Any], dataset: dict[str, Any] | None = None) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    Args:
        task: the registered :class:`~hf_bert_tasks.tasks.base.Task`.
        metrics: Trainer-style metrics (``all_results.json``): ``eval_<metric>[<split suffix>]`` -> float.
        dataset: ``{"id", "config", "revision"}`` overriding the task's Hub dataset (``run_info.json``).

    Returns:
        ``EvalResult`` objects with ``task_type`` (the pipeline task), ``dataset_type`` (Hub id),
        ``dataset_config``, ``dataset_split``, ``dataset_revision``, ``metric_type`` (the declared Hub metric id),
        ``metric_name`` (declared display name), ``metric_config`` (declared; ``None`` for headline numbers) and
        ``metric_value`` (as computed, on the declared scale; NaN values are skipped with a warning since YAML
        cannot carry them). Declared non-metrics (thresholds, counts) are never included.
    """
    from huggingface_hub import EvalResult

    dataset = dataset or {}
    task_type, task_name = TASK_TYPES.get(task.pipeline_tag, (task.pipeline_tag, None))
    results = []
    for split, values in split_metrics(task, metrics).items():
        for name, value in values.items():
            if math.isnan(value):
                logger.warning("%s on %s is NaN; left out of model-index", name, split)
                continue
            spec = task.metric_spec(name)
            results.append(EvalResult(
                task_type=task_type, task_name=task_name,
                dataset_type=dataset.get("id") or task.hub_dataset, dataset_name=dataset_display_name(task),
                dataset_config=dataset.get("config", task.hub_config), dataset_split=split,
                dataset_revision=dataset.get("revision"),
                metric_type=spec.hub_id, metric_name=spec.display, metric_config=spec.config,
                metric_value=round(value, 6),
            ))
    return results


def eval_result_key(result) -> tuple:
    """What identifies one result in ``model-index``: task, dataset (id, config, split), metric type and config
    (the pretraining card's two accuracies differ by ``metric_config``: ``mlm`` / ``nsp``)."""
    return (result.task_type, result.dataset_type, result.dataset_config, result.dataset_split, result.metric_type,
            result.metric_config)


def merge_eval_results(existing: list, new: list) -> list:
    """``existing`` with every result of ``new`` replacing the one with the same :func:`eval_result_key` in place;
    results only in ``new`` are appended, results only in ``existing`` are kept. One entry per key."""
    merged: dict[tuple, Any] = {}
    for result in existing or []:
        merged[eval_result_key(result)] = result
    for result in new:
        merged[eval_result_key(result)] = result
    return list(merged.values())


# -------------------------------------------------------------------------------------------- rendering
def _results_table(task, per_split: dict[str, dict[str, float]],
                   others: dict[str, dict[str, float]] | None = None) -> str:
    """Metrics per split as computed (scale in the header), then the declared non-metrics as a sentence."""
    if not per_split:
        return "No evaluation split was scored in this run."
    names = list(dict.fromkeys(n for v in per_split.values() for n in v))
    rows = [[split] + [v.get(n, "") for n in names] for split, v in per_split.items()]
    scales = sorted({task.metric_spec(n).scale for n in names})
    scale_note = " and ".join("0-1" if s == 1.0 else "0-100" for s in scales)
    text = _table(["split"] + [_display(task, n) for n in names], rows)
    text += f"\n\nValues as computed, on a {scale_note} scale."
    extra = [f"{_display(task, n)} = {_fmt(int(v) if float(v).is_integer() else v)} ({split})"
             for split, vals in (others or {}).items() for n, v in vals.items()]
    if extra:
        text += " Also reported (not metrics, so not in `model-index`): " + "; ".join(extra) + "."
    return text


def _paper_split(task, label: str) -> str:
    """The split a paper row is compared on: ``"BERT-base (test)"`` -> ``test`` if scored, else the first eval split."""
    m = re.search(r"\((dev|test|validation)\)", label)
    if m and m.group(1) == "test" and "test" in task.eval_splits:
        return "test"
    return task.eval_splits[0]


def _paper_table(task, metrics: dict[str, Any]) -> str:
    if not task.paper_results:
        return "The BERT paper reports no number for this task."
    rows = []
    for label, values in task.paper_results.items():
        for metric, paper in values.items():
            split, base = _split_of_key(task, f"eval_{metric}")
            if split == task.eval_splits[0]:  # no split suffix in the metric key: the label says (dev/test)
                split = _paper_split(task, label)
            ours = metrics.get(f"eval_{base}{task.split_metric_suffix(split)}")
            spec = task.metric_spec(base)
            rows.append([label, _display(task, base), split,
                         "" if ours is None or spec is None else f"{spec.to_percent(float(ours)):.1f}",
                         f"{float(paper):.1f}"])
    note = f"Paper numbers: {task.paper_source}." if task.paper_source else ""
    return ("### Ours beside the BERT paper (x100)\n\n" + _table(["paper model", "metric", "our split", "ours", "paper"], rows)
            + f"\n\n{note} Ours: this checkpoint on the split shown (encoder: the base model above).")


def _seeds_table(task, metrics: dict[str, Any], seed: Any, seed_runs: list[dict] | None) -> str:
    runs = [r for r in (seed_runs or []) if r]
    if len(runs) < 2:
        return f"Seed: {seed if seed is not None else 'not recorded'} (one run)."
    seeds = [r.get("seed", "?") for r in runs]
    per_run = [split_metrics(task, r.get("metrics", r)) for r in runs]
    rows = []
    for split in task.eval_splits:
        for name in task.metric_names:
            vals = [p[split][name] for p in per_run if split in p and name in p[split]]
            if len(vals) >= 2:
                mean_std = f"{statistics.mean(vals):.4f} ± {statistics.stdev(vals):.4f}"
                rows.append([split, _display(task, name), mean_std, len(vals)])
    return (f"### Over {len(runs)} seeds ({', '.join(map(str, seeds))})\n\nMean ± sample standard deviation; "
            "this repository holds the checkpoint of seed " + f"{seed}.\n\n"
            + _table(["split", "metric", "mean ± std", "runs"], rows))


def _lr_grid_section(task, output_dir: str) -> str:
    """The §4.1 protocol's table from ``lr_grid_results.json`` (:mod:`hf_bert_tasks.lr_grid`); ``""`` without it."""
    grid = _read_optional_json(output_dir, "lr_grid_results.json")
    if not isinstance(grid, dict) or not grid.get("per_learning_rate"):
        return ""  # no grid, or one written before seeds existed (runs only)
    key = grid.get("selected_on", f"eval_{task.primary_metric}")
    metric = _display(task, key.removeprefix("eval_"))
    selected = grid.get("selected_learning_rate")
    rows = []
    for s in grid["per_learning_rate"]:
        values = [r.get(key) for r in grid.get("runs", []) if r.get("learning_rate") == s["learning_rate"]]
        mean = "NaN (a degenerate run)" if s.get("mean") is None else _fmt(s["mean"])
        mean_std = mean if s.get("std") is None else f"{mean} ± {_fmt(s['std'])}"
        rows.append([f"{s['learning_rate']:g}" + (" (selected)" if s["learning_rate"] == selected else ""),
                     s.get("num_runs", len(values)), mean_std, ", ".join("NaN" if v is None else _fmt(v) for v in values)])
    seeds = ", ".join(map(str, grid.get("seeds", [])))
    return (f"### Learning rate x seeds (BERT §4.1)\n\nEvery learning rate ran with seeds {seeds}; the one with the "
            f"highest **mean** dev {metric} was selected (a run with a NaN or missing score ranks its learning rate "
            "last). Mean ± sample standard deviation (ddof=1). This repository holds the checkpoint of seed "
            f"{grid.get('selected_seed')} at learning rate {selected:g} (`{grid.get('selected_run')}`).\n\n"
            + _table(["learning rate", "runs", f"dev {metric}: mean ± std", "per seed"], rows))


def _mode_text(mode: dict | None, output_dir: str, config: dict | None = None) -> str:
    """The card's training-mode paragraph from ``run_info.json``'s ``training_mode`` (``{"mode", "strategy"}``), or
    from the saved files when the run recorded none (:func:`hf_bert_tasks.modes.infer_training_mode`)."""
    from .modes import TRAINING_MODES, infer_training_mode

    mode = dict(mode or {})
    if not mode.get("mode"):
        mode = infer_training_mode(output_dir, config)
    if mode["mode"] in TRAINING_MODES:
        return TRAINING_MODES[mode["mode"]].describe(mode.get("strategy"))
    # a mode this installation does not know (recorded by another version or a plug-in)
    return f"Training mode: **{mode['mode']}**." + (f" Feature strategy: `{mode['strategy']}`." if mode.get("strategy") else "")


def _usage(task, repo_id: str) -> str:
    tag = task.pipeline_tag
    if tag == "multiple-choice":
        return (f'from transformers import AutoModelForMultipleChoice, AutoTokenizer\n\n'
                f'model = AutoModelForMultipleChoice.from_pretrained("{repo_id}")\n'
                f'tokenizer = AutoTokenizer.from_pretrained("{repo_id}")\n'
                "# inputs: (batch, num_choices, seq_len) -> logits (batch, num_choices)")
    lines = ["from transformers import pipeline", ""]
    if tag == "token-classification":
        lines.append(f'ner = pipeline("token-classification", model="{repo_id}", aggregation_strategy="first")')
        lines.append("# 'first': each word takes its first WordPiece's label, as the model was evaluated")
        lines.append('ner("George Washington went to Washington.")')
    elif tag == "question-answering":  # transformers 5 has no question-answering pipeline
        return (f'from transformers import AutoModelForQuestionAnswering, AutoTokenizer\n\n'
                f'model = AutoModelForQuestionAnswering.from_pretrained("{repo_id}")\n'
                f'tokenizer = AutoTokenizer.from_pretrained("{repo_id}")\n'
                'inputs = tokenizer("Who wrote it?", "It was written by Jane.", return_tensors="pt")\n'
                "out = model(**inputs)  # start_logits, end_logits: (batch, seq_len)\n"
                "# answer spans with n-best / max_answer_length: hf_bert_tasks.qa.postprocess_qa_predictions")
    elif task.problem_type == "regression":
        lines.append(f'scorer = pipeline("text-classification", model="{repo_id}", function_to_apply="none")')
        lines.append('scorer({"text": "A man is playing a guitar.", "text_pair": "A man plays guitar."})  # score 0-5')
    elif len(task.text_columns) == 2:
        lines.append(f'classifier = pipeline("text-classification", model="{repo_id}")')
        lines.append('classifier({"text": "first sentence", "text_pair": "second sentence"})')
    else:
        lines.append(f'classifier = pipeline("{tag}", model="{repo_id}")')
        lines.append('classifier("a sentence")')
    return "\n".join(lines)


def _files_list(output_dir: str, files: list[str] | None) -> str:
    names = files if files is not None else sorted(os.listdir(output_dir))
    lines = []
    for name in names:
        desc = FILE_DESCRIPTIONS.get(name)
        if desc is None and name.endswith(".png"):
            desc = "comparison chart"
        elif desc is None and (name.endswith(".tsv") or "predictions" in name):
            desc = "predictions"
        elif desc is None and (name.startswith("tokenizer") or name in ("special_tokens_map.json", "added_tokens.json")):
            desc = "tokenizer"
        if desc:
            lines.append(f"- `{name}`: {desc}")
    return "\n".join(lines) if lines else "- (none)"


def _versions_list(versions: dict[str, str], recorded: bool) -> str:
    head = "" if recorded else "(recorded at push time; the training run did not record them)\n\n"
    return head + "\n".join(f"- {k} {v}" for k, v in versions.items())


def _tool_version(versions: dict[str, str]) -> str:
    return versions.get("hf_bert_tasks", "")


def _legacy_hyperparameters(output_dir: str) -> dict[str, Any] | None:
    """Non-default arguments from Trainer's ``training_args.bin`` (runs made before ``run_info.json`` existed).

    The file is a pickle written by ``Trainer``; it is only read from a folder the user points at (their own run).
    """
    path = os.path.join(output_dir, "training_args.bin")
    if not os.path.isfile(path):
        return None
    try:
        import torch

        args = torch.load(path, weights_only=False)
    except Exception as err:  # noqa: BLE001 - an unreadable pickle (other versions): leave it out, say why
        logger.warning("could not read %s (%s); hyperparameters left out of the card", path, err)
        return None
    return {"seed": getattr(args, "seed", None), "hyperparameters": non_default_arguments(args)}


def build_finetune_card(output_dir: str, *, task: str | None = None, base_model: str | None = None,
                        repo_id: str | None = None, seed_runs: list[dict] | None = None,
                        license: str = "apache-2.0", tags: list[str] | None = None,
                        files: list[str] | None = None):
    """The model card of a fine-tuning output dir (no network call).

    Args:
        output_dir: a finished run (``all_results.json``; ``run_info.json``, ``config.json``,
            ``training_args.bin`` are read when present).
        task: registered task name; default: from ``run_info.json`` or the labels in ``config.json``.
        base_model: Hub id of the starting checkpoint, overriding what ``run_info.json`` recorded.
        repo_id: the Hub repo the card is for (title and usage snippet); default: the folder name.
        seed_runs: ``[{"seed": s, "metrics": {...all_results...}}, ...]`` of runs with several seeds (this one
            included) for the mean ± std table.
        license: the card's ``license`` (the base model's license usually applies).
        tags: extra tags.
        files: the files being pushed (for the file list); default: the folder's listing.

    Returns:
        ``huggingface_hub.ModelCard`` whose ``data`` holds ``model-index`` with every metric.

    Raises:
        FileNotFoundError: ``output_dir`` or its ``all_results.json`` is missing.
        ValueError: the task cannot be determined, or a JSON file is malformed (names it).
    """
    from huggingface_hub import ModelCard, ModelCardData

    from .tasks import get_task

    results_path = os.path.join(output_dir, "all_results.json")
    if not os.path.isfile(results_path):
        raise FileNotFoundError(f"{results_path}: not found; expected a finished fine-tuning run")
    metrics = _read_json(results_path)
    info = _read_optional_json(output_dir, RUN_INFO_FILE) or {}
    the_task = get_task(task) if task else infer_task(output_dir)
    legacy = None if info else _legacy_hyperparameters(output_dir)
    if base_model:
        base, base_source = base_model, "given with --base_model"
    else:
        base, base_source = info.get("base_model"), info.get("base_model_source", "not recorded by the run")
    recorded_versions = "framework_versions" in info
    versions = info.get("framework_versions") or framework_versions()
    dataset = info.get("dataset") or {"id": the_task.hub_dataset, "config": the_task.hub_config}
    seed = info.get("seed", (legacy or {}).get("seed"))
    hyper = info.get("hyperparameters", (legacy or {}).get("hyperparameters"))
    name = repo_id or os.path.basename(os.path.normpath(output_dir))
    eval_results = eval_results_from_metrics(the_task, metrics, dataset)
    mode = info.get("training_mode") or {}
    config = _read_optional_json(output_dir, "config.json") or {}
    # LoRA runs save the merged (plain) model too; only an adapter-only folder is a peft repo
    adapter_only = os.path.isfile(os.path.join(output_dir, "adapter_config.json")) and not os.path.isfile(
        os.path.join(output_dir, "model.safetensors"))
    card_data = ModelCardData(
        model_name=name.split("/")[-1],
        base_model=base,
        datasets=[dataset.get("id") or the_task.hub_dataset],
        language="en",
        license=license,
        library_name="peft" if adapter_only else "transformers",
        pipeline_tag=the_task.pipeline_tag,
        metrics=list(dict.fromkeys(the_task.metric_spec(m).hub_id for m in the_task.metric_names)),
        tags=list(dict.fromkeys(["bert", "hf_bert_tasks", the_task.name, the_task.pipeline_tag, *(tags or [])])),
        eval_results=eval_results or None,
    )
    per_split = split_metrics(the_task, metrics)
    primary = per_split.get(the_task.eval_splits[0], {}).get(the_task.primary_metric)
    base_text = f"[`{base}`](https://huggingface.co/{base})" if base else "a local checkpoint"
    summary = (f"{the_task.description}. This model is {base_text} fine-tuned on {dataset_display_name(the_task)} "
               f"(`{dataset.get('id')}`" + (f", config `{dataset.get('config')}`" if dataset.get("config") else "")
               + ")" + (f"; {_display(the_task, the_task.primary_metric)} on "
                        f"{the_task.eval_splits[0]}: **{primary:.4f}**" if primary is not None else "")
               + f". Base model: {base_source}.")
    data_lines = [f"Dataset: `{dataset.get('id')}`" + (f" (config `{dataset.get('config')}`)" if dataset.get("config") else "")
                  + (f", revision `{dataset.get('revision')}`" if dataset.get("revision") else "") + "."]
    if dataset.get("local_files"):
        data_lines.append("Read from the original task files with the package's local reader (same splits, labels "
                          "and features as the Hub dataset).")
    if info.get("data_arguments"):
        data_lines.append("Data arguments: " + ", ".join(f"`{k}={v}`" for k, v in info["data_arguments"].items()) + ".")
    hyper_rows = [[k, f"`{v}`"] for k, v in sorted((hyper or {}).items())]
    card = ModelCard.from_template(
        card_data,
        template_path=template_path("finetuned"),
        title=f"{name.split('/')[-1]}: BERT fine-tuned on {the_task.name}",
        summary=summary,
        results_table=_results_table(the_task, per_split, split_metrics(the_task, metrics, non_metrics=True)),
        paper_table=_paper_table(the_task, metrics),
        seeds_table=(_lr_grid_section(the_task, output_dir) if not seed_runs else "")
        or _seeds_table(the_task, metrics, seed, seed_runs),
        usage=_usage(the_task, repo_id or output_dir),
        training_mode=_mode_text(mode, output_dir, config),
        data_description=" ".join(data_lines),
        hyperparameters_table=_table(["argument", "value"], hyper_rows) if hyper_rows else "Not recorded by the run.",
        files_list=_files_list(output_dir, files),
        versions_list=_versions_list(versions, recorded_versions),
        tool_version=_tool_version(versions),
        citation=BERT_CITATION,
    )
    return card


def build_pretraining_card(output_dir: str, *, repo_id: str | None = None, license: str = "apache-2.0",
                           tags: list[str] | None = None, files: list[str] | None = None):
    """The card of a pretraining output dir from its ``pretraining_summary.json`` (no network call).

    Shows the corpus (file names only, no local paths), the masking recipe (MLM probability, 80/10/10, whole-word
    masking, max predictions per sequence, NSP probability), the steps per phase and the final MLM / NSP accuracy;
    ``model-index`` holds the MLM and NSP accuracy on the held-out documents (``fill-mask`` task, dataset ``text``).

    Raises:
        FileNotFoundError: no ``pretraining_summary.json`` in ``output_dir``.
    """
    from huggingface_hub import EvalResult, ModelCard, ModelCardData

    path = os.path.join(output_dir, PRETRAINING_SUMMARY_FILE)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: not found; expected a finished pretraining run")
    summary = _read_json(path)
    corpus = summary.get("corpus", {})
    corpus_files = [os.path.basename(p) for p in corpus.get("files", [])]
    name = repo_id or os.path.basename(os.path.normpath(output_dir))
    versions = framework_versions()
    results = []
    for key, metric, config in (("final_mlm_accuracy", "MLM accuracy", "mlm"),
                                ("final_nsp_accuracy", "NSP accuracy", "nsp")):
        value = summary.get(key)
        if isinstance(value, (int, float)) and not math.isnan(value):
            results.append(EvalResult(
                task_type="fill-mask", task_name="Masked language modelling + next sentence prediction",
                dataset_type="text", dataset_name=", ".join(corpus_files) or "pretraining corpus",
                dataset_split="held-out documents", metric_type="accuracy", metric_name=metric, metric_config=config,
                metric_value=round(float(value), 6),
            ))
    model = summary.get("model", {})
    init = model.get("init")
    base = init if init and init != "random" and looks_like_hub_id(init) else None
    card_data = ModelCardData(
        model_name=name.split("/")[-1], base_model=base, language="en", license=license,
        library_name="transformers", pipeline_tag="fill-mask",
        tags=list(dict.fromkeys(["bert", "hf_bert_tasks", "pretraining", "fill-mask", *(tags or [])])),
        eval_results=results or None,
    )
    phase_rows = [[p.get("phase"), p.get("max_seq_length"), p.get("steps"), p.get("batch_size"), p.get("learning_rate"),
                   p.get("train_instances"), p.get("final_eval", {}).get("eval_mlm_accuracy", ""),
                   p.get("final_eval", {}).get("eval_nsp_accuracy", "")] for p in summary.get("phases", [])]
    pretraining = _table(["phase", "max_seq_length", "steps", "batch", "learning rate", "train instances",
                          "MLM acc.", "NSP acc."], phase_rows)
    pretraining += (f"\n\nCorpus: {', '.join(f'`{f}`' for f in corpus_files) or 'not recorded'} — "
                    f"{corpus.get('documents', '?')} documents ({corpus.get('train_documents', '?')} train, "
                    f"{corpus.get('eval_documents', '?')} held out), {corpus.get('sentences', '?')} sentences. "
                    f"Objective: {summary.get('objective', 'MLM + NSP')}. Total steps: {summary.get('steps', '?')}. "
                    f"Seed: {summary.get('seed', '?')}. Tokenizer: {summary.get('tokenizer', 'not recorded')}.")
    recipe = summary.get("masking_recipe") or {}
    masking = _table(["setting", "value"], [[k, json.dumps(v) if isinstance(v, (list, dict)) else v]
                                            for k, v in recipe.items()]) if recipe else "Not recorded."
    masking += ("\n\nPaper §3.1 / Appendix A.1: 15% of WordPiece positions are chosen; of those 80% become `[MASK]`, "
                "10% a random token and 10% stay unchanged; NSP pairs are 50% IsNext / 50% NotNext.")
    overrides = model.get("overrides") or {}
    model_rows = [["preset", model.get("preset", "?")], ["vocab_size", model.get("vocab_size", "?")],
                  ["initialisation", init or "?"]] + [[k, v] for k, v in overrides.items()]
    card = ModelCard.from_template(
        card_data,
        template_path=template_path("pretrained"),
        title=f"{name.split('/')[-1]}: BERT pretrained with MLM + NSP",
        summary=("A BERT encoder with its pretraining heads (`BertForPreTraining`), pretrained from "
                 f"{'`' + init + '`' if base else 'scratch'} on the corpus below. Final MLM accuracy "
                 f"{_fmt(summary.get('final_mlm_accuracy', 'n/a'))}, NSP accuracy "
                 f"{_fmt(summary.get('final_nsp_accuracy', 'n/a'))} on held-out documents."),
        pretraining_table=pretraining,
        masking_description=masking,
        model_table=_table(["setting", "value"], model_rows),
        usage=(f'from transformers import pipeline\n\nfill = pipeline("fill-mask", model="{repo_id or output_dir}")\n'
               'fill("The capital of France is [MASK].")\n'
               "# fine-tune it: hf-bert-tasks finetune --task mrpc --model_name_or_path "
               f"{repo_id or output_dir} ..."),
        files_list=_files_list(output_dir, files),
        versions_list=_versions_list(versions, False),
        tool_version=_tool_version(versions),
        citation=BERT_CITATION,
    )
    return card


def build_card(output_dir: str, **kwargs):
    """:func:`build_pretraining_card` for a folder with ``pretraining_summary.json``, else :func:`build_finetune_card`.

    Keyword arguments the pretraining card does not take (``task``, ``base_model``, ``seed_runs``) are ignored for it.
    """
    if os.path.isfile(os.path.join(output_dir, PRETRAINING_SUMMARY_FILE)) and not os.path.isfile(
            os.path.join(output_dir, "all_results.json")):
        for key in ("task", "base_model", "seed_runs"):
            kwargs.pop(key, None)
        return build_pretraining_card(output_dir, **kwargs)
    return build_finetune_card(output_dir, **kwargs)


def load_seed_runs(output_dirs: list[str]) -> list[dict]:
    """``[{"seed", "metrics"}]`` from several finished output dirs (``all_results.json`` + recorded seed).

    Raises:
        FileNotFoundError: a folder without ``all_results.json``.
    """
    runs = []
    for d in output_dirs:
        path = os.path.join(d, "all_results.json")
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: not found; every --seed_runs folder must hold a finished run")
        info = _read_optional_json(d, RUN_INFO_FILE) or _legacy_hyperparameters(d) or {}
        runs.append({"seed": info.get("seed", "?"), "metrics": _read_json(path)})
    return runs
