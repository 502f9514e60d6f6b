"""``hf-bert-tasks`` command line: ``tasks``, ``finetune``, ``pretrain``, ``quickstart``, ``compare``, ``suite``, ``push``.

    hf-bert-tasks --version
    hf-bert-tasks finetune --help            # the package's own flags, without importing transformers (< 2 s)
    hf-bert-tasks finetune --help_all        # every flag, transformers' TrainingArguments included (imports it)
    hf-bert-tasks finetune --task mrpc --output_dir runs/mrpc --config recipes/configs/mrpc.yaml
    hf-bert-tasks --debug finetune ...       # show the traceback of an error

Each subcommand's ``main(argv)`` in :mod:`hf_bert_tasks.scripts` parses its arguments; a ``ValueError`` or ``OSError``
prints one line ``hf-bert-tasks: error: <message>``, exit status 2 (``--debug`` re-raises it). Why: docs/design.md,
"cli: one error boundary".

The console every subcommand runs in (last section): progress bars only on a terminal (:func:`quiet_console`, which
also ignores peft's use of the deprecated ``is_gradient_checkpointing`` and shows a repeated warning once:
:class:`RepeatFilter`) and, through :func:`log_filters`' :class:`LibraryNoiseFilter`, none of the library messages
our own load paths trigger but the user cannot act on:

- ``transformers.modeling_utils``: a LOAD REPORT that is an expected head swap (UNEXPECTED checkpoint heads, MISSING
  task-head weights) becomes one line (:func:`head_swap_text`); other statuses, a MISSING ``embeddings``/``encoder``/
  ``pooler`` or an UNEXPECTED ``embeddings``/``encoder`` weight stay as transformers prints them.
- ``transformers.distributed.tensor_parallel``: ``verify_tp_plan``'s "not sharded" / "TP rules" lines (the package
  passes no tensor-parallel plan).
- ``transformers.trainer_utils``: "The tokenizer has new PAD/BOS/EOS tokens ..." when only ``pad_token_id`` changed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import logging
import os
import re
import sys
import traceback
import warnings

from .flags import help as flags
from .flags import parser as command_line

PROG = "hf-bert-tasks"
#: subcommands that train: run inside :func:`quiet_console`
HEAVY = ("finetune", "pretrain", "compare", "quickstart", "suite")


@dataclasses.dataclass(frozen=True)
class Subcommand:
    """One subcommand: one line of ``help``, the ``module`` whose ``main(argv)`` runs it (a recipe room's ``recipe``
    or ``hf_bert_tasks.scripts.<name>``; imported once the command line is parsed), ``(module, class name, group
    title)`` of each argument dataclass of an ``HfArgumentParser`` subcommand (read for the fast ``--help``; none for
    plain argparse) and the ``required`` flags (for the usage line)."""

    help: str
    module: str
    dataclasses: tuple[tuple[str, str, str], ...] = ()
    required: str = ""


_OWN = "training arguments (the package's own and changed defaults)"
SUBCOMMANDS: dict[str, Subcommand] = {
    "tasks": Subcommand("list registered tasks with metrics and data sources", "hf_bert_tasks.scripts.tasks"),
    "finetune": Subcommand(
        "fine-tune a checkpoint on a registered task (Trainer, paper defaults)",
        "hf_bert_tasks.finetune.recipe",
        (
            ("hf_bert_tasks.finetune.args", "ModelArguments", "model arguments"),
            ("hf_bert_tasks.finetune.args", "DataArguments", "data arguments"),
            ("hf_bert_tasks.finetune.args", "FinetuneOptions", _OWN),
        ),  # then each registered mode's flags (hf_bert_tasks.modes.mode_arguments_classes)
        "--task TASK --output_dir DIR",
    ),
    "pretrain": Subcommand(
        "pretrain BERT with MLM + NSP on a text corpus (WordPiece, presets, two phases)",
        "hf_bert_tasks.pretraining.recipe",
        (
            ("hf_bert_tasks.pretraining.args", "PretrainModelArguments", "model arguments"),
            ("hf_bert_tasks.pretraining.args", "PretrainDataArguments", "data arguments"),
            ("hf_bert_tasks.pretraining.args", "PretrainOptions", _OWN),
        ),
        "(--train_files FILE [FILE ...] | --dataset_name NAME) --output_dir DIR",
    ),
    "quickstart": Subcommand(
        "offline demo on the built-in samples (tiny BERT, a few minutes on CPU)", "hf_bert_tasks.scripts.quickstart"
    ),
    "compare": Subcommand(
        "fine-tuning vs LoRA vs frozen-feature strategies on one task and seeds (Table 7)",
        "hf_bert_tasks.scripts.compare",
    ),
    "suite": Subcommand(
        "the paper's tasks for one encoder, resumable, beside BERT-base and BERT-large (Tables 1-4, 7)",
        "hf_bert_tasks.scripts.suite",
    ),
    "push": Subcommand(
        "push a finished run to the Hub with a full model card (every metric in model-index)",
        "hf_bert_tasks.scripts.push",
    ),
}


UsageError = command_line.UsageError  # a public name of cli
#: raises :class:`UsageError` instead of exiting; flags spelt in full (``compare --mode`` is not ``--modes``)
ArgumentParser = command_line.FlagParser


def warn_deprecated_flag(old: str, new: str) -> None:
    """Print the deprecation note for a flag spelling (one line on stderr)."""
    print(
        f"{PROG}: warning: {old} is deprecated, use {new} (the old spelling will be removed in a future release)",
        file=sys.stderr,
    )


class DeprecatedAlias(argparse.Action):
    """``store``/``store_true`` action that prints a deprecation note for a dashed spelling (``--repo-id``): the
    package's flags use underscores, as ``TrainingArguments``."""

    def __call__(self, parser, namespace, values, option_string=None):
        canonical = self.option_strings[0]  # add_flag puts the underscore spelling first
        if option_string and option_string != canonical:
            warn_deprecated_flag(option_string, canonical)
        setattr(namespace, self.dest, self.const if self.nargs == 0 else values)


