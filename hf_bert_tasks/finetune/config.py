"""The recipes' training arguments (``TrainingArguments`` subclasses built per mode by
:func:`finetune_arguments_class`; the fine-tune recipe's light dataclasses are in :mod:`hf_bert_tasks.finetune.args`,
its one parse :func:`hf_bert_tasks.finetune.args.parse_finetune_argv`), plus ``--config file.yaml|json``; the
fine-tuning defaults are the paper's (§4, Appendix A.3). Why: docs/design.md, 'Fine-tuning defaults'."""

from __future__ import annotations

import dataclasses
import functools
import logging
from dataclasses import dataclass

from transformers import TrainingArguments

from ..flags.parser import CommandLine
from ..flags.trainer_flags import REFUSED_FLAGS
from ..flags.training import (
    accelerator_defaults,
    current_given_flags,
    keeps_checkpoints,
    scrub_secrets,
    training_arguments,
)
from ..flags.values import check_task_values
from ..modes import mode_arguments_class, mode_arguments_classes, mode_of
from .args import DataArguments, FinetuneOptions, mode_groups

logger = logging.getLogger(__name__)

#: ``--lr_grid`` alone (or ``--lr_grid paper``): the task's paper grid, see :func:`apply_task_defaults`.
PAPER_LR_GRID = "paper"


@dataclass
class FinetuneTrainingArguments(FinetuneOptions, TrainingArguments):
    """``TrainingArguments`` with the paper's fine-tuning defaults and extras (:class:`FinetuneOptions`): the
    arguments of ``--mode finetune``; a mode with flags runs with :func:`finetune_arguments_class` of it (this class
    with the mode's flags dataclass as a further base, whose ``__post_init__`` checks them first). Three declared
    fields are not flags (``init=False``: no flag, not in ``to_dict()``, ``training_args.json`` or the run record):
    ``__post_init__`` sets them from what was given. ``ValueError``: a mode whose flags this class lacks."""

    #: the fields not given, which :func:`apply_task_defaults` fills from the task and the mode
    from_task: frozenset[str] = dataclasses.field(default=frozenset(), init=False, repr=False)
    #: ``(do_train, do_eval, do_predict)`` as given, before Trainer's post-init; ``None``: no ``--do_*`` flag, every
    #: split the data has (``tokenization.select_splits``)
    splits_asked: tuple[bool, bool, bool] | None = dataclasses.field(default=None, init=False, repr=False)
    #: a :data:`CHECKPOINT_FLAGS` flag given, or the object not built from a command line: the ``checkpoint-*``
    #: folders stay after the run (else the saved model is its one copy, ``finetune.recipe.remove_checkpoints``)
    keep_checkpoints: bool = dataclasses.field(default=True, init=False, repr=False)

    def __post_init__(self):
        mode_of(self).check_arguments(self)  # a typo in --mode fails here, before any data is read
        mode_flags = mode_arguments_class(self.mode)  # checked by its own __post_init__ (before this one: the MRO)
        if mode_flags is not None and not isinstance(self, mode_flags):
            raise ValueError(
                f"--mode {self.mode}: {type(self).__name__} lacks the mode's flags ({mode_flags.__name__}); expected "
                f"the arguments of finetune_arguments_class({self.mode!r})"
            )
        self.seed_list  # noqa: B018 - a malformed --seeds fails here, before any data is read
        # no --do_* flag: every split the data has; kept before Trainer's post-init changes them
        flags = (self.do_train, self.do_eval, self.do_predict)
        # refused TrainingArguments flags (trainer_flags.TABLE): one line, before any model or data is loaded
        for name, reason in REFUSED_FLAGS.items():
            if getattr(self, name, None) not in (_REFUSED_DEFAULTS.get(name), None, "", [], ()):
                raise ValueError(reason)
        # placeholders for TrainingArguments' checks; apply_task_defaults replaces those in `from_task`
        placeholders = {"learning_rate": 2e-5, "per_device_train_batch_size": 32, "num_train_epochs": 3.0}
        unset = [k for k in placeholders if getattr(self, k) is None]
        for key in unset:
            setattr(self, key, placeholders[key])
        # an explicit --train_sampling_strategy wins over --group_by_length; neither: the task's (apply_task_defaults)
        given = current_given_flags() or ()
        # checkpoints the user asked for stay after the run; else the saved model is its one copy (remove_checkpoints)
        keep = keeps_checkpoints()
        sampler_unset = self.group_by_length and not (self.train_sampling_strategy or "group_by_length" in given)
        if self.train_sampling_strategy is None:
            self.train_sampling_strategy = "group_by_length" if self.group_by_length else "random"
        self.group_by_length = self.train_sampling_strategy == "group_by_length"
        unset += ["metric_for_best_model"] if self.metric_for_best_model is None else []
        unset += ["train_sampling_strategy"] if sampler_unset else []
        self.from_task, self.splits_asked, self.keep_checkpoints = (
            frozenset(unset),
            flags if any(flags) else None,
            keep,
        )
        if self.output_dir is None:
            raise ValueError("--output_dir is required")
        import torch

        if not torch.cuda.is_available():
            self.dataloader_pin_memory = False  # pinning needs an accelerator; avoids a warning per dataloader
        accelerator_defaults(self)  # CPU launcher: use_cpu; GPU: bf16 and fused AdamW unless the flags say otherwise
        super().__post_init__()

    @property
    def learning_rates(self) -> list[float]:
        """The learning rates to run: ``lr_grid`` parsed, or ``[learning_rate]``. ``ValueError``: not distinct
        comma-separated positive floats, or ``"paper"`` not yet resolved by :func:`apply_task_defaults`."""
        if not self.lr_grid:
            return [self.learning_rate]
        if self.lr_grid == PAPER_LR_GRID:
            raise ValueError(
                f"--lr_grid {PAPER_LR_GRID}: the task's grid is filled in by apply_task_defaults(); call it first"
            )
        return _parse_list("lr_grid", self.lr_grid, float, "floats", "positive floats", "5e-5,3e-5")

    @property
    def seed_list(self) -> list[int]:
        """The seeds to run: ``seeds`` parsed, or ``[seed]`` (``ValueError``: not distinct comma-separated ints)."""
        if not self.seeds:
            return [self.seed]
        return _parse_list("seeds", self.seeds, int, "integers", "integers", "1,2,3")


