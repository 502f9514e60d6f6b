"""``hf-bert-tasks`` command line: ``tasks``, ``finetune``, ``pretrain``, ``compare``, ``push``, ``quickstart``.

    hf-bert-tasks --version
    hf-bert-tasks finetune --help            # the package's own flags, without importing transformers (< 2 s)
    hf-bert-tasks finetune --help_all        # every flag, transformers' TrainingArguments included (imports it)
    hf-bert-tasks finetune --task mrpc --output_dir runs/mrpc --config recipes/configs/mrpc.yaml
    hf-bert-tasks --debug finetune ...       # show the traceback of an error

Each subcommand's ``main(argv)`` in :mod:`hf_bert_tasks.scripts` parses its arguments; a ``ValueError`` or ``OSError``
prints one line ``hf-bert-tasks: error: <message>``, exit status 2 (``--debug`` re-raises it). Why: docs/design.md,
"cli: one error boundary".
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import json
import os
import sys
import textwrap
import traceback

from .run import args_parser, flags
from .run.console import interactive, log_filters, quiet_console

PROG = "hf-bert-tasks"
#: subcommands that train: run inside :func:`hf_bert_tasks.run.console.quiet_console`
HEAVY = ("finetune", "pretrain", "compare", "quickstart")


@dataclasses.dataclass(frozen=True)
class Subcommand:
    """One subcommand (``hf_bert_tasks.scripts.<its name>.main(argv)`` runs it): one line of ``help``, ``(module,
    class name, group title)`` of each argument dataclass of an ``HfArgumentParser`` subcommand (read for the fast
    ``--help``; none for plain argparse) and the ``required`` flags (for the usage line)."""

    help: str
    dataclasses: tuple[tuple[str, str, str], ...] = ()
    required: str = ""


_OWN = "training arguments (the package's own and changed defaults)"
SUBCOMMANDS: dict[str, Subcommand] = {
    "finetune": Subcommand(
        "fine-tune a checkpoint on a registered task (Trainer, paper defaults)",
        (
            ("hf_bert_tasks.run.args_finetune", "ModelArguments", "model arguments"),
            ("hf_bert_tasks.run.args_finetune", "DataArguments", "data arguments"),
            ("hf_bert_tasks.run.args_finetune", "FinetuneOptions", _OWN),
        ),  # then each registered mode's flags (hf_bert_tasks.modes.mode_arguments_classes)
        "--task TASK --output_dir DIR",
    ),
    "pretrain": Subcommand(
        "pretrain BERT with MLM + NSP on a text corpus (WordPiece, presets, two phases)",
        (
            ("hf_bert_tasks.pretraining.args", "PretrainModelArguments", "model arguments"),
            ("hf_bert_tasks.pretraining.args", "PretrainDataArguments", "data arguments"),
            ("hf_bert_tasks.pretraining.args", "PretrainOptions", _OWN),
        ),
        "(--train_files FILE [FILE ...] | --dataset_name NAME) --output_dir DIR",
    ),
    "quickstart": Subcommand("offline demo on the built-in samples (tiny BERT, a few minutes on CPU)"),
    "compare": Subcommand("fine-tuning vs LoRA vs frozen-feature strategies on one task and seeds (Table 7)"),
    "push": Subcommand("push a finished run to the Hub with a full model card (every metric in model-index)"),
}


UsageError = args_parser.UsageError  # a public name of cli


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` that raises :class:`UsageError` instead of exiting, and takes no abbreviated flags
    (``compare --mode`` is not ``--modes``)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        raise UsageError(message)


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


# --------------------------------------------------------------------------------------------- commands
def list_tasks_command(argv: list[str]) -> int:
    """Print the registered tasks with metrics and data sources (``--json`` for machine-readable output)."""
    from . import get_task, list_tasks

    parser = ArgumentParser(prog=f"{PROG} tasks", description="List the registered tasks.")
    parser.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    args = parser.parse_args(argv)
    rows = [get_task(name).describe() for name in list_tasks()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    widths = (10, 27, 21, 20, 18)  # 96 characters + 4 spaces: a 100-column terminal; longer cells wrap
    table = [("task", "problem type", "metrics (primary first)", "Hub dataset", "local files")]
    for r in rows:
        hub = r["hub_dataset"] + (f" ({r['hub_config']})" if r["hub_config"] else "")
        files = sorted({f for names in r["local_files"].values() for f in names})
        table.append((r["name"], r["problem_type"], ", ".join(r["metrics"]), hub, ", ".join(files)))
    for n, cells in enumerate(table):
        wrapped = [textwrap.wrap(c, w) or [""] for c, w in zip(cells, widths)]
        for i in range(max(map(len, wrapped))):
            print(" ".join(f"{col[i] if i < len(col) else '':{w}s}" for col, w in zip(wrapped, widths)).rstrip())
        if n:  # what --train_file / --validation_file / --test_file must hold
            r = rows[n - 1]
            print(
                textwrap.fill(
                    f"columns: {', '.join(r['required_columns'])}; label: {r['labels']}",
                    99,
                    initial_indent=" " * 11,
                    subsequent_indent=" " * 13,
                )
            )
    print(
        "\nYour own data: --train_file / --validation_file / --test_file (.csv, .tsv, .jsonl) with the columns\n"
        "above, or name yours with --text_column_names a,b --label_column_name c."
    )
    return 0


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
    sub.add_parser("tasks", help="list registered tasks with metrics and data sources", add_help=False)
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
    ``--data_dir`` and the model (:func:`hf_bert_tasks.run.flags.check_command_line`); returns ``rest``."""
    from .run.args_finetune import finetune_parser

    parsers = (module.build_parser(), finetune_parser())
    extra = [s[2:] for p in parsers for a in p._actions for s in a.option_strings if s.startswith("--")]
    flags.check_command_line(rest, SUBCOMMANDS["finetune"].dataclasses, extra)
    return rest


def parse_command_line(command: str, argv: list[str]):
    """``finetune``'s or ``pretrain``'s command line parsed once (``args_finetune.parse_finetune_argv``,
    ``args_pretrain.parse_pretrain_argv``: light) and its paths checked (:func:`hf_bert_tasks.run.flags.check_inputs`);
    off a terminal ``--disable_tqdm true`` unless set (one line per logging step)."""
    if command == "finetune":
        from .run.args_finetune import parse_finetune_argv as parse
    else:
        from .pretraining.args import parse_pretrain_argv as parse
    command_line = parse(argv, f"{PROG} {command}")
    flags.check_inputs(command_line)  # data folder/files, corpus, the model offline: one line before heavy imports
    if not interactive() and "disable_tqdm" not in command_line.given:
        command_line.training["disable_tqdm"] = True
    return command_line


def _dispatch(command: str, rest: list[str]) -> int:
    if command == "tasks":
        return list_tasks_command(rest)
    helping = any(a in ("-h", "--help", "--help_all") for a in rest)
    if SUBCOMMANDS[command].dataclasses and helping and "--help_all" not in rest:
        print(fast_help(command))
        return 0
    module = importlib.import_module(f"hf_bert_tasks.scripts.{command}")  # light: heavy imports are in main()
    if command in ("finetune", "pretrain") and not helping:  # the one parse, before quiet_console's imports
        rest = parse_command_line(command, rest)
    elif command == "compare" and not helping:
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
            raise UsageError(f"a command is required: one of tasks, {', '.join(SUBCOMMANDS)}")
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


if __name__ == "__main__":
    sys.exit(main())
