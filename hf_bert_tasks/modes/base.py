"""The contract of a training mode (``--mode``): what the fine-tune recipe, the model card and ``compare`` ask of it.

A mode is an instance of a :class:`TrainingMode` subclass registered with
:func:`hf_bert_tasks.modes.registry.register_training_mode`. Everything that differs between modes lives on it;
the recipe (:mod:`hf_bert_tasks.finetuning`), the arguments (:mod:`hf_bert_tasks.arguments`), the card
(:mod:`hf_bert_tasks.model_card`) and the reports (``compare``, ``quickstart``) only call these methods.

This module imports nothing heavy (no torch/transformers): ``hf-bert-tasks finetune --help`` lists the modes
without importing them.
"""

from __future__ import annotations

import abc
import os
from typing import Any


class TrainingMode(abc.ABC):
    """Base class of a training mode; the defaults describe full fine-tuning of a plain ``BertFor...`` model.

    Class attributes (override in a subclass):
        name: the ``--mode`` value, lower-case ``[a-z][a-z0-9_]*``.
        help: one line for ``--mode``'s help.
        card_text: the sentence the model card prints under "Training mode".
        arguments_class: the dataclass holding the mode's own flags (a base class of
            :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments`, so the flags stay on the command line as
            ``--lora_r`` …), or ``None``.
        allows_reinit: whether ``--reinit_pooler`` / ``--reinit_layers`` make sense (the mode trains those weights).
        default_learning_rate: the learning rate used when ``--learning_rate`` is not given; ``None`` = the task's
            paper default (:class:`~hf_bert_tasks.tasks.base.PaperDefaults`).
        report_group: the section of the ``compare`` table (Table 7's two approaches).
        colour: the matplotlib colour of the mode's bars in ``comparison.png``.
    """

    name: str = ""
    help: str = ""
    card_text: str = ""
    arguments_class: type | None = None
    allows_reinit: bool = False
    default_learning_rate: float | None = None
    report_group: str = "Fine-tuning approach"
    colour: str = "tab:blue"

    # ------------------------------------------------------------------ arguments and defaults
    def check_arguments(self, training_args, selected: bool) -> None:
        """Validate the mode's own flags on ``training_args`` (called for every registered mode at parse time, so a
        bad value fails before any data is read); ``selected`` is true when ``--mode`` is this mode.

        Raises:
            ValueError: a bad value, naming the flag and what was expected.
        """

    def default_hyperparameters(self, task) -> dict[str, Any]:
        """``learning_rate``, ``per_device_train_batch_size``, ``num_train_epochs`` used when the flag is not given:
        the task's paper defaults, with :attr:`default_learning_rate` when the mode sets one."""
        defaults = task.paper_defaults
        return {
            "learning_rate": self.default_learning_rate if self.default_learning_rate is not None
            else defaults.learning_rate,
            "per_device_train_batch_size": defaults.per_device_train_batch_size,
            "num_train_epochs": defaults.num_train_epochs,
        }

    def default_lr_grid(self, task) -> tuple[float, ...] | None:
        """The learning rates a bare ``--lr_grid`` searches; ``None`` when the mode has no default grid."""
        return None

    # ------------------------------------------------------------------ training
    @abc.abstractmethod
    def build_model(self, task, model_args, training_args):
        """The model ``Trainer`` trains for ``task`` (a ``torch.nn.Module``). Every mode defines it: a subclass
        without it cannot be instantiated (``TypeError`` where the mode object is made, i.e. before
        ``register_training_mode`` and long before a run)."""

    def prepare_training(self, model, train_dataset, eval_dataset, data_collator, data_args, training_args):
        """Hook before ``Trainer`` is built; returns ``(train_dataset, eval_dataset, data_collator, metrics)``
        (``metrics`` are added to ``train_results.json``). Default: everything unchanged, no metrics."""
        return train_dataset, eval_dataset, data_collator, {}

    def finish_training(self, trainer, output_dir: str) -> None:
        """Hook after ``trainer.train()`` and before ``trainer.save_model()`` (e.g. save and merge adapters)."""

    # ------------------------------------------------------------------ cards and reports
    def variant(self, training_args) -> str | None:
        """The mode's variant recorded in ``run_info.json`` (``training_mode.strategy``); ``None`` if it has none."""
        return None

    def describe(self, variant: str | None) -> str:
        """The model card's training-mode paragraph."""
        return self.card_text or f"Training mode: **{self.name}**."

    def recognizes(self, output_dir: str, config: dict) -> dict | None:
        """``{"mode", "strategy"}`` when a saved folder without ``run_info.json`` is this mode's output (from its
        files and ``config.json`` as a dict), else ``None``."""
        return None

    def compare_arms(self, strategies: list[str]) -> list[dict]:
        """The ``compare`` configurations of this mode: ``{"label", "mode", "strategy"}`` dicts.

        Raises:
            ValueError: a strategy the mode does not know (only modes that use ``strategies``).
        """
        return [{"label": self.name, "mode": self.name, "strategy": None}]

    def row_name(self, config: dict) -> str:
        """A configuration's row name in the ``compare`` table."""
        return config["label"]

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """The paper's number (x100) for a ``compare`` configuration and its source; ``(None, "")`` if none."""
        return None, ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def has_file(output_dir: str, name: str) -> bool:
    """``output_dir/name`` is a file."""
    return os.path.isfile(os.path.join(output_dir, name))