def _parse_list(flag: str, text, convert, kind: str, distinct: str, example: str) -> list:
    """``text`` split at commas and converted; ValueError unless non-empty, distinct (and positive if floats)."""
    try:
        values = [convert(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise ValueError(f"--{flag} {text!r}: expected comma-separated {kind} like '{example}'") from None
    if not values or (convert is float and any(not v > 0 for v in values)) or len(set(values)) != len(values):
        raise ValueError(f"--{flag} {text!r}: expected distinct {distinct} like '{example}'")
    return values


#: transformers' default of each refused field (any other value is refused)
_REFUSED_DEFAULTS = {f.name: f.default for f in dataclasses.fields(TrainingArguments) if f.name in REFUSED_FLAGS}


def apply_task_defaults(task, data_args: DataArguments, training_args: FinetuneTrainingArguments):
    """The one place of the defaults that depend on the task and the mode; returns ``(data_args, training_args)``,
    final. Fills what the user did not set (``training_args.from_task``): learning rate, batch size, epochs (the mode's ``default_hyperparameters``),
    ``max_seq_length`` (the task's), a bare ``--lr_grid`` (the mode's grid), the sampler (the task's
    problem type's ``train_sampling_strategy``: random batches for regression, docs/results.md, and SQuAD,
    docs/parity-squad.md) and, with ``--load_best_model_at_end``, ``--save_strategy best`` or a metric-driven
    scheduler, the task's primary dev metric, its direction and the scheduler's mode
    (``flags.values.check_task_values``; SQuAD's F1 too: its Trainer evaluates with post-processing). Raises
    ``ValueError`` for a bare ``--lr_grid`` with a mode that has no default grid, a ``--metric_for_best_model`` the
    task does not report or a scheduler mode against the metric's direction."""
    mode = mode_of(training_args)
    defaults = mode.default_hyperparameters(task)
    unset = getattr(training_args, "from_task", frozenset())
    for key in unset & set(defaults):
        setattr(training_args, key, defaults[key])
    if "train_sampling_strategy" in unset:  # the task family's (its ProblemType's train_sampling_strategy)
        training_args.train_sampling_strategy = task.problem.train_sampling_strategy
        training_args.group_by_length = training_args.train_sampling_strategy == "group_by_length"
    if data_args.max_seq_length is None:
        data_args.max_seq_length = task.paper_defaults.max_seq_length
    # --load_best_model_at_end, --save_strategy best, a metric-driven scheduler: the task's metric and direction
    check_task_values(task, training_args, metric_unset="metric_for_best_model" in unset)
    if getattr(training_args, "lr_grid", None) == PAPER_LR_GRID:
        grid = mode.default_lr_grid(task)
        if not grid:
            raise ValueError(
                f"--lr_grid without values: --mode {mode.name} has no default grid; expected learning "
                "rates, e.g. --lr_grid 1e-3,5e-4"
            )
        training_args.lr_grid = ",".join(f"{lr:g}" for lr in grid)
    return data_args, training_args


@functools.cache
def _with_flags(extra: tuple[type, ...]) -> type:
    """:class:`FinetuneTrainingArguments` with ``extra`` (modes' flags dataclasses) as bases before it, named
    ``FinetuneTrainingArguments_<Flags>`` in this module (Trainer pickles the arguments: ``training_args.bin``; a
    fresh process finds the class again through this module's ``__getattr__``)."""
    if not extra:
        return FinetuneTrainingArguments
    cls = dataclasses.make_dataclass(_class_name(extra), [], bases=(*extra, FinetuneTrainingArguments))
    cls.__module__ = __name__
    globals()[cls.__name__] = cls
    return cls


def _class_name(extra: tuple[type, ...]) -> str:
    return "FinetuneTrainingArguments_" + "_".join(cls.__name__ for cls in extra)


def finetune_arguments_class(mode: str | None = None) -> type[FinetuneTrainingArguments]:
    """The training-arguments class of ``--mode`` ``mode``: :class:`FinetuneTrainingArguments` with the mode's flags
    dataclass as a further base (cached per mode; the class itself for a mode without flags, e.g. ``finetune``);
    ``None``: with every registered mode's flags (``--help_all`` lists them all). Only the named mode's light flags
    module is imported. ``ValueError``: a mode's flag that clashes with another flag (``args.mode_groups``)."""
    return _with_flags(tuple(cls for _, cls in mode_groups(mode)))


def __getattr__(name: str) -> type:
    """A generated arguments class by name (``FinetuneTrainingArguments_LoraArguments``), made on first use: how a
    fresh process unpickles ``training_args.bin`` of a run whose mode has flags."""
    if name.startswith("FinetuneTrainingArguments_"):
        classes = tuple(mode_arguments_classes().values())
        for extra in (*((cls,) for cls in classes), classes):
            if _class_name(extra) == name:
                return _with_flags(extra)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def finetune_arguments(command_line: CommandLine):
    """``(ModelArguments, DataArguments, training arguments)`` of a parsed ``finetune`` command line
    (:func:`hf_bert_tasks.finetune.args.parse_finetune_argv`), as :func:`finetune_arguments_class` of its mode
    (:func:`training_arguments`), final: the task's and the mode's defaults filled in, the flags the task refuses
    refused and the secrets scrubbed (:func:`finalize_arguments`). After it the recipe only takes the Hub settings
    and token out for ``--push_to_hub`` (``hub.pop_push_settings``) and, after an lr grid, records the selected
    ``learning_rate`` and ``seed`` (each grid run gets its own copy).

    Raises:
        ValueError: a value the mode or the task refuses (one line, before any model or data is loaded)."""
    model, data, training = training_arguments(_with_flags(tuple(command_line.modes)), command_line)
    finalize_arguments(command_line.task or data.registered_task(), data, training)
    return model, data, training


def finalize_arguments(task, data_args: DataArguments, training_args: FinetuneTrainingArguments):
    """Make a fine-tune run's arguments final for ``task``, in place: the task's and the mode's defaults
    (:func:`apply_task_defaults`), the flags this task refuses (its problem type's ``refused_flags``, e.g.
    ``--label_smoothing_factor`` for regression), then, without ``--push_to_hub``, every secret scrubbed
    (:func:`scrub_secrets`: none reaches ``training_args.bin`` or the run record; with it, the push step takes them
    out, ``hub.pop_push_settings``). Idempotent: ``run_finetune`` calls it again for arguments made any other way (a script's own
    ``FinetuneTrainingArguments(...)``). Returns ``(data_args, training_args)``.

    Raises:
        ValueError: a refused flag (names it and the task) or a bare ``--lr_grid`` the mode has no grid for."""
    apply_task_defaults(task, data_args, training_args)
    for name, message in task.problem.refused_flags:
        if getattr(training_args, name, None):
            raise ValueError(message.format(value=getattr(training_args, name), task=task.name))
    if not training_args.push_to_hub:
        scrub_secrets(training_args)
    return data_args, training_args
