"""A recipe's command line, parsed once before transformers is imported: one ``argparse`` parser built from dataclass
fields (the package's light argument dataclasses and ``TrainingArguments``' fields as listed in
:data:`hf_bert_tasks.run.trainer_fields.TRAINER_FIELDS`), and the fine-tune recipe's own dataclasses it parses
(:class:`ModelArguments`, :class:`DataArguments`, :class:`FinetuneOptions`: the package's training flags and changed
``TrainingArguments`` defaults, which ``arguments.FinetuneTrainingArguments`` inherits) with
:func:`parse_finetune_argv`. Each field becomes a flag exactly as ``HfArgumentParser`` makes it (``--a_b`` and
``--a-b``, booleans taking an optional value, ``--no_<flag>`` for a boolean defaulting to true, ``choices`` from an
``Enum``/``Literal`` or the field's metadata, ``Optional[X]`` as ``X``, ``list[X]`` as ``nargs="+"``), so a usage
error is one line before the heavy imports; the CLI then checks the parsed paths (``cli.check_inputs``). One module
since issue 41 (``run/args_parser.py`` + ``run/args_finetune.py``; the old paths import with a FutureWarning). Why:
docs/design.md, "Command line (issue 13)"; defaults: 'Fine-tuning defaults'."""

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, Union

from ..modes import DEFAULT_TRAINING_MODE, TRAINING_MODES
from ..tasks import get_task, list_tasks
from . import moved_function

OFFLINE_CHECKPOINT_HINT = "runs/quickstart/pretrained-bert"  #: the quickstart's offline checkpoint (cli.check_model)


