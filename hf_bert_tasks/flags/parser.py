"""A recipe's command line, parsed once before transformers is imported: one ``argparse`` parser built from dataclass
fields (a recipe's light argument dataclasses, e.g. :mod:`hf_bert_tasks.finetune.args`' ``ModelArguments``,
``DataArguments`` and ``FinetuneOptions``, and ``TrainingArguments``' fields as listed in
:data:`hf_bert_tasks.flags.trainer_fields.TRAINER_FIELDS`). Each field becomes a flag exactly as ``HfArgumentParser``
makes it (``--a_b`` and ``--a-b``, booleans taking an optional value, ``--no_<flag>`` for a boolean defaulting to
true, ``choices`` from an ``Enum``/``Literal`` or the field's metadata, ``Optional[X]`` as ``X``, ``list[X]`` as
``nargs="+"``), so a usage error is one line before the heavy imports; the CLI then checks the parsed paths
(``cli.check_inputs``). Why: docs/design.md, "Command line"; defaults: 'Fine-tuning defaults'."""

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, Literal, Union

OFFLINE_CHECKPOINT_HINT = "runs/quickstart/pretrained-bert"  #: the quickstart's offline checkpoint (cli.check_model)


@dataclasses.dataclass
class CommandLine:
    """A recipe's command line parsed once: ``model`` and ``data`` (its light dataclasses, built), ``training``
    (every training flag's value by field name, for the ``TrainingArguments`` subclass built after transformers is
    imported), ``given`` (the flags the user set: command line and ``--config``, :func:`given_flags`), ``modes``
    (``finetune``: the selected mode's flags dataclass it was parsed with, if it has one) and ``table_fields`` (the flags
    whose default came from ``trainer_fields.TRAINER_FIELDS``: not given, the installed class's default applies)."""

    model: Any
    data: Any
    training: dict
    given: frozenset
    modes: tuple = ()
    table_fields: frozenset = frozenset()  #: training flags whose default is ``TRAINER_FIELDS``' (not a class's)
    task: Any = None  #: ``finetune``: the registered task ``--task`` names, looked up once by the parse


class UsageError(ValueError):
    """A command-line mistake (unknown or missing flag, bad value); printed as one ``error:`` line, exit status 2."""


class FlagParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` raising :class:`UsageError` instead of exiting; flags spelt in full."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError(message)


def string_to_bool(value):
    """transformers' ``string_to_bool``: yes/no, true/false, t/f, y/n, 1/0 (any case) -> ``bool``."""
    if isinstance(value, bool):
        return value
    if value.lower() in ("yes", "true", "t", "y", "1"):
        return True
    if value.lower() in ("no", "false", "f", "n", "0"):
        return False
    raise argparse.ArgumentTypeError(
        f"Truthy value expected: got {value} but expected one of yes/no, true/false, t/f, y/n, 1/0 (case insensitive)."
    )


def _choice_type(choices) -> Callable[[str], Any]:
    by_text = {str(c): c for c in choices}
    return lambda arg: by_text.get(arg, arg)


def _reduce_type(name: str, tp):
    """``HfArgumentParser``'s narrowing of a union: ``Optional[X]`` -> ``X`` (``Optional[bool]`` stays), a union
    with ``str`` -> its other member. ``ValueError`` for another union."""
    origin = getattr(tp, "__origin__", tp)
    if origin is Union or isinstance(tp, types.UnionType):
        args = tp.__args__
        if str not in args and (len(args) != 2 or type(None) not in args):
            raise ValueError(f"field {name!r}: only Optional[X] or a union with str can be a flag, got {tp}")
        if type(None) not in args:
            tp = args[0] if args[1] is str else args[1]
        elif bool not in args:
            tp = args[0] if isinstance(None, args[1]) else args[1]
    return tp


def field_kwargs(name: str, tp, default, default_factory, metadata) -> tuple[dict, dict | None]:
    """``(add_argument kwargs, kwargs of the --no_<name> flag or None)`` for a field, as ``HfArgumentParser``."""
    kwargs = {k: v for k, v in metadata.items() if k != "aliases"}
    tp = _reduce_type(name, tp)
    origin = getattr(tp, "__origin__", tp)
    missing = dataclasses.MISSING
    negation = None
    if origin is Literal or (isinstance(tp, type) and issubclass(tp, enum.Enum)):
        kwargs["choices"] = list(tp.__args__) if origin is Literal else [x.value for x in tp]
        kwargs["type"] = _choice_type(kwargs["choices"])
        kwargs.update({"default": default} if default is not missing else {"required": True})
    elif tp is bool or tp == bool | None:
        negation = dict(kwargs) if default is True else None
        kwargs["type"] = string_to_bool
        if tp is bool or (default is not None and default is not missing):
            kwargs.update(default=False if default is missing else default, nargs="?", const=True)
    elif isinstance(origin, type) and issubclass(origin, list):
        kwargs.update(type=tp.__args__[0], nargs="+")
        if default_factory is not missing:
            kwargs["default"] = default_factory()
        elif default is missing:
            kwargs["required"] = True
    else:
        kwargs["type"] = tp
        if default is not missing:
            kwargs["default"] = default
        elif default_factory is not missing:
            kwargs["default"] = default_factory()
        else:
            kwargs["required"] = True
    if negation is not None:
        negation["default"] = False
    return kwargs, negation


def add_field(group, name: str, kwargs: dict, negation: dict | None) -> None:
    """Add ``--name`` (and ``--name-with-dashes``; ``--no_name`` when ``negation``) to ``group``."""
    strings = [f"--{name}"] + ([f"--{name.replace('_', '-')}"] if "_" in name else [])
    group.add_argument(*strings, **kwargs)
    if negation is not None:
        group.add_argument(
            f"--no_{name}", f"--no-{name.replace('_', '-')}", action="store_false", dest=name, **negation
        )


@functools.cache
def _hints(cls) -> dict:
    return typing.get_type_hints(cls)


def dataclass_flags(cls, skip: Iterable[str] = ()) -> list[tuple[str, dict, dict | None]]:
    """``(name, kwargs, negation)`` of each init field of the dataclass ``cls`` not in ``skip``."""
    hints = _hints(cls)
    return [
        (f.name, *field_kwargs(f.name, hints[f.name], f.default, f.default_factory, f.metadata))
        for f in dataclasses.fields(cls)
        if f.init and f.name not in skip
    ]


def trainer_flags(skip: Iterable[str] = ()) -> list[tuple[str, dict, dict | None]]:
    """``(name, kwargs, negation)`` of each ``TrainingArguments`` field (:data:`trainer_fields.TRAINER_FIELDS`)."""
    from .trainer_fields import FIELD_TYPES, TRAINER_FIELDS

    skip = set(skip)
    rows = []
    for name, (kind, default, metadata) in TRAINER_FIELDS.items():
        if name not in skip:
            factory = (lambda d=default: list(d)) if isinstance(default, list) else dataclasses.MISSING
            value = dataclasses.MISSING if factory is not dataclasses.MISSING else default
            rows.append((name, *field_kwargs(name, FIELD_TYPES[kind], value, factory, metadata)))
    return rows


def build_parser(groups: list[tuple[str, type]], prog: str, trainer_title: str | None = "TrainingArguments"):
    """One :class:`FlagParser`: an argument group per ``(title, dataclass)`` (:func:`dataclass_flags`), then, unless
    ``trainer_title`` is ``None``, ``TrainingArguments``' fields the classes do not declare (:func:`trainer_flags`)."""
    parser = FlagParser(prog=prog)
    rows = [(title, dataclass_flags(cls)) for title, cls in groups]
    if trainer_title is not None:
        rows.append((trainer_title, trainer_flags(skip={n for _, cls in groups for n in cls.__dataclass_fields__})))
    for title, flags in rows:
        group = parser.add_argument_group(title)
        for name, field_args, negation in flags:
            add_field(group, name, field_args, negation)
    return parser


def parse_flags(parser: argparse.ArgumentParser, argv: list[str]) -> tuple[dict, frozenset[str]]:
    """``(values by field name, flags given)`` of ``argv`` parsed once by ``parser`` (``--config FILE`` values first:
    :func:`hf_bert_tasks.flags.config_file.config_argv`, the command line wins). ``UsageError`` for an unknown flag (with
    the closest known one) or a value the parser refuses; ``ValueError`` / ``FileNotFoundError`` for ``--config``."""
    if any(a.split("=", 1)[0] == "--config" for a in argv):
        from .config_file import config_argv

        argv = config_argv(argv, parser)
    namespace, remaining = parser.parse_known_args(argv)
    if remaining:
        from .config_file import unrecognized

        raise UsageError(unrecognized([s for a in parser._actions for s in a.option_strings], remaining))
    return vars(namespace), given_flags(argv)


def given_flags(argv: list[str]) -> frozenset[str]:
    """The flag names in ``argv`` (``--a-b=1`` gives ``a_b``; ``--no_x`` gives ``no_x`` and ``x``): what the user
    set, as opposed to a default (``--config`` values are in ``argv`` once :func:`config_file.config_argv` ran)."""
    names = {t[2:].split("=", 1)[0].replace("-", "_") for t in argv if t.startswith("--") and len(t) > 2}
    return frozenset(names | {n[3:] for n in names if n.startswith("no_")})
