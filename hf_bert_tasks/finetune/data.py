"""Tokenization for the recipes: training a BERT WordPiece vocabulary with ``tokenizers`` (wrapped by
``BertTokenizerFast(tokenizer_object=...)``), fitting a tokenizer's ``model_max_length`` to a model (why:
docs/design.md, "stack traps"), the on-disk cache of tokenized features, and the fine-tune recipe's
data step (:func:`prepare_data`: splits, ``--max_*_samples``, features, the task's collator and metric function;
moved here from ``scripts/finetune.py``, which still exports it).

The cache holds ``Task.preprocess`` results of every family, keyed by a fingerprint of everything that determines
them: the raw split's content, the tokenizer, ``max_seq_length``, the split, the task's fields, the preprocessing code
and the library versions (why and exactly what: docs/design.md, 'Feature cache key'). Entries
(``Dataset.save_to_disk``, memory-mapped by ``load_from_disk``) go to ``<HF_DATASETS_CACHE>/hf_bert_tasks/tokenized``
(``--tokenized_cache_dir``; ``--overwrite_cache`` recomputes, ``--no_cache_tokenized`` turns it off) through a
temporary folder and a rename: no half-written entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

logger = logging.getLogger(__name__)


def check_model_fits(model, tokenizer, max_seq_length: int, name: str) -> None:
    """Check that the tokenizer's ids and ``max_seq_length`` fit the embedding tables of ``model`` (a model or its
    config), before an index error deep inside torch: ``ValueError`` (naming both numbers) for ``max_seq_length`` >
    ``config.max_position_embeddings`` or a tokenizer with more ids than ``config.vocab_size``."""
    config = getattr(model, "config", model)
    positions, vocab = getattr(config, "max_position_embeddings", None), getattr(config, "vocab_size", None)
    if positions is not None and max_seq_length > positions:
        raise ValueError(
            f"--max_seq_length {max_seq_length} is longer than the {positions} position embeddings of "
            f"{name}; expected --max_seq_length <= {positions}"
        )
    if vocab is not None and len(tokenizer) > vocab:
        raise ValueError(
            f"the tokenizer has {len(tokenizer)} ids but {name} has only {vocab} token embeddings; "
            "expected the model's own tokenizer (check --tokenizer_name)"
        )


# The tokenized-features cache
#: Bumped when the layout of an entry or the key changes.
CACHE_FORMAT = 1
#: Written next to the Arrow files of an entry: the key's components (for debugging and ``ls``).
KEY_FILE = "hf_bert_tasks_key.json"
#: The package root: every module under its ``tasks/`` (each family's features, metrics and ``IGNORE_INDEX``) decides
#: the features and is hashed into the key.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tokenizer_fingerprint(tokenizer) -> str:
    """SHA-256 of what decides a tokenizer's output ('Feature cache key'); stable across processes and calls."""
    parts: dict = {
        "class": type(tokenizer).__name__,
        "model_input_names": list(getattr(tokenizer, "model_input_names", [])),
        "padding_side": getattr(tokenizer, "padding_side", None),
        "truncation_side": getattr(tokenizer, "truncation_side", None),
    }
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        parts["backend"] = {
            k: v for k, v in json.loads(backend.to_str()).items() if k not in ("truncation", "padding")
        }
    else:  # a pure-Python tokenizer: vocabulary and constructor options
        parts["vocab"] = sorted(tokenizer.get_vocab().items())
        parts["init_kwargs"] = {
            k: v
            for k, v in sorted(getattr(tokenizer, "init_kwargs", {}).items())
            if isinstance(v, (str, int, float, bool, type(None)))
        }
        parts["special_tokens"] = sorted(map(str, getattr(tokenizer, "all_special_tokens", [])))
    return _sha(parts)


