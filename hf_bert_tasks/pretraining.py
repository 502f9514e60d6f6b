"""The pretraining recipe's pieces: arguments, a masked-positions-only MLM head, a Trainer that logs MLM and NSP apart.

:func:`run_pretrain` is what ``hf-bert-tasks pretrain`` and ``recipes/pretrain.py`` call. Outputs in ``output_dir``:
the model (``BertForPreTraining`` weights, loadable by any ``AutoModelFor...`` and by the fine-tune recipe), the
tokenizer, ``trainer_state.json`` (log history), ``pretraining_summary.json`` (corpus, masking recipe, steps,
MLM/NSP accuracy over steps and at the end) and ``pretraining_curves.png`` (the MLM/NSP curves). With ``--phase2_max_steps N`` the paper's second phase (§A.2: 90 % of
the steps at sequence length 128, then 10 % at 512) continues from ``output_dir/phase1`` into ``output_dir``.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field

from transformers import BertForPreTraining, Trainer, TrainerCallback, TrainingArguments

logger = logging.getLogger(__name__)

SUMMARY_FILE = "pretraining_summary.json"
CURVES_FILE = "pretraining_curves.png"
CURVE_METRICS = ("mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy")
PHASE_FILE = "phase_summary.json"


class BertForPreTrainingMaskedOnly(BertForPreTraining):
    """``BertForPreTraining`` whose MLM head runs only on the positions to predict (as google's and NVIDIA's code).

    The vocabulary projection ``[B, L, H] x [H, V]`` dominates a small model's step time; gathering the ``N``
    positions with ``labels != -100`` first makes it ``[N, H] x [H, V]`` (``N`` ≈ 0.15·B·L). Parameters, their names
    and the loss are those of ``BertForPreTraining`` (saved checkpoints say ``architectures: ["BertForPreTraining"]``
    and load with ``BertForPreTraining``/``AutoModelForPreTraining``/``AutoModelFor...``).

    ``forward`` takes the arguments of ``BertForPreTraining.forward``. Without ``labels`` it behaves exactly as the
    parent (``prediction_logits`` ``[B, L, V]``). With ``labels`` (``int64 [B, L]``), ``prediction_logits`` is
    ``float [N, V]`` for the selected positions in row-major order (``labels[labels != -100]`` are their targets),
    and ``loss`` = mean MLM cross-entropy over the ``N`` positions + NSP cross-entropy (when ``next_sentence_label``,
    ``int64 [B]``, is given; else the MLM loss alone).
    """

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        position_ids=None,
        inputs_embeds=None,
        labels=None,
        next_sentence_label=None,
        **kwargs,
    ):
        import torch.nn.functional as F
        from transformers.models.bert.modeling_bert import BertForPreTrainingOutput

        if labels is None:
            return super().forward(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                position_ids=position_ids,
                inputs_embeds=inputs_embeds,
                next_sentence_label=next_sentence_label,
                **kwargs,
            )
        outputs = self.bert(
            input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            position_ids=position_ids,
            inputs_embeds=inputs_embeds,
            return_dict=True,
            **kwargs,
        )
        sequence_output, pooled_output = outputs[:2]
        selected = labels != -100
        prediction_scores = self.cls.predictions(sequence_output[selected])  # [N, V]
        nsp_scores = self.cls.seq_relationship(pooled_output)  # [B, 2]
        loss = (
            F.cross_entropy(prediction_scores, labels[selected])
            if prediction_scores.shape[0]
            else prediction_scores.sum()
        )
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
        """Save as ``BertForPreTraining`` (same weights; ``architectures`` names the parent class)."""
        result = super().save_pretrained(save_directory, *args, **kwargs)
        path = os.path.join(save_directory, "config.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                config = json.load(f)
            config["architectures"] = ["BertForPreTraining"]
            with open(path, "w", encoding="utf-8") as f:
                json.dump(config, f, indent=2, sort_keys=True)
                f.write("\n")
        return result


#: columns of :func:`pretraining_example_stats` (per example; sums, so they add over batches, ranks and steps).
STAT_COLUMNS = ("mlm_loss_sum", "mlm_count", "mlm_correct", "nsp_loss_sum", "nsp_count", "nsp_correct")


def pretraining_terms(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    """Per-token MLM and per-example NSP cross-entropies, and per-example statistics, for one batch.

    Args:
        prediction_logits: ``float [B, L, V]`` (full head) or ``float [N, V]`` (masked-only head, rows in the order of
            ``labels[labels != -100]``).
        seq_relationship_logits: ``float [B, 2]``.
        labels: ``int64 [B, L]``, ``-100`` where not predicted.
        next_sentence_label: ``int64 [B]`` (0 = IsNext, 1 = NotNext).

    Returns:
        ``(mlm_ce, nsp_ce, stats)``: ``mlm_ce`` ``float [N]`` cross-entropy (nats) of each predicted token (with grad),
        ``nsp_ce`` ``float [B]`` (with grad), ``stats`` ``float [B, 6]`` detached, columns :data:`STAT_COLUMNS`
        (MLM loss sum, predicted tokens, correct tokens, NSP loss, 1, NSP correct) — sums, so losses and accuracies
        of any set of examples are token-weighted (MLM) / example-weighted (NSP) whatever the batching.

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
    nsp_logits = seq_relationship_logits.view(-1, 2).float()
    nsp_ce = F.cross_entropy(nsp_logits, next_sentence_label.view(-1), reduction="none")
    with torch.no_grad():
        b = labels.shape[0]
        row = selected.nonzero()[:, 0]  # example of each predicted token (row-major, as labels[selected])
        stats = torch.zeros(b, len(STAT_COLUMNS), dtype=torch.float32, device=labels.device)
        stats[:, 0].index_add_(0, row, mlm_ce.detach())
        stats[:, 1] = selected.sum(1).float()
        stats[:, 2].index_add_(0, row, (logits.argmax(-1) == targets).float())
        stats[:, 3] = nsp_ce.detach()
        stats[:, 4] = 1.0
        stats[:, 5] = (nsp_logits.argmax(-1) == next_sentence_label.view(-1)).float()
    return mlm_ce, nsp_ce, stats


