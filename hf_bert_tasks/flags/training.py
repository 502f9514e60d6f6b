"""``TrainingArguments`` for both recipes, built from a parsed command line (:func:`training_arguments`), the
``--help_all`` parser (:func:`parse_args`), the machine defaults (:func:`accelerator_defaults`: ``use_cpu`` under a
CPU launcher, the GPU fast path), secrets scrubbed from the arguments (:func:`scrub_secrets`) and per-process logging
(:func:`setup_process_logging`). Why: docs/design.md, "Flags"."""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import re
import sys
from contextvars import ContextVar

from transformers import HfArgumentParser, TrainingArguments

from .parser import CommandLine, UsageError, build_parser, parse_flags
from .trainer_fields import TRAINER_FIELDS
from .trainer_flags import VERSION_DEPENDENT
from .values import check_values

logger = logging.getLogger(__name__)

#: flags that ask for checkpoints: given, a run's ``checkpoint-*`` folders stay after it (both recipes; else the saved
#: model is the run's one copy: ``finetune.recipe.remove_checkpoints``)
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


#: The flags the user gave while the recipe's dataclasses are built (:func:`flags_given`); ``None`` otherwise.
_GIVEN_FLAGS: ContextVar[frozenset[str] | None] = ContextVar("hf_bert_tasks_given_flags", default=None)


def accelerator_defaults(args: TrainingArguments, compile_by_default: bool = False) -> None:
    """Both recipes' machine settings, before ``TrainingArguments.__post_init__``: :func:`use_cpu_under_launcher`,
    the values this machine cannot run refused (:func:`hf_bert_tasks.flags.values.check_values`; ``ValueError``, one
    line; ``--bf16`` on a CPU with native bf16: ``use_cpu`` set, one warning), then :func:`gpu_fast_path`
    (``compile_by_default``: the pretrain recipe's, see there)."""
    use_cpu_under_launcher(args)
    for note in check_values(args):  # every value the machine cannot run refused; --bf16 on a CPU: a note
        logger.warning(note)
    gpu_fast_path(args, compile_by_default=compile_by_default)


def keeps_checkpoints() -> bool:
    """Whether a run's ``checkpoint-*`` folders stay after it: a :data:`CHECKPOINT_FLAGS` flag given, or arguments
    built outside a command line (a script's own: nothing is removed behind its back)."""
    given = current_given_flags()
    return given is None or bool(set(given) & CHECKPOINT_FLAGS)


def current_given_flags() -> frozenset[str] | None:
    """The flags the user gave (names without ``--``) inside :func:`flags_given`; ``None`` outside it (arguments built
    by a script, not from a command line)."""
    return _GIVEN_FLAGS.get()


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
    ``SystemExit``; flags spelt in full (``allow_abbrev=False``: ``--learning_rat`` is an error). For ``--help_all``
    only: the recipes and ``compare``'s arms parse with :mod:`hf_bert_tasks.flags.parser`."""

    def __init__(self, dataclass_types, **kwargs):  # not cli.ArgumentParser's: a run stays out of cli.py
        super().__init__(dataclass_types, allow_abbrev=False, **kwargs)

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
    types_ = list(dataclass_types)
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
