"""The feature cache: the frozen encoder's rows of one split as a memory-mapped ``datasets.Dataset``. Columns, one
row per example of the tokenized split: ``features`` (``large_binary``, the float16/float32 C-order bytes of
``[length, n_layers, hidden]``, :meth:`BertFeatureBasedModel.encode`'s unpadded rows for the layers in the file's
name); ``length`` (int64, the rows ``R``, read by ``group_by_length``); the split's targets, per-token labels cut to
``length``. Entry: ``<root>/<encoder fingerprint[:16]>/features-<key>-layers_<i>_<j>.arrow``, ``key``
:func:`cache_key`. Why: docs/design.md, "Feature cache layout and key".
"""

from __future__ import annotations

import glob
import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

logger = logging.getLogger(__name__)

#: feature columns passed to the encoder; every other kept column is a target
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TARGETS = ("labels", "label", "label_ids", "start_positions", "end_positions")
DTYPES = {"float16": np.float16, "float32": np.float32}


def encoder_fingerprint(encoder: torch.nn.Module) -> str:
    """``datasets``' ``Hasher`` over the encoder's config and every weight (name, dtype, shape, bytes): equal for
    equal weights in any process."""
    from datasets.fingerprint import Hasher

    hasher = Hasher()
    config = getattr(encoder, "config", None)
    if config is not None:
        hasher.update(config.to_json_string(use_diff=False))
    for name, tensor in sorted(encoder.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        hasher.update(f"{name}|{t.dtype}|{tuple(t.shape)}")
        hasher.m.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")  # raw bytes, no pickling
    return hasher.hexdigest()


def data_fingerprint(dataset, columns: list[str]) -> str:
    """``datasets``' ``Hasher`` over the Arrow data of ``columns`` (row order included), one pass over the buffers."""
    from datasets.fingerprint import Hasher

    data = dataset.select_columns(sorted(columns))
    if data._indices is not None:  # a selection/shuffle: hash the rows it points to
        data = data.flatten_indices(keep_in_memory=True)
    return Hasher.hash([len(data), data.data.table])


def cache_key(encoder_fp: str, data_fp: str, max_seq_length: int | None, view: str, dtype: str) -> str:
    """The key of one split's cache for any layers: ``Hasher.hash`` of its inputs (16 hex digits)."""
    from datasets.fingerprint import Hasher

    return Hasher.hash(["feature_cache/v2", encoder_fp, data_fp, max_seq_length, view, dtype])


def _layers_of(path: str) -> list[int]:
    match = re.search(r"-layers_([0-9_]+)\.arrow$", path)
    return [int(i) for i in match.group(1).split("_")] if match else []


def find_feature_cache(folder: str, key: str, layers: list[int]) -> str | None:
    """Path of a complete cache file in ``folder`` with ``key`` whose layers include ``layers``, else ``None`` (only
    final names match, not ``Dataset.map``'s ``tmp*`` files)."""
    paths = sorted(glob.glob(os.path.join(folder, f"features-{key}-layers_*.arrow")))
    return next((path for path in paths if set(layers) <= set(_layers_of(path))), None)


def build_feature_cache(
    model,
    features,
    collator,
    root: str,
    max_seq_length: int | None,
    layers: list[int] | None = None,
    batch_size: int = 64,
    dtype: str = "float16",
):
    """Return the cache of ``features`` (a tokenized ``datasets.Dataset``: its :data:`MODEL_INPUTS` and
    :data:`TARGETS` columns) for the frozen encoder of ``model`` (a :class:`~.modeling.BertFeatureBasedModel`),
    computing it on a miss with ``collator`` (the task's) in batches of ``batch_size``. ``root``: folder of cache
    entries (one sub-folder per encoder); ``max_seq_length``: part of the key; ``layers``: hidden_states indices to
    store (default: the strategy's; ``range(L+1)`` serves every strategy); ``dtype``: ``float16`` (half the disk;
    the head upcasts) or ``float32``. Returns ``(dataset, layers, hit)``: the memory-mapped cache (columns in the
    module docstring), the hidden_states indices it holds, and whether an existing file was reused.

    Raises:
        ValueError: ``features`` has no ``input_ids`` column, or an unknown ``dtype``.
    """
    import datasets
    from datasets.fingerprint import Hasher

    if dtype not in DTYPES:
        raise ValueError(f"feature cache dtype {dtype!r}: expected one of {list(DTYPES)}")
    layers = sorted(model.layers if layers is None else layers)
    inputs = [c for c in features.column_names if c in MODEL_INPUTS]
    targets = [c for c in features.column_names if c in TARGETS]
    if "input_ids" not in inputs:
        raise ValueError(f"features have no input_ids column (columns: {features.column_names})")
    encoder_fp = encoder_fingerprint(model.encoder)
    view = f"{model.view}:{model.config.task_problem_type}"
    key = cache_key(encoder_fp, data_fingerprint(features, inputs + targets), max_seq_length, view, dtype)
    folder = os.path.join(root, encoder_fp[:16])
    found = find_feature_cache(folder, key, layers)
    if found is not None:
        return datasets.Dataset.from_file(found), _layers_of(found), True
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"features-{key}-layers_{'_'.join(map(str, layers))}.arrow")
    np_dtype, token_view = DTYPES[dtype], model.view == "tokens"
    out_features = datasets.Features(
        {
            "features": datasets.Value("large_binary"),
            "length": datasets.Value("int64"),
            **{name: features.features[name] for name in targets},
        }
    )

    def extract(batch: dict[str, list]) -> dict[str, list]:
        n = len(batch["input_ids"])
        padded = collator([{c: batch[c][i] for c in inputs} for i in range(n)])
        rows, mask = model.encode(
            padded["input_ids"], padded.get("attention_mask"), padded.get("token_type_ids"), layers=layers
        )
        rows = rows.to(torch.float32).cpu().numpy().astype(np_dtype)
        lengths = mask.sum(1).tolist()
        out = {"features": [rows[j, : lengths[j]].tobytes() for j in range(n)], "length": lengths}
        for name in targets:
            values = batch[name]
            if token_view and isinstance(values[0], list):  # per-token labels: cut to the unpadded length
                values = [v[: lengths[j]] for j, v in enumerate(values)]
            out[name] = values
        return out

    # no eval()/train() toggle: encode() runs only the encoder, which the model keeps in eval mode
    cached = features.select_columns(inputs + targets).map(
        extract,
        batched=True,
        batch_size=batch_size,
        remove_columns=inputs,
        features=out_features,
        cache_file_name=path,
        new_fingerprint=Hasher.hash([key, layers]),
        load_from_cache_file=True,
        desc="Frozen encoder features",
    )
    return cached, layers, False


