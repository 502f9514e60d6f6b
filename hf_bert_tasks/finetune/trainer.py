"""The fine-tune recipe's ``Trainer``: length-aware batches and a loss normalised over the global batch.

:class:`GlobalLossTrainer` = :class:`LengthSortedTrainer` (length-grouped training, length-sorted evaluation put back
in dataset order) + the loss rule (:func:`global_batch_loss`). Why: docs/design.md, 'Length-aware batches'."""

from __future__ import annotations

import contextlib
import itertools

import numpy as np
import torch
from transformers import Trainer, TrainerCallback
from transformers.trainer_pt_utils import LengthGroupedSampler

from ..tasks.metrics import join_batches


def feature_lengths(dataset, column: str = "input_ids") -> np.ndarray | None:
    """Token count of every feature of a ``datasets.Dataset``, read from the Arrow ``column`` in one pass: int64
    ``[len(dataset)]``, ``L`` of ``[L]`` token lists or the longest choice of ``[C, L]`` (SWAG); without ``column``,
    a ``length`` column (the feature cache's) as it is; ``None`` for anything else."""
    import datasets
    import pyarrow as pa
    import pyarrow.compute as pc

    if not isinstance(dataset, datasets.Dataset):
        return None
    if column not in dataset.column_names:
        if "length" not in dataset.column_names:
            return None
        return dataset.select_columns(["length"]).with_format("arrow")[:].column("length").to_numpy().astype(np.int64)
    table = dataset.select_columns([column]).with_format("arrow")[:]  # applies an indices mapping (select/shuffle)
    values = table.column(column).combine_chunks()
    if not pa.types.is_list(values.type.value_type) and not pa.types.is_large_list(values.type.value_type):
        return pc.list_value_length(values).to_numpy(zero_copy_only=False).astype(np.int64)
    lengths = np.zeros(len(values), dtype=np.int64)  # [C, L] per feature: the longest choice
    np.maximum.at(
        lengths,
        pc.list_parent_indices(values).to_numpy(zero_copy_only=False),
        pc.list_value_length(pc.list_flatten(values)).to_numpy(zero_copy_only=False),
    )
    return lengths


class EpochLengthGroupedSampler(LengthGroupedSampler):
    """transformers' ``LengthGroupedSampler`` whose shuffle is seeded with ``seed`` (``--data_seed`` or ``--seed``) +
    epoch (``Trainer`` calls :meth:`set_epoch`), so the order is the same on resume and on every process.
    ``batch_size``: the grouping unit (the global batch); ``lengths``: ``[n]`` token counts."""

    def __init__(self, batch_size: int, lengths, seed: int):
        super().__init__(batch_size, lengths=[int(x) for x in lengths])
        self.seed = int(seed)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __iter__(self):
        self.generator = torch.Generator().manual_seed(self.seed + self.epoch)
        return super().__iter__()


class IndexSampler(list):
    """The given indices in the given order (a fixed, deterministic evaluation order): a list of ints, which
    ``DataLoader`` takes as its ``sampler`` as it is."""


def length_order(lengths) -> np.ndarray:
    """Indices that put features longest first (an out-of-memory batch fails at once); ties keep dataset order."""
    return np.argsort(-np.asarray(lengths, dtype=np.int64), kind="stable")


def restore_order(values, order: np.ndarray):
    """Put per-feature ``values`` computed in ``order`` back in dataset order: an array ``[len(order), ...]`` or a
    tuple / list / dict of such (SQuAD's start and end logits); ``None`` stays ``None``. Raises ``RuntimeError`` for
    an array with another number of rows (e.g. a gather that kept padding rows)."""
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


@contextlib.contextmanager
def _keeping_last_batch(args):
    """``args.dataloader_drop_last`` off inside the block: it is a training setting; an evaluation that dropped the
    last partial batch would score a subset of the split."""
    drop = args.dataloader_drop_last
    args.dataloader_drop_last = False
    try:
        yield
    finally:
        args.dataloader_drop_last = drop


