"""The flags of ``--mode lora`` (peft LoRA adapters on the frozen encoder plus the trained task head; Hu et al.,
2021); the mode, :class:`hf_bert_tasks.modes.lora.mode.LoraMode`, is imported only when used. Its default learning rate is
5e-4 (low-rank updates need a larger step than the fine-tuning grid)."""

from __future__ import annotations

from dataclasses import dataclass, field

NAME = "lora"


@dataclass
class LoraArguments:
    """The LoRA mode's flags, each a ``peft.LoraConfig`` field (``--lora_r`` = ``r``, ``--lora_target_modules`` =
    ``target_modules``, comma-separated; the others by name); registered with the mode (``modes._BUILTIN_FLAGS``).
    Checked where declared, as peft's ``LoraConfig.__post_init__``: ``ValueError`` ``--<flag> <value>: expected
    ...`` for a rank or alpha below 1 or a dropout outside [0, 1)."""

    lora_r: int = field(default=8, metadata={"help": "lora: adapter rank r."})
    lora_alpha: int = field(default=16, metadata={"help": "lora: scaling alpha (updates scaled by alpha / r)."})
    lora_dropout: float = field(default=0.1, metadata={"help": "lora: dropout on the adapter input."})
    lora_target_modules: str | None = field(
        default=None,
        metadata={
            "help": "lora: comma-separated Linear layer names that get adapters (default: the query and value "
            "projections of the architecture: BERT query,value; DeBERTa-v2 query_proj,value_proj; ModernBERT Wqkv)."
        },
    )

    def __post_init__(self):
        for flag, ok, expected in (
            ("lora_r", self.lora_r >= 1, "a positive integer"),
            ("lora_alpha", self.lora_alpha >= 1, "a positive integer"),
            ("lora_dropout", 0.0 <= self.lora_dropout < 1.0, "a probability in [0, 1)"),
        ):
            if not ok:
                raise ValueError(f"--{flag} {getattr(self, flag)}: expected {expected}")
        if hasattr(super(), "__post_init__"):  # the recipe's arguments class (finetune_arguments_class) goes on
            super().__post_init__()
