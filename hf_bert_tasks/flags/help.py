"""The recipes' flags without torch, transformers or datasets: the fast ``--help`` (:func:`fast_help`, from the light
argument dataclasses and the registered modes' flags), the checks of a parsed command line's paths
(``cli.check_inputs``, ``cli.check_model``) and ``compare``'s early check of flag names (:func:`check_command_line`),
with the recipes' messages (the path checks themselves are the CLI's, where a command line is checked before the
heavy imports)."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import os
import re

from .parser import OFFLINE_CHECKPOINT_HINT  # noqa: F401 - a public name of flags

_TRAINING_NOTE = (
    "Every flag of transformers' TrainingArguments is accepted too (--seed, --fp16, --bf16, --report_to, "
    "--gradient_accumulation_steps, --eval_steps, --push_to_hub ...); `{prog} --help_all` lists them all (it "
    "imports transformers, several seconds). On a CUDA GPU the recipe defaults to bf16 (where the GPU has it) and "
    "fused AdamW unless --bf16/--fp16 or --optim is given (opt out: --bf16 False, --optim adamw_torch); "
    "--torch_compile compiles the model (off by default)."
)


@dataclasses.dataclass
class FieldInfo:
    """A dataclass field for the help: ``name``, annotation text, default text (``repr``), help, choices, and
    ``value``, the default itself."""

    name: str
    annotation: str
    default: str
    help: str
    choices: list | None
    value: object = None


def dataclass_fields(module, class_name: str | None = None) -> list[FieldInfo]:
    """The fields of a dataclass (``module``: the class itself, or its module's name with ``class_name``, imported:
    name it in a light module, e.g. ``hf_bert_tasks.flags.parser``) as :class:`FieldInfo` (default as ``repr``)."""
    cls = getattr(importlib.import_module(module), class_name) if isinstance(module, str) else module
    infos = []
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default
        annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        choices = f.metadata.get("choices")
        help_text, choices = f.metadata.get("help", ""), list(choices) if choices else None
        infos.append(FieldInfo(f.name, annotation, repr(default), help_text, choices, default))
    return infos


_ROLE = re.compile(r":(?:func|mod|class|data|meth|attr|exc):`~?([^`]+)`")


def plain_docstring(module: str) -> str:
    """The docstring of ``module`` (a dotted name) as terminal text, read from its source without importing it (a
    recipe imports torch): Sphinx roles (``:func:`x```) and inline literals (````x````) become plain ``x``. ``""``
    when the module has none; ``ModuleNotFoundError`` for an unknown module."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError(f"no module named {module!r}")
    with open(spec.origin, encoding="utf-8") as f:
        doc = ast.get_docstring(ast.parse(f.read())) or ""
    return _ROLE.sub(r"\1", doc).replace("``", "")


def fast_help(program: str, command: str, spec) -> str:
    """``program command --help`` for an ``HfArgumentParser`` subcommand (``spec``: its
    :class:`hf_bert_tasks.cli.Subcommand`), built from its dataclasses' source and its script's docstring."""
    from ..modes import list_training_modes  # light: the registries, not the recipes
    from ..tasks import list_tasks

    known_at_run_time = {"task": list_tasks(), "mode": list_training_modes()}  # the registries' names
    prog = f"{program} {command}"
    doc = plain_docstring(spec.module) or spec.help
    parser = argparse.ArgumentParser(
        prog=prog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        usage=f"{prog} {spec.required} [--config FILE] [--FLAG VALUE ...]",
        description=doc,
        epilog=_TRAINING_NOTE.format(prog=prog),
    )
    parser.add_argument("-h", "--help", action="store_true", help="show this message and exit")
    parser.add_argument(
        "--help_all", action="store_true", help="show every flag, transformers' TrainingArguments included, and exit"
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="YAML or JSON file of argument values (keys = flag names without --); flags on the command line win",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="show the traceback of an error (a bare --debug; --debug VALUE is TrainingArguments')",
    )
    sources = [(title, dataclass_fields(mod, cls)) for mod, cls, title in spec.dataclasses]
    if command == "finetune":  # the registered modes' flags (their light dataclasses)
        from ..finetune.args import mode_groups

        sources += [(title, dataclass_fields(cls)) for title, cls in mode_groups()]
    for title, infos in sources:
        group = parser.add_argument_group(title)
        for f in infos:
            choices = f.choices or known_at_run_time.get(f.name)
            if choices:
                metavar = "{" + ",".join(map(str, choices)) + "}"
            else:
                metavar = "[BOOL]" if f.annotation in ("bool", "bool | None", "Optional[bool]") else f.name.upper()
            text = f.help + (f" (default: {f.default})" if f.default not in ("", "None") else "")
            group.add_argument(f"--{f.name}", metavar=metavar, help=text.replace("%", "%%"))
    return parser.format_help()


