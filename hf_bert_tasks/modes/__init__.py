"""Training modes (``--mode``): the :class:`TrainingMode` contract, its lazy registry and the default mode,
``finetune`` (:class:`FinetuneMode`, with the task model LoRA wraps too); ``lora`` is in :mod:`hf_bert_tasks.modes.lora.mode`,
``feature_based`` in :mod:`hf_bert_tasks.modes.feature_based.mode`. A new mode = a :class:`TrainingMode` subclass +
:func:`register_training_mode`; its flags, a dataclass registered with it (built-ins: a light module
``modes/<name>.py``), join the ``finetune`` command line. This module imports no torch/transformers. Why lazy: docs/design.md, 'Training modes'."""

from __future__ import annotations

import abc
import dataclasses
import difflib
import importlib
import logging
import re
from collections import UserDict
from collections.abc import Mapping
from typing import Any

from .. import paper

logger = logging.getLogger(__name__)

#: ``--mode`` when none is given.
DEFAULT_TRAINING_MODE = "finetune"
#: built-in modes, in the order of ``--mode``'s choices and ``compare --modes``: name -> module (imported on first use).
_BUILTIN = {
    "finetune": "hf_bert_tasks.modes",
    "lora": "hf_bert_tasks.modes.lora.mode",
    "feature_based": "hf_bert_tasks.modes.feature_based.mode",
}
#: built-in modes' flags dataclasses: name -> ``"module:Class"`` of a light module (read without the mode's module)
_BUILTIN_FLAGS = {
    "lora": "hf_bert_tasks.modes.lora.arguments:LoraArguments",
    "feature_based": "hf_bert_tasks.modes.feature_based.arguments:FeatureBasedArguments",
}
_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class TrainingMode(abc.ABC):
    """Base class of a training mode (override the class attributes below); the defaults describe full fine-tuning
    of a plain ``BertFor...`` model."""

    name: str = ""  #: the ``--mode`` value, lower-case ``[a-z][a-z0-9_]*``
    help: str = ""  #: one line for ``--mode``'s help
    card_text: str = ""  #: the sentence the model card prints under "Training mode"
    arguments_class: type | None = None  #: dataclass of the mode's flags (``finetune --<field>``; registered with it)
    allows_reinit: bool = False  #: ``--reinit_pooler`` / ``--reinit_layers`` allowed (the mode trains those weights)
    default_learning_rate: float | None = None  #: without ``--learning_rate``; ``None``: the task's paper default
    report_group: str = "Fine-tuning approach"  #: the section of the ``compare`` table (Table 7's two approaches)
    colour: str = "tab:blue"  #: the matplotlib colour of the mode's bars in ``comparison.png``

    def check_arguments(self, training_args, selected: bool = True) -> None:
        """Checks beyond the mode's flags dataclass's own (its ``__post_init__``), at parse time; ``ValueError`` names
        the flag."""

    def default_hyperparameters(self, task) -> dict[str, Any]:
        """``learning_rate``, ``per_device_train_batch_size``, ``num_train_epochs`` used when the flag is not given:
        the task's paper defaults, with :attr:`default_learning_rate` when the mode sets one."""
        defaults = task.paper_defaults
        lr = defaults.learning_rate if self.default_learning_rate is None else self.default_learning_rate
        return {
            "learning_rate": lr,
            "per_device_train_batch_size": defaults.per_device_train_batch_size,
            "num_train_epochs": defaults.num_train_epochs,
        }

    def default_lr_grid(self, task) -> tuple[float, ...] | None:
        """The learning rates a bare ``--lr_grid`` searches; ``None`` when the mode has no default grid."""
        return None

    @abc.abstractmethod
    def build_model(self, task, model_args, training_args):
        """The model (a ``torch.nn.Module``) that ``Trainer`` trains for ``task``: the one abstract method."""

    def prepare_training(self, model, train_dataset, eval_dataset, data_collator, data_args, training_args):
        """Hook before ``Trainer`` is built; returns ``(train_dataset, eval_dataset, data_collator, metrics)``
        (``metrics`` are added to ``train_results.json``). Default: everything unchanged, no metrics."""
        return train_dataset, eval_dataset, data_collator, {}

    def finish_training(self, trainer, output_dir: str) -> None:
        """Hook after ``trainer.train()`` and before ``trainer.save_model()`` (e.g. save and merge adapters)."""

    def variant(self, training_args) -> str | None:
        """The mode's variant recorded in ``run_info.json`` (``training_mode.strategy``); ``None`` if it has none."""
        return None

    def record(self, training_args) -> dict:
        """``{"mode", "strategy", "description"}``: the run record's ``training_mode`` (``strategy``: :meth:`variant`;
        ``description``: :meth:`describe` of it, the card's training-mode paragraph, recorded while training)."""
        variant = self.variant(training_args)
        return {"mode": self.name, "strategy": variant, "description": self.describe(variant)}

    def describe(self, variant: str | None) -> str:
        """The model card's training-mode paragraph."""
        return self.card_text or f"Training mode: **{self.name}**."

    def compare_arms(self, strategies: list[str]) -> list[dict]:
        """The ``compare`` configurations of this mode: ``{"label", "mode", "strategy"}`` dicts (``ValueError``: a
        strategy the mode does not know)."""
        return [{"label": self.name, "mode": self.name, "strategy": None}]

    def row_name(self, config: dict) -> str:
        """A configuration's row name in the ``compare`` table."""
        return config["label"]

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """The paper's number (x100) for a ``compare`` configuration and its source; ``(None, "")`` if none."""
        return None, ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


