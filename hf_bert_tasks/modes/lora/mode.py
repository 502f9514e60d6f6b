"""LoRA mode (``--mode lora``): low-rank adapters on the encoder's attention, the task head fully trained. LoRA
(Hu et al., 2021) freezes ``W`` and learns ``W + (alpha / r) * B A`` (``A: [r, in]``, ``B: [out, r]``, ``B``
starting at zero), on the query and value projections by default as in the LoRA paper (per architecture:
:func:`default_target_modules`). The head (the top-level modules outside
the encoder) is in ``modules_to_save`` for every task (peft has no multiple-choice task type). :func:`finalize_lora`
merges the adapter after training, so ``output_dir`` holds a plain ``BertFor...`` checkpoint.
"""

from __future__ import annotations

import os

from ...tasks.problems import get_problem_type
from .. import TrainingMode, register_training_mode
from .arguments import LoraArguments


def head_module_names(model) -> list[str]:
    """Top-level child modules with parameters that are not the base encoder (``["classifier"]`` for BertFor...);
    ``ValueError`` when there is none (nothing would train besides the adapters)."""
    prefix = getattr(model, "base_model_prefix", "")
    names = [n for n, m in model.named_children() if n != prefix and any(True for _ in m.parameters())]
    if not names:
        raise ValueError(f"{type(model).__name__}: found no task head outside {prefix!r} to keep trainable")
    return names


#: ``config.model_type`` -> LoRA target modules for architectures peft's own table
#: (``peft.utils.TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING``) lacks; the query and value projections
#: (ModernBERT fuses query, key and value into one Linear, ``Wqkv``), names from the transformers modeling files.
LORA_TARGET_MODULES = {
    "modernbert": ["Wqkv"],
    "distilbert": ["q_lin", "v_lin"],
    "albert": ["query", "value"],
    "mpnet": ["q", "v"],
}


def default_target_modules(model) -> list[str]:
    """The LoRA target modules of ``model``'s architecture (``config.model_type``): :data:`LORA_TARGET_MODULES`,
    else peft's table (BERT, RoBERTa, ELECTRA ``query``/``value``; DeBERTa-v2 ``query_proj``/``value_proj``).
    Raises ``ValueError`` naming the model type when neither has it (give ``--lora_target_modules``)."""
    from peft.utils import TRANSFORMERS_MODELS_TO_LORA_TARGET_MODULES_MAPPING as PEFT_TARGETS

    model_type = getattr(getattr(model, "config", None), "model_type", None)
    targets = LORA_TARGET_MODULES.get(model_type) or PEFT_TARGETS.get(model_type)
    if not targets:
        raise ValueError(
            f"--mode lora: no default LoRA target modules for model_type {model_type!r}; give "
            "--lora_target_modules with the names of its attention Linear layers (e.g. query,value)"
        )
    return list(targets)


def lora_config(
    model,
    problem_type: str,
    r: int = 8,
    alpha: int = 16,
    dropout: float = 0.1,
    target_modules: str | list[str] | None = None,
):
    """The ``peft.LoraConfig`` of ``model`` (a ``BertFor...`` model) for ``problem_type`` (one of
    a registered :class:`hf_bert_tasks.tasks.problems.ProblemType`): its peft task type, the task head in ``modules_to_save``, rank
    ``r`` (updates scaled by ``alpha / r``), ``dropout`` on the LoRA input, ``target_modules`` the Linear layers
    that get adapters (comma-separated names or a list; ``None``: :func:`default_target_modules`).

    Raises:
        ValueError: an unknown ``problem_type``, ``r < 1``, no head module outside the encoder, or no default
            target modules for the architecture.
    """
    from peft import LoraConfig, TaskType

    if r < 1:
        raise ValueError(f"--lora_r must be >= 1, got {r}")
    if isinstance(target_modules, str):
        target_modules = [t.strip() for t in target_modules.split(",") if t.strip()]
    if not target_modules:
        target_modules = default_target_modules(model)
    task_type = get_problem_type(problem_type).peft_task_type  # ValueError for an unknown problem type
    return LoraConfig(
        task_type=getattr(TaskType, task_type) if task_type else None,
        r=r,
        lora_alpha=alpha,
        lora_dropout=dropout,
        target_modules=target_modules,
        modules_to_save=head_module_names(model),
    )


def apply_lora(
    model,
    problem_type: str,
    r: int = 8,
    alpha: int = 16,
    dropout: float = 0.1,
    target_modules: str | list[str] | None = None,
):
    """Wrap ``model`` (a ``transformers`` task model) in a ``peft.PeftModel`` whose trainable parameters are the
    adapters and the head, configured by :func:`lora_config` (the arguments and ``ValueError`` as there)."""
    from peft import get_peft_model

    return get_peft_model(model, lora_config(model, problem_type, r, alpha, dropout, target_modules))


def finalize_lora(trainer, output_dir: str) -> str:
    """Save the adapter to ``<output_dir>/lora_adapter`` (returned) and replace ``trainer.model`` by the merged model
    (the same outputs up to float rounding, saved as a plain ``transformers`` checkpoint)."""
    from peft import PeftModel

    model = trainer.model
    path = os.path.join(output_dir, "lora_adapter")
    if isinstance(model, PeftModel):
        if trainer.is_world_process_zero():
            model.save_pretrained(path)
        trainer.model = model.merge_and_unload()
        trainer.model_wrapped = trainer.model
    return path


def trainable_parameter_counts(model) -> tuple[int, int]:
    """``(trainable, total)`` parameter counts of ``model``."""
    params = list(model.parameters())
    return sum(p.numel() for p in params if p.requires_grad), sum(p.numel() for p in params)


__all__ = [
    "LoraMode",
    "apply_lora",
    "default_target_modules",
    "finalize_lora",
    "head_module_names",
    "lora_config",
    "trainable_parameter_counts",
]


class LoraMode(TrainingMode):
    """LoRA adapters (peft) on the task model of full fine-tuning."""

    name = "lora"
    help = "peft LoRA adapters on the frozen encoder + the task head"
    card_text = (
        "Training mode: **LoRA** — low-rank adapters (peft) on the frozen encoder plus the task head were trained."
    )
    arguments_class = LoraArguments
    default_learning_rate = 5e-4
    colour = "tab:green"

    def build_model(self, task, model_args, training_args):
        """The fine-tuning task model wrapped in a ``peft.PeftModel`` with the ``--lora_*`` ``LoraConfig``."""
        from .. import declare_batch_mean_loss, load_task_model

        model = declare_batch_mean_loss(load_task_model(task, model_args))
        return apply_lora(
            model,
            task.problem_type,
            training_args.lora_r,
            training_args.lora_alpha,
            training_args.lora_dropout,
            training_args.lora_target_modules,
        )

    def finish_training(self, trainer, output_dir: str) -> None:
        """Save the adapter to ``output_dir/lora_adapter`` and merge it (the saved model is then plain)."""
        finalize_lora(trainer, output_dir)


register_training_mode(LoraMode())