def add_flag(parser: argparse.ArgumentParser, name: str, *, flag: bool = False, **kwargs) -> argparse.Action:
    """Add ``--name`` (underscores) with its dashed spelling as a deprecated alias when the two differ."""
    strings = list(dict.fromkeys([f"--{name}", f"--{name.replace('_', '-')}"]))
    if flag:
        kwargs = {"default": False, **kwargs, "nargs": 0, "const": True}
    return parser.add_argument(*strings, action=DeprecatedAlias, **kwargs)


def fast_help(command: str) -> str:
    """``hf-bert-tasks <command> --help`` for an ``HfArgumentParser`` subcommand, built without importing it."""
    return flags.fast_help(PROG, command, SUBCOMMANDS[command])


# --------------------------------------------------------------------------------------------- early checks
OFFLINE_CHECKPOINT_HINT = command_line.OFFLINE_CHECKPOINT_HINT  # runs/quickstart/pretrained-bert


def check_model(name: str | None, *, given: bool = True, cache_dir: str | None = None) -> None:
    """Fail at once on a ``--model_name_or_path`` that cannot load: a path (``./x``, ``/x``, ``a/b/c``) that is not
    a folder, or, offline (``HF_HUB_OFFLINE=1``), a Hub id with no cached snapshot holding a ``config.json`` (read
    from the cache layout; why: docs/design.md, "flags: offline model check"). Online, a Hub id is left to the recipe.

    Raises:
        FileNotFoundError: naming the flag, the value (``(the default)`` when not ``given``) and a local folder
            that works offline (:data:`OFFLINE_CHECKPOINT_HINT`).
    """
    if not name or os.path.isdir(name):
        return
    flag = f"--model_name_or_path {name}" + ("" if given else " (the default)")
    if name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise FileNotFoundError(f"{flag}: no such folder")
    import glob

    from huggingface_hub import constants  # light: the Hub settings only

    folder = os.path.join(cache_dir or constants.HF_HUB_CACHE, "models--" + name.replace("/", "--"))
    if constants.is_offline_mode() and not glob.glob(
        os.path.join(glob.escape(folder), "snapshots", "*", "config.json")
    ):
        raise FileNotFoundError(
            f"{flag}: not a local folder and not in the Hub cache, and the Hub is off (HF_HUB_OFFLINE=1); give a "
            f"local checkpoint folder, e.g. --model_name_or_path {OFFLINE_CHECKPOINT_HINT} (written by "
            "`hf-bert-tasks quickstart`)"
        )


