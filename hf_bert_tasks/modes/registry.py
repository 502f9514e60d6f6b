"""The training-mode registry: one dict, filled by the mode modules when :mod:`hf_bert_tasks.modes` is imported
(like peft's ``register_peft_method``)."""

from __future__ import annotations

import difflib
import re

from .base import TrainingMode

#: The only central state: ``--mode`` value -> mode, in registration order (the order of ``compare --modes``).
TRAINING_MODES: dict[str, TrainingMode] = {}

#: ``--mode`` when none is given, and the mode of a saved folder that no other mode recognizes.
DEFAULT_TRAINING_MODE = "finetune"

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def register_training_mode(mode: TrainingMode) -> TrainingMode:
    """Add ``mode`` to :data:`TRAINING_MODES` and return it.

    Raises:
        TypeError: ``mode`` is not a :class:`TrainingMode` instance.
        ValueError: the name is not lower-case ``[a-z][a-z0-9_]*`` or is already registered.
    """
    if not isinstance(mode, TrainingMode):
        raise TypeError(f"register_training_mode: expected a TrainingMode instance, got {type(mode).__name__}")
    if not _NAME_RE.match(mode.name or ""):
        raise ValueError(f"training mode name {mode.name!r} must match {_NAME_RE.pattern}")
    if mode.name in TRAINING_MODES:
        raise ValueError(f"training mode {mode.name!r} is already registered")
    TRAINING_MODES[mode.name] = mode
    return mode


def unregister_training_mode(name: str) -> None:
    """Remove a registered mode (tests that register a toy mode clean up with it); unknown names are ignored."""
    TRAINING_MODES.pop(name, None)


def get_training_mode(name: str | None) -> TrainingMode:
    """The registered mode called ``name`` (:data:`DEFAULT_TRAINING_MODE` for ``None``).

    Raises:
        ValueError: an unknown name; the message suggests the closest one and lists the registered modes.
    """
    name = DEFAULT_TRAINING_MODE if name is None else name
    if name not in TRAINING_MODES:
        close = difflib.get_close_matches(str(name), list(TRAINING_MODES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ValueError(f"--mode {name!r}{hint}: expected one of {', '.join(TRAINING_MODES)}")
    return TRAINING_MODES[name]


def list_training_modes() -> list[str]:
    """The registered ``--mode`` values in registration order."""
    return list(TRAINING_MODES)


def mode_of(training_args) -> TrainingMode:
    """The mode selected by ``training_args.mode`` (:data:`DEFAULT_TRAINING_MODE` when the object has no ``mode``,
    e.g. plain ``TrainingArguments`` or ``None``)."""
    return get_training_mode(getattr(training_args, "mode", None) or DEFAULT_TRAINING_MODE)


def infer_training_mode(output_dir: str, config: dict | None = None) -> dict:
    """``{"mode", "strategy"}`` of a saved folder that has no ``run_info.json``: the first registered mode whose
    :meth:`~TrainingMode.recognizes` accepts its files / ``config.json`` (``config``), else the default mode."""
    for mode in TRAINING_MODES.values():
        found = mode.recognizes(output_dir, config or {})
        if found:
            return found
    return {"mode": DEFAULT_TRAINING_MODE, "strategy": None}


def arm_from_label(label: str) -> dict:
    """A ``compare`` configuration from its label (``"finetune"``, ``"feature_based:last"``): ``{"label", "mode",
    "strategy"}``, the inverse of :meth:`TrainingMode.compare_arms`."""
    name, _, strategy = label.partition(":")
    return {"label": label, "mode": name, "strategy": strategy or None}
