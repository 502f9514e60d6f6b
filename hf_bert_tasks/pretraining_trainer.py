"""The pretraining trainer and what it calls each step: the masked-positions-only MLM head, the per-example loss
terms and statistics, the metrics from their sums, and the callback that tells the collator the epoch.

One module on purpose: a training step goes ``PretrainingTrainer.compute_loss`` -> the model's ``forward`` ->
:func:`pretraining_terms` without leaving it (``tests/test_pretrain_trace.py`` counts module changes). Every class
works with and without NSP: a batch without ``next_sentence_label`` (``--no_next_sentence_prediction``, RoBERTa's
MLM-only objective) trains on MLM alone and logs no NSP metrics.
"""

from __future__ import annotations

from transformers import BertForPreTraining, Trainer, TrainerCallback


class BertForPreTrainingMaskedOnly(BertForPreTraining):
    """``BertForPreTraining`` whose MLM head runs only on the positions to predict (as google's and NVIDIA's code).

    The vocabulary projection ``[B, L, H] x [H, V]`` dominates a small model's step time; gathering the ``N``
    positions with ``labels != -100`` first makes it ``[N, H] x [H, V]`` (``N`` ≈ 0.15·B·L). Parameters, their
    names and the loss are those of ``BertForPreTraining`` (saved checkpoints say ``architectures:
    ["BertForPreTraining"]`` and load with ``BertForPreTraining``/``AutoModelForPreTraining``/``AutoModelFor...``).

    ``forward`` takes the arguments of ``BertForPreTraining.forward``. Without ``labels`` it behaves exactly as the
    parent (``prediction_logits`` ``[B, L, V]``). With ``labels`` (``int64 [B, L]``), ``prediction_logits`` is
    ``float [N, V]`` for the selected positions in row-major order (``labels[labels != -100]`` are their targets),
    and ``loss`` = mean MLM cross-entropy over the ``N`` positions + NSP cross-entropy (when ``next_sentence_label``,
    ``int64 [B]``, is given; else the MLM loss alone).
    """

    def forward(self, input_ids=None, labels=None, next_sentence_label=None, **kwargs):
        import torch.nn.functional as F
        from transformers.models.bert.modeling_bert import BertForPreTrainingOutput

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
        return BertForPreTrainingOutput(loss=loss, prediction_logits=prediction_scores,
                                        seq_relationship_logits=nsp_scores, hidden_states=outputs.hidden_states,
                                        attentions=outputs.attentions)

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
    """Per-token MLM and per-example NSP cross-entropies, and per-example statistics, for one batch.

    Args:
        prediction_logits: ``float [B, L, V]`` (full head) or ``float [N, V]`` (masked-only head, rows in the order of
            ``labels[labels != -100]``).
        seq_relationship_logits: ``float [B, 2]``.
        labels: ``int64 [B, L]``, ``-100`` where not predicted.
        next_sentence_label: ``int64 [B]`` (0 = IsNext, 1 = NotNext), or ``None`` (MLM only).

    Returns:
        ``(mlm_ce, nsp_ce, stats)``: ``mlm_ce`` ``float [N]`` cross-entropy (nats) of each predicted token (with grad),
        ``nsp_ce`` ``float [B]`` (with grad; ``None`` without ``next_sentence_label``), ``stats`` ``float [B, 6]``
        detached, columns :data:`STAT_COLUMNS` (MLM loss sum, predicted tokens, correct tokens, NSP loss, 1, NSP
        correct; the three NSP columns are 0 without NSP labels) — sums, so losses and accuracies of any set of
        examples are token-weighted (MLM) / example-weighted (NSP) whatever the batching.

    Raises:
        ValueError: ``prediction_logits`` rows do not match the number of MLM targets.
    """
    import torch
    import torch.nn.functional as F

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
        b = labels.shape[0]
        row = selected.nonzero()[:, 0]  # example of each predicted token (row-major, as labels[selected])
        stats = torch.zeros(b, len(STAT_COLUMNS), dtype=torch.float32, device=labels.device)
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
    from the column sums of :func:`pretraining_terms` stats (a sequence of 6 numbers). Sums without NSP examples (MLM
    only) give no ``nsp_*`` keys; empty sums (no predicted token, no NSP example) give ``{}``."""
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
    """Tell the collator the epoch at each epoch start, so dynamic masks change with the epoch and a resumed run
    (``state.epoch`` restored from the checkpoint) redraws the masks of the interrupted epoch."""

    def __init__(self, collator):
        self.collator = collator

    def on_epoch_begin(self, args, state, control, **kwargs):
        import math

        self.collator.set_epoch(math.floor(state.epoch or 0.0))


class PretrainingTrainer(Trainer):
    """``Trainer`` for MLM + NSP with per-token normalisation; logs ``mlm_loss``, ``nsp_loss``, ``mlm_accuracy``,
    ``nsp_accuracy`` separately. Batches without ``next_sentence_label`` (MLM only, RoBERTa's objective) train on the
    MLM term alone and log no ``nsp_*`` metrics.

    Loss of an optimizer step (the paper's sum of the two objectives, §3.1; google's ``get_masked_lm_output`` divides
    the summed token losses by the number of predicted tokens):
    ``sum(MLM cross-entropy over the predicted tokens of the GLOBAL batch) / number of those tokens + sum(NSP
    cross-entropy) / number of examples of the global batch`` — global = all gradient-accumulation micro-batches of
    all processes (the counts are summed with one all-reduce per step in :meth:`get_batch_samples`, Trainer's
    ``num_items_in_batch`` path), so a step's update does not depend on how its examples are split into micro-batches
    or ranks. Each micro-batch's loss is multiplied by the number of processes because DDP averages gradients.

    Metrics: the statistics of :func:`pretraining_terms` are summed on the device between logging steps (no host
    sync per step) and all-reduced once per log. Evaluation returns per-example statistics as "predictions", which
    Trainer gathers with ``accelerator.gather_for_metrics`` (dropping DDP padding duplicates); ``eval_mlm_loss`` and
    ``eval_mlm_accuracy`` are token-weighted over the whole eval set, ``eval_nsp_*`` example-weighted, and
    ``eval_loss = eval_mlm_loss + eval_nsp_loss`` (``eval_mlm_loss`` without NSP), all independent of the eval batch
    size.
    """

    loss_is_scaled_for_ga = True

    def __init__(self, *args, **kwargs):
        import torch

        kwargs.setdefault("compute_metrics", None)
        super().__init__(*args, **kwargs)
        dtype = torch.float32 if self.args.device.type == "mps" else torch.float64
        self._train_sums = torch.zeros(len(STAT_COLUMNS), dtype=dtype, device=self.args.device)

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """The micro-batches of one optimizer step and ``num_items_in_batch`` = tensor ``[predicted MLM tokens, NSP
        examples]`` summed over the micro-batches and all processes (one all-reduce per step, run by every process even
        with no batch left; :func:`hf_bert_tasks.loss_normalisation.gather_step_batches`'s rule, inlined)."""
        import itertools

        import torch

        batches = list(itertools.islice(epoch_iterator, num_batches))
        total = torch.zeros(2, dtype=torch.long, device=device)
        for batch in batches:
            nsp = batch.get("next_sentence_label")
            total[0] += batch["labels"].ne(-100).sum().to(device)
            total[1] += 0 if nsp is None else nsp.numel()
        if self.args.world_size > 1:
            total = self.accelerator.reduce(total, reduction="sum")
        return batches, total

    def _forward(self, model, inputs):
        unwrapped = self.accelerator.unwrap_model(model)
        # the full head needs no labels (the loss is computed here, on the predicted positions only); the masked-only
        # head needs them to know which positions to project.
        keep_labels = isinstance(unwrapped, BertForPreTrainingMaskedOnly)
        outputs = model(**{k: v for k, v in inputs.items()
                           if k != "next_sentence_label" and (keep_labels or k != "labels")})
        terms = pretraining_terms(outputs.prediction_logits, outputs.seq_relationship_logits, inputs["labels"],
                                  inputs.get("next_sentence_label"))
        return outputs, terms

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs, (mlm_ce, nsp_ce, stats) = self._forward(model, inputs)
        if num_items_in_batch is not None:  # training: global counts of the optimizer step
            (n_mlm, n_nsp), scale = num_items_in_batch, self.accelerator.num_processes
        else:
            n_mlm, n_nsp, scale = stats[:, 1].sum(), stats[:, 4].sum(), 1
        loss = mlm_ce.sum() / n_mlm.clamp(min=1)
        if nsp_ce is not None:
            loss = loss + nsp_ce.sum() / n_nsp.clamp(min=1)
        loss = loss * scale
        if model.training:
            self._train_sums += stats.sum(0).to(self._train_sums.dtype)
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        """``(loss, stats [B, 6], None)``: the per-example statistics are the "predictions" (see the class doc)."""
        import torch

        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            _outputs, (mlm_ce, nsp_ce, stats) = self._forward(model, inputs)
        loss = mlm_ce.sum() / max(mlm_ce.numel(), 1) + (nsp_ce.mean() if nsp_ce is not None else 0.0)
        return loss.detach(), stats, None

    def log(self, logs, start_time=None):
        if "loss" in logs and not any(k.startswith("eval_") for k in logs):
            sums = self._train_sums
            if self.args.world_size > 1:  # all ranks log at the same steps: one all-reduce per log
                sums = self.accelerator.reduce(sums.clone(), reduction="sum")
            logs.update({k: round(v, 4) for k, v in metrics_from_sums(sums.tolist()).items()})
            self._train_sums.zero_()
        super().log(logs, start_time)

    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        output = super().evaluation_loop(dataloader, description, prediction_loss_only=False, ignore_keys=ignore_keys,
                                         metric_key_prefix=metric_key_prefix)
        if output.predictions is not None and len(output.predictions):
            import numpy as np

            p = f"{metric_key_prefix}_"
            metrics = metrics_from_sums(np.asarray(output.predictions, dtype=np.float64).sum(0), prefix=p)
            metrics[f"{p}loss"] = metrics.get(f"{p}mlm_loss", 0.0) + metrics.get(f"{p}nsp_loss", 0.0)
            output.metrics.update(metrics)
        return output
