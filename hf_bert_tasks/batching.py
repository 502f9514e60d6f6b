"""Length-aware batching for the fine-tune recipe: length-grouped training batches, length-sorted eval batches.

Padding is wasted compute: with dynamic padding every batch is as long as its longest feature. Two remedies, both on
by default in ``hf-bert-tasks finetune``:

* **Training** (``--group_by_length``, transformers 5: ``train_sampling_strategy="group_by_length"``): transformers'
  ``LengthGroupedSampler`` (random mega-batches of 50 batches, sorted by length inside), with two changes —
  lengths come from the Arrow column in one pass (:func:`feature_lengths`; for SWAG's ``[4, L]`` features the
  longest choice, which Trainer's own ``len(input_ids)`` would give as 4), and the shuffle is seeded per epoch
  (``seed + epoch``, :class:`EpochLengthGroupedSampler`) instead of drawn from the global torch RNG, so a resumed run
  and every process of a distributed run see the same order. The grouping unit is the global batch
  (per-device batch x gradient accumulation x processes), so 2 processes x batch 4 group like 1 x batch 8.
* **Evaluation / prediction** (``--sort_eval_by_length``): features are fed longest first
  (:class:`LengthSortedTrainer`), and the predictions, labels and the ``EvalPrediction`` given to
  ``compute_metrics`` are put back in the dataset's order, so metrics and prediction files do not depend on it
  (``tests/test_eval_ordering.py``). transformers 5.24's own eval sampler under ``group_by_length`` is a *random*
  ``LengthGroupedSampler`` and returns predictions in that shuffled order, which scrambles prediction files and
  SQuAD / NER post-processing; this Trainer never does that.

What changes with ordering: only float rounding (another batch composition means other padded shapes, so other
kernel blocking) and, for losses averaged over tokens (NER), ``eval_loss``, which Trainer averages per batch.
"""

from __future__ import annotations

import logging

import numpy as np
import torch
from transformers import Trainer
from transformers.trainer_pt_utils import LengthGroupedSampler

logger = logging.getLogger(__name__)


def feature_lengths(dataset, column: str = "input_ids") -> np.ndarray | None:
    """Token count of every feature, read from the Arrow column in one pass (no per-row decoding).

    Args:
        dataset: a ``datasets.Dataset`` whose ``column`` holds ``[L]`` token lists (GLUE, SQuAD windows, NER
            windows) or ``[C, L]`` lists (SWAG's choices).
        column: the token column.

    Returns:
        int64 array ``[len(dataset)]``: ``L`` per feature, or for ``[C, L]`` features the longest choice (what the
        multiple-choice collator pads to); a dataset without ``column`` but with a ``length`` column (the
        feature cache's rows per example) gives that column; ``None`` for anything else.
    """
    import datasets
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(dataset, datasets.Dataset):
        return None
    if column not in dataset.column_names:
        if "length" not in dataset.column_names:
            return None
        # precomputed lengths, e.g. the feature cache's rows per example (hf_bert_tasks.feature_based.cache)
        return dataset.select_columns(["length"]).with_format("arrow")[:].column("length").to_numpy().astype(np.int64)
    table = dataset.select_columns([column]).with_format("arrow")[:]  # applies an indices mapping (select/shuffle)
    values = table.column(column).combine_chunks()
    outer = pc.list_value_length(values).to_numpy(zero_copy_only=False)
    if not pa.types.is_list(values.type.value_type) and not pa.types.is_large_list(values.type.value_type):
        return outer.astype(np.int64)
    inner = pc.list_value_length(pc.list_flatten(values)).to_numpy(zero_copy_only=False).astype(np.int64)
    lengths = np.zeros(len(outer), dtype=np.int64)
    has = outer > 0
    starts = np.concatenate([[0], np.cumsum(outer)[:-1]]).astype(np.int64)
    if has.any():
        lengths[has] = np.maximum.reduceat(inner, starts[has])
    return lengths


class EpochLengthGroupedSampler(LengthGroupedSampler):
    """transformers' ``LengthGroupedSampler`` whose shuffle is seeded with ``seed + epoch``.

    ``Trainer`` calls :meth:`set_epoch` at the start of every epoch (also through accelerate's wrappers), so the order
    of epoch ``e`` is a function of ``(seed, e, lengths)`` only: a run resumed from a checkpoint replays it, and every
    process of a distributed run draws the same one (accelerate then shards each global batch).

    Args:
        batch_size: the grouping unit in features (the global batch).
        lengths: ``[n]`` token counts (:func:`feature_lengths`).
        seed: ``--data_seed`` or ``--seed``.
    """

    def __init__(self, batch_size: int, lengths, seed: int):
        super().__init__(batch_size, lengths=[int(x) for x in lengths])
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __iter__(self):
        self.generator = torch.Generator().manual_seed(self.seed + self.epoch)
        return super().__iter__()


