"""Fine-tuning losses normalised over the *global* batch of an optimizer step (gradient accumulation and DDP).

``Trainer`` with a model that ignores ``num_items_in_batch`` (every BERT head, see
:func:`hf_bert_tasks.finetuning.declare_batch_mean_loss`) averages the head's loss per micro-batch, divides it by the
number of accumulation steps, and DDP then averages the gradients of the processes: the loss of a step is a mean of
micro-batch means. That is the global mean only when every micro-batch holds the same number of loss terms.
:class:`GlobalLossTrainer` makes the loss of an optimizer step

    sum of the loss terms of all micro-batches of all processes / number of those terms

(Trainer's ``num_items_in_batch`` path, counted by :meth:`GlobalLossTrainer.get_batch_samples` with one all-reduce
per step, as :class:`hf_bert_tasks.pretraining.PretrainingTrainer` does for MLM), so batch 2 x accumulation 1, batch
1 x accumulation 2 and 2 processes x batch 1 give the same update. The unit of a loss term depends on the head
(:data:`LOSS_UNITS`):

* ``"labels"``: one cross-entropy term per label that is not ``-100``, computed here from the logits as
  ``sum(CE) / labels of the global batch`` (the normalisation of transformers' ``ForTokenClassification`` loss with
  ``num_items_in_batch``):

  - **token classification** (CoNLL-2003 NER): one label per *labelled* WordPiece (the first piece of each word;
    other pieces and context words are ``-100``). The number per example varies with sentence length, so the
    micro-batch mean is not the global mean: a 3-word sentence would weigh as much as a 30-word one in a micro-batch
    of its own. This is the head the global count changes most.
  - **sequence classification** (GLUE) and **multiple choice** (SWAG): one label per example, ``-100`` where it is
    unknown (SWAG); the head's own mean was already the global mean for equal micro-batches of labelled examples,
    which DDP guarantees (accelerate pads the last global batch with repeated examples) and accumulation does except
    at the end of an epoch (a shorter last micro-batch counted each of its examples more).
* ``"examples"``: **regression** (STS-B, mean squared error) and **SQuAD spans** (``(CE(start) + CE(end)) / 2``; a
  window without the answer points at ``[CLS]``, never at an ignored position, :func:`hf_bert_tasks.qa.create_features`):
  one term per example or window, never unlabelled. The head's own batch mean is rescaled by
  ``local examples x processes / global examples``, which is exactly ``1 / accumulation steps`` (the factor Trainer
  applied before) when the micro-batches are equal, and right when they are not.

Evaluation is unchanged (``eval_loss`` is Trainer's per-batch mean of the head's loss). With
``--label_smoothing_factor`` or a ``compute_loss_func`` Trainer's own loss path runs (per-micro-batch means); with
``--average_tokens_across_devices False`` the counts are per process (each process normalises by its own count).
"""

from __future__ import annotations

import itertools

import torch

from .batching import LengthSortedTrainer

#: problem type (:data:`hf_bert_tasks.tasks.base.PROBLEM_TYPES`) -> unit of one loss term (module docstring).
LOSS_UNITS = {
    "token_classification": "labels",
    "single_label_classification": "labels",
    "multiple_choice": "labels",
    "regression": "examples",
    "question_answering": "examples",
}
UNITS = ("labels", "examples")

#: batch keys holding the training targets, one row per example (first one present is used to count examples).
TARGET_KEYS = ("labels", "start_positions")


def loss_unit(problem_type: str) -> str:
    """The unit of one loss term for ``problem_type``: ``"labels"`` or ``"examples"``.

    Raises:
        ValueError: an unknown problem type (the message lists the known ones).
    """
    if problem_type not in LOSS_UNITS:
        raise ValueError(f"problem_type {problem_type!r}: expected one of {sorted(LOSS_UNITS)}")
    return LOSS_UNITS[problem_type]


def count_loss_terms(batch, unit: str) -> torch.Tensor:
    """Number of loss terms in one collated ``batch`` (int64 scalar tensor on the batch's device).

    ``"labels"``: entries of ``batch["labels"]`` (``[B, L]`` per token or ``[B]`` per example) that are not ``-100``.
    ``"examples"``: rows of the first target present (``labels`` ``[B]``, or SQuAD's ``start_positions`` ``[B]``).

    Raises:
        KeyError: the batch has no target (``labels`` / ``start_positions``): nothing to train on.
    """
    if unit == "labels":
        return batch["labels"].ne(-100).sum()
    for key in TARGET_KEYS:
        if key in batch:
            return torch.tensor(batch[key].shape[0], dtype=torch.long, device=batch[key].device)
    raise KeyError(f"a training batch without targets: expected one of {TARGET_KEYS} among {sorted(batch)}")