class LengthSortedTrainer(Trainer):
    """``Trainer`` with length-grouped training (``args.train_sampling_strategy == "group_by_length"``) and
    length-sorted evaluation (``args.sort_eval_by_length``, default ``True``) batches (docs/design.md). Evaluation
    and prediction score every row whatever ``--dataloader_drop_last`` says, and :meth:`predict` returns joined
    arrays (also with ``--eval_do_concat_batches False``) for the tasks' post-processing."""

    def get_eval_dataloader(self, eval_dataset=None):
        with _keeping_last_batch(self.args):
            return super().get_eval_dataloader(eval_dataset)

    def get_test_dataloader(self, test_dataset):
        with _keeping_last_batch(self.args):
            return super().get_test_dataloader(test_dataset)

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix: str = "test"):
        output = super().predict(test_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)
        return output._replace(predictions=join_batches(output.predictions), label_ids=join_batches(output.label_ids))

    def _get_train_sampler(self, train_dataset=None):
        dataset = train_dataset if train_dataset is not None else self.train_dataset
        lengths = feature_lengths(dataset) if self.args.train_sampling_strategy == "group_by_length" else None
        if lengths is None:  # another strategy, or not a datasets.Dataset with input_ids (Trainer measures them)
            return super()._get_train_sampler(train_dataset)
        unit = self.args.train_batch_size * self.args.gradient_accumulation_steps * max(1, self.args.world_size)
        seed = self.args.data_seed if self.args.data_seed is not None else self.args.seed
        return EpochLengthGroupedSampler(unit, lengths, seed)

    def _get_eval_sampler(self, eval_dataset):
        sorts = (
            getattr(self.args, "sort_eval_by_length", True)
            and self.args.eval_do_concat_batches
            and not self.args.batch_eval_metrics
        )
        lengths = feature_lengths(eval_dataset) if sorts else None
        if lengths is None:  # never transformers' random LengthGroupedSampler (shuffled predictions)
            if eval_dataset is None or not hasattr(eval_dataset, "__len__"):
                return None
            return torch.utils.data.SequentialSampler(eval_dataset) if self.args.world_size <= 1 else None
        return IndexSampler(length_order(lengths).tolist())

    def evaluation_loop(
        self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"
    ):
        sampler = _index_sampler(dataloader)
        if sampler is None:
            return super().evaluation_loop(
                dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix
            )
        order = np.asarray(sampler, dtype=np.int64)
        compute_metrics = self.compute_metrics
        scored = []  # (what Trainer gave compute_metrics, the same in dataset order)
        if compute_metrics is not None:
            from transformers import EvalPrediction

            def in_dataset_order(pred, **kwargs):
                restored = EvalPrediction(
                    **{
                        k: restore_order(getattr(pred, k), order)
                        for k in ("predictions", "label_ids", "inputs", "losses")
                    }
                )
                scored.append((pred, restored))
                return compute_metrics(restored, **kwargs)

            self.compute_metrics = in_dataset_order
        try:
            output = super().evaluation_loop(
                dataloader, description, prediction_loss_only, ignore_keys, metric_key_prefix
            )
        finally:
            self.compute_metrics = compute_metrics
        if scored and scored[-1][0].predictions is output.predictions and scored[-1][0].label_ids is output.label_ids:
            # Trainer returns the arrays it scored (transformers 5.24): reuse their dataset-order copies
            return output._replace(predictions=scored[-1][1].predictions, label_ids=scored[-1][1].label_ids)
        return output._replace(
            predictions=restore_order(output.predictions, order), label_ids=restore_order(output.label_ids, order)
        )


def _index_sampler(dataloader) -> IndexSampler | None:
    """The :class:`IndexSampler` behind ``dataloader`` (also inside accelerate's ``DataLoaderShard`` /
    ``BatchSamplerShard``), else ``None``."""
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


# ------------------------------------------------------------------------------------------------------ the loss
# an optimizer step's loss: its loss terms on all micro-batches and processes / their number ('Loss normalisation')

UNITS = ("labels", "examples")
#: batch keys holding the training targets, one row per example (first one present is used to count examples).
TARGET_KEYS = ("labels", "start_positions")


def loss_unit(problem_type: str) -> str:
    """The unit of one loss term for ``problem_type``: ``"labels"`` or ``"examples"``, as its task family declares
    it (:class:`hf_bert_tasks.tasks.problems.ProblemType`; ``ValueError`` for an unknown problem type)."""
    from ..tasks.problems import get_problem_type

    return get_problem_type(problem_type).loss_unit


def count_loss_terms(batch, unit: str) -> torch.Tensor:
    """Number of loss terms in one collated ``batch`` (int64 scalar tensor on the batch's device): ``"labels"``:
    entries of ``batch["labels"]`` (``[B, L]`` or ``[B]``) not ``-100``; ``"examples"``: rows of the first target
    present (``labels`` or ``start_positions``, ``[B]``). Raises ``KeyError`` for a batch without either."""
    if unit == "labels":
        return batch["labels"].ne(-100).sum()
    for key in TARGET_KEYS:
        if key in batch:
            return torch.tensor(batch[key].shape[0], dtype=torch.long, device=batch[key].device)
    raise KeyError(f"a training batch without targets: expected one of {TARGET_KEYS} among {sorted(batch)}")