class _Registry(UserDict):
    """``--mode`` value -> :class:`TrainingMode`, in registration order; a built-in entry is its module path until
    first looked up (``in``, iteration and :meth:`names` import no mode). Read-only: item assignment and ``del``
    raise ``TypeError`` (they would skip :func:`register_training_mode`'s checks)."""

    def __init__(self, entries: dict[str, str], flags: dict[str, str]):
        super().__init__()
        self.data = dict(entries)  # not through __setitem__, which refuses
        self.flags: dict[str, str | type] = dict(flags)  # name -> flags dataclass or "module:Class" (light)

    def __setitem__(self, name: str, *mode):
        raise TypeError(
            f"TRAINING_MODES is read-only ({name!r}): add a mode with register_training_mode, remove "
            "one with unregister_training_mode"
        )

    __delitem__ = __setitem__

    def __getitem__(self, name: str) -> TrainingMode:
        if isinstance(self.data[name], str):  # the module's register_training_mode replaces the path
            importlib.import_module(self.data[name])
        return self.data[name]

    def names(self):
        """A live ``dict_keys`` of the registered names: ``--mode``'s argparse ``choices`` (argparse reads it
        without calling into this module or importing a mode)."""
        return self.data.keys()


#: The only central state: ``--mode`` value -> mode (lazy for the built-ins), in registration order.
TRAINING_MODES: Mapping[str, TrainingMode] = _Registry(_BUILTIN, _BUILTIN_FLAGS)


def register_training_mode(mode: TrainingMode, arguments_class: type | None = None) -> TrainingMode:
    """Add ``mode`` to :data:`TRAINING_MODES` with its flags dataclass (``arguments_class``, default
    ``mode.arguments_class``; each field a ``finetune --<field>`` flag, read as ``training_args.<field>``) and return
    it. Raises ``TypeError`` for a non-:class:`TrainingMode` or flags that are not a dataclass, ``ValueError`` for a
    name not matching ``[a-z][a-z0-9_]*`` or already registered."""
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"register_training_mode: expected a TrainingMode instance, got {type(mode).__name__}")
    arguments_class = arguments_class or mode.arguments_class
    if arguments_class is not None and not dataclasses.is_dataclass(arguments_class):
        raise TypeError(f"training mode {mode.name!r}: arguments_class must be a dataclass, got {arguments_class!r}")
    if not _NAME_RE.match(mode.name or ""):
        raise ValueError(f"training mode name {mode.name!r} must match {_NAME_RE.pattern}")
    if mode.name in TRAINING_MODES and TRAINING_MODES.data[mode.name] != type(mode).__module__:
        raise ValueError(f"training mode {mode.name!r} is already registered")
    TRAINING_MODES.data[mode.name] = mode
    if arguments_class is not None:
        mode.arguments_class = arguments_class
        TRAINING_MODES.flags[mode.name] = arguments_class
    return mode