# --------------------------------------------------------------------------------------------- early checks
def check_command_line(argv: list[str], sources, extra_flags, model_check) -> dict[str, list[str]]:
    """``compare``'s early check (``cli.check_early``; ``finetune`` and ``pretrain`` are parsed once instead): check
    ``argv``'s flag names before transformers is imported; returns the settings it gives (``--config`` file values
    below the flags, each as a list of strings). ``sources``: ``(module, class, title)`` of each light argument
    dataclass; ``extra_flags``: more flag names (without ``--``) the subcommand takes (its own parser's and the
    fine-tune parser's); ``model_check``: the model check (``cli.check_model``, which ``cli`` passes: ``flags`` does
    not import ``cli``).

    Raises:
        ValueError: an unknown flag or ``--config`` key (the recipe's wording, with the closest flag), an unknown or
            missing ``--task`` (when ``task`` is a field).
        FileNotFoundError: ``--config``, ``--data_dir``, ``--train_file`` (… ``--test_file``), ``--train_files`` or ``--model_name_or_path`` that does not
            exist (see ``cli.check_model``).
    """
    from .config_file import check_keys, read_config, unrecognized

    fields = {f.name: f for src in sources for f in dataclass_fields(*src[:2])}
    known = {*fields, "config", "help_all", *extra_flags}
    # argv as {flag: values after it} (--a-b is a_b; --no_x is x = false) and the tokens no known flag takes
    given, unknown = {}, []
    current = None  # the flag whose values are being read
    for token in argv:
        if token.startswith("--") and len(token) > 2 and " " not in token:  # with a space: a value (as argparse)
            name, eq, value = token[2:].partition("=")
            name = name.replace("-", "_")
            negated = name.startswith("no_") and name not in known and name[3:] in known
            current = name[3:] if negated else name
            if current in known:
                given[current] = ["false"] if negated else ([value] if eq else [])
            else:
                current = None
                unknown.append(token)
        elif current is not None:
            given[current].append(token)
        else:
            unknown.append(token)
    if unknown:
        raise ValueError(unrecognized(sorted(f"--{k}" for k in known), unknown))
    values = dict(given)
    if given.get("config"):
        path = given["config"][-1]
        config = read_config(path)
        check_keys(path, config, known - {"config", "help_all"})
        values = {**{k: v if isinstance(v, list) else [v] for k, v in config.items() if v is not None}, **given}
    last = {k: str(v[-1]) for k, v in values.items() if v}
    if "task" in fields:
        from ..tasks import get_task

        if "task" not in last:
            raise ValueError("--task is required (see `hf-bert-tasks tasks` for the list)")
        get_task(last["task"])  # UnknownTaskError (a ValueError) with the closest names
    if "data_dir" in last and not os.path.isdir(last["data_dir"]):
        raise FileNotFoundError(f"--data_dir {last['data_dir']}: no such folder")
    for flag in ("train_file", "validation_file", "test_file"):  # before transformers is imported
        if flag in fields and flag in last and not os.path.isfile(last[flag]):
            raise FileNotFoundError(f"--{flag} {last[flag]}: no such file")
    for name in ("train_files", "validation_files"):
        if values.get(name):
            from ..pretraining.data import resolve_corpus_files

            resolve_corpus_files([str(v) for v in values[name]], flag=f"--{name}")
    if "model_name_or_path" in known:
        default = getattr(fields.get("model_name_or_path"), "value", None)
        model_check(
            last.get("model_name_or_path", default),
            given="model_name_or_path" in last,
            cache_dir=last.get("cache_dir"),
        )
    return values