def cross_entropy_sum(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Sum of the cross-entropies of the labels that are not ``-100``: float32 scalar (0 with a graph through
    ``logits`` when nothing is labelled, so DDP still syncs). ``logits``: float ``[B, L', C]`` per token (``L' <= L``:
    a feature-based head may drop trailing padding rows, labelled ``-100``) or ``[B, C]``; ``labels``: int ``[B, L]``
    or ``[B]``."""
    if labels.dim() >= 2:
        labels = labels[:, : logits.shape[1]]
    return torch.nn.functional.cross_entropy(  # in float32 also for half-precision logits, as transformers' losses
        logits.float().reshape(-1, logits.shape[-1]),
        labels.to(logits.device).reshape(-1),
        ignore_index=-100,
        reduction="sum",
    )


def global_batch_loss(outputs, labels: torch.Tensor, num_items_in_batch=None) -> torch.Tensor:
    """``Trainer(compute_loss_func=...)`` of the recipe: the batch's loss terms summed / ``num_items_in_batch`` (the
    step's global count, by Trainer; ``None``: this batch's own), a float32 scalar. ``outputs``: ``logits`` as
    :func:`cross_entropy_sum` or ``[B, 1]``; ``labels``: int ``[B, L]`` / ``[B]`` (cross-entropy) or float ``[B]``
    (squared errors, as ``BertForSequenceClassification`` with ``num_labels=1``)."""
    logits = outputs["logits"] if isinstance(outputs, dict) else outputs[0]
    if labels.is_floating_point():
        terms = (logits.float().reshape(-1) - labels.to(logits.device).float().reshape(-1)).pow(2).sum()
    else:
        terms = cross_entropy_sum(logits, labels)
    count = labels.ne(-100).sum() if num_items_in_batch is None else num_items_in_batch
    return terms / torch.as_tensor(count, device=terms.device).clamp(min=1).float()


def gather_step_batches(
    trainer, epoch_iterator, num_batches: int, device, count, shape: tuple = (), across_processes: bool = True
) -> tuple[list, torch.Tensor]:
    """``Trainer.get_batch_samples``' rule: up to ``num_batches`` batches of ``epoch_iterator`` and the sum of
    ``count(batch)`` (long, shape ``shape``, on ``device``), all-reduced with several processes and ``across_processes``
    (every process joins, even with no batch left); ``PretrainingTrainer`` inlines it (shape ``(2,)``: MLM tokens, NSP
    examples). Returns ``(batches, counts)``."""
    batches = list(itertools.islice(epoch_iterator, num_batches))
    total = torch.zeros(shape, dtype=torch.long, device=device)
    for batch in batches:
        total += count(batch).to(device)
    if trainer.args.world_size > 1 and across_processes:
        total = trainer.accelerator.reduce(total, reduction="sum")
    return batches, total


class GlobalLossTrainer(LengthSortedTrainer):
    """:class:`LengthSortedTrainer` with ``compute_loss_func=global_batch_loss`` (docs/design.md) unless the caller
    gives one or label smoothing is on. ``loss_unit``: ``"labels"`` or ``"examples"`` (:func:`loss_unit`; another
    value: ``ValueError``); the rest as ``Trainer``."""

    def __init__(self, *args, loss_unit: str = "examples", **kwargs):
        if loss_unit not in UNITS:
            raise ValueError(f"loss_unit {loss_unit!r}: expected one of {UNITS}")
        args_ = kwargs.get("args", args[1] if len(args) > 1 else None)
        smoothing = bool(getattr(args_, "label_smoothing_factor", 0))
        ours = kwargs.get("compute_loss_func") is None and not smoothing
        if ours:
            kwargs["compute_loss_func"] = global_batch_loss
        super().__init__(*args, **kwargs)
        self.loss_unit = loss_unit
        self._ours = ours
        self._count_rows = ours and loss_unit == "examples"  # SQuAD: Trainer counts only `labels`

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """Trainer's (``labels != -100`` over the step, across processes); for batches without ``labels`` (SQuAD)
        the rows of ``start_positions``, summed over the processes unless ``average_tokens_across_devices`` is off."""
        batches, count = super().get_batch_samples(epoch_iterator, num_batches, device)
        if count is None and self._count_rows:
            count = sum(
                (count_loss_terms(batch, "examples").to(device) for batch in batches),
                torch.zeros((), dtype=torch.long, device=device),
            )
            if self.args.world_size > 1 and self.args.average_tokens_across_devices:
                count = self.accelerator.reduce(count, reduction="sum")
        return batches, count

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if not self._ours or (model.training and "labels" in inputs):  # Trainer's path (with our function or not)
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        if not model.training:  # evaluation: the head's own batch mean on this process, as Trainer without a
            outputs = model(**inputs)  # compute_loss_func (Trainer's would divide by the count of all processes)
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
            return (loss, outputs) if return_outputs else loss
        # SQuAD training: batch mean x local examples x processes / global examples, as one division
        self.loss_is_scaled_for_ga = True
        processes = self.accelerator.num_processes if self.args.average_tokens_across_devices else 1
        outputs = model(**inputs)
        mean = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        local = count_loss_terms(inputs, "examples").to(mean.device)
        loss = mean / (num_items_in_batch.clamp(min=1).to(mean.dtype) / (local * processes).to(mean.dtype))
        return (loss, outputs) if return_outputs else loss


class SkipLastStepEvaluation(TrainerCallback):
    """No in-training evaluation at the last step (``--eval_strategy epoch|steps``): the recipe's final evaluation
    (``Task.evaluate``, with prediction files) scores that same model right after ``train()``; evaluating it twice
    cost a second pass over the dev set and printed the numbers twice (issue 44). Kept with
    ``--load_best_model_at_end``, where Trainer compares the last checkpoint's metric with the best one."""

    def _skip(self, args, state, control, **kwargs):
        if state.max_steps and state.global_step >= state.max_steps and not args.load_best_model_at_end:
            control.should_evaluate = False
        return control

    on_step_end = _skip
    on_epoch_end = _skip