def unregister_training_mode(name: str) -> None:
    """Remove a registered mode (tests that register a toy mode clean up with it); unknown names are ignored."""
    TRAINING_MODES.data.pop(name, None)
    TRAINING_MODES.flags.pop(name, None)


def mode_arguments_class(name: str) -> type | None:
    """The flags dataclass registered with mode ``name`` (``None``: the mode has no flags), importing only its light
    module for a built-in, never the mode's own module. ``KeyError`` for an unregistered name."""
    if name not in TRAINING_MODES:
        raise KeyError(name)
    cls = TRAINING_MODES.flags.get(name)
    if isinstance(cls, str):
        module, _, attr = cls.partition(":")
        cls = TRAINING_MODES.flags[name] = getattr(importlib.import_module(module), attr)
    return cls


def mode_arguments_classes() -> dict[str, type]:
    """``{mode name: flags dataclass}`` of the registered modes that have flags, in registration order."""
    return {name: cls for name in list(TRAINING_MODES) if (cls := mode_arguments_class(name)) is not None}


def mode_groups(
    recipe_flags: frozenset[str] | set[str] = frozenset(), mode: str | None = None
) -> list[tuple[str, type]]:
    """``(title, flags dataclass)`` of each registered mode with flags (:func:`mode_arguments_classes`), or of
    ``mode`` only (``[]``: a mode without flags or a name no mode has; only its light flags module is imported), for
    the ``finetune`` command line (``recipe_flags``: the recipe's own flag names, ``finetune.args.GROUPS``).

    Raises:
        ValueError: a mode's flag that is already a flag of the recipe, of another mode or a ``TrainingArguments``
            field (names both owners)."""
    from ..flags.trainer_fields import TRAINER_FIELDS

    owner = dict.fromkeys(recipe_flags, "finetune")
    groups, mode_flags = [], set()
    if mode is None:
        selected = mode_arguments_classes()
    else:
        selected = {mode: cls} if mode in TRAINING_MODES and (cls := mode_arguments_class(mode)) else {}
    for name, cls in selected.items():
        for flag in cls.__dataclass_fields__:
            if owner.get(flag, name) != name:
                raise ValueError(f"training mode {name!r}: its flag --{flag} is already a flag of {owner[flag]!r}")
            owner[flag] = name
            mode_flags.add(flag)
        groups.append((f"{name} mode arguments", cls))
    clash = sorted(mode_flags.intersection(TRAINER_FIELDS))
    if clash:
        raise ValueError(f"training mode {owner[clash[0]]!r}: its flag --{clash[0]} is a TrainingArguments field")
    return groups


def get_training_mode(name: str | None) -> TrainingMode:
    """The registered mode called ``name`` (:data:`DEFAULT_TRAINING_MODE` for ``None``), its module imported on
    first use; ``ValueError`` for an unknown name, suggesting the closest and listing the registered modes."""
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


def mode_text(mode: dict | None) -> str:
    """The training-mode paragraph of a record's ``training_mode`` (``{"mode", "strategy"}``; a record of this
    version also holds it as ``description``, :meth:`TrainingMode.record`); ``""`` (the card then has no mode
    paragraph) when the run recorded none: a mode is never guessed from a folder's files."""
    if not (mode or {}).get("mode"):
        return ""
    if mode["mode"] in TRAINING_MODES:
        return TRAINING_MODES[mode["mode"]].describe(mode.get("strategy"))
    strategy = f" Feature strategy: `{mode['strategy']}`." if mode.get("strategy") else ""
    return f"Training mode: **{mode['mode']}**.{strategy}"