def check_inputs(parsed) -> None:
    """The checks of a parsed command line's paths that need no model, before transformers is imported:
    ``--data_dir``, ``--train_file`` ... ``--test_file``, ``--train_files`` / ``--validation_files``
    (pretraining_data's ``resolve_corpus_files``) and ``--model_name_or_path`` (:func:`check_model`); the recipe's own
    checks have the same messages. ``command_line``: a :class:`hf_bert_tasks.flags.parser.CommandLine`. ``FileNotFoundError`` naming the flag and the path."""
    model, data = parsed.model, parsed.data
    if getattr(data, "data_dir", None) is not None and not os.path.isdir(data.data_dir):
        raise FileNotFoundError(f"--data_dir {data.data_dir}: no such folder")
    for flag in ("train_file", "validation_file", "test_file"):
        if getattr(data, flag, None) is not None and not os.path.isfile(getattr(data, flag)):
            raise FileNotFoundError(f"--{flag} {getattr(data, flag)}: no such file")
    for flag in ("train_files", "validation_files"):
        if getattr(data, flag, None):
            from .pretraining.data import resolve_corpus_files

            resolve_corpus_files([str(v) for v in getattr(data, flag)], flag=f"--{flag}")
    given = "model_name_or_path" in parsed.given
    check_model(model.model_name_or_path, given=given, cache_dir=getattr(model, "cache_dir", None))


def build_parser() -> ArgumentParser:
    """The top-level parser: ``--version``, ``--debug`` and one sub-parser per subcommand (without arguments: the
    rest of the command line goes to the subcommand's ``main(argv)``)."""
    from . import __version__

    parser = ArgumentParser(
        prog=PROG,
        epilog=f"`{PROG} COMMAND --help` shows a command's flags.",
        description="The BERT paper (pretraining, fine-tuning recipes, feature-based mode) on "
        "today's Hugging Face stack.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    parser.add_argument("--debug", action="store_true", help="show the full traceback of an error")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands", parser_class=ArgumentParser)
    for name, spec in SUBCOMMANDS.items():
        sub.add_parser(name, help=spec.help, add_help=False)
    return parser


def _pop_debug(argv: list[str]) -> bool:
    """Remove our ``--debug`` from ``argv``: any before the subcommand, and a bare one after it (no value follows);
    TrainingArguments' own ``--debug VALUE`` (``underflow_overflow``) stays for the recipe."""
    command_at = next((i for i, a in enumerate(argv) if not a.startswith("-")), len(argv))
    count = len(argv)
    argv[:] = [
        a
        for i, a in enumerate(argv)
        if not (a == "--debug" and (i < command_at or i + 1 == count or argv[i + 1].startswith("-")))
    ]
    return len(argv) < count


def check_early(command: str, rest: list[str], module) -> list[str]:
    """``compare``'s command line checked before it imports transformers (``module``: its script): its own flags
    (``module.build_parser``) and every fine-tune flag (the one fine-tune parser's), ``--config`` keys, ``--task``,
    ``--data_dir`` and the model (:func:`hf_bert_tasks.flags.help.check_command_line`); returns ``rest``."""

    from .finetune.args import finetune_parser

    parsers = (module.build_parser(), finetune_parser())
    extra = [s[2:] for p in parsers for a in p._actions for s in a.option_strings if s.startswith("--")]
    flags.check_command_line(rest, SUBCOMMANDS["finetune"].dataclasses, extra, check_model)
    return rest


def parse_command_line(command: str, argv: list[str]):
    """``finetune``'s or ``pretrain``'s command line parsed once (``finetune.args.parse_finetune_argv``,
    ``pretraining.args.parse_pretrain_argv``: light) and its paths checked (:func:`check_inputs`);
    off a terminal ``--disable_tqdm true`` unless set (one line per logging step)."""
    if command == "finetune":
        from .finetune.args import parse_finetune_argv as parse
    else:
        from .pretraining.args import parse_pretrain_argv as parse
    parsed = parse(argv, f"{PROG} {command}")
    check_inputs(parsed)  # data folder/files, corpus, the model offline: one line before heavy imports
    if not interactive() and "disable_tqdm" not in parsed.given:
        parsed.training["disable_tqdm"] = True
    return parsed