def metrics_from_sums(sums, prefix: str = "") -> dict:
    """``mlm_loss`` (mean over predicted tokens), ``mlm_accuracy``, ``nsp_loss`` (mean over examples), ``nsp_accuracy``
    from the column sums of :func:`pretraining_terms` stats (a sequence of 6 numbers). Empty sums give ``{}``."""
    s = dict(zip(STAT_COLUMNS, (float(x) for x in sums)))
    if not s["nsp_count"]:
        return {}
    n_mlm = max(s["mlm_count"], 1.0)
    return {
        f"{prefix}mlm_loss": s["mlm_loss_sum"] / n_mlm,
        f"{prefix}mlm_accuracy": s["mlm_correct"] / n_mlm,
        f"{prefix}nsp_loss": s["nsp_loss_sum"] / s["nsp_count"],
        f"{prefix}nsp_accuracy": s["nsp_correct"] / s["nsp_count"],
    }


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
    ``nsp_accuracy`` separately.

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
    ``eval_loss = eval_mlm_loss + eval_nsp_loss``, all independent of the eval batch size.
    """

    loss_is_scaled_for_ga = True

    def __init__(self, *args, **kwargs):
        import torch

        kwargs.setdefault("compute_metrics", None)
        super().__init__(*args, **kwargs)
        dtype = torch.float32 if self.args.device.type == "mps" else torch.float64
        self._train_sums = torch.zeros(len(STAT_COLUMNS), dtype=dtype, device=self.args.device)

    def get_batch_samples(self, epoch_iterator, num_batches, device):
        """The micro-batches of one optimizer step and ``num_items_in_batch`` = tensor ``[predicted MLM tokens,
        examples]`` summed over the micro-batches and all processes (one all-reduce)."""
        import torch

        from .loss_normalisation import gather_step_batches

        def count(batch):  # on the batch's device (a GPU batch must not be stacked with a CPU tensor)
            labels = batch["labels"]
            return torch.stack([labels.ne(-100).sum().long(),
                                torch.tensor(batch["next_sentence_label"].numel(), dtype=torch.long, device=labels.device)])

        return gather_step_batches(self, epoch_iterator, num_batches, device, count, shape=(2,))

    def _forward(self, model, inputs):
        unwrapped = self.accelerator.unwrap_model(model)
        # the full head needs no labels (the loss is computed here, on the predicted positions only); the masked-only
        # head needs them to know which positions to project.
        keep_labels = isinstance(unwrapped, BertForPreTrainingMaskedOnly)
        model_inputs = {
            k: v for k, v in inputs.items() if k != "next_sentence_label" and (keep_labels or k != "labels")
        }
        outputs = model(**model_inputs)
        terms = pretraining_terms(
            outputs.prediction_logits, outputs.seq_relationship_logits, inputs["labels"], inputs["next_sentence_label"]
        )
        return outputs, terms

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs, (mlm_ce, nsp_ce, stats) = self._forward(model, inputs)
        if num_items_in_batch is not None:  # training: global counts of the optimizer step
            n_mlm, n_nsp = num_items_in_batch[0], num_items_in_batch[1]
            scale = self.accelerator.num_processes
        else:
            n_mlm, n_nsp = stats[:, 1].sum(), stats[:, 4].sum()
            scale = 1
        loss = (mlm_ce.sum() / n_mlm.clamp(min=1) + nsp_ce.sum() / n_nsp.clamp(min=1)) * scale
        if model.training:
            self._train_sums += stats.sum(0).to(self._train_sums.dtype)
        return (loss, outputs) if return_outputs else loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        """``(loss, stats [B, 6], None)``: the per-example statistics are the "predictions" (see the class doc)."""
        import torch

        inputs = self._prepare_inputs(inputs)
        with torch.no_grad(), self.compute_loss_context_manager():
            _outputs, (mlm_ce, nsp_ce, stats) = self._forward(model, inputs)
        loss = mlm_ce.sum() / max(mlm_ce.numel(), 1) + nsp_ce.mean()
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
            import numpy as np

            sums = np.asarray(output.predictions, dtype=np.float64).sum(0)
            metrics = metrics_from_sums(sums, prefix=f"{metric_key_prefix}_")
            metrics[f"{metric_key_prefix}_loss"] = (
                metrics[f"{metric_key_prefix}_mlm_loss"] + metrics[f"{metric_key_prefix}_nsp_loss"]
            )
            output.metrics.update(metrics)
        return output


# --------------------------------------------------------------------------------------------------- arguments
@dataclass
class PretrainModelArguments:
    """Model and tokenizer: a preset size (``hf_bert_tasks.modeling.BERT_PRESETS``) or a checkpoint to continue."""

    preset: str = field(
        default="tiny",
        metadata={
            "help": "BERT size: tiny, mini, small, base (paper's BERT-BASE).",
            "choices": ["tiny", "mini", "small", "base"],
        },
    )
    model_name_or_path: str | None = field(
        default=None,
        metadata={"help": "Continue pretraining from this checkpoint (e.g. phase 1) instead of random init."},
    )
    tokenizer_name: str | None = field(
        default=None, metadata={"help": "Tokenizer folder/id; default: train a WordPiece vocabulary on the corpus."}
    )
    vocab_size: int = field(
        default=8000, metadata={"help": "WordPiece vocabulary size when training one (paper: 30522)."}
    )
    lowercase: bool = field(default=True, metadata={"help": "Uncased vocabulary when training one."})
    num_hidden_layers: int | None = field(default=None, metadata={"help": "Override the preset's L."})
    hidden_size: int | None = field(default=None, metadata={"help": "Override the preset's H."})
    num_attention_heads: int | None = field(default=None, metadata={"help": "Override the preset's A."})
    intermediate_size: int | None = field(default=None, metadata={"help": "Override the preset's feed-forward size."})
    max_position_embeddings: int = field(default=512, metadata={"help": "Positions (512 in the paper)."})

    def config_overrides(self) -> dict:
        keys = ("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


@dataclass
class PretrainDataArguments:
    """Corpus, instance creation (google's create_pretraining_data.py flags) and masking."""

    train_files: list[str] = field(
        default=None,
        metadata={
            "help": "Local corpus files or globs: text (one sentence per line, blank line between documents), .jsonl "
            "or .parquet (a 'sentences' list or a 'text' string per document).",
            "nargs": "+",
        },
    )
    dataset_name: str | None = field(
        default=None, metadata={"help": "A Hub dataset id instead of --train_files (one document per row)."}
    )
    dataset_config_name: str | None = field(default=None, metadata={"help": "Configuration of --dataset_name."})
    dataset_split: str = field(default="train", metadata={"help": "Split of --dataset_name."})
    text_column: str = field(
        default="text", metadata={"help": "Document column (one sentence per line) of jsonl/parquet/Hub rows."}
    )
    streaming: bool = field(
        default=False,
        metadata={"help": "Stream the corpus (IterableDataset): nothing cached; eval = the first documents."},
    )
    streaming_eval_documents: int = field(
        default=100, metadata={"help": "With --streaming: the first N documents are the eval set (0: none)."}
    )
    dataset_cache_dir: str | None = field(
        default=None, metadata={"help": "datasets cache folder (default: HF_DATASETS_CACHE)."}
    )
    preprocessing_num_workers: int | None = field(
        default=None, metadata={"help": "Processes creating the instances (datasets.map num_proc)."}
    )
    validation_split_percentage: float = field(
        default=5.0, metadata={"help": "Percent of documents held out (seeded) for evaluation (0: none)."}
    )
    document_boundary: str = field(
        default="auto",
        metadata={
            "help": "blank_line (google's format), heading (WikiText ' = Title = ' starts a document) or auto (per file).",
            "choices": ["auto", "blank_line", "heading"],
        },
    )
    split_sentences: bool = field(default=False, metadata={"help": "Split lines into sentences after . ! ?"})
    max_train_documents: int | None = field(
        default=None, metadata={"help": "Keep only the first N training documents."}
    )
    max_seq_length: int = field(default=128, metadata={"help": "WordPieces per instance incl. [CLS] and two [SEP]."})
    short_seq_prob: float = field(default=0.1, metadata={"help": "Probability of a shorter target length."})
    nsp_probability: float = field(default=0.5, metadata={"help": "Probability of a NotNext pair."})
    dupe_factor: int = field(default=1, metadata={"help": "Passes over the corpus (google: 10 with static masks)."})
    masking: str = field(
        default="dynamic",
        metadata={
            "help": "dynamic (new masks every batch) or static (precomputed).",
            "choices": ["dynamic", "static"],
        },
    )
    mlm_probability: float = field(default=0.15, metadata={"help": "Fraction of tokens to predict."})
    selection: str = field(
        default="exact",
        metadata={
            "help": "exact (google's count per sequence) or bernoulli (transformers' per-token draw).",
            "choices": ["exact", "bernoulli"],
        },
    )
    max_predictions_per_seq: int = field(default=20, metadata={"help": "Cap of exact selection (google: 20 at 128)."})
    whole_word_mask: bool = field(default=False, metadata={"help": "Mask whole words (all WordPieces of a word)."})
    preprocessing_batch_size: int = field(default=1000, metadata={"help": "Documents per map batch (NotNext pool)."})

    def __post_init__(self):
        if not self.train_files and not self.dataset_name:
            raise ValueError(
                "--train_files (text files, one sentence per line, blank line between documents; jsonl; parquet) or "
                "--dataset_name is required"
            )
        if self.train_files and self.dataset_name:
            raise ValueError("give --train_files or --dataset_name, not both")
        if self.train_files:
            from .pretraining_data import resolve_corpus_files

            resolve_corpus_files(self.train_files)  # FileNotFoundError naming a pattern that matches nothing
        if not 0 <= self.validation_split_percentage < 100:
            raise ValueError(
                f"--validation_split_percentage must be in [0, 100), got {self.validation_split_percentage}"
            )


@dataclass
class PretrainTrainingArguments(TrainingArguments):
    """``TrainingArguments`` with the paper's pretraining defaults (§A.2) scaled to a CPU, plus the two phases.

    ===========================  =============  =====================================================
    parameter                    ours           paper (§A.2) / transformers default
    ===========================  =============  =====================================================
    ``learning_rate``            1e-4           1e-4 / 5e-5
    ``per_device_train_batch``   32             256 sequences / 8
    ``max_steps``                1000           1,000,000 / -1
    ``warmup_steps``             0.01           10,000 of 1M steps (1 %) / 0
    ``weight_decay``             0.01           0.01 / 0.0
    ``adam_epsilon``             1e-6           google's 1e-6 / 1e-8
    ``eval_strategy``            ``steps``      — / ``no``
    ``remove_unused_columns``    False          (keeps ``word_ids`` for whole-word masking) / True
    ``prediction_loss_only``     True           (eval metrics come from the trainer's sums) / False
    ===========================  =============  =====================================================
    """

    output_dir: str | None = field(default=None, metadata={"help": "Where the model, tokenizer and summary go."})
    learning_rate: float = field(default=1e-4, metadata={"help": "Peak learning rate (paper: 1e-4)."})
    per_device_train_batch_size: int = field(default=32, metadata={"help": "Sequences per step (paper: 256)."})
    per_device_eval_batch_size: int = field(default=64, metadata={"help": "Batch size for evaluation."})
    max_steps: int = field(default=1000, metadata={"help": "Training steps of phase 1."})
    warmup_steps: float = field(default=0.01, metadata={"help": "Warmup (float < 1: fraction of steps)."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    adam_epsilon: float = field(default=1e-6, metadata={"help": "AdamW epsilon (google's 1e-6)."})
    eval_strategy: str = field(default="steps", metadata={"help": "no, steps or epoch."})
    eval_steps: float | None = field(default=200, metadata={"help": "Evaluate every N steps."})
    logging_steps: float = field(default=50, metadata={"help": "Log every N steps."})
    save_steps: float = field(default=500, metadata={"help": "Checkpoint every N steps (for resume_from_checkpoint)."})
    save_total_limit: int | None = field(default=2, metadata={"help": "Checkpoints kept."})
    remove_unused_columns: bool = field(default=False, metadata={"help": "Keep word_ids for whole-word masking."})
    prediction_loss_only: bool = field(default=True, metadata={"help": "Evaluation collects no logits."})
    masked_only_decoder: bool = field(
        default=True,
        metadata={
            "help": "Run the MLM vocabulary projection only on masked positions (same loss and weights, faster)."
        },
    )
    phase2_max_steps: int = field(default=0, metadata={"help": "Steps of phase 2 (0: one phase only)."})
    phase2_max_seq_length: int = field(default=512, metadata={"help": "Sequence length of phase 2 (paper: 512)."})
    phase2_max_predictions_per_seq: int = field(
        default=80, metadata={"help": "Exact-selection cap in phase 2 (google: 80)."}
    )
    phase2_per_device_train_batch_size: int | None = field(
        default=None, metadata={"help": "Batch of phase 2 (default: phase 1's)."}
    )
    overwrite_output_dir: bool = field(default=False, metadata={"help": "Replace a finished run in output_dir."})

    def __post_init__(self):
        if self.output_dir is None:
            raise ValueError("--output_dir is required")
        if self.max_steps is None or self.max_steps <= 0:
            raise ValueError(f"--max_steps must be > 0 (pretraining is step-based), got {self.max_steps}")
        if self.phase2_max_steps < 0:
            raise ValueError(f"--phase2_max_steps must be >= 0, got {self.phase2_max_steps}")
        import torch

        if not torch.cuda.is_available():
            self.dataloader_pin_memory = False
        from .arguments import use_cpu_under_launcher

        use_cpu_under_launcher(self)  # torchrun / accelerate on CPU: gloo DDP instead of N lone processes
        self.label_names = ["labels", "next_sentence_label"]
        super().__post_init__()


# --------------------------------------------------------------------------------------------------- the recipe
def split_documents(documents, percentage: float, seed: int):
    """Seeded document-level train/eval split of a ``datasets`` table of documents (no text is read).

    ``round(n * percentage / 100)`` documents (at least 2 when ``percentage > 0``: NotNext pairs need two documents)
    chosen by ``numpy.random.default_rng(seed).permutation(n)`` go to eval; both splits keep corpus order
    (``Dataset.select`` with sorted indices). Returns ``(train, eval or None)``.
    """
    import numpy as np

    n = len(documents)
    n_eval = round(n * percentage / 100.0)
    if percentage > 0 and n_eval < 2:
        n_eval = min(2, n - 2)
    if n_eval <= 0:
        return documents, None
    order = np.random.default_rng(seed).permutation(n)
    eval_idx, train_idx = np.sort(order[:n_eval]), np.sort(order[n_eval:])
    return documents.select(train_idx), documents.select(eval_idx)


def _collator(tokenizer, data_args: PretrainDataArguments, seed: int, max_predictions: int | None = None):
    from .collators import DataCollatorForBertPretraining

    return DataCollatorForBertPretraining(
        tokenizer,
        mlm_probability=data_args.mlm_probability,
        selection=data_args.selection,
        max_predictions_per_seq=max_predictions or data_args.max_predictions_per_seq,
        whole_word_mask=data_args.whole_word_mask,
        seed=seed,
    )


def masking_recipe(data_args: PretrainDataArguments, max_predictions: int | None = None) -> dict:
    """The masking settings written to the summary (for the model card)."""
    return {
        "masking": data_args.masking,
        "mlm_probability": data_args.mlm_probability,
        "selection": data_args.selection,
        "max_predictions_per_seq": max_predictions or data_args.max_predictions_per_seq,
        "whole_word_mask": data_args.whole_word_mask,
        "mask/random/keep": [0.8, 0.1, 0.1],
        "nsp_probability": data_args.nsp_probability,
        "short_seq_prob": data_args.short_seq_prob,
        "dupe_factor": data_args.dupe_factor,
    }


def _instances(docs, tokenizer, data_args, seed: int, dupe_factor: int = 1):
    from .pretraining_data import build_pretraining_dataset

    return build_pretraining_dataset(
        docs,
        tokenizer,
        batch_size=data_args.preprocessing_batch_size,
        num_proc=data_args.preprocessing_num_workers,
        dupe_factor=dupe_factor,
        seed=seed,
        max_seq_length=data_args.max_seq_length,
        short_seq_prob=data_args.short_seq_prob,
        nsp_probability=data_args.nsp_probability,
    )


def _map(ds, fn, desc: str, **kwargs):
    from datasets import IterableDataset

    if not isinstance(ds, IterableDataset):
        kwargs["desc"] = desc
    return ds.map(fn, batched=True, with_indices=True, **kwargs)


def run_phase(model_args, data_args, training_args, tokenizer, train_docs, eval_docs, phase: int) -> dict:
    """Build instances at ``data_args.max_seq_length``, train ``BertForPreTraining`` and save it; returns the summary.

    ``train_docs`` / ``eval_docs``: ``datasets`` tables (or streams) of documents (column ``sentences``). The
    instances are cached by ``datasets`` (fingerprint of documents, tokenizer and parameters); each training instance
    gets an ``idx`` column that keys its masks (see :class:`~hf_bert_tasks.collators.DataCollatorForBertPretraining`).
    """
    import torch
    from datasets import IterableDataset
    from transformers import set_seed

    from .modeling import bert_config
    from .pretraining_data import add_example_index

    set_seed(training_args.seed)
    max_len = data_args.max_seq_length
    streaming = isinstance(train_docs, IterableDataset)
    with training_args.main_process_first(desc="pretraining instances"):
        train_ds = _instances(train_docs, tokenizer, data_args, training_args.seed, data_args.dupe_factor)
        if data_args.masking == "static":
            train_ds = _map(train_ds, _collator(tokenizer, data_args, training_args.seed).static_mask_map, "static masks")
        train_ds = _map(train_ds, add_example_index, "example index")
        if streaming:
            train_ds = train_ds.shuffle(seed=training_args.seed, buffer_size=10_000)
        eval_ds = None
        if eval_docs is not None:
            eval_ds = _instances(eval_docs, tokenizer, data_args, training_args.seed + 1)
            # a fixed (static) mask for the eval set, so evaluations at different steps are comparable
            eval_ds = _map(
                eval_ds, _collator(tokenizer, data_args, training_args.seed + 1).static_mask_map, "eval masks"
            )
            if streaming:
                from datasets import Dataset

                eval_ds = Dataset.from_list(list(eval_ds))  # small by construction (--streaming_eval_documents)
    if eval_ds is None:
        training_args.eval_strategy = "no"
    cls = BertForPreTrainingMaskedOnly if training_args.masked_only_decoder else BertForPreTraining
    if model_args.model_name_or_path:
        model = cls.from_pretrained(model_args.model_name_or_path)
        if model.config.max_position_embeddings < max_len:
            raise ValueError(
                f"{model_args.model_name_or_path} has {model.config.max_position_embeddings} positions, "
                f"fewer than max_seq_length={max_len}"
            )
    else:
        config = bert_config(
            model_args.preset,
            vocab_size=len(tokenizer),
            pad_token_id=tokenizer.pad_token_id,
            max_position_embeddings=max(model_args.max_position_embeddings, max_len),
            **model_args.config_overrides(),
        )
        torch.manual_seed(training_args.seed)
        model = cls(config)
    from .tokenization import fit_tokenizer_to_model

    fit_tokenizer_to_model(tokenizer, model.config)  # saved folders carry model_max_length = the model's positions
    collator = _collator(tokenizer, data_args, training_args.seed)
    trainer = PretrainingTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=collator,
        processing_class=tokenizer,
        callbacks=[MaskingEpochCallback(collator)],
    )
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    trainer.save_model()
    trainer.save_state()
    final = {}
    if eval_ds is not None:
        done = [
            h for h in trainer.state.log_history if "eval_mlm_accuracy" in h and h["step"] == trainer.state.global_step
        ]
        final = done[-1] if done else trainer.evaluate()  # no second evaluation at a step already evaluated
    history = [h for h in trainer.state.log_history if "mlm_accuracy" in h or "eval_mlm_accuracy" in h]
    return {
        "phase": phase,
        "max_seq_length": max_len,
        "steps": trainer.state.global_step,
        "train_instances": None if streaming else len(train_ds),
        "eval_instances": len(eval_ds) if eval_ds is not None else 0,
        "batch_size": training_args.per_device_train_batch_size
        * training_args.gradient_accumulation_steps
        * training_args.world_size,
        "learning_rate": training_args.learning_rate,
        "masked_only_decoder": training_args.masked_only_decoder,
        "masking_recipe": masking_recipe(data_args),
        "final_eval": {k: v for k, v in final.items() if k.startswith("eval_")},
        "history": history,
    }


def pretraining_curves(summary: dict) -> dict:
    """The series plotted in ``pretraining_curves.png``, from a summary's phase histories (a pure function).

    Steps of a later phase continue from the previous phase's last step. Returns
    ``{metric: {"train": (steps, values), "eval": (steps, values)}}`` for each metric of :data:`CURVE_METRICS`, where
    train values are the logged ``metric`` and eval values the logged ``eval_<metric>`` (lists, in log order).
    """
    data = {m: {"train": ([], []), "eval": ([], [])} for m in CURVE_METRICS}
    offset = 0
    for phase in summary.get("phases", []):
        for entry in phase.get("history", []):
            for metric in CURVE_METRICS:
                for split, key in (("train", metric), ("eval", f"eval_{metric}")):
                    if key in entry:
                        data[metric][split][0].append(offset + entry["step"])
                        data[metric][split][1].append(entry[key])
        offset += phase.get("steps", 0)
    return data


def plot_pretraining_curves(curves: dict, path: str):
    """Write :func:`pretraining_curves` data as a 2 x 2 PNG (MLM loss, MLM accuracy, NSP loss, NSP accuracy against
    the optimizer step; train and eval lines) with matplotlib's Agg backend. Returns the closed ``Figure``."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 7), layout="constrained")
    axes = fig.subplots(2, 2).flatten()
    for ax, metric in zip(axes, CURVE_METRICS):
        for split, style in (("train", "-"), ("eval", "o-")):
            steps, values = curves[metric][split]
            if steps:
                ax.plot(steps, values, style, label=split)
        ax.set_title(metric.replace("_", " ").replace("mlm", "MLM").replace("nsp", "NSP"))
        ax.set_xlabel("step")
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend()
    fig.savefig(path, dpi=100)  # a bare Figure renders with the Agg canvas (no pyplot, no display)
    return fig


def _corpus_stats(documents) -> dict:
    """Documents and sentences of a document table, counted by Arrow compute on the memory-mapped table (no Python
    lists); ``None`` for a stream."""
    from datasets import IterableDataset

    if isinstance(documents, IterableDataset):
        return {"documents": None, "sentences": None}
    import pyarrow.compute as pc

    column = documents.data.column("sentences")
    return {"documents": len(documents), "sentences": int(pc.sum(pc.list_value_length(column)).as_py() or 0)}


def _phase_resume(resume, phase_dir: str):
    """``resume_from_checkpoint`` for one phase: a checkpoint path only for the phase whose folder holds it; with
    ``auto``/``True`` the phase folder's newest *complete* checkpoint (incomplete ones are skipped with a warning,
    :mod:`hf_bert_tasks.checkpoints`); else ``None``."""
    from .checkpoints import is_auto, resolve_resume

    if not resume:
        return None
    if is_auto(resume):
        return resolve_resume(resume, phase_dir)
    checkpoint = os.path.abspath(str(resume))
    phase = os.path.abspath(phase_dir)
    return resolve_resume(resume, phase_dir) if os.path.dirname(checkpoint) == phase else None


def _saved_tokenizer(resume, output_dir: str) -> str | None:
    """Folder of the tokenizer a resumed run was trained with (the checkpoint's, else the run's), or ``None``."""
    if not resume:
        return None
    from .checkpoints import is_auto

    candidates = [] if is_auto(resume) else [str(resume)]
    candidates += [os.path.join(output_dir, "phase1"), output_dir]
    for folder in candidates:
        if os.path.isfile(os.path.join(folder, "tokenizer.json")):
            return folder
    return None


def run_pretrain(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, training_args: PretrainTrainingArguments
) -> dict:
    """Pretrain BERT (MLM + NSP) on ``data_args.train_files``; one or two phases. Returns the summary dict.

    ``--resume_from_checkpoint PATH`` resumes the phase whose folder holds ``PATH`` (``output_dir/phase1/checkpoint-N``
    or ``output_dir/checkpoint-N``); ``auto`` (or ``True``) resumes each phase from its newest *complete* checkpoint
    (one cut short by a kill during a save is skipped with a warning; none complete: the phase starts from step 0).
    A phase that already finished (``phase_summary.json`` in its folder) is not trained again when resuming a later
    one.

    Raises:
        FileExistsError: ``output_dir`` holds a finished run (``pretraining_summary.json``) and neither
            ``--overwrite_output_dir`` nor ``--resume_from_checkpoint`` was given.
        ValueError: an empty corpus, too few documents for NotNext pairs, a checkpoint with too few positions,
            ``--push_to_hub`` without ``--hub_model_id``, or ``--resume_from_checkpoint PATH`` to a checkpoint that
            cannot be resumed (:mod:`hf_bert_tasks.checkpoints`).
        HubPushError: ``--push_to_hub`` failed (the run in ``output_dir`` is complete; push it with
            ``hf-bert-tasks push``).

    ``--hub_token`` never reaches ``Trainer`` (nor ``training_args.bin``): :func:`hf_bert_tasks.hub.pop_push_settings`.
    """
    import copy

    from transformers import AutoTokenizer

    from .pretraining_data import load_documents, resolve_corpus_files
    from .tokenization import train_wordpiece_tokenizer

    out = training_args.output_dir
    summary_path = os.path.join(out, SUMMARY_FILE)
    if (
        os.path.isfile(summary_path)
        and not training_args.overwrite_output_dir
        and not training_args.resume_from_checkpoint
    ):
        raise FileExistsError(
            f"--output_dir {out} already holds a finished pretraining run ({SUMMARY_FILE}); pass "
            "--overwrite_output_dir to replace it or choose another folder"
        )
    from .hub import pop_push_settings
    from .run_record import model_origin

    # Before any Trainer exists: the token leaves the arguments (never pickled into training_args.bin) and
    # Trainer's own push (repo created in __init__, its generic card) is replaced by ours at the end.
    push = pop_push_settings(training_args)
    documents = load_documents(
        data_args.train_files,
        dataset_name=data_args.dataset_name,
        dataset_config_name=data_args.dataset_config_name,
        dataset_split=data_args.dataset_split,
        text_column=data_args.text_column,
        document_boundary=data_args.document_boundary,
        split_sentences=data_args.split_sentences,
        streaming=data_args.streaming,
        cache_dir=data_args.dataset_cache_dir,
    )
    corpus_stats = _corpus_stats(documents)
    if corpus_stats["documents"] is not None and corpus_stats["documents"] < 2:
        raise ValueError(
            f"{data_args.train_files or data_args.dataset_name}: found {corpus_stats['documents']} document(s); NSP "
            "needs at least 2 (documents are separated by blank lines, or by headings with --document_boundary heading)"
        )
    if data_args.streaming:
        n_eval = data_args.streaming_eval_documents
        eval_docs = documents.take(n_eval) if n_eval else None
        train_docs = documents.skip(n_eval) if n_eval else documents
        if data_args.max_train_documents:
            train_docs = train_docs.take(data_args.max_train_documents)
    else:
        train_docs, eval_docs = split_documents(documents, data_args.validation_split_percentage, training_args.seed)
        if data_args.max_train_documents:
            train_docs = train_docs.select(range(min(data_args.max_train_documents, len(train_docs))))
    os.makedirs(out, exist_ok=True)
    resume = training_args.resume_from_checkpoint
    saved = _saved_tokenizer(resume, out)
    if model_args.tokenizer_name:
        tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name)
    elif saved:  # resuming: the vocabulary the checkpoint was trained with
        tokenizer = AutoTokenizer.from_pretrained(saved)
    elif model_args.model_name_or_path:
        tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)
    else:
        tokenizer = train_wordpiece_tokenizer(
            (s for batch in train_docs.iter(batch_size=1000) for d in batch["sentences"] for s in d),
            vocab_size=model_args.vocab_size,
            lowercase=model_args.lowercase,
        )
    summary = {
        "corpus": {
            "files": resolve_corpus_files(data_args.train_files) if data_args.train_files else [],
            "dataset_name": data_args.dataset_name,
            "documents": corpus_stats["documents"],
            "train_documents": None if data_args.streaming else len(train_docs),
            "eval_documents": (
                data_args.streaming_eval_documents if data_args.streaming else len(eval_docs) if eval_docs else 0
            ),
            "sentences": corpus_stats["sentences"],
            "document_boundary": data_args.document_boundary,
        },
        "model": {
            "preset": model_args.preset,
            "overrides": model_args.config_overrides(),
            "vocab_size": len(tokenizer),
            "init": model_args.model_name_or_path or "random",
            "base_model": model_origin(model_args.model_name_or_path)["base_model"],  # None: a local folder (now)
        },
        "tokenizer": model_args.tokenizer_name
        or model_args.model_name_or_path
        or f"WordPiece trained on the corpus (vocab_size={model_args.vocab_size}, lowercase={model_args.lowercase})",
        "objective": "MLM + NSP (BertForPreTraining)",
        "seed": training_args.seed,
        "phases": [],
    }
    phases = [(training_args, data_args, model_args)]
    if training_args.phase2_max_steps:
        args1 = copy.deepcopy(training_args)
        args1.output_dir = os.path.join(out, "phase1")
        args2 = copy.deepcopy(training_args)
        args2.max_steps = training_args.phase2_max_steps
        if training_args.phase2_per_device_train_batch_size:
            args2.per_device_train_batch_size = training_args.phase2_per_device_train_batch_size
        data2 = copy.deepcopy(data_args)
        data2.max_seq_length = training_args.phase2_max_seq_length
        data2.max_predictions_per_seq = training_args.phase2_max_predictions_per_seq
        model2 = copy.deepcopy(model_args)
        model2.model_name_or_path = args1.output_dir
        phases = [(args1, data_args, model_args), (args2, data2, model2)]
    for number, (t_args, d_args, m_args) in enumerate(phases, 1):
        phase_file = os.path.join(t_args.output_dir, PHASE_FILE)
        t_args.resume_from_checkpoint = _phase_resume(resume, t_args.output_dir)
        if resume and not t_args.resume_from_checkpoint and os.path.isfile(phase_file):
            # resuming a later phase: this one already finished, keep its result
            with open(phase_file, encoding="utf-8") as f:
                summary["phases"].append(json.load(f))
            continue
        os.makedirs(t_args.output_dir, exist_ok=True)
        if t_args.should_save:  # main process only: two ranks writing one file interleave their bytes
            tokenizer.save_pretrained(t_args.output_dir)
        logger.info(
            "pretraining phase %d: seq %d, %d steps -> %s",
            number,
            d_args.max_seq_length,
            t_args.max_steps,
            t_args.output_dir,
        )
        result = run_phase(m_args, d_args, t_args, tokenizer, train_docs, eval_docs, number)
        if t_args.should_save:
            with open(phase_file, "w", encoding="utf-8") as f:
                json.dump(result, f, indent=2)
        summary["phases"].append(result)
    last = summary["phases"][-1]
    summary["steps"] = sum(p["steps"] for p in summary["phases"])
    summary["masking_recipe"] = last["masking_recipe"]
    summary["final_mlm_accuracy"] = last["final_eval"].get("eval_mlm_accuracy")
    summary["final_nsp_accuracy"] = last["final_eval"].get("eval_nsp_accuracy")
    if training_args.should_save:
        with open(summary_path, "w", encoding="utf-8") as f:
            json.dump(summary, f, indent=2)
        plot_pretraining_curves(pretraining_curves(summary), os.path.join(out, CURVES_FILE))
        if push is not None:  # --push_to_hub: weights, tokenizer, summary and the pretraining card, one commit
            from .hub import push_output_dir

            result = push_output_dir(out, push["repo_id"], private=push["private"], revision=push["revision"],
                                     token=push["token"])
            logger.info("pushed to %s (commit %s)", result.repo_url, result.commit_oid)
    return summary