def arm_from_label(label: str) -> dict:
    """A ``compare`` configuration from its label (``"finetune"``, ``"feature_based:last"``): ``{"label", "mode",
    "strategy"}``, the inverse of :meth:`TrainingMode.compare_arms`."""
    name, _, strategy = label.partition(":")
    return {"label": label, "mode": name, "strategy": strategy or None}


# ---------------------------------------------------------------------------------------- the default mode
class FinetuneMode(TrainingMode):
    """Full fine-tuning of ``task.model_class()`` loaded from the checkpoint (:func:`load_task_model`)."""

    name = "finetune"
    help = "all weights trained (paper §3.2)"
    card_text = (
        "Training mode: **fine-tuning** — every weight of the encoder and the task head was trained (paper §3.2)."
    )
    allows_reinit = True

    def default_lr_grid(self, task) -> tuple[float, ...]:
        """The task's paper grid (:attr:`PaperDefaults.lr_grid <hf_bert_tasks.tasks.base.PaperDefaults>`)."""
        return tuple(task.paper_defaults.lr_grid)

    def build_model(self, task, model_args, training_args):
        """``task.model_class()`` from ``model_args.model_name_or_path``, with ``--reinit_layers`` /
        ``--reinit_pooler`` applied and the batch-mean loss declared (:func:`declare_batch_mean_loss`)."""
        model = reinit_top_layers(
            load_task_model(task, model_args),
            getattr(model_args, "reinit_layers", 0),
            getattr(model_args, "reinit_pooler", False),
        )
        return declare_batch_mean_loss(model)

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """CoNLL-2003: Table 7's fine-tuning row (dev F1, BERT-BASE); other tasks: the task's ``paper_results``
        for BERT-base (GLUE: Table 1, test server)."""
        if task.name == paper.TABLE7_TASK:
            return paper.TABLE7_FINETUNE_DEV_F1["BERT-BASE"], paper.TABLE7_SOURCE
        value = task.paper_results.get("BERT-base", {}).get(task.primary_metric)
        return value, task.paper_source if value is not None else ""


def load_task_model(task, model_args):
    """Load ``model_args.model_name_or_path`` with ``task``'s head (``task.model_class()``) and label names in its
    config (``task.model_config_kwargs()``, its ``task_problem_type`` too, which ``AutoConfig.from_pretrained`` would
    drop as undeclared): the model of full fine-tuning, and the base of LoRA. Without
    ``--attn_implementation`` transformers picks the architecture's attention (sdpa where it has it, else eager:
    DeBERTa-v2); a given one the architecture lacks is refused (:func:`check_attn_implementation`). Raises
    ``ValueError`` for that, and when the checkpoint's head does not fit the task (e.g. a 3-label MNLI model for
    2-label MRPC), saying which sizes differ and to start from the encoder instead."""
    from transformers import AutoConfig

    name = model_args.model_name_or_path
    hub = {"revision": model_args.model_revision, "cache_dir": model_args.cache_dir}
    config, undeclared = AutoConfig.from_pretrained(
        name, **hub, **task.model_config_kwargs(), return_unused_kwargs=True
    )
    for key, value in undeclared.items():  # keys the config class does not declare (task_problem_type): kept, saved
        setattr(config, key, value)
    attn = getattr(model_args, "attn_implementation", None)
    if attn:
        check_attn_implementation(task.model_class(), config, attn)
    try:
        return task.model_class().from_pretrained(
            name, config=config, **hub, **({"attn_implementation": attn} if attn else {})
        )
    except RuntimeError as err:  # transformers 4: "size mismatch ..."; 5.x: "... `ignore_mismatched_sizes` ..."
        if "size mismatch" not in str(err) and "ignore_mismatched_sizes" not in str(err):
            raise
        saved = AutoConfig.from_pretrained(name, **hub)
        raise ValueError(
            f"{name}: its classification head does not fit task {task.name!r} ({task.num_labels} label(s)); the "
            f"checkpoint's head has {saved.num_labels} output(s) ({list(saved.id2label.values())}) — fine-tune "
            "from the base encoder checkpoint instead"
        ) from None


