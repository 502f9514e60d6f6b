"""The pretraining trainer and what it calls each step: the masked-only MLM head, the per-example loss terms, the
metrics from their sums and the epoch callback (one module: ``tests/test_pretrain_trace.py``)."""

from __future__ import annotations

import itertools

import numpy as np
import torch
import torch.nn.functional as F
from transformers import BertForPreTraining, Trainer, TrainerCallback
from transformers.models.bert.modeling_bert import BertForPreTrainingOutput


class BertForPreTrainingMaskedOnly(BertForPreTraining):
    """``BertForPreTraining`` whose MLM head runs only on the ``N`` positions to predict (as google's and NVIDIA's
    code); parameters, loss and checkpoints are the parent's. With ``labels`` (``int64 [B, L]``), ``prediction_logits``
    is ``float [N, V]`` for ``labels != -100`` in row-major order, ``loss`` = mean MLM CE + NSP CE
    (``next_sentence_label`` ``int64 [B]``); without, the parent's ``forward``."""

    def forward(self, input_ids=None, labels=None, next_sentence_label=None, **kwargs):
        if labels is None:
            return super().forward(input_ids=input_ids, next_sentence_label=next_sentence_label, **kwargs)
        outputs = self.bert(input_ids, return_dict=True, **kwargs)
        sequence_output, pooled_output = outputs[:2]
        selected = labels != -100
        # the tied decoder weight is read only inside the head's own forward (FSDP2 / ZeRO-3 gather it there)
        prediction_scores = self.cls.predictions(sequence_output[selected])  # [N, V]
        nsp_scores = self.cls.seq_relationship(pooled_output)  # [B, 2]
        targets = labels[selected]
        loss = F.cross_entropy(prediction_scores, targets) if len(targets) else prediction_scores.sum()
        if next_sentence_label is not None:
            loss = loss + F.cross_entropy(nsp_scores.view(-1, 2), next_sentence_label.view(-1))
        return BertForPreTrainingOutput(
            loss=loss,
            prediction_logits=prediction_scores,
            seq_relationship_logits=nsp_scores,
            hidden_states=outputs.hidden_states,
            attentions=outputs.attentions,
        )

    def save_pretrained(self, save_directory, *args, **kwargs):
        """Save as ``BertForPreTraining`` (same weights; ``architectures`` in ``config.json`` names the parent)."""
        result = super().save_pretrained(save_directory, *args, **kwargs)
        self.config.architectures = ["BertForPreTraining"]
        if kwargs.get("is_main_process", True):
            self.config.save_pretrained(save_directory)
        return result


#: columns of :func:`pretraining_terms`' statistics (per example; sums, so they add over batches, ranks and steps).
STAT_COLUMNS = ("mlm_loss_sum", "mlm_count", "mlm_correct", "nsp_loss_sum", "nsp_count", "nsp_correct")