@dataclasses.dataclass
class CommandLine:
    """A recipe's command line parsed once: ``model`` and ``data`` (its light dataclasses, built), ``training``
    (every training flag's value by field name, for the ``TrainingArguments`` subclass built after transformers is
    imported), ``given`` (the flags the user set: command line and ``--config``, :func:`given_flags`), ``modes``
    (``finetune``: the registered modes' flags dataclasses it was parsed with) and ``table_fields`` (the flags
    whose default came from ``trainer_fields.TRAINER_FIELDS``: not given, the installed class's default applies)."""

    model: Any
    data: Any
    training: dict
    given: frozenset
    modes: tuple = ()
    table_fields: frozenset = frozenset()  #: training flags whose default is ``TRAINER_FIELDS``' (not a class's)


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
    :func:`hf_bert_tasks.run.config_file.config_argv`, the command line wins). ``UsageError`` for an unknown flag (with
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


@dataclass
class ModelArguments:
    """Which checkpoint to fine-tune."""

    model_name_or_path: str = field(
        default="bert-base-uncased",
        metadata={"help": "Hub id (bert-base-uncased, org/name of a pushed run) or local folder of a checkpoint."},
    )
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer id/folder if not the model's."})
    model_revision: str = field(default="main", metadata={"help": "Hub revision (branch, tag or commit)."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where Hub downloads are cached."})
    attn_implementation: str | None = field(
        default="sdpa",
        metadata={
            "help": "Attention: sdpa (torch scaled_dot_product_attention), eager, flash_attention_2, flex_attention.",
            "choices": ["sdpa", "eager", "flash_attention_2", "flex_attention"],
        },
    )
    reinit_pooler: bool = field(
        default=False,
        metadata={
            "help": "Re-initialise the pooler (trained for NSP) before fine-tuning (Zhang et al. 2021, 'Revisiting "
            "Few-sample BERT Fine-tuning', §5; --mode finetune only)."
        },
    )
    reinit_layers: int = field(
        default=0,
        metadata={
            "help": "Re-initialise the top N encoder layers (Zhang et al. 2021, §5; --mode finetune only); 0 keeps all."
        },
    )


@dataclass
class DataArguments:
    """Which task and data, and how to tokenize it."""

    task: str = field(
        default=None,
        metadata={
            "help": "Registered task name (required; `hf-bert-tasks tasks` lists them with their metrics).",
            "metavar": "{" + ",".join(list_tasks()) + "}",
        },
    )
    data_dir: str | None = field(
        default=None, metadata={"help": "Folder with the original task files (e.g. glue_data/MRPC); else the Hub."}
    )
    train_file: str | None = field(
        default=None,
        metadata={
            "help": "Your own training file (.csv, .tsv, .jsonl) with the task's columns (`hf-bert-tasks tasks`)."
        },
    )
    validation_file: str | None = field(default=None, metadata={"help": "Your own dev file (as --train_file)."})
    test_file: str | None = field(default=None, metadata={"help": "Your own test file (label column optional)."})
    text_column_names: str | None = field(
        default=None,
        metadata={
            "help": "Your files' text columns, comma-separated in the task's order (default: the task's names)."
        },
    )
    label_column_name: str | None = field(
        default=None, metadata={"help": "Your files' label column (default: the task's, e.g. label)."}
    )
    dataset_name: str | None = field(default=None, metadata={"help": "Hub dataset id overriding the task's."})
    dataset_config_name: str | None = field(
        default=None, metadata={"help": "Hub dataset config overriding the task's."}
    )
    dataset_revision: str | None = field(default=None, metadata={"help": "Hub dataset revision."})
    max_seq_length: int | None = field(
        default=None,
        metadata={"help": "Max WordPieces per sequence incl. [CLS]/[SEP] (default: the task's, 128 for GLUE)."},
    )
    pad_to_max_length: bool = field(
        default=False,
        metadata={"help": "Pad every batch to max_seq_length (run_glue.py's default) instead of dynamically."},
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Keep only the first N training examples."})
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "Keep only the first N examples per eval split."}
    )
    max_predict_samples: int | None = field(default=None, metadata={"help": "Keep only the first N test examples."})
    # Question answering (SQuAD; paper §4.2-4.3, google-research/bert run_squad.py flags)
    doc_stride: int = field(default=128, metadata={"help": "SQuAD: tokens between the starts of two context windows."})
    max_query_length: int = field(default=64, metadata={"help": "SQuAD: questions are cut to this many tokens."})
    n_best_size: int = field(default=20, metadata={"help": "SQuAD: start/end candidates kept per window (n-best)."})
    max_answer_length: int = field(default=30, metadata={"help": "SQuAD: longest answer span in tokens."})
    null_score_diff_threshold: float | None = field(
        default=None, metadata={"help": "SQuAD v2: predict no answer when null - best non-null score > this (tau)."}
    )
    # Token classification (CoNLL-2003 NER; paper §5.3)
    label_all_tokens: bool = field(
        default=False,
        metadata={"help": "NER: label every WordPiece (later pieces of B-X get I-X), not only the first."},
    )
    document_context: bool = field(
        default=False, metadata={"help": "NER: fill each window with neighbouring sentences of the same document."}
    )
    # Tokenized-features cache (hf_bert_tasks/run/tokenization.py)
    cache_tokenized: bool = field(
        default=True,
        metadata={
            "help": "Cache tokenized features on disk by fingerprint (data, tokenizer, max_seq_length, task options, "
            "preprocessing code): a second run skips tokenization. Opt out: --no_cache_tokenized."
        },
    )
    tokenized_cache_dir: str | None = field(
        default=None,
        metadata={"help": "Folder of the tokenized-features cache (default: <datasets cache>/hf_bert_tasks)."},
    )
    overwrite_cache: bool = field(default=False, metadata={"help": "Re-tokenize and replace cached features."})

    def __post_init__(self):
        if self.task is None:
            raise ValueError("--task is required (see `hf-bert-tasks tasks` for the list)")
        self._looked_up = (self.task, get_task(self.task))  # an unknown name fails here, suggesting close names

    def registered_task(self):
        """The registered :class:`~hf_bert_tasks.tasks.base.Task` :attr:`task` names (looked up again if it changed
        since the arguments were made: ``UnknownTaskError`` for an unknown name)."""
        name, task = self._looked_up
        return task if name == self.task else get_task(self.task)


@dataclass
class FinetuneOptions:
    """The fine-tune recipe's training flags and changed ``TrainingArguments`` defaults (each field's help):
    ``lr_grid`` x ``seeds`` (:mod:`hf_bert_tasks.run.lr_grid`), length-aware batches (:mod:`hf_bert_tasks.run.batching`)
    and ``mode`` (:mod:`hf_bert_tasks.modes`; a mode's own flags come from its registered arguments dataclass)."""

    output_dir: str | None = field(default=None, metadata={"help": "Where the model, metrics and predictions go."})
    learning_rate: float | None = field(default=None, metadata={"help": "Peak learning rate (default: the task's)."})
    per_device_train_batch_size: int | None = field(
        default=None, metadata={"help": "Batch size (default: the task's)."}
    )
    num_train_epochs: float | None = field(default=None, metadata={"help": "Epochs (default: the task's)."})
    per_device_eval_batch_size: int = field(default=64, metadata={"help": "Batch size for evaluation."})
    warmup_steps: float = field(default=0.1, metadata={"help": "Warmup: a float < 1 is a fraction of total steps."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay (the paper's 0.01)."})
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: no, steps, epoch."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to save checkpoints: no, steps, epoch."})
    save_total_limit: int | None = field(default=1, metadata={"help": "Checkpoints kept in output_dir."})
    logging_steps: float = field(default=50, metadata={"help": "Log every N steps."})
    lr_grid: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated learning rates, e.g. '5e-5,4e-5,3e-5,2e-5'; best on dev kept. A bare --lr_grid (or "
            "'paper') searches the task's paper grid (GLUE: 5e-5,4e-5,3e-5,2e-5, §4.1).",
            "nargs": "?",
            "const": "paper",
        },
    )
    seeds: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated seeds, e.g. '1,2,3': one run per seed (random restarts, paper §4.1); with "
            "--lr_grid the best lr is chosen by the mean dev metric over seeds."
        },
    )
    group_by_length: bool = field(
        default=True,
        metadata={
            "help": "Length-grouped training batches (less padding; the default, except random batches for regression, "
            "STS-B: docs/results.md, and SQuAD: docs/parity-squad.md). Opt out with --no_group_by_length or "
            "--train_sampling_strategy random."
        },
    )
    train_sampling_strategy: str | None = field(
        default=None,
        metadata={
            "help": "Training sampler: group_by_length, random, sequential, batch_rebalance (default: see "
            "--group_by_length). An explicit value wins over --group_by_length.",
            "choices": ["random", "sequential", "group_by_length", "batch_rebalance"],
        },
    )
    sort_eval_by_length: bool = field(
        default=True,
        metadata={
            "help": "Evaluate/predict longest-first (less padding); predictions are put back in the input order, so "
            "metrics and prediction files do not change. Opt out: --no_sort_eval_by_length."
        },
    )
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Write into an output_dir that already holds all_results.json."}
    )
    mode: str = field(
        default=DEFAULT_TRAINING_MODE,
        metadata={
            "help": "How the model is trained, one of the registered training modes (hf_bert_tasks.modes): all weights "
            "(paper §3.2), peft LoRA adapters, or a frozen encoder with a trained head (paper §5.3).",
            "choices": TRAINING_MODES.names(),
        },
    )


