"""Issue 44 item 4: every ``hf-bert-tasks …`` command in a code block of README.md and docs/*.md parses as written
(flags known, values accepted by the parser, compare's ``--<mode>_args`` read as the recipe reads them). Parse only:
files and models the commands name are the user's (a missing one is not a parse error)."""

import glob
import os
import re
import shlex

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = [os.path.join(ROOT, "README.md"), *sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))]
_FENCE = re.compile(r"^```(\w*)\s*$")


def documented_commands(path: str) -> list[tuple[str, int, list[str]]]:
    """``(file, line, argv after hf-bert-tasks)`` of each command in a fenced code block (``text`` blocks, which show
    output and deliberate mistakes, left out); continuation lines joined, ``[...]`` optional groups kept without the
    brackets, shell variables read as a word (``$T`` / ``$TASK``: a task name)."""
    out, lang, logical, start = [], None, "", 0
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for number, line in enumerate(lines, start=1):
        fence = _FENCE.match(line.strip())
        if fence:
            lang = None if lang is not None else fence.group(1) or "plain"
            continue
        if lang is None or lang == "text":
            continue
        logical, start = (logical + " " + line.strip(), start) if logical else (line.strip(), number)
        if logical.endswith("\\"):
            logical = logical[:-1]
            continue
        text, logical = logical, ""
        if text.startswith("#"):
            continue  # a comment line
        text = re.sub(r"\$\{?(T|TASK)\}?\b", "mrpc", text.split(" #")[0])  # a loop over tasks: one of them
        text = re.sub(r"\$\([^)]*\)|\$\{?\w+\}?", "1", text)
        for found in re.finditer(
            r"(?:^|[\s/])hf-bert-tasks\s+((?:tasks|finetune|pretrain|compare|push|quickstart|-)"
            r"(?:\s.*|$))",
            text,
        ):
            command = re.split(r"\s(?:&&?|;|\|)\s?|\s&$", found.group(1))[0]
            command = command.replace("[", " ").replace("]", " ")
            if "..." in command or "…" in command:
                continue  # a placeholder, not a runnable command
            out.append((os.path.relpath(path, ROOT), start, shlex.split(command)))
    return out


COMMANDS = [c for path in DOCS for c in documented_commands(path)]


def test_commands_are_found():
    assert len(COMMANDS) >= 20
    assert any(argv[0] == "compare" for _, _, argv in COMMANDS)


def parse_only(argv: list[str]) -> None:
    """Raise ``ValueError`` when ``hf-bert-tasks <argv>`` would be refused by its parser."""
    from hf_bert_tasks import cli

    command, rest = argv[0], argv[1:]
    if command.startswith("-"):
        cli.build_parser().parse_args(argv)
        return
    if command == "tasks":
        assert set(rest) <= {"--json"}, rest
        return
    module = __import__(f"hf_bert_tasks.scripts.{command}", fromlist=["main"])
    try:  # flags known, task registered (files and models: the user's, not the parse)
        if command == "finetune":  # the recipe's one parse (no file or model check)
            from hf_bert_tasks.run.args_finetune import parse_finetune_argv

            parse_finetune_argv(rest)
        elif command == "pretrain":
            from hf_bert_tasks.pretraining.args import parse_pretrain_argv

            parse_pretrain_argv(rest)
        elif command == "compare":
            cli.check_early(command, rest, module)
    except OSError:  # FileNotFoundError too
        pass
    if command in ("compare", "push", "quickstart"):
        args, _ = module.build_parser().parse_known_args(rest)
        for mode in ("finetune", "lora", "feature_based"):
            try:
                if getattr(args, f"{mode}_args", None):
                    module.arm_settings(getattr(args, f"{mode}_args"), f"--{mode}_args")
            except FileNotFoundError:  # a settings file of the user's
                pass


@pytest.mark.parametrize("where,line,argv", COMMANDS, ids=[f"{w}:{n}" for w, n, _ in COMMANDS])
def test_documented_command_parses(where, line, argv, capsys):
    if any(a in ("-h", "--help", "--help_all", "--version") for a in argv):
        return  # help and version exit before parsing: nothing to check beyond the flag itself
    try:
        parse_only(argv)
    except ValueError as err:
        pytest.fail(f"{where}, line {line}: `hf-bert-tasks {shlex.join(argv)}` is refused: {err}")
