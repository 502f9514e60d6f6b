"""One reader for settings files (``--config FILE``, ``compare``'s ``--<mode>_args``, the early checks): a YAML or
JSON mapping of flag names (without ``--``) to plain values or lists, turned into command-line tokens so the recipe's
parser converts and checks each value as on the command line (YAML 1.1 reads ``1e-3`` as a string). Light imports.
"""

from __future__ import annotations

import difflib
import json
import os
from typing import Any

SUFFIXES = (".yaml", ".yml", ".json")


def read_config(source: str, option: str = "--config", inline: bool = False) -> dict[str, Any]:
    """The mapping in the settings file ``source``, a ``.yaml``/``.yml``/``.json`` path (empty file: ``{}``); with
    ``inline``, text that is not an existing file is read as an inline YAML mapping (``"{num_train_epochs: 3}"``).
    ``option``: the flag that gave ``source``, for messages.

    Raises:
        FileNotFoundError: ``source`` is not a file (without ``inline``, or when it has a settings-file suffix).
        ValueError: not valid YAML/JSON, or not a mapping of names to plain values or lists (names ``option``,
            ``source`` and the key).
    """
    text = source
    if os.path.isfile(source):
        with open(source, encoding="utf-8") as f:
            text = f.read()
    elif not inline or source.endswith(SUFFIXES):
        raise FileNotFoundError(f"{option} {source}: no such file")
    import yaml

    try:
        values = (
            json.loads(text or "null") if source.endswith(".json") and text is not source else yaml.safe_load(text)
        )
    except (ValueError, yaml.YAMLError) as err:  # json.JSONDecodeError is a ValueError
        kind = "JSON" if isinstance(err, ValueError) else "YAML"
        raise ValueError(f"{option} {source!r}: not valid {kind} ({' '.join(str(err).split())})") from None
    values = {} if values is None else values
    if not isinstance(values, dict):
        raise ValueError(
            f"{option} {source!r}: expected a YAML mapping of flag names to values, e.g. "
            f"'{{num_train_epochs: 3, learning_rate: 1e-3}}', got a {type(values).__name__}"
        )
    for key, value in values.items():
        if isinstance(value, dict):
            raise ValueError(f"{option} {source!r}: {key}: expected a plain value or a list, got a mapping")
    return values


def config_argv(argv: list[str], parser) -> list[str]:
    """``argv`` with its ``--config FILE`` (or ``--config=FILE``) replaced by the file's settings as flag tokens for
    ``parser`` (:func:`settings_argv`), put first and without the keys ``argv`` gives, so the command line wins; the
    accepted keys are ``parser``'s option dests (an ``HfArgumentParser``'s: its argument dataclasses' fields).

    Raises:
        ValueError: ``--config`` without a path, a key no flag of ``parser`` takes, a value settings_argv refuses.
        FileNotFoundError: no such file.
    """
    argv = [part for a in argv for part in (a.split("=", 1) if a.startswith("--config=") else [a])]
    if "--config" not in argv:
        return argv
    i = argv.index("--config")
    if i + 1 >= len(argv):
        raise ValueError("--config needs a path to a .yaml or .json file")
    path, rest = argv[i + 1], argv[:i] + argv[i + 2 :]
    values = read_config(path)
    check_keys(path, values, {a.dest for a in parser._actions if a.option_strings} - {"help"})
    given = {a.lstrip("-").split("=")[0] for a in rest if a.startswith("--")}
    return settings_argv({k: v for k, v in values.items() if k not in given}, parser) + rest


def check_keys(path: str, values: dict[str, Any], known) -> None:
    """Raise ``ValueError`` (``FILE: unknown argument(s) [...]``, with the closest of ``known``) for a key of the
    settings file ``path`` that is not in ``known``."""
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(
            f"{path}: unknown argument(s) {unknown}"
            + did_you_mean(unknown, sorted(known))
            + "; the keys of a --config file are flag names without --"
        )


def unrecognized(known: list[str], given: list[str]) -> str:
    """``unrecognized arguments: --learnin_rate 1e-3 (did you mean --learning_rate?)``: argparse's wording for the
    tokens ``given`` that no flag takes, with the closest ``known`` flags (:func:`did_you_mean`)."""
    flags = [a.split("=")[0].replace("-", "_").replace("__", "--", 1) for a in given if a.startswith("--")]
    return f"unrecognized arguments: {' '.join(given)}" + did_you_mean(flags, known)


def did_you_mean(names: list[str], known: list[str]) -> str:
    """`` (did you mean --learning_rate?)``: the closest of ``known`` to each of ``names`` (:mod:`difflib`, cutoff
    0.75); ``""`` when none is close."""
    hints = [c[0] for c in (difflib.get_close_matches(n, known, n=1, cutoff=0.75) for n in names) if c]
    return f" (did you mean {', '.join(hints)}?)" if hints else ""


def settings_argv(values: dict[str, Any], parser) -> list[str]:
    """``{name: value}`` -> ``["--name", "value", ...]``, the tokens giving these settings to ``parser`` (an
    ``argparse`` parser): ``None`` is left out, booleans become ``true``/``false``, a list gives several values.

    Raises:
        ValueError: a name that is not one of ``parser``'s flags (``unrecognized arguments: ...``, with the closest
            flag; ``--no_<flag>`` spellings are command-line only), or a list for a flag that takes one value.
    """
    actions = {s: a for a in parser._actions for s in a.option_strings}
    argv: list[str] = []
    for key, value in values.items():
        if value is None:
            continue
        name = str(key).lstrip("-")
        items = value if isinstance(value, list) else [value]
        action = actions.get(f"--{name}")
        if action is None or action.dest != name:
            raise ValueError(unrecognized(list(actions), [f"--{name}", *map(str, items)]))
        if isinstance(value, list) and action.nargs not in ("+", "*"):
            raise ValueError(f"argument --{name}: expected one value, got a list ({value})")
        if action.nargs == 0:  # a plain argparse switch (store_true)
            argv += [f"--{name}"] if value else []
            continue
        argv += [f"--{name}", *(str(v).lower() if isinstance(v, bool) else str(v) for v in items)]
    return argv