class IndexSampler(torch.utils.data.Sampler):
    """Yields the given indices in the given order (a fixed, deterministic evaluation order)."""

    def __init__(self, indices):
        self.indices = [int(i) for i in indices]

    def __iter__(self):
        return iter(self.indices)

    def __len__(self) -> int:
        return len(self.indices)


def length_order(lengths) -> np.ndarray:
    """Indices that put features longest first; equal lengths keep their dataset order (stable sort).

    Longest first so that an out-of-memory batch shows up at the first step, not at the end of an evaluation.
    """
    return np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")


def restore_order(values, order: np.ndarray):
    """Put per-feature ``values`` computed in ``order`` back in dataset order.

    ``values``: an array whose first axis has ``len(order)`` rows (logits ``[n, ...]``, labels ``[n, ...]``), or a
    tuple / list / dict of such (SQuAD's start and end logits); ``None`` stays ``None``.

    Raises:
        RuntimeError: an array with another number of rows than ``order`` (e.g. a gather that kept padding rows).
    """
    if values is None:
        return None
    if isinstance(values, dict):
        return type(values)((k, restore_order(v, order)) for k, v in values.items())
    if isinstance(values, (tuple, list)):
        return type(values)(restore_order(v, order) for v in values)
    array = np.asarray(values)
    if array.ndim == 0:
        return values
    if array.shape[0] != len(order):
        raise RuntimeError(f"got {array.shape[0]} rows of predictions for {len(order)} length-sorted features")
    out = np.empty_like(array)
    out[order] = array
    return out


class LengthSortedTrainer(Trainer):
    """``Trainer`` with length-grouped training batches and length-sorted evaluation batches (module docstring).

    Reads two optional attributes of ``args`` (both present on
    :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments`): ``train_sampling_strategy == "group_by_length"``
    and ``sort_eval_by_length`` (default ``True`` here too). Everything else is transformers' ``Trainer``.
    """

    # ------------------------------------------------------------------ training
    def _get_train_sampler(self, train_dataset=None):
        dataset = train_dataset if train_dataset is not None else self.train_dataset
        if self.args.train_sampling_strategy != "group_by_length":
            return super()._get_train_sampler(train_dataset)
        lengths = feature_lengths(dataset)
        if lengths is None:  # not a datasets.Dataset with input_ids: Trainer measures the lengths itself
            return super()._get_train_sampler(train_dataset)
        unit = self.args.train_batch_size * self.args.gradient_accumulation_steps * max(1, self.args.world_size)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        return EpochLengthGroupedSampler(unit, lengths, seed)

    # ---------------------------------------------------------------- evaluation
    def _sorts_eval(self) -> bool:
        return (bool(getattr(self.args, "sort_eval_by_length", True)) and self.args.eval_do_concat_batches
                and not self.args.batch_eval_metrics)

    def _get_eval_sampler(self, eval_dataset):
        lengths = feature_lengths(eval_dataset) if self._sorts_eval() else None
        if lengths is None:
            # never transformers' random LengthGroupedSampler (predictions would come back shuffled)
            if eval_dataset is None or not hasattr(eval_dataset, "__len__"):
                return None
            return torch.utils.data.SequentialSampler(eval_dataset) if self.args.world_size <= 1 else None
        return IndexSampler(length_order(lengths))

    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        sampler = _index_sampler(dataloader)
        if sampler is None:
            return super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys,
                                           metric_key_prefix)
        order = np.asarray(sampler.indices, dtype=np.int64)
        compute_metrics = self.compute_metrics
        if compute_metrics is not None:
            from transformers import EvalPrediction

            def in_dataset_order(pred, **kwargs):
                restored = EvalPrediction(
                    predictions=restore_order(pred.predictions, order),
                    label_ids=restore_order(pred.label_ids, order),
                    inputs=restore_order(pred.inputs, order),
                    losses=restore_order(pred.losses, order),
                )
                return compute_metrics(restored, **kwargs)

            self.compute_metrics = in_dataset_order
        try:
            output = super().evaluation_loop(dataloader, description, prediction_loss_only, ignore_keys,
                                             metric_key_prefix)
        finally:
            self.compute_metrics = compute_metrics
        return output._replace(predictions=restore_order(output.predictions, order),
                               label_ids=restore_order(output.label_ids, order))


def _index_sampler(dataloader) -> IndexSampler | None:
    """The :class:`IndexSampler` behind ``dataloader`` (plain, or wrapped by accelerate's ``DataLoaderShard`` /
    ``BatchSamplerShard``), else ``None``. Read from the dataloader itself, so a reused (persistent-workers)
    dataloader is restored too."""
    seen, todo = set(), [dataloader]
    while todo:
        obj = todo.pop()
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, IndexSampler):
            return obj
        todo += [getattr(obj, name, None) for name in ("sampler", "batch_sampler", "base_dataloader")]
    return None

