"""The pretraining recipe's pieces: arguments, a masked-positions-only MLM head, a Trainer that logs MLM and NSP apart.

:func:`run_pretrain` is what ``hf-bert-tasks pretrain`` and ``recipes/pretrain.py`` call. Outputs in ``output_dir``:
the model (``BertForPreTraining`` weights, loadable by any ``AutoModelFor...`` and by the fine-tune recipe), the
tokenizer, ``trainer_state.json`` (log history) and ``pretraining_summary.json`` (corpus, masking recipe, steps,
MLM/NSP accuracy over steps and at the end). With ``--phase2_max_steps N`` the paper's second phase (§A.2: 90 % of
the steps at sequence length 128, then 10 % at 512) continues from ``output_dir/phase1`` into ``output_dir``.
"""

from __future__ import annotations

import json
import logging
import os
import random
from dataclasses import dataclass, field

from transformers import BertForPreTraining, Trainer, TrainingArguments

logger = logging.getLogger(__name__)

SUMMARY_FILE = "pretraining_summary.json"
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


def pretraining_metrics(prediction_logits, seq_relationship_logits, labels, next_sentence_label):
    """MLM / NSP losses and counts of correct predictions for one batch.

    Args:
        prediction_logits: ``float [B, L, V]`` (full head) or ``float [N, V]`` (masked-only head, rows in the order of
            ``labels[labels != -100]``).
        seq_relationship_logits: ``float [B, 2]``.
        labels: ``int64 [B, L]``, ``-100`` where not predicted.
        next_sentence_label: ``int64 [B]`` (0 = IsNext, 1 = NotNext).

    Returns:
        dict of floats: ``mlm_loss`` (mean cross-entropy, nats), ``nsp_loss``, ``mlm_correct``, ``mlm_total``,
        ``nsp_correct``, ``nsp_total``.
    """
    import torch
    import torch.nn.functional as F

    selected = labels != -100
    targets = labels[selected]
    logits = prediction_logits[selected] if prediction_logits.dim() == 3 else prediction_logits
    if logits.shape[0] != targets.shape[0]:
        raise ValueError(f"prediction_logits has {logits.shape[0]} rows for {targets.shape[0]} MLM targets")
    mlm_loss = F.cross_entropy(logits, targets) if targets.numel() else torch.zeros((), device=labels.device)
    nsp_loss = F.cross_entropy(seq_relationship_logits.view(-1, 2), next_sentence_label.view(-1))
    with torch.no_grad():
        mlm_correct = (logits.argmax(-1) == targets).sum().item()
        nsp_correct = (seq_relationship_logits.argmax(-1) == next_sentence_label).sum().item()
    return {
        "mlm_loss": mlm_loss,
        "nsp_loss": nsp_loss,
        "mlm_correct": mlm_correct,
        "mlm_total": targets.numel(),
        "nsp_correct": nsp_correct,
        "nsp_total": next_sentence_label.numel(),
    }


class PretrainingTrainer(Trainer):
    """``Trainer`` for MLM + NSP that logs ``mlm_loss``, ``nsp_loss``, ``mlm_accuracy``, ``nsp_accuracy`` separately.

    The loss is MLM mean cross-entropy over the predicted positions + NSP cross-entropy (the paper's sum, as
    ``BertForPreTraining``). Training logs average the batches since the previous log; evaluation adds
    ``eval_mlm_loss``, ``eval_nsp_loss``, ``eval_mlm_accuracy``, ``eval_nsp_accuracy`` over the whole eval set
    (accuracies are fractions of predicted tokens / of pairs).
    """

    loss_is_scaled_for_ga = False

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._sums = {"train": self._zero(), "eval": self._zero()}

    @staticmethod
    def _zero():
        return {
            "mlm_loss": 0.0,
            "nsp_loss": 0.0,
            "batches": 0,
            "mlm_correct": 0,
            "mlm_total": 0,
            "nsp_correct": 0,
            "nsp_total": 0,
        }

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        nsp_labels = inputs["next_sentence_label"]
        unwrapped = self.accelerator.unwrap_model(model)
        # the full head needs no labels (we compute the loss here, on the predicted positions only); the masked-only
        # head needs them to know which positions to project.
        keep_labels = isinstance(unwrapped, BertForPreTrainingMaskedOnly)
        model_inputs = {
            k: v for k, v in inputs.items() if k != "next_sentence_label" and (keep_labels or k != "labels")
        }
        outputs = model(**model_inputs)
        m = pretraining_metrics(outputs.prediction_logits, outputs.seq_relationship_logits, labels, nsp_labels)
        loss = m["mlm_loss"] + m["nsp_loss"]
        sums = self._sums["train" if model.training else "eval"]
        sums["mlm_loss"] += m["mlm_loss"].item()
        sums["nsp_loss"] += m["nsp_loss"].item()
        sums["batches"] += 1
        for key in ("mlm_correct", "mlm_total", "nsp_correct", "nsp_total"):
            sums[key] += m[key]
        return (loss, outputs) if return_outputs else loss

    @staticmethod
    def _averages(sums, prefix=""):
        if not sums["batches"]:
            return {}
        return {
            f"{prefix}mlm_loss": sums["mlm_loss"] / sums["batches"],
            f"{prefix}nsp_loss": sums["nsp_loss"] / sums["batches"],
            f"{prefix}mlm_accuracy": sums["mlm_correct"] / max(sums["mlm_total"], 1),
            f"{prefix}nsp_accuracy": sums["nsp_correct"] / max(sums["nsp_total"], 1),
        }

    def log(self, logs, start_time=None):
        if "loss" in logs and not any(k.startswith("eval_") for k in logs):
            logs.update({k: round(v, 4) for k, v in self._averages(self._sums["train"]).items()})
            self._sums["train"] = self._zero()
        super().log(logs, start_time)

    def evaluation_loop(self, *args, **kwargs):
        self._sums["eval"] = self._zero()
        output = super().evaluation_loop(*args, **kwargs)
        prefix = kwargs.get("metric_key_prefix", args[4] if len(args) > 4 else "eval")
        sums = self._sums["eval"]
        if self.args.world_size > 1:  # each process saw its shard of the eval set: sum the counts over processes
            import torch

            keys = sorted(sums)
            totals = self.accelerator.reduce(
                torch.tensor([float(sums[k]) for k in keys], device=self.args.device), reduction="sum"
            )
            sums = dict(zip(keys, totals.tolist()))
        output.metrics.update(self._averages(sums, prefix=f"{prefix}_"))
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
        metadata={"help": "Text files: one sentence per line, blank line between documents.", "nargs": "+"},
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
        if not self.train_files:
            raise ValueError(
                "--train_files is required (text files, one sentence per line, blank line between documents)"
            )
        for path in self.train_files:
            if not os.path.isfile(path):
                raise FileNotFoundError(f"--train_files: {path} does not exist")
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
def _split_documents(documents: list[list[str]], percentage: float, seed: int):
    order = list(range(len(documents)))
    random.Random(seed).shuffle(order)
    n_eval = round(len(documents) * percentage / 100.0)
    if percentage > 0 and n_eval < 2:
        n_eval = min(2, len(documents) - 2)  # NotNext pairs need two documents
    eval_docs = [documents[i] for i in sorted(order[:n_eval])]
    train_docs = [documents[i] for i in sorted(order[n_eval:])]
    return train_docs, eval_docs


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


