"""The recipes' training arguments (``TrainingArguments`` subclasses; the fine-tune recipe's light dataclasses are in
:mod:`hf_bert_tasks.run.command_line`, its one parse in ``command_line.parse_finetune_argv``), plus ``--config
file.yaml|json``; the fine-tuning defaults are the paper's (§4, Appendix A.3). Why: docs/design.md, 'Fine-tuning
defaults'."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import os
import re
import sys
from contextvars import ContextVar
from dataclasses import dataclass

from transformers import HfArgumentParser, TrainingArguments

from ..modes import mode_arguments_classes, mode_of
from ..modes.feature_based.arguments import FeatureBasedArguments  # noqa: F401 - public names of arguments (mode flags)
from ..modes.lora.arguments import LoraArguments  # noqa: F401
from .checkpoints import output_dir_is_finished  # noqa: F401 - a public name of arguments
from .command_line import (
    CommandLine,
    DataArguments,
    FinetuneOptions,
    ModelArguments,  # noqa: F401 - a public name of arguments
    UsageError,
    build_parser,
    mode_groups,
    parse_flags,
)
from .config_file import read_config as read_config_file  # noqa: F401 - the --config reader (a public name)
from .trainer_fields import TRAINER_FIELDS
from .trainer_flags import REFUSED_FLAGS, VERSION_DEPENDENT

logger = logging.getLogger(__name__)

#: ``--lr_grid`` alone (or ``--lr_grid paper``): the task's paper grid, see :func:`apply_task_defaults`.
PAPER_LR_GRID = "paper"

#: The flags the user gave while the recipe's dataclasses are built (:func:`flags_given`); ``None`` otherwise.
_GIVEN_FLAGS: ContextVar[frozenset[str] | None] = ContextVar("hf_bert_tasks_given_flags", default=None)


@dataclass
class FinetuneTrainingArguments(FinetuneOptions, *mode_arguments_classes().values(), TrainingArguments):
    """``TrainingArguments`` with the paper's fine-tuning defaults and extras (:class:`FinetuneOptions`) and the flags
    of the modes registered when this module is imported (the built-ins'); :func:`finetune_arguments_class` adds
    those of modes registered later. Three declared fields are not flags (``init=False``: no flag, not in
    ``to_dict()``, ``training_args.json`` or the run record): ``__post_init__`` sets them from what was given."""

    #: the fields not given, which :func:`apply_task_defaults` fills from the task and the mode
    from_task: frozenset[str] = dataclasses.field(default=frozenset(), init=False, repr=False)
    #: ``(do_train, do_eval, do_predict)`` as given, before Trainer's post-init; ``None``: no ``--do_*`` flag, every
    #: split the data has (``tokenization.select_splits``)
    splits_asked: tuple[bool, bool, bool] | None = dataclasses.field(default=None, init=False, repr=False)
    #: a :data:`CHECKPOINT_FLAGS` flag given, or the object not built from a command line: the ``checkpoint-*``
    #: folders stay after the run (else the saved model is its one copy, ``scripts.finetune.remove_checkpoints``)
    keep_checkpoints: bool = dataclasses.field(default=True, init=False, repr=False)

    def __post_init__(self):
        mode_of(self).check_arguments(self)  # a typo in --mode fails here, before any data is read
        check_declared_values(self)  # every mode's flags (choices, bounds), so a bad one fails in any compare arm
        # no --do_* flag: every split the data has; kept before Trainer's post-init changes them
        flags = (self.do_train, self.do_eval, self.do_predict)
        # an explicit --train_sampling_strategy wins over --group_by_length; neither: the task's (apply_task_defaults)
        given = _GIVEN_FLAGS.get() or ()
        # checkpoints the user asked for stay after the run; else the saved model is its one copy (remove_checkpoints)
        keep = _GIVEN_FLAGS.get() is None or bool(set(given) & CHECKPOINT_FLAGS)
        # refused TrainingArguments flags (trainer_flags.TABLE): one line, before any model or data is loaded
        for name, reason in REFUSED_FLAGS.items():
            if getattr(self, name, None) not in (_REFUSED_DEFAULTS.get(name), None, "", [], ()):
                raise ValueError(reason)
        sampler_unset = self.group_by_length and not (self.train_sampling_strategy or "group_by_length" in given)
        if self.train_sampling_strategy is None:
            self.train_sampling_strategy = "group_by_length" if self.group_by_length else "random"
        self.group_by_length = self.train_sampling_strategy == "group_by_length"
        self.seed_list  # noqa: B018 - a malformed --seeds fails here, before any data is read
        # placeholders for TrainingArguments' checks; apply_task_defaults replaces those in `from_task`
        placeholders = {"learning_rate": 2e-5, "per_device_train_batch_size": 32, "num_train_epochs": 3.0}
        unset = [k for k in placeholders if getattr(self, k) is None]
        for key in unset:
            setattr(self, key, placeholders[key])
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


_TRAINER_FIELDS = {f.name for f in dataclasses.fields(TrainingArguments)}
#: transformers' default of each refused field (any other value is refused)
_REFUSED_DEFAULTS = {f.name: f.default for f in dataclasses.fields(TrainingArguments) if f.name in REFUSED_FLAGS}
#: flags that ask for checkpoints: given, the run's ``checkpoint-*`` folders stay (else: finetuning.remove_checkpoints)
CHECKPOINT_FLAGS = frozenset(
    {
        "save_strategy",
        "save_steps",
        "save_total_limit",
        "load_best_model_at_end",
        "save_only_model",
        "resume_from_checkpoint",
    }
)


def check_declared_values(args) -> None:
    """Check ``args``' fields against their metadata ``choices`` (argparse never checks an object built from a dict)
    and the inherited ``bounds`` tuples ``(flag, lowest, upper bound excluded or None, what is expected)``
    (e.g. :class:`~hf_bert_tasks.modes.lora.arguments.LoraArguments`); ``ValueError`` ``--<flag> <value>: expected ...``."""
    for f in dataclasses.fields(args):
        if f.name in _TRAINER_FIELDS or f.name == "mode":
            continue  # TrainingArguments checks its own; --mode: mode_of
        choices, value = f.metadata.get("choices"), getattr(args, f.name, None)
        if choices is not None and value is not None and value not in choices:
            raise ValueError(f"--{f.name} {value!r}: expected one of {list(choices)}")
    for cls in type(args).__mro__:
        for name, low, high, expected in vars(cls).get("bounds", ()):
            value = getattr(args, name)
            if value < low or (high is not None and value >= high):
                raise ValueError(f"--{name} {value}: expected {expected}")


def accelerator_defaults(args: TrainingArguments, compile_by_default: bool = False) -> None:
    """Both recipes' machine settings, before ``TrainingArguments.__post_init__``: :func:`use_cpu_under_launcher`,
    then :func:`gpu_fast_path` (``compile_by_default``: the pretrain recipe's, see there)."""
    use_cpu_under_launcher(args)
    gpu_fast_path(args, compile_by_default=compile_by_default)


@contextlib.contextmanager
def flags_given(names):
    """Inside this block ``names`` (flags without ``--``, command line and ``--config``) are the flags the user gave,
    so :func:`gpu_fast_path` tells "not given" from "given with transformers' default"."""
    token = _GIVEN_FLAGS.set(frozenset(names))
    try:
        yield
    finally:
        _GIVEN_FLAGS.reset(token)


def gpu_fast_path(args: TrainingArguments, compile_by_default: bool = False) -> str | None:
    """With a CUDA GPU (not ``--use_cpu``): ``bf16=True`` when supported natively and ``optim="adamw_torch_fused"``,
    and with ``compile_by_default`` (the pretrain recipe: full-length batches, measured 1.25x on an H200, issue 42)
    ``torch_compile=True``, each unless given (:func:`flags_given`; objects built outside it are left alone);
    returns the INFO line it logs (``None``: nothing changed). Call before ``TrainingArguments.__post_init__``.
    Rules: docs/design.md, 'GPU fast path as defaults'."""
    given = _GIVEN_FLAGS.get()
    if given is None or args.use_cpu:
        return None
    import torch

    if not torch.cuda.is_available():
        return None
    chosen, opt_out = [], []
    if not given & {"bf16", "fp16", "deepspeed"} and not os.environ.get("ACCELERATE_MIXED_PRECISION"):
        if torch.cuda.is_bf16_supported(including_emulation=False):
            args.bf16 = True
            chosen.append("bf16 (supported)")
            opt_out.append("--bf16 False")
        else:
            chosen.append("fp32 (no native bf16 on this GPU)")
    if "optim" not in given:
        args.optim = "adamw_torch_fused"
        chosen.append("fused AdamW")
        opt_out.append("--optim adamw_torch")
    if compile_by_default and not given & {"torch_compile", "torch_compile_backend", "torch_compile_mode"}:
        args.torch_compile = True
        chosen.append("torch.compile")
        opt_out.append("--torch_compile False")
    if not chosen:
        return None
    message = "GPU present: " + ", ".join(chosen) + (f"; pass {' / '.join(opt_out)} to opt out" if opt_out else "")
    if os.environ.get("RANK", "0") == "0":  # once per launch, not once per process
        logger.info(message)
    return message


def use_cpu_under_launcher(args: TrainingArguments) -> None:
    """Set ``args.use_cpu`` (gloo DDP) when a launcher started several processes (``WORLD_SIZE`` > 1) on a machine
    without CUDA, MPS or XPU. Why: docs/design.md, 'use_cpu under a CPU launcher'."""
    import torch

    mps, xpu = getattr(torch.backends, "mps", None), getattr(torch, "xpu", None)
    other = (mps is not None and mps.is_available()) or (xpu is not None and xpu.is_available())  # keep use_cpu off
    if not torch.cuda.is_available() and int(os.environ.get("WORLD_SIZE", "1")) > 1 and not other:
        args.use_cpu = True


def apply_task_defaults(task, data_args: DataArguments, training_args: FinetuneTrainingArguments):
    """The one place of the defaults that depend on the task and the mode; returns ``(data_args, training_args)``,
    final. Fills what the user did not set (``training_args.from_task``): learning rate, batch size, epochs (the mode's ``default_hyperparameters``),
    ``max_seq_length`` (the task's), a bare ``--lr_grid`` (the mode's grid), the sampler (the task's
    ``default_train_sampling_strategy``: random batches for regression, docs/results.md, and SQuAD,
    docs/parity-squad.md) and, with ``--load_best_model_at_end``,
    the task's primary dev metric and its direction (SQuAD's F1 too: its Trainer evaluates with post-processing).
    Raises ``ValueError`` for a bare ``--lr_grid`` with a mode that has no default grid."""
    mode = mode_of(training_args)
    defaults = mode.default_hyperparameters(task)
    unset = getattr(training_args, "from_task", frozenset())
    for key in unset & set(defaults):
        setattr(training_args, key, defaults[key])
    if "train_sampling_strategy" in unset:  # the task family's (Task.default_train_sampling_strategy)
        training_args.train_sampling_strategy = task.default_train_sampling_strategy()
        training_args.group_by_length = training_args.train_sampling_strategy == "group_by_length"
    if data_args.max_seq_length is None:
        data_args.max_seq_length = task.paper_defaults.max_seq_length
    if training_args.load_best_model_at_end and "metric_for_best_model" in unset:  # SQuAD too
        training_args.metric_for_best_model = task.primary_metric  # Trainer reads it as eval_<metric>
        training_args.greater_is_better = task.metric_spec(task.primary_metric).higher_is_better
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
    name = "FinetuneTrainingArguments_" + "_".join(cls.__name__ for cls in extra)
    cls = dataclasses.make_dataclass(name, [], bases=(*extra, FinetuneTrainingArguments))
    cls.__module__ = __name__
    globals()[name] = cls  # found by name: Trainer pickles the arguments (training_args.bin)
    return cls


def finetune_arguments_class(modes=None) -> type[FinetuneTrainingArguments]:
    """:class:`FinetuneTrainingArguments` with the flags dataclasses of the modes registered since this module was
    imported (``modes``: those classes; default: the registry's, a clash checked by ``command_line.mode_groups``)
    as further bases (a subclass, cached per set of modes)."""
    if modes is None:
        modes = [cls for _, cls in mode_groups()]
    extra = tuple(c for c in modes if c not in FinetuneTrainingArguments.__mro__)
    return _with_flags(extra) if extra else FinetuneTrainingArguments


def finetune_arguments(command_line: CommandLine):
    """``(ModelArguments, DataArguments, training arguments)`` of a parsed ``finetune`` command line
    (:func:`hf_bert_tasks.run.command_line.parse_finetune_argv`), as :func:`finetune_arguments_class`
    (:func:`training_arguments`), final: the task's and the mode's defaults filled in, the flags the task refuses
    refused and the secrets scrubbed (:func:`finalize_arguments`). After it the recipe only takes the Hub settings
    and token out for ``--push_to_hub`` (``hub.pop_push_settings``) and, after an lr grid, records the selected
    ``learning_rate`` and ``seed`` (each grid run gets its own copy).

    Raises:
        ValueError: a value the mode or the task refuses (one line, before any model or data is loaded)."""
    model, data, training = training_arguments(finetune_arguments_class(command_line.modes), command_line)
    finalize_arguments(data.registered_task(), data, training)
    return model, data, training


def finalize_arguments(task, data_args: DataArguments, training_args: FinetuneTrainingArguments):
    """Make a fine-tune run's arguments final for ``task``, in place: without ``--push_to_hub`` every secret
    scrubbed (:func:`scrub_secrets`: none reaches ``training_args.bin`` or the run record; with it, the push step
    takes them out, ``hub.pop_push_settings``), the task's and the mode's defaults (:func:`apply_task_defaults`),
    then the flags this task refuses (``trainer_flags.TASK_REFUSALS``, e.g. ``--label_smoothing_factor`` for
    regression). Idempotent: ``run_finetune`` calls it again for arguments made any other way (a script's own
    ``FinetuneTrainingArguments(...)``). Returns ``(data_args, training_args)``.

    Raises:
        ValueError: a refused flag (names it and the task) or a bare ``--lr_grid`` the mode has no grid for."""
    from .trainer_flags import TASK_REFUSALS

    if not training_args.push_to_hub:
        scrub_secrets(training_args)
    apply_task_defaults(task, data_args, training_args)
    for (problem_type, name), message in TASK_REFUSALS.items():
        if task.problem_type == problem_type and getattr(training_args, name, None):
            raise ValueError(message.format(value=getattr(training_args, name), task=task.name))
    return data_args, training_args


def training_arguments(cls: type[TrainingArguments], command_line: CommandLine):
    """``(model, data, training arguments)``: ``cls`` built once from a parsed command line's training values (a
    field of another transformers version is left out when not given, ``UsageError`` when given; a
    ``TrainingArguments`` field not given keeps the installed class's default, not the static table's);
    ``command_line.given`` tells :func:`gpu_fast_path` what was set."""
    known = {f.name for f in dataclasses.fields(cls)}
    values = dict(command_line.training)
    for name in command_line.table_fields - command_line.given:  # the installed version's own default applies
        if name in values and values[name] == TRAINER_FIELDS[name][1]:
            del values[name]
    for name in set(values) - known:
        if name in VERSION_DEPENDENT and name in command_line.given:
            raise UsageError(f"unrecognized arguments: --{name} (transformers {_version()} has no such field)")
        values.pop(name)
    with flags_given(command_line.given):
        return command_line.model, command_line.data, cls(**values)


def _version() -> str:
    import transformers

    return transformers.__version__


class CliArgumentParser(HfArgumentParser):
    """``HfArgumentParser`` raising :class:`hf_bert_tasks.cli.UsageError` (one ``error:`` line, exit 2) instead of
    ``SystemExit``; flags spelt in full (``allow_abbrev=False``: ``--learning_rat`` is an error).
    :class:`FinetuneTrainingArguments` stands for :func:`finetune_arguments_class` (the flags of modes registered
    since). For ``--help_all`` only: the recipes and ``compare``'s arms parse with ``command_line``."""

    def __init__(self, dataclass_types, **kwargs):  # not cli.ArgumentParser's: a run stays out of cli.py
        types_ = [finetune_arguments_class() if t is FinetuneTrainingArguments else t for t in dataclass_types]
        super().__init__(types_, allow_abbrev=False, **kwargs)

    def error(self, message):
        raise UsageError(message)


def parse_args(dataclass_types, argv: list[str] | None = None, prog: str | None = None):
    """Parse ``argv`` into ``dataclass_types``; ``--config file.yaml|json`` supplies values, the command line wins;
    ``--help_all`` prints every flag (``prog``: the usage line's command, default ``hf-bert-tasks``).

    Raises:
        ValueError: for a config file that is not a mapping, or with keys no dataclass knows (names them).
        hf_bert_tasks.cli.UsageError: (a ``ValueError``) for an unknown flag (with the closest known one) or a value
            argparse cannot convert."""
    argv = list(sys.argv[1:] if argv is None else argv)
    types_ = [finetune_arguments_class() if t is FinetuneTrainingArguments else t for t in dataclass_types]
    if any(a in ("-h", "--help", "--help_all") for a in argv):
        parser = CliArgumentParser(types_, prog=prog or "hf-bert-tasks")
        parser.add_argument(
            "--config", metavar="FILE", help="YAML or JSON file of argument values; flags on the command line win"
        )
        parser.add_argument("--help_all", action="help", help="show this message (every flag) and exit")
        parser.parse_args(["--help"])
    parser = build_parser([(cls.__name__, cls) for cls in types_], prog or "hf-bert-tasks", trainer_title=None)
    values, given = parse_flags(parser, argv)  # the one parse
    *light, training = types_
    with flags_given(given):  # built in order: a model/data check fails before the training arguments are made
        built = [cls(**{f.name: values.pop(f.name) for f in dataclasses.fields(cls) if f.init}) for cls in light]
        return (*built, training(**{f.name: values[f.name] for f in dataclasses.fields(training) if f.init}))


#: Attribute names holding secrets: transformers' rule (names ending in ``_token``) plus API keys and passwords.
SECRET_NAME = re.compile(r"(^|_)(token|api_key|apikey|secret|password)$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for an argument name that holds a secret (see :data:`SECRET_NAME`)."""
    return bool(SECRET_NAME.search(name))


def scrub_secrets(args) -> dict[str, str]:
    """Set every secret-named attribute of ``args`` that holds a string to ``None``; returns ``{name: value}`` of the
    removed secrets (``{}``: none; names: :data:`SECRET_NAME`). ``args``: a ``TrainingArguments`` (any object with a ``__dict__``), changed in
    place; every instance attribute is scanned (a pickle holds them all)."""
    removed = {
        name: value
        for name, value in vars(args).items()
        if isinstance(value, str) and value and SECRET_NAME.search(name)
    }
    for name in removed:
        setattr(args, name, None)
    return removed


def setup_process_logging(training_args: TrainingArguments) -> None:
    """Log levels per process, as transformers' examples: INFO on the main process (``should_log``), else
    ``get_process_log_level()`` (``--log_level_replica``), which transformers and datasets follow too."""
    import datasets
    import transformers

    level = training_args.get_process_log_level()
    main_level = logging.INFO if training_args.log_level == "passive" else level
    logging.getLogger().setLevel(main_level if training_args.should_log else level)
    transformers.utils.logging.set_verbosity(level)
    # with CI=true transformers also propagates to the root logger, which would print every message twice
    transformers.utils.logging.disable_propagation()
    datasets.utils.logging.set_verbosity(level)