#: (title, class) of the recipe's own argument groups, in ``--help`` order; modes' flags follow (the registry's)
GROUPS = (
    ("model arguments", ModelArguments),
    ("data arguments", DataArguments),
    ("training arguments (the package's own and changed defaults)", FinetuneOptions),
)


#: a parsed ``finetune`` command line (:func:`parse_finetune_argv`)
FinetuneCommandLine = CommandLine


def mode_groups() -> list[tuple[str, type]]:
    """``(title, flags dataclass)`` of each registered mode with flags, checked against the recipe's own flags
    (:func:`hf_bert_tasks.modes.mode_groups`; ``ValueError`` for a clash, naming both owners)."""
    from ..modes import mode_groups

    return mode_groups({name for _, cls in GROUPS for name in cls.__dataclass_fields__})


def finetune_parser(prog: str = "hf-bert-tasks finetune", groups=None):
    """The ``finetune`` flags as one :class:`FlagParser` (no transformers import): the
    recipe's dataclasses, each registered mode's flags (``groups``: default :func:`mode_groups`), then
    ``TrainingArguments``' other fields (the static table :data:`hf_bert_tasks.run.trainer_fields.TRAINER_FIELDS`)."""
    return build_parser([*GROUPS, *(mode_groups() if groups is None else groups)], prog)


def parse_finetune_argv(argv: list[str], prog: str = "hf-bert-tasks finetune") -> FinetuneCommandLine:
    """Parse a ``finetune`` command line once (``--config FILE`` values below the flags), before transformers is
    imported; ``--task`` is looked up (``DataArguments``).

    Raises:
        UsageError: an unknown flag (with the closest known one) or a value argparse
            refuses (one line, as argparse words it).
        ValueError: ``--task`` missing or unknown, a bad ``--config`` file or key, a mode flag that clashes.
        FileNotFoundError: a missing ``--config`` file."""
    from .trainer_fields import TRAINER_FIELDS

    groups = [*GROUPS, *mode_groups()]  # the flags of the registered modes, checked for clashes
    values, given = parse_flags(build_parser(groups, prog), argv)
    classes = [cls for _, cls in groups]
    table = frozenset(TRAINER_FIELDS).difference(*[cls.__dataclass_fields__ for cls in classes])
    model = ModelArguments(**{k: values.pop(k) for k in ModelArguments.__dataclass_fields__})
    data = DataArguments(**{k: values.pop(k) for k in DataArguments.__dataclass_fields__})  # --task looked up: last
    return CommandLine(model, data, values, given, tuple(classes[len(GROUPS) :]), table)


#: the path checks before the heavy imports, in the CLI since issue 41 (``cli.check_inputs`` / ``cli.check_model``)
check_inputs = moved_function("hf_bert_tasks.run.args_parser", "check_inputs", "cli")
check_model = moved_function("hf_bert_tasks.run.args_parser", "check_model", "cli")
