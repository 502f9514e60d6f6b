"""Model cards shared by both recipes: the run record's file (:data:`RUN_INFO_FILE`) and provenance
(:func:`framework_versions`, :func:`model_origin`), rendering ``templates/<kind>.md`` (:func:`render_card`), tables and
cells, a run's metrics read back per split (:func:`grouped_metrics`: Trainer-style keys, MNLI's ``eval_accuracy_mm``,
the paper's numbers beside them) and as ``model-index`` entries (:func:`eval_results_from_metrics`: one
``huggingface_hub.EvalResult`` per declared metric per scored split), the card's SHA-256 line (:func:`card_text`,
:func:`readme_edited`) and writing ``README.md`` beside the model
(:func:`write_card`). The fine-tune card is built by :mod:`hf_bert_tasks.finetune.card`, the pretraining card by
:mod:`hf_bert_tasks.pretraining.card`; merging with the Hub's card and pushing: :mod:`hf_bert_tasks.hub.push`. No
network call here."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import re
from contextlib import suppress
from fnmatch import fnmatch
from typing import Any

from transformers.modelcard import make_markdown_table

logger = logging.getLogger(__name__)

#: Trainer's ``eval_*`` bookkeeping keys (``eval_loss`` included): never declared by a task, never in model-index.
TRAINER_KEYS = (
    "loss",
    "runtime",
    "samples_per_second",
    "steps_per_second",
    "samples",
    "epoch",
    "model_preparation_time",
    "jit_compilation_time",
    "total_flos",
)


#: The run record (written by :class:`hf_bert_tasks.finetune.record.RunRecordCallback`), next to the run's outputs.
RUN_INFO_FILE = "run_info.json"


def framework_versions() -> dict[str, str]:
    """Versions of the libraries a checkpoint depends on (those installed; read from package metadata, no import)."""
    from importlib import metadata

    from .. import __version__

    versions = {"hf_bert_tasks": __version__, "python": platform.python_version()}
    for name in ("transformers", "torch", "datasets", "tokenizers", "accelerate", "peft", "huggingface_hub"):
        with suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def model_origin(model_name_or_path: str | None, base_model: str | None = None) -> dict[str, Any]:
    """Where the checkpoint a run starts from came from; call it when the model is loaded (same current directory).
    An existing folder is ``"local"`` (as ``from_pretrained`` reads it), else a valid Hub repo id is ``"hub"``
    (``huggingface_hub.utils.validate_repo_id``); a local folder has no Hub id unless ``base_model`` gives it.
    Returns ``{"model_name_or_path", "model_origin" ("hub"/"local"/"random"), "base_model", "base_model_source"}``
    (a local folder's last two path parts only: no home directories in a pushed file)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    name = model_name_or_path
    origin = "random" if not name else "local" if os.path.isdir(name) else "hub"
    if origin == "hub":
        try:
            validate_repo_id(name)
        except HFValidationError:
            origin = "local"  # not a Hub id, so not loaded from the Hub
    if origin == "local":
        name = "/".join(os.path.normpath(os.path.abspath(name)).split(os.sep)[-2:])
    source = {
        "hub": "the Hub id the run started from",
        "random": "random initialisation",
        "local": f"a local folder (`{name}`) with no Hub id recorded",
    }[origin]
    return {
        "model_name_or_path": name,
        "model_origin": origin,
        "base_model": base_model or (name if origin == "hub" else None),
        "base_model_source": "given with --base_model" if base_model else source,
    }


#: Written by the pretraining recipe (:mod:`hf_bert_tasks.pretraining.recipe`).
PRETRAINING_SUMMARY_FILE = "pretraining_summary.json"


#: Written by ``hf-bert-tasks suite`` (:func:`hf_bert_tasks.scripts.suite_report.write_suite`) in the suite's folder:
#: every run, its status, the suite's rows and flags; the suite's card (``templates/suite.md``) is built from it.
SUITE_SUMMARY_FILE = "suite.json"


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
    "suite.md": "the suite's table: every task's dev score beside the paper's BERT-base and BERT-large",
    SUITE_SUMMARY_FILE: "the suite's rows, every run's status and the suite's flags",
    "suite.png": "the suite's chart: a bar per scored row, the paper's numbers as markers, the trivial baselines",
    "glue_submission.zip": "the GLUE server's zip of the GLUE tasks' test predictions",
    "lr_grid_results.json": "every (learning rate, seed) run of the §4.1 selection, mean ± std per learning rate",
    PRETRAINING_SUMMARY_FILE: "pretraining summary (corpus, masking, steps, accuracies)",
    "trainer_state.json": "training log history",
    "training_curves.png": "loss and eval metric against step",
    "pretraining_curves.png": "MLM and NSP loss and accuracy against step, phases and chance levels marked",
    "quickstart_summary.png": "the quickstart's verdicts",
    "comparison.png": "comparison chart",
    "*.png": "chart",
    "*.tsv": "predictions",
    "*predictions*": "predictions",
    **dict.fromkeys(("modeling.py", "heads.py", "strategies.py"), "frozen-feature model code (`trust_remote_code`)"),
}