def pretraining_terms(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    """``(mlm_ce, nsp_ce, stats)`` of one batch: cross-entropies (nats, with grad) per predicted token ``float [N]``
    and per example ``float [B]`` (``None`` without NSP labels); ``stats`` ``float [B, 6]`` detached, columns
    :data:`STAT_COLUMNS` (NSP ones 0 without NSP labels). ``prediction_logits`` ``float [B, L, V]`` (full head) or
    ``[N, V]`` (masked-only head, rows in the order of ``labels[labels != -100]``); ``seq_relationship_logits``
    ``float [B, 2]``; ``labels`` ``int64 [B, L]`` (``-100`` where not predicted); ``next_sentence_label`` ``int64
    [B]`` (0 = IsNext, 1 = NotNext) or ``None`` (MLM only). Raises ``ValueError`` when the logits' rows do not match
    the MLM targets."""
    selected = labels != -100
    targets = labels[selected]
    logits = prediction_logits[selected] if prediction_logits.dim() == 3 else prediction_logits
    if logits.shape[0] != targets.shape[0]:
        raise ValueError(f"prediction_logits has {logits.shape[0]} rows for {targets.shape[0]} MLM targets")
    mlm_ce = F.cross_entropy(logits.float(), targets, reduction="none")
    nsp_ce = None
    if next_sentence_label is not None:
        nsp_logits = seq_relationship_logits.view(-1, 2).float()
        nsp_ce = F.cross_entropy(nsp_logits, next_sentence_label.view(-1), reduction="none")
    with torch.no_grad():
        row = selected.nonzero()[:, 0]  # example of each predicted token (row-major, as labels[selected])
        stats = torch.zeros(labels.shape[0], len(STAT_COLUMNS), dtype=torch.float32, device=labels.device)
        stats[:, 0].index_add_(0, row, mlm_ce.detach())
        stats[:, 1] = selected.sum(1).float()
        stats[:, 2].index_add_(0, row, (logits.argmax(-1) == targets).float())
        if nsp_ce is not None:
            stats[:, 3] = nsp_ce.detach()
            stats[:, 4] = 1.0
            stats[:, 5] = (nsp_logits.argmax(-1) == next_sentence_label.view(-1)).float()
    return mlm_ce, nsp_ce, stats


def metrics_from_sums(sums, prefix: str = "") -> dict:
    """``mlm_loss`` (mean over predicted tokens), ``mlm_accuracy``, ``nsp_loss`` (mean over examples), ``nsp_accuracy``
    from the 6 column sums of :func:`pretraining_terms` stats; no ``nsp_*`` without NSP examples, ``{}`` when empty."""
    s = dict(zip(STAT_COLUMNS, (float(x) for x in sums)))
    if not (s["nsp_count"] or s["mlm_count"]):
        return {}
    n_mlm = max(s["mlm_count"], 1.0)
    metrics = {f"{prefix}mlm_loss": s["mlm_loss_sum"] / n_mlm, f"{prefix}mlm_accuracy": s["mlm_correct"] / n_mlm}
    if s["nsp_count"]:
        metrics[f"{prefix}nsp_loss"] = s["nsp_loss_sum"] / s["nsp_count"]
        metrics[f"{prefix}nsp_accuracy"] = s["nsp_correct"] / s["nsp_count"]
    return metrics


class MaskingEpochCallback(TrainerCallback):
    """Set the collator's epoch at each epoch start: dynamic masks change with the epoch, and a resumed run
    (``state.epoch`` from the checkpoint) redraws those of the interrupted epoch."""

    def __init__(self, collator):
        self.collator = collator

    def on_epoch_begin(self, args, state, control, **kwargs):
        self.collator.set_epoch(int(state.epoch or 0))  # epoch >= 0: int floors it


class PretrainingTrainer(Trainer):
    """``Trainer`` for MLM + NSP (MLM alone without ``next_sentence_label``, no ``nsp_*`` logged); logs ``mlm_loss``,
    ``nsp_loss``, ``mlm_accuracy``, ``nsp_accuracy``. Step loss (§3.1; google's ``get_masked_lm_output``):
    ``sum(MLM CE) / predicted tokens + sum(NSP CE) / examples`` over the global batch; ``eval_loss = eval_mlm_loss +
    eval_nsp_loss``. Why: docs/design.md, "pretraining/trainer.py: loss and metrics"."""

    loss_is_scaled_for_ga = True

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        dtype = torch.float32 if self.args.device.type == "mps" else torch.float64
        self._train_sums = torch.zeros(len(STAT_COLUMNS), dtype=dtype, device=self.args.device)

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """The micro-batches of one optimizer step and ``num_items_in_batch`` = ``int64 [2]`` (predicted MLM tokens,
        NSP examples) summed over them and all processes (one all-reduce, run by every process even with no batch)."""
        batches = list(itertools.islice(epoch_iterator, num_batches))
        total = torch.zeros(2, dtype=torch.long, device=device)
        for batch in batches:
            nsp = batch.get("next_sentence_label")
            total[0] += batch["labels"].ne(-100).sum().to(device)
            total[1] += 0 if nsp is None else nsp.numel()
        if self.args.world_size > 1:
            total = self.accelerator.reduce(total, reduction="sum")
        return batches, total

    def _forward(self, model, inputs, num_items_in_batch=None):
        """``(outputs, loss, stats)``, the loss normalised by the step's global counts (``num_items_in_batch``)."""
        # the masked-only head needs the labels to know which positions to project; the full head gets none
        keep_labels = isinstance(self.accelerator.unwrap_model(model), BertForPreTrainingMaskedOnly)
        outputs = model(
            **{k: v for k, v in inputs.items() if k != "next_sentence_label" and (keep_labels or k != "labels")}
        )
        mlm_ce, nsp_ce, stats = pretraining_terms(
            outputs.prediction_logits,
            outputs.seq_relationship_logits,
            inputs["labels"],
            inputs.get("next_sentence_label"),
        )
        if num_items_in_batch is not None:  # training: global counts of the optimizer step
            (n_mlm, n_nsp), scale = num_items_in_batch, self.accelerator.num_processes
        else:
            n_mlm, n_nsp, scale = stats[:, 1].sum(), stats[:, 4].sum(), 1
        loss = mlm_ce.sum() / n_mlm.clamp(min=1)
        if nsp_ce is not None:
            loss = loss + nsp_ce.sum() / n_nsp.clamp(min=1)
        return outputs, loss * scale, stats

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs, loss, stats = self._forward(model, inputs, num_items_in_batch)
        if model.training:
            self._train_sums += stats.sum(0).to(self._train_sums.dtype)
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        """``(loss, stats [B, 6], None)``: the per-example statistics are the "predictions" (see the class doc)."""
        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            _outputs, loss, stats = self._forward(model, inputs)
        return loss.detach(), stats, None

    def log(self, logs, start_time=None):
        if "loss" in logs and not any(k.startswith("eval_") for k in logs):
            sums = self._train_sums
            if self.args.world_size > 1:  # all ranks log at the same steps: one all-reduce per log
                sums = self.accelerator.reduce(sums.clone(), reduction="sum")
            logs.update({k: round(v, 4) for k, v in metrics_from_sums(sums.tolist()).items()})
            self._train_sums.zero_()
        super().log(logs, start_time)

    def evaluation_loop(
        self, dataloader, description, prediction_loss_only=None, ignore_keys=None, metric_key_prefix="eval"
    ):
        output = super().evaluation_loop(
            dataloader,
            description,
            prediction_loss_only=False,
            ignore_keys=ignore_keys,
            metric_key_prefix=metric_key_prefix,
        )
        if output.predictions is not None and len(output.predictions):
            p = f"{metric_key_prefix}_"
            metrics = metrics_from_sums(np.asarray(output.predictions, dtype=np.float64).sum(0), prefix=p)
            metrics[f"{p}loss"] = metrics.get(f"{p}mlm_loss", 0.0) + metrics.get(f"{p}nsp_loss", 0.0)
            output.metrics.update(metrics)
        return output