def run_phase(model_args, data_args, training_args, tokenizer, train_docs, eval_docs, phase: int) -> dict:
    """Build instances at ``data_args.max_seq_length``, train ``BertForPreTraining`` and save it; returns the summary."""
    import torch
    from datasets import Dataset
    from transformers import set_seed

    from .modeling import bert_config
    from .pretraining_data import build_pretraining_dataset

    set_seed(training_args.seed)
    max_len = data_args.max_seq_length
    common = {
        "max_seq_length": max_len,
        "short_seq_prob": data_args.short_seq_prob,
        "nsp_probability": data_args.nsp_probability,
    }
    train_ds = build_pretraining_dataset(
        Dataset.from_dict({"sentences": train_docs}),
        tokenizer,
        batch_size=data_args.preprocessing_batch_size,
        dupe_factor=data_args.dupe_factor,
        seed=training_args.seed,
        **common,
    )
    if data_args.masking == "static":
        train_ds = train_ds.map(
            _collator(tokenizer, data_args, training_args.seed).static_mask_map, batched=True, desc="static masks"
        )
    eval_ds = None
    if eval_docs:
        eval_ds = build_pretraining_dataset(
            Dataset.from_dict({"sentences": eval_docs}),
            tokenizer,
            batch_size=data_args.preprocessing_batch_size,
            seed=training_args.seed + 1,
            **common,
        )
        # a fixed (static) mask for the eval set, so evaluations at different steps are comparable
        eval_ds = eval_ds.map(
            _collator(tokenizer, data_args, training_args.seed + 1).static_mask_map, batched=True, desc="eval masks"
        )
    else:
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
    trainer = PretrainingTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=_collator(tokenizer, data_args, training_args.seed),
        processing_class=tokenizer,
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
        "train_instances": len(train_ds),
        "eval_instances": len(eval_ds) if eval_ds is not None else 0,
        "batch_size": training_args.per_device_train_batch_size * training_args.gradient_accumulation_steps,
        "learning_rate": training_args.learning_rate,
        "masked_only_decoder": training_args.masked_only_decoder,
        "masking_recipe": masking_recipe(data_args),
        "final_eval": {k: v for k, v in final.items() if k.startswith("eval_")},
        "history": history,
    }


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

    from .pretraining_data import read_documents
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

    # Before any Trainer exists: the token leaves the arguments (never pickled into training_args.bin) and
    # Trainer's own push (repo created in __init__, its generic card) is replaced by ours at the end.
    push = pop_push_settings(training_args)
    documents = []
    for path in data_args.train_files:
        documents.extend(
            read_documents(
                path, document_boundary=data_args.document_boundary, split_sentences=data_args.split_sentences
            )
        )
    if len(documents) < 2:
        raise ValueError(
            f"{data_args.train_files}: found {len(documents)} document(s); NSP needs at least 2 "
            "(documents are separated by blank lines, or by headings with --document_boundary heading)"
        )
    train_docs, eval_docs = _split_documents(documents, data_args.validation_split_percentage, training_args.seed)
    if data_args.max_train_documents:
        train_docs = train_docs[: data_args.max_train_documents]
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
            (s for d in train_docs for s in d), vocab_size=model_args.vocab_size, lowercase=model_args.lowercase
        )
    summary = {
        "corpus": {
            "files": [os.path.abspath(p) for p in data_args.train_files],
            "documents": len(documents),
            "train_documents": len(train_docs),
            "eval_documents": len(eval_docs),
            "sentences": sum(len(d) for d in documents),
            "document_boundary": data_args.document_boundary,
        },
        "model": {
            "preset": model_args.preset,
            "overrides": model_args.config_overrides(),
            "vocab_size": len(tokenizer),
            "init": model_args.model_name_or_path or "random",
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
        if push is not None:  # --push_to_hub: weights, tokenizer, summary and the pretraining card, one commit
            from .hub import push_output_dir

            result = push_output_dir(out, push["repo_id"], private=push["private"], revision=push["revision"],
                                     token=push["token"])
            logger.info("pushed to %s (commit %s)", result.repo_url, result.commit_oid)
    return summary
