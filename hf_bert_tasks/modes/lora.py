"""``--mode lora``: peft LoRA adapters on the frozen encoder plus the fully trained task head (Hu et al., 2021).

The flags (:class:`LoraArguments`) are peft ``LoraConfig`` fields under a ``lora_`` prefix; the mode builds the
``peft.LoraConfig`` from them (:func:`hf_bert_tasks.lora.lora_config`). After training the adapter is saved to
``<output_dir>/lora_adapter`` and merged, so the saved model is a plain ``BertFor...`` checkpoint
(:func:`hf_bert_tasks.lora.finalize_lora`). Default learning rate 5e-4: LoRA's low-rank updates need a larger step
than the paper's fine-tuning grid {5e-5 … 2e-5}; an explicit ``--learning_rate`` wins.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import TrainingMode, has_file, register_training_mode

NAME = "lora"


@dataclass
class LoraArguments:
    """The LoRA mode's flags, each a ``peft.LoraConfig`` field: ``--lora_r`` = ``r``, ``--lora_alpha`` =
    ``lora_alpha``, ``--lora_dropout`` = ``lora_dropout``, ``--lora_target_modules`` = ``target_modules``
    (comma-separated). A base class of :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments`."""

    #: (flag, lowest, upper bound (excluded) or None, what is expected), checked by ``FinetuneTrainingArguments``
    bounds = (("lora_r", 1, None, "a positive integer"), ("lora_alpha", 1, None, "a positive integer"),
              ("lora_dropout", 0.0, 1.0, "a probability in [0, 1)"))

    lora_r: int = field(default=8, metadata={"help": "lora: adapter rank r."})
    lora_alpha: int = field(default=16, metadata={"help": "lora: scaling alpha (updates scaled by alpha / r)."})
    lora_dropout: float = field(default=0.1, metadata={"help": "lora: dropout on the adapter input."})
    lora_target_modules: str = field(
        default="query,value", metadata={"help": "lora: comma-separated Linear layer names that get adapters."}
    )


class LoraMode(TrainingMode):
    """LoRA adapters (peft) on the task model of full fine-tuning."""

    name = NAME
    help = "peft LoRA adapters on the frozen encoder + the task head"
    card_text = ("Training mode: **LoRA** — low-rank adapters (peft) on the frozen encoder plus the task head "
                 "were trained.")
    arguments_class = LoraArguments
    default_learning_rate = 5e-4
    colour = "tab:green"

    def build_model(self, task, model_args, training_args):
        """The fine-tuning task model wrapped in a ``peft.PeftModel`` with the ``--lora_*`` ``LoraConfig``."""
        from ..lora import apply_lora
        from ..task_model import declare_batch_mean_loss, load_task_model

        model = declare_batch_mean_loss(load_task_model(task, model_args))
        return apply_lora(
            model, task.problem_type, r=getattr(training_args, "lora_r", 8),
            alpha=getattr(training_args, "lora_alpha", 16), dropout=getattr(training_args, "lora_dropout", 0.1),
            target_modules=getattr(training_args, "lora_target_modules", "query,value"),
        )

    def finish_training(self, trainer, output_dir: str) -> None:
        """Save the adapter to ``output_dir/lora_adapter`` and merge it (the saved model is then plain)."""
        from ..lora import finalize_lora

        finalize_lora(trainer, output_dir)

    def recognizes(self, output_dir: str, config: dict) -> dict | None:
        """A folder with ``adapter_config.json`` (peft's adapter file) at its top."""
        return {"mode": self.name, "strategy": None} if has_file(output_dir, "adapter_config.json") else None


register_training_mode(LoraMode())