#: ``--attn_implementation`` value -> the class attribute of a transformers model that says it supports it
ATTN_SUPPORT = {
    "eager": None,
    "sdpa": "_supports_sdpa",
    "flash_attention_2": "_supports_flash_attn",
    "flex_attention": "_supports_flex_attn",
}


def check_attn_implementation(auto_class, config, attn: str) -> None:
    """Refuse ``attn`` (an ``--attn_implementation`` value) when the model class ``auto_class`` builds for ``config``
    does not support it (its ``_supports_sdpa`` / ``_supports_flash_attn`` / ``_supports_flex_attn``, transformers'
    own flags): ``ValueError`` in one line naming ``config.model_type`` and the values it supports. A model class the
    Auto class does not map (remote code) is left to transformers."""
    from transformers.models.auto.auto_factory import _get_model_class

    try:
        model_class = _get_model_class(config, auto_class._model_mapping)
    except (KeyError, ValueError, AttributeError):
        return
    supported = [v for v, flag in ATTN_SUPPORT.items() if flag is None or getattr(model_class, flag, False)]
    if attn in ATTN_SUPPORT and attn not in supported:
        raise ValueError(
            f"--attn_implementation {attn}: {model_class.__name__} (model_type {config.model_type!r}) does not "
            f"support it; expected one of {', '.join(supported)} (or leave the flag out for the model's default)"
        )


def reinit_top_layers(model, n: int, pooler: bool = False):
    """Re-initialise the top ``n`` encoder layers (and the pooler when ``pooler``) of ``model`` as BERT initialises
    them (``nn.Linear`` weight ~ normal(0, ``config.initializer_range``), biases 0, LayerNorm 1/0); returns
    ``model``; ``ValueError`` unless 0 <= ``n`` <= ``num_hidden_layers``. Source: Zhang et al. 2021, "Revisiting
    Few-sample BERT Fine-tuning" (ICLR), §5. By hand: transformers 5's ``_init_weights`` skips loaded tensors."""
    import torch

    layers = model.config.num_hidden_layers
    if not 0 <= n <= layers:
        raise ValueError(f"--reinit_layers {n}: expected 0 <= N <= {layers} (the model's num_hidden_layers)")
    base = model.base_model
    modules = list(base.encoder.layer[layers - n :]) if n else []
    if pooler and getattr(base, "pooler", None) is not None:
        modules.append(base.pooler)
    with torch.no_grad():
        for module in (m for top in modules for m in top.modules()):
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, model.config.initializer_range)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, torch.nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model


def declare_batch_mean_loss(model):
    """Mark ``model`` (or the base model inside a peft wrapper) as returning a batch-mean loss
    (``accepts_loss_kwargs = False``); returns ``model``. Why: docs/design.md, 'declare_batch_mean_loss'."""
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.accepts_loss_kwargs = False
    return model


register_training_mode(FinetuneMode())


__all__ = [
    "DEFAULT_TRAINING_MODE",
    "TRAINING_MODES",
    "FinetuneMode",
    "TrainingMode",
    "arm_from_label",
    "check_attn_implementation",
    "declare_batch_mean_loss",
    "get_training_mode",
    "list_training_modes",
    "load_task_model",
    "mode_arguments_class",
    "mode_arguments_classes",
    "mode_of",
    "register_training_mode",
    "reinit_top_layers",
    "unregister_training_mode",
]