def code_fingerprint() -> str:
    """SHA-256 of the preprocessing source files: every ``tasks/**/*.py`` (a family's folder holds its features)."""
    h = hashlib.sha256()
    tasks = os.path.join(_PACKAGE, "tasks")
    files = sorted(os.path.join(root, n) for root, _, names in os.walk(tasks) for n in names if n.endswith(".py"))
    for path in files:
        if os.path.isfile(path):
            h.update(os.path.relpath(path, _PACKAGE).encode())
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def features_key(task, dataset, tokenizer, max_seq_length: int, split: str) -> dict:
    """The components of the cache key of ``task.preprocess(dataset, tokenizer, max_seq_length, split)``: ``data``
    is the SHA-256 of the rows as Arrow IPC bytes (schema, values, row order; ``select`` applied), ``task_options``
    that of every field of the task dataclass (``doc_stride`` ...)."""
    import datasets
    import numpy as np
    import pyarrow as pa
    import tokenizers
    import transformers

    table = dataset.with_format("arrow")[:]  # a pa.Table of the selected rows
    table = table.take(pa.array(np.arange(len(table), dtype=np.int64)))
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    fields = dataclasses.asdict(task) if dataclasses.is_dataclass(task) else dict(vars(task))
    return {
        "format": CACHE_FORMAT,
        "task": task.name,
        "split": split,
        "max_seq_length": int(max_seq_length),
        "rows": len(dataset),
        "data": hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest(),
        "tokenizer": tokenizer_fingerprint(tokenizer),
        "task_options": _sha({"class": f"{type(task).__module__}.{type(task).__qualname__}", "fields": fields}),
        "code": code_fingerprint(),
        "versions": {
            "transformers": transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "datasets": datasets.__version__,
        },
    }


def preprocess_cached(
    task, dataset, tokenizer, max_seq_length: int, split: str, cache_dir: str | None = None, overwrite: bool = False
):
    """``task.preprocess(dataset, tokenizer, max_seq_length, split)``, read from / written to the on-disk cache
    (:func:`preprocess_splits` for one split)."""
    return preprocess_splits(task, {split: dataset}, tokenizer, max_seq_length, cache_dir, overwrite)[split]


def preprocess_splits(
    task, raw: dict, tokenizer, max_seq_length: int, cache_dir: str | None = None, overwrite: bool = False
) -> dict:
    """``{split: task.preprocess(raw[split], tokenizer, max_seq_length, split)}`` (``raw``: split -> raw
    ``datasets.Dataset``) through the cache under ``cache_dir`` (default: the module's, from
    ``datasets.config.HF_DATASETS_CACHE``): every split's lookup first, then the misses tokenized and written
    (``overwrite``: recompute and replace, ``--overwrite_cache``).
    Each split's features are memory-mapped from its entry, for a hit and a miss alike."""
    import datasets

    root = cache_dir or os.path.join(str(datasets.config.HF_DATASETS_CACHE), "hf_bert_tasks", "tokenized")
    keys = {s: features_key(task, raw[s], tokenizer, max_seq_length, s) for s in raw}
    entries = {s: os.path.join(root, f"{task.name}-{s}-{_sha(key)[:24]}") for s, key in keys.items()}
    found = dict.fromkeys(raw)
    for s, entry in entries.items():
        if overwrite or not os.path.isdir(entry):
            continue
        try:
            found[s] = datasets.load_from_disk(entry)
            logger.info("tokenized features of %s/%s loaded from the cache %s", task.name, s, entry)
        except Exception as err:  # noqa: BLE001 - an unreadable entry is rebuilt, never trusted
            logger.warning("unreadable cache entry %s (%s); tokenizing again", entry, err)
    computed = {s: task.preprocess(raw[s], tokenizer, max_seq_length, s) for s in raw if found[s] is None}
    for s, features in computed.items():  # into a temporary folder, then a rename: no half-written entry
        entry = entries[s]
        os.makedirs(root, exist_ok=True)
        tmp = f"{entry}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        features.save_to_disk(tmp)
        with open(os.path.join(tmp, KEY_FILE), "w", encoding="utf-8") as f:
            json.dump(keys[s], f, indent=2)
        if os.path.isdir(entry):  # --overwrite_cache, or an unreadable entry
            shutil.rmtree(entry, ignore_errors=True)
        try:
            os.rename(tmp, entry)
        except OSError:  # another process wrote the same entry meanwhile: identical content, keep theirs
            shutil.rmtree(tmp, ignore_errors=True)
        logger.info("tokenized %s/%s (%d features); cached in %s", task.name, s, len(features), entry)
        found[s] = datasets.load_from_disk(entry)
    return found


