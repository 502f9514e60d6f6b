"""Training modes (``--mode``): the :class:`TrainingMode` contract and its registry, one module per mode.

* :mod:`.finetune` — every weight trained, the paper's defaults (§3.2, §4, Appendix A.3); the default mode;
* :mod:`.lora` — peft LoRA adapters on the frozen encoder + the task head;
* :mod:`.feature_based` — a frozen encoder, a Table 7 layer strategy and a trained head (§5.3).

A mode owns ``build_model``, its default hyperparameters, its model-card text, what happens after training (LoRA
merges its adapter) and what ``compare`` shows for it; its flags are a dataclass in its module that
:class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments` inherits (checked declaratively from the fields'
``choices`` / ``range`` metadata, so no mode code runs for another mode's flags). Nothing else in the package
branches on a mode's name.

The registry is lazy, like transformers' auto classes: :data:`TRAINING_MODES` maps a built-in name to its module
path until the mode is first used, then to the instance the module registered (peft's ``register_peft_method``
pattern). ``--help`` and ``--mode``'s choices list the names without importing any mode, and a run executes only its
own mode's module. A new built-in mode = one module (a :class:`TrainingMode` subclass +
:func:`register_training_mode`) + one entry in ``_BUILTIN``; a plug-in just calls :func:`register_training_mode`.
This module imports nothing heavy (no torch/transformers).
"""

from __future__ import annotations

import abc
import difflib
import importlib
import os
import re
from collections.abc import Mapping
from typing import Any

#: ``--mode`` when none is given, and the mode of a saved folder that no other mode recognizes.
DEFAULT_TRAINING_MODE = "finetune"
#: built-in modes, in the order of ``--mode``'s choices and ``compare --modes``: name -> module (imported on first use).
_BUILTIN = {"finetune": "hf_bert_tasks.modes.finetune", "lora": "hf_bert_tasks.modes.lora",
            "feature_based": "hf_bert_tasks.modes.feature_based"}
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class TrainingMode(abc.ABC):
    """Base class of a training mode; the defaults describe full fine-tuning of a plain ``BertFor...`` model.

    Class attributes (override in a subclass):
        name: the ``--mode`` value, lower-case ``[a-z][a-z0-9_]*``.
        help: one line for ``--mode``'s help.
        card_text: the sentence the model card prints under "Training mode".
        arguments_class: the dataclass holding the mode's own flags (a base class of
            :class:`~hf_bert_tasks.arguments.FinetuneTrainingArguments`), or ``None``.
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

    def check_arguments(self, training_args, selected: bool = True) -> None:
        """Checks of the selected mode beyond its fields' declared ``choices``/``range`` (called at parse time).

        Raises:
            ValueError: a bad value, naming the flag and what was expected.
        """

    def default_hyperparameters(self, task) -> dict[str, Any]:
        """``learning_rate``, ``per_device_train_batch_size``, ``num_train_epochs`` used when the flag is not given:
        the task's paper defaults, with :attr:`default_learning_rate` when the mode sets one."""
        defaults = task.paper_defaults
        lr = defaults.learning_rate if self.default_learning_rate is None else self.default_learning_rate
        return {"learning_rate": lr, "per_device_train_batch_size": defaults.per_device_train_batch_size,
                "num_train_epochs": defaults.num_train_epochs}

    def default_lr_grid(self, task) -> tuple[float, ...] | None:
        """The learning rates a bare ``--lr_grid`` searches; ``None`` when the mode has no default grid."""
        return None

    @abc.abstractmethod
    def build_model(self, task, model_args, training_args):
        """The model ``Trainer`` trains for ``task`` (a ``torch.nn.Module``). Every mode defines it: a subclass
        without it cannot be instantiated (``TypeError`` where the mode object is made, long before a run)."""

    def prepare_training(self, model, train_dataset, eval_dataset, data_collator, data_args, training_args):
        """Hook before ``Trainer`` is built; returns ``(train_dataset, eval_dataset, data_collator, metrics)``
        (``metrics`` are added to ``train_results.json``). Default: everything unchanged, no metrics."""
        return train_dataset, eval_dataset, data_collator, {}

    def finish_training(self, trainer, output_dir: str) -> None:
        """Hook after ``trainer.train()`` and before ``trainer.save_model()`` (e.g. save and merge adapters)."""

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