def format_cell(value: Any, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` decimals (significant digits below 1e-3), anything else as ``str``."""
    if not isinstance(value, float) or math.isnan(value):
        return "nan" if isinstance(value, float) else str(value)
    return f"{value:.{digits}g}" if value and abs(value) < 1e-3 else f"{value:.{digits}f}"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """``make_markdown_table`` of ``rows`` under ``header`` (floats shown with :func:`format_cell`)."""
    return make_markdown_table([dict(zip(header, (format_cell(v) for v in row))) for row in rows]).rstrip("\n")


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


def render_card(
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
    listing) and versions. ``FileNotFoundError`` for a ``kind`` with no template (``finetuned``, ``pretrained`` and
    ``suite`` have one)."""
    from huggingface_hub import ModelCard, ModelCardData

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates", f"{kind}.md")
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"model card template {kind!r}: {path} not found (expected finetuned, pretrained or suite)"
        )

    name = (repo_id or os.path.basename(os.path.normpath(output_dir))).split("/")[-1]
    tags = list(dict.fromkeys(["bert", "hf_bert_tasks", *tags]))
    listed = files if files is not None else sorted(os.listdir(output_dir))
    described = [(n, next((d for p, d in FILE_DESCRIPTIONS.items() if fnmatch(n, p)), None)) for n in listed]
    return ModelCard.from_template(
        ModelCardData(model_name=name, language="en", tags=tags, **data),
        template_path=path,
        name=name,
        target=repo_id or output_dir,
        fmt=format_cell,
        files=[(n, d) for n, d in described if d],
        versions=versions,
        recorded=recorded,
        **fields,
    )


def write_card(output_dir: str, builder, **kwargs) -> str | None:
    """Write the card of a finished run (``builder(output_dir, **kwargs)``: the fine-tune recipe's
    :func:`hf_bert_tasks.finetune.card.build_finetune_card`, e.g. with ``task``; the pretraining recipe passes
    :func:`hf_bert_tasks.pretraining.card.build_pretraining_card`; the suite
    :func:`hf_bert_tasks.scripts.suite_card.build_suite_card`; its file list: the folder's listing) to
    ``output_dir/README.md`` with :func:`card_text` (last line: the text's SHA-256); returns the path, or ``None`` when
    a ``README.md`` there was edited or not written by this package (:func:`readme_edited`):
    it is kept and a warning says so. Errors: the builder's. Call it on the main process only.

    The recipes call it right after their final metrics are saved: ``all_results.json`` complete
    (:func:`hf_bert_tasks.finetune.recipe.train_evaluate_predict`), the grid's table and top-level results
    (:func:`hf_bert_tasks.finetune.grid.run_grid`), ``pretraining_summary.json``
    (:func:`hf_bert_tasks.pretraining.recipe.run_pretrain`). As in sentence-transformers, the card data is recorded while
    training (:class:`~hf_bert_tasks.finetune.record.RunRecordCallback`) and the card written with the model; not by the
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
    card = builder(output_dir, **kwargs)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(card_text(card))
    os.replace(path + ".tmp", path)
    return path


# Metric keys per split (``eval_f1_mm`` -> split, metric): the card, the grid and compare read them
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


def _grid_aggregate(name: str, specs: dict) -> bool:
    """``accuracy_mean`` / ``accuracy_std`` of a declared metric: the §4.1 grid's mean and std over seeds
    (:mod:`hf_bert_tasks.finetune.grid` adds them to ``all_results.json``); the card shows them in its grid table, so
    they are neither results of their own nor undeclared keys."""
    base, _, stat = name.rpartition("_")
    return stat in ("mean", "std") and base in specs


def split_metrics(
    task, metrics: dict[str, Any], non_metrics: bool = False, keys: tuple[dict, dict] | None = None
) -> dict[str, dict[str, float]]:
    """Group Trainer-style ``eval_*`` metrics by split: ``{"validation": {"f1": 0.9, ...}, "test": {...}}``.

    Only declared keys are kept, :attr:`metric_names` first; ``non_metrics=True`` returns the declared non-metrics
    instead (thresholds, counts). Trainer's keys (``eval_loss`` …) and the lr grid's ``<metric>_mean`` /
    ``<metric>_std`` are dropped, undeclared ones with a warning.
    ``keys``: :func:`metric_keys`' (looked up when ``None``).
    """
    specs, suffixes = metric_keys(task) if keys is None else keys
    out: dict[str, dict[str, float]] = {}
    for key, value in metrics.items():
        parsed = split_of_key(task, key, suffixes)
        if parsed is None or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        split, name = parsed
        if name in TRAINER_KEYS or name.endswith("_samples") or _grid_aggregate(name, specs):
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


def grouped_metrics(task, metrics: dict[str, Any], paper: bool = True) -> dict[str, Any]:
    """Every grouping a card needs of ``metrics`` (``all_results.json``), in one call: ``keys`` (:func:`metric_keys`),
    ``per_split`` / ``others`` (:func:`split_metrics`: the declared metrics / non-metrics), ``scored`` (examples
    scored per split) and ``paper_rows`` (:func:`paper_rows`; ``[]`` with ``paper=False``)."""
    keys = metric_keys(task)
    per_split = split_metrics(task, metrics, keys=keys)
    return {
        "keys": keys,
        "per_split": per_split,
        "others": split_metrics(task, metrics, non_metrics=True, keys=keys),
        "scored": {s: metrics.get(f"examples_scored{keys[1].get(s, '')}") for s in per_split},
        "paper_rows": paper_rows(task, metrics, keys) if paper else [],
    }


# model-index: one huggingface_hub.EvalResult per declared metric per scored split (the card's data)
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
    task,
    metrics: dict[str, Any],
    dataset: dict[str, Any] | None = None,
    keys: tuple[dict, dict] | None = None,
    per_split: dict[str, dict[str, float]] | None = None,
) -> list:
    """One ``huggingface_hub.EvalResult`` per metric per evaluated split (MNLI m/mm are two results).

    ``metrics``: ``all_results.json``'s ``eval_<metric>[<split suffix>]`` -> float (``examples_scored<suffix>``: the
    examples scored, stated as ``dataset.args.num_examples``); ``dataset``: ``{"id", "config", "revision"}``
    overriding the task's Hub dataset, ``user_files`` (split -> file name: the file is the dataset) and
    ``max_eval_samples`` (the split is then ``validation[:300]``, the ``datasets`` slice actually scored).
    ``task_type`` is the pipeline tag, ``metric_type`` the declared Hub metric id, ``metric_value`` on the declared
    scale rounded to 6 digits; NaN values are skipped with a warning. ``keys`` / ``per_split``: :func:`metric_keys`' /
    :func:`split_metrics`' of ``metrics`` (computed when ``None``).
    """
    from huggingface_hub import EvalResult

    keys = metric_keys(task) if keys is None else keys
    dataset, results, (specs, suffixes) = dataset or {}, [], keys
    limit = dataset.get("max_eval_samples")
    per_split = split_metrics(task, metrics, keys=keys) if per_split is None else per_split
    hub_task = task.pipeline_tag  # the problem type's Hub task, e.g. text-classification
    for split, values in per_split.items():
        scored = metrics.get(f"examples_scored{suffixes[split]}")
        sliced = limit and scored is not None and int(scored) == int(limit)
        for name, value in values.items():
            if math.isnan(value):
                logger.warning("%s on %s is NaN; left out of model-index", name, split)
                continue
            spec = specs[name]
            results.append(
                EvalResult(
                    task_type=hub_task,
                    task_name=hub_task.replace("-", " ").title(),
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