def _sha(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=repr, ensure_ascii=True).encode()).hexdigest()


def select_splits(task, raw, training_args) -> tuple[str | None, list[str], list[str]]:
    """Which splits to train / evaluate / predict on: every available one without ``--do_*`` flags. Raises
    ``ValueError`` for a requested split the data lacks, or no usable split (names the splits found)."""
    available = list(raw.keys())
    explicit = getattr(training_args, "splits_asked", None)
    do_train, do_eval, do_predict = explicit or (True, True, True)
    train = task.train_split if do_train and task.train_split in raw else None
    evals = [s for s in task.eval_splits if s in raw] if do_eval else []
    tests = [s for s in task.test_splits if s in raw] if do_predict else []
    for flag, wanted, got, names in (
        ("--do_train", do_train, train, [task.train_split]),
        ("--do_eval", do_eval, evals, list(task.eval_splits)),
        ("--do_predict", do_predict, tests, list(task.test_splits)),
    ):
        if explicit and wanted and not got:
            raise ValueError(f"{flag}: task {task.name!r} needs split(s) {names}; the data has {available}")
    if train is None and not evals and not tests:
        raise ValueError(f"task {task.name!r}: no usable split in the data (found {available})")
    return train, evals, tests


@dataclass
class PreparedData:
    """The splits of one recipe invocation, their features, the collator (``task.data_collator``: dynamic padding,
    to a multiple of 8 under fp16/bf16) and ``task.trainer_compute_metrics()`` (``None``: none)."""

    train_split: str | None
    eval_splits: list[str]
    test_splits: list[str]
    raw: dict
    features: dict
    collator: Any
    compute_metrics: Callable | None


def prepare_data(task, raw, tokenizer, data_args, training_args) -> PreparedData:
    """Select the splits, apply ``--max_*_samples`` and tokenize (through the on-disk cache unless
    ``--no_cache_tokenized``; :func:`hf_bert_tasks.finetune.data.preprocess_splits`); then the task's collator
    and metric function."""
    train_split, eval_splits, test_splits = select_splits(task, raw, training_args)
    limits = {
        train_split: data_args.max_train_samples,
        **{s: data_args.max_eval_samples for s in eval_splits},
        **{s: data_args.max_predict_samples for s in test_splits},
    }
    with training_args.main_process_first(desc="dataset map pre-processing"):
        raw = {
            s: raw[s] if n is None else raw[s].select(range(min(n, len(raw[s]))))
            for s, n in limits.items()
            if s is not None
        }
        if getattr(data_args, "cache_tokenized", False):
            features = preprocess_splits(
                task,
                raw,
                tokenizer,
                data_args.max_seq_length,
                data_args.tokenized_cache_dir,
                data_args.overwrite_cache,
            )
        else:
            features = {s: task.preprocess(raw[s], tokenizer, data_args.max_seq_length, s) for s in raw}
    half = training_args.fp16 or training_args.bf16
    collator = task.data_collator(
        tokenizer,
        pad_to_multiple_of=8 if half else None,
        max_length=data_args.max_seq_length if data_args.pad_to_max_length else None,
    )
    compute_metrics = task.trainer_compute_metrics()
    return PreparedData(train_split, eval_splits, test_splits, raw, features, collator, compute_metrics)