class _Registry(Mapping):
    """``--mode`` value -> :class:`TrainingMode`, in registration order; a built-in entry is its module path until
    first looked up. ``name in TRAINING_MODES`` and iteration (argparse ``choices``) never import a mode."""

    def __init__(self, lazy: dict[str, str]):
        self._entries: dict[str, TrainingMode | str] = dict(lazy)

    def __getitem__(self, name: str) -> TrainingMode:
        if isinstance(self._entries[name], str):  # its module's register_training_mode replaces the path
            importlib.import_module(self._entries[name])
        return self._entries[name]

    def __contains__(self, name) -> bool:
        return name in self._entries

    def __iter__(self):
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def pop(self, name: str, default=None):
        return self._entries.pop(name, default)


#: The only central state: ``--mode`` value -> mode (lazy for the built-ins), in registration order.
TRAINING_MODES: Mapping[str, TrainingMode] = _Registry(_BUILTIN)


def register_training_mode(mode: TrainingMode) -> TrainingMode:
    """Add ``mode`` to :data:`TRAINING_MODES` and return it.

    Raises:
        TypeError: ``mode`` is not a :class:`TrainingMode` instance.
        ValueError: the name is not lower-case ``[a-z][a-z0-9_]*`` or is already registered.
    """
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"register_training_mode: expected a TrainingMode instance, got {type(mode).__name__}")
    if not _NAME_RE.match(mode.name or ""):
        raise ValueError(f"training mode name {mode.name!r} must match {_NAME_RE.pattern}")
    if mode.name in TRAINING_MODES and TRAINING_MODES._entries[mode.name] != type(mode).__module__:
        raise ValueError(f"training mode {mode.name!r} is already registered")
    TRAINING_MODES._entries[mode.name] = mode
    return mode


def unregister_training_mode(name: str) -> None:
    """Remove a registered mode (tests that register a toy mode clean up with it); unknown names are ignored."""
    TRAINING_MODES.pop(name, None)


def get_training_mode(name: str | None) -> TrainingMode:
    """The registered mode called ``name`` (:data:`DEFAULT_TRAINING_MODE` for ``None``), its module imported on
    first use.

    Raises:
        ValueError: an unknown name; the message suggests the closest one and lists the registered modes.
    """
    name = DEFAULT_TRAINING_MODE if name is None else name
    if name not in TRAINING_MODES:
        close = difflib.get_close_matches(str(name), list(TRAINING_MODES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"--mode {name!r}{hint}: expected one of {', '.join(TRAINING_MODES)}")
    return TRAINING_MODES[name]


def list_training_modes() -> list[str]:
    """The registered ``--mode`` values in registration order (no mode module is imported)."""
    return list(TRAINING_MODES)


def mode_of(training_args) -> TrainingMode:
    """The mode selected by ``training_args.mode`` (:data:`DEFAULT_TRAINING_MODE` when the object has no ``mode``,
    e.g. plain ``TrainingArguments`` or ``None``)."""
    return get_training_mode(getattr(training_args, "mode", None) or DEFAULT_TRAINING_MODE)


def infer_training_mode(output_dir: str, config: dict | None = None) -> dict:
    """``{"mode", "strategy"}`` of a saved folder that has no ``run_info.json``: the first registered mode whose
    :meth:`~TrainingMode.recognizes` accepts its files / ``config.json`` (``config``), else the default mode."""
    for mode in TRAINING_MODES.values():
        found = mode.recognizes(output_dir, config or {})
        if found:
            return found
    return {"mode": DEFAULT_TRAINING_MODE, "strategy": None}


def arm_from_label(label: str) -> dict:
    """A ``compare`` configuration from its label (``"finetune"``, ``"feature_based:last"``): ``{"label", "mode",
    "strategy"}``, the inverse of :meth:`TrainingMode.compare_arms`."""
    name, _, strategy = label.partition(":")
    return {"label": label, "mode": name, "strategy": strategy or None}


def has_file(output_dir: str, name: str) -> bool:
    """``output_dir/name`` is a file."""
    return os.path.isfile(os.path.join(output_dir, name))


__all__ = ["DEFAULT_TRAINING_MODE", "TRAINING_MODES", "TrainingMode", "arm_from_label", "get_training_mode",
           "infer_training_mode", "list_training_modes", "mode_of", "register_training_mode",
           "unregister_training_mode"]