def _dispatch(command: str, rest: list[str]) -> int:
    helping = any(a in ("-h", "--help", "--help_all") for a in rest)
    if SUBCOMMANDS[command].dataclasses and helping and "--help_all" not in rest:
        print(fast_help(command))
        return 0
    if command in ("finetune", "pretrain") and not helping:  # the one parse, before the recipe's imports
        rest = parse_command_line(command, rest)
    module = importlib.import_module(SUBCOMMANDS[command].module)
    if command == "compare" and not helping:
        rest = check_early(command, rest, module)
    with quiet_console() if command in HEAVY and not helping else contextlib.nullcontext():
        result = module.main(rest)
    return result if isinstance(result, int) else 0


def report_error(err: BaseException) -> int:
    """Print ``hf-bert-tasks: error: <message>`` (one line; a hint to ``--debug`` when the error was raised inside a
    library, not by this package) and return exit status 2."""
    message = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
    if isinstance(err, OSError) and not isinstance(err, FileNotFoundError) and err.filename and err.strerror:
        message = f"{err.filename}: {err.strerror}"
    message = " ".join(str(message).split()) or type(err).__name__
    print(f"{PROG}: error: {message}", file=sys.stderr)
    frames = traceback.extract_tb(err.__traceback__)
    here = os.path.dirname(os.path.abspath(__file__))
    if frames and not os.path.abspath(frames[-1].filename).startswith(here) and not isinstance(err, UsageError):
        print(
            f"{PROG}: ({type(err).__name__} raised by a library; `{PROG} --debug ...` shows the traceback)",
            file=sys.stderr,
        )
    return 2


#: What the boundary reports as one line: bad values, missing/unreadable files, usage errors. Anything else is a bug.
USER_ERRORS = (ValueError, OSError)


def run_subcommand(command: str, argv: list[str] | None = None) -> int:
    """Run ``command`` with ``argv`` inside the error boundary; the entry point of ``recipes/<command>.py``."""
    return main([command, *(sys.argv[1:] if argv is None else argv)])


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the subcommand, return the exit status (0 ok, 2 error)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = _pop_debug(argv)
    try:
        parser = build_parser()
        if not argv:
            parser.print_help()
            return 0
        # Top-level options come before the subcommand; everything after it belongs to the subcommand.
        split = next((i for i, a in enumerate(argv) if not a.startswith("-")), len(argv))
        args = parser.parse_args(argv[: split + 1])  # UsageError "unrecognized arguments: ..."
        if args.command is None:
            raise UsageError(f"a command is required: one of {', '.join(SUBCOMMANDS)}")
        with log_filters():
            return _dispatch(args.command, argv[split + 1 :])
    except BrokenPipeError:  # `hf-bert-tasks ... --help | head`: the reader left; nothing to report
        sys.stderr.close()
        return 0
    except USER_ERRORS as err:
        if debug:
            raise
        return report_error(err)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130


# --------------------------------------------------------------------------------------------- console
#: loggers whose records :class:`LibraryNoiseFilter` rewrites or drops
NOISY_LOGGERS = (
    "transformers.modeling_utils",
    "transformers.distributed.tensor_parallel",
    "transformers.trainer_utils",
)
#: a key under one of these is a real problem, never an expected head swap: MISSING (random encoder weights) or
#: UNEXPECTED (checkpoint weights the model drops); a MISSING pooler is one too, an UNEXPECTED one is not (token heads)
ENCODER_KEY = re.compile(r"(^|\.)(embeddings|encoder)\.")
_MISSING_ENCODER_KEY = re.compile(r"(^|\.)(embeddings|encoder|pooler)\.")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def interactive() -> bool:
    """True when stderr (where tqdm draws) is a terminal."""
    return sys.stderr.isatty()


