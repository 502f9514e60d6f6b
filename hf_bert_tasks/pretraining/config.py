"""The pretraining recipe's ``TrainingArguments`` with the paper's defaults (:class:`PretrainTrainingArguments`; its
flags and the model and data dataclasses are light, in :mod:`hf_bert_tasks.pretraining.args`, re-exported here)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from transformers import TrainingArguments

from ..flags.training import accelerator_defaults, keeps_checkpoints
from .args import PretrainDataArguments, PretrainModelArguments, PretrainOptions

__all__ = ["PretrainDataArguments", "PretrainModelArguments", "PretrainOptions", "PretrainTrainingArguments"]


@dataclass
class PretrainTrainingArguments(PretrainOptions, TrainingArguments):
    """``TrainingArguments`` with the paper's pretraining defaults (§A.2: lr 1e-4, 1 % warmup, weight decay 0.01;
    google's Adam epsilon 1e-6) scaled to a CPU (batch 32, 1000 steps), plus the two phases; on a GPU bf16, fused
    AdamW and torch.compile (``arguments.accelerator_defaults``). Raises ``ValueError`` without ``output_dir``, with ``max_steps <= 0``
    or ``phase2_max_steps < 0``."""

    #: a checkpoint flag given (``flags.training.CHECKPOINT_FLAGS``), or not built from a command line: each phase's
    #: ``checkpoint-*`` folders stay after it (else the saved model is its one copy, as in fine-tuning)
    keep_checkpoints: bool = dataclasses.field(default=True, init=False, repr=False)

    def __post_init__(self):
        if self.output_dir is None:
            raise ValueError("--output_dir is required")
        if self.max_steps is None or self.max_steps <= 0:
            raise ValueError(f"--max_steps must be > 0 (pretraining is step-based), got {self.max_steps}")
        if self.phase2_max_steps < 0:
            raise ValueError(f"--phase2_max_steps must be >= 0, got {self.phase2_max_steps}")
        if not torch.cuda.is_available():
            self.dataloader_pin_memory = False
        # CPU under torchrun: gloo DDP; a GPU: bf16, fused AdamW and torch.compile by default
        accelerator_defaults(self, compile_by_default=True)
        self.label_names = ["labels", "next_sentence_label"]
        self.keep_checkpoints = keeps_checkpoints()
        super().__post_init__()