@dataclass
class FeatureCacheCollator:
    """Pads cache examples (:func:`build_feature_cache`) into the batch :class:`BertFeatureBasedModel` takes:
    ``features`` float16/float32 ``[batch, R_max, n_layers, hidden]`` (``model_layers`` picked out of ``cache_layers``;
    zeros at padded rows), ``attention_mask`` int64 ``[batch, R_max]``, ``labels`` (from ``labels`` / ``label`` /
    ``label_ids``) ``[batch]`` or ``[batch, R_max]`` padded with -100, ``start_positions`` / ``end_positions``
    ``[batch]``. Examples without ``features`` (token inputs) go to ``fallback``, the task's collator. ``ValueError``
    when a feature's byte size is not ``length x n_cache x hidden``."""

    cache_layers: list[int]
    model_layers: list[int]
    hidden_size: int
    dtype: str = "float16"
    fallback: Callable[[list[dict]], dict] | None = None

    def __post_init__(self):
        missing = [i for i in self.model_layers if i not in self.cache_layers]
        if missing:
            raise ValueError(f"the feature cache holds hidden_states {self.cache_layers}; the model needs {missing}")
        self._pick = (
            None
            if list(self.model_layers) == list(self.cache_layers)
            else [self.cache_layers.index(i) for i in self.model_layers]
        )

    def __call__(self, examples: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        if "features" not in examples[0]:
            if self.fallback is None:
                raise ValueError("FeatureCacheCollator got examples without cached features and has no fallback")
            return self.fallback(examples)
        np_dtype = DTYPES[self.dtype]
        n_cache, n_out, h = len(self.cache_layers), len(self.model_layers), self.hidden_size
        lengths = [int(e["length"]) for e in examples]
        r_max = max(lengths)
        out = np.zeros((len(examples), r_max, n_out, h), dtype=np_dtype)
        for j, (e, r) in enumerate(zip(examples, lengths)):
            rows = np.frombuffer(e["features"], dtype=np_dtype)
            if rows.size != r * n_cache * h:
                raise ValueError(
                    f"cached features of {rows.size} values; expected length {r} x {n_cache} layers x {h}"
                )
            rows = rows.reshape(r, n_cache, h)
            out[j, :r] = rows if self._pick is None else rows[:, self._pick]
        batch = {
            "features": torch.from_numpy(out),
            "attention_mask": (torch.arange(r_max)[None, :] < torch.tensor(lengths)[:, None]).long(),
        }
        for name in [n for n in TARGETS if n in examples[0]]:
            values = [e[name] for e in examples]
            key = "labels" if name in ("label", "label_ids") else name
            if isinstance(values[0], (list, np.ndarray, torch.Tensor)):
                padded = torch.full((len(values), r_max), -100, dtype=torch.long)
                for j, v in enumerate(values):
                    padded[j, : len(v)] = torch.as_tensor(v, dtype=torch.long)
                batch[key] = padded
            else:
                batch[key] = torch.tensor(values)
        return batch


def prepare_feature_cache(model, train_dataset, eval_dataset, collator, data_args, training_args):
    """The recipe's hook for ``--feature_cache true``: the training split (and the evaluation split when ``Trainer``
    evaluates during training) swapped for its cache under ``--feature_cache_dir`` (default
    ``<output_dir>/../feature_cache``), main process first (the other ranks then find the file). Returns
    ``(train_dataset, eval_dataset, collator, metrics)``: the caches, a :class:`FeatureCacheCollator` falling back to
    ``collator`` for token batches, and ``{"feature_cache_hit": bool, "feature_extraction_runtime": seconds}``.
    """
    layers = None
    if getattr(training_args, "feature_cache_layers", "strategy") == "all":
        layers = list(range(model.num_hidden_layers + 1))
    root = getattr(training_args, "feature_cache_dir", None) or os.path.join(
        os.path.dirname(os.path.abspath(training_args.output_dir)), "feature_cache"
    )
    evaluates = str(getattr(training_args.eval_strategy, "value", training_args.eval_strategy)) != "no"
    splits = {"train": train_dataset, "eval": eval_dataset if evaluates else None}
    started, hits, cache_layers, out = time.perf_counter(), [], None, {}
    with training_args.main_process_first(desc="feature cache"):
        for name, split in ((n, s) for n, s in splits.items() if s is not None):
            out[name], cache_layers, hit = build_feature_cache(
                model,
                split,
                collator,
                root,
                data_args.max_seq_length,
                layers=layers,
                batch_size=training_args.per_device_eval_batch_size,
            )
            hits.append(hit)
            logger.info("feature cache (%s split) %s: %s", name, "hit" if hit else "built", out[name].cache_files)
    if cache_layers is None:
        return train_dataset, eval_dataset, collator, {}
    cache_collator = FeatureCacheCollator(
        cache_layers, model.layers, model.encoder.config.hidden_size, fallback=collator
    )
    metrics = {"feature_cache_hit": all(hits), "feature_extraction_runtime": round(time.perf_counter() - started, 4)}
    return out.get("train", train_dataset), out.get("eval", eval_dataset), cache_collator, metrics