def head_swap_text(unexpected, missing) -> str:
    """``head swap (expected): 7 checkpoint tensors dropped (cls.predictions.*, cls.seq_relationship.*), 2 new head
    tensors initialised (classifier.*)``: the key names grouped by their first two parts."""

    def heads(keys):
        return ", ".join(sorted({".".join(k.split(".")[:2]) + ".*" if k.count(".") > 1 else k for k in keys}))

    parts = [
        f"{len(unexpected)} checkpoint tensors dropped ({heads(unexpected)})" if unexpected else "",
        f"{len(missing)} new head tensors initialised ({heads(missing)})" if missing else "",
    ]
    return "head swap (expected): " + ", ".join(p for p in parts if p)


class RepeatFilter(logging.Filter):
    """Drops a WARNING (or worse) record whose logger and text were already shown (a warning raised once per batch,
    per worker or per phase is shown once)."""

    def __init__(self):
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


class LibraryNoiseFilter(logging.Filter):
    """The ``logging.Filter`` described in the module docstring (a filter may rewrite the record it passes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name.endswith("tensor_parallel"):
            return not message.startswith(("The following layers were not sharded", "The following TP rules"))
        if record.name.endswith("trainer_utils"):
            return not re.search(r"new PAD/BOS/EOS tokens.*Updated tokens: \{'pad_token_id': [^,}]*\}", message)
        if "LOAD REPORT" not in message:
            return True
        keys: dict[str, list[str]] = {}  # {status: [key, ...]} from the report's ``key | STATUS | details`` rows
        for line in _ANSI.sub("", message).splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) >= 2 and cells[1].isupper() and cells[1] != "STATUS":
                keys.setdefault(cells[1], []).append(cells[0])
        unexpected, missing = keys.get("UNEXPECTED", []), keys.get("MISSING", [])
        if (
            keys
            and set(keys) <= {"UNEXPECTED", "MISSING"}
            and not any(ENCODER_KEY.search(k) for k in unexpected)
            and not any(_MISSING_ENCODER_KEY.search(k) for k in missing)
        ):
            source = _ANSI.sub("", message.splitlines()[0]).replace(" LOAD REPORT from:", " from").strip()
            record.msg = f"{source}: {head_swap_text(unexpected, missing)}"
            record.args = ()
        return True


@contextlib.contextmanager
def log_filters():
    """Attach a :class:`LibraryNoiseFilter` to each of :data:`NOISY_LOGGERS` that has none, for the duration of the
    block. Imports nothing (transformers' loggers are plain ``logging.getLogger`` objects)."""
    with contextlib.ExitStack() as added:
        for logger in map(logging.getLogger, NOISY_LOGGERS):
            if not any(isinstance(f, LibraryNoiseFilter) for f in logger.filters):
                logger.addFilter(noise_filter := LibraryNoiseFilter())
                added.callback(logger.removeFilter, noise_filter)
        yield


@contextlib.contextmanager
def quiet_console(progress_bars: bool | None = None):
    """Run a recipe with the console described in the module docstring, restoring the progress-bar settings after.
    ``progress_bars``: keep the bars (default: :func:`interactive`). Imports datasets and transformers."""
    import datasets
    import huggingface_hub.utils as hub
    import transformers

    bars = interactive() if progress_bars is None else progress_bars
    tf = transformers.utils.logging
    switches = [
        (
            datasets.enable_progress_bars,
            datasets.disable_progress_bars,
            not datasets.utils.are_progress_bars_disabled(),
        ),
        (tf.enable_progress_bar, tf.disable_progress_bar, tf.is_progress_bar_enabled()),
        (hub.enable_progress_bars, hub.disable_progress_bars, not hub.are_progress_bars_disabled()),
    ]
    with log_filters(), warnings.catch_warnings(), contextlib.ExitStack() as restore:
        warnings.simplefilter("once")  # a repeated warning (same text and category) is shown once
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        tf.get_verbosity()  # sets up transformers' handler now, if it has none yet
        # the same for logged warnings, on the handlers there are (transformers' own included): one filter per
        # handler, since a record passes every handler's filters in turn (a shared one would let only the first show it)
        for handler in {h for name in ("", "transformers", "datasets") for h in logging.getLogger(name).handlers}:
            handler.addFilter(once := RepeatFilter())
            restore.callback(handler.removeFilter, once)
        for enable, disable, was_on in [] if bars else switches:
            disable()
            restore.callback(enable if was_on else disable)  # each back as it was
        yield


if __name__ == "__main__":
    sys.exit(main())