def cross_entropy_sum(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Sum of the cross-entropies of the labels that are not ``-100``.

    Args:
        logits: float ``[B, L', C]`` per token (``L' <= L``: a feature-based head may drop trailing padding rows,
            whose labels are ``-100``) or ``[B, C]`` per example (``C`` classes or choices).
        labels: int ``[B, L]`` or ``[B]``.

    Returns:
        float32 scalar (0 with a graph through ``logits`` when nothing is labelled, so DDP still syncs).
    """
    if labels.dim() >= 2:
        labels = labels[:, : logits.shape[1]]
    return torch.nn.functional.cross_entropy(  # in float32 also for half-precision logits, as transformers' losses
        logits.float().reshape(-1, logits.shape[-1]), labels.to(logits.device).reshape(-1), ignore_index=-100,
        reduction="sum")


def gather_step_batches(trainer, epoch_iterator, num_batches: int, device, count, shape: tuple = (),
                        across_processes: bool = True) -> tuple[list, torch.Tensor]:
    """The micro-batches of one optimizer step and their loss-term count, for ``Trainer.get_batch_samples``.

    Takes up to ``num_batches`` batches from ``epoch_iterator`` (fewer at the end of an epoch) and sums
    ``count(batch)`` (a long tensor of shape ``shape``) over them; with several processes and ``across_processes``
    the sum is all-reduced (one collective per step, run by every process even with no batch left, so the processes
    stay in step). Used by :class:`GlobalLossTrainer` (shape ``()``: labels or examples) and
    :class:`hf_bert_tasks.pretraining.PretrainingTrainer` (shape ``(2,)``: predicted MLM tokens, NSP examples).

    Returns:
        ``(batches, counts)``: the list of batches and a long tensor of shape ``shape`` on ``device``.
    """
    batches = list(itertools.islice(epoch_iterator, num_batches))
    total = torch.zeros(shape, dtype=torch.long, device=device)
    for batch in batches:
        total += count(batch).to(device)
    if trainer.args.world_size > 1 and across_processes:
        total = trainer.accelerator.reduce(total, reduction="sum")
    return batches, total


class GlobalLossTrainer(LengthSortedTrainer):
    """:class:`~hf_bert_tasks.batching.LengthSortedTrainer` whose training loss is normalised by the number of loss
    terms of the global batch (module docstring).

    Args:
        loss_unit: ``"labels"`` or ``"examples"`` (:func:`loss_unit` of the task's problem type).
        *args, **kwargs: as ``Trainer``.

    Raises:
        ValueError: another ``loss_unit``.
    """

    def __init__(self, *args, loss_unit: str = "examples", **kwargs):
        if loss_unit not in UNITS:
            raise ValueError(f"loss_unit {loss_unit!r}: expected one of {UNITS}")
        super().__init__(*args, **kwargs)
        self.loss_unit = loss_unit
        # Trainer's own loss path (per-micro-batch mean, divided by the accumulation steps) where it adds to the loss
        self.global_loss = self.label_smoother is None and self.compute_loss_func is None
        self.loss_is_scaled_for_ga = True if self.global_loss else None

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """The micro-batches of one optimizer step and ``num_items_in_batch``: the loss terms of all of them, summed
        over the processes (one all-reduce per step) unless ``average_tokens_across_devices`` is off."""
        if not self.global_loss:
            return super().get_batch_samples(epoch_iterator, num_batches, device)
        return gather_step_batches(self, epoch_iterator, num_batches, device,
                                   lambda batch: count_loss_terms(batch, self.loss_unit),
                                   across_processes=self.args.average_tokens_across_devices)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if not self.global_loss or num_items_in_batch is None:  # evaluation, or Trainer's own loss path
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        # DDP averages the gradients of the processes: scale by their number so that the sum over processes counts
        processes = self.accelerator.num_processes if self.args.average_tokens_across_devices else 1
        total = num_items_in_batch.clamp(min=1)
        if self.loss_unit == "labels":
            labels = inputs["labels"]
            outputs = model(**{k: v for k, v in inputs.items() if k != "labels"})
            logits = outputs["logits"] if isinstance(outputs, dict) else outputs[0]
            loss = cross_entropy_sum(logits, labels) * processes / total.float()
        else:
            outputs = model(**inputs)
            mean = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
            local = count_loss_terms(inputs, "examples").to(mean.device)
            # mean * local * processes / total, written as a division by total / (local * processes) so that it is
            # bitwise the former ``mean / accumulation_steps`` when the micro-batches are equal
            loss = mean / (total.to(mean.dtype) / (local * processes).to(mean.dtype))
        return (loss, outputs) if return_outputs else loss
