"""Which ``checkpoint-<step>`` folder a run can resume from: the newest *complete* one (what ``Trainer`` reads
when resuming: state, weights, optimizer, scheduler, RNG). Why: docs/design.md, 'Checkpoint completeness'."""

from __future__ import annotations

import json
import logging
import os
import re

logger = logging.getLogger(__name__)

#: ``--resume_from_checkpoint auto``: continue from the last checkpoint in ``output_dir`` if there is one.
AUTO_RESUME = "auto"
#: ``--resume_from_checkpoint`` values meaning "the newest complete checkpoint in output_dir, if any".
AUTO_VALUES = ("auto", "true")

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")  # transformers.trainer_utils._re_checkpoint
_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "adapter_model.safetensors", "adapter_model.bin")
_WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
#: what a checkpoint lacks that ``Trainer.train`` can still resume without (not exactly as the interrupted run)
_RESUMABLE = ("no optimizer.pt (saved with --save_only_model, or cut short)", "no scheduler.pt", "no rng_state.pth")


def is_auto(resume) -> bool:
    """True for ``--resume_from_checkpoint auto`` / ``True`` (a bool or the strings, any case)."""
    return resume is True or (isinstance(resume, str) and resume.strip().lower() in AUTO_VALUES)


def list_checkpoints(output_dir: str) -> list[tuple[int, str]]:
    """``(step, path)`` of every ``checkpoint-<digits>`` folder in ``output_dir`` (other names and files left out),
    highest step first; ``[]`` for a missing ``output_dir``."""
    if not os.path.isdir(output_dir):
        return []
    found = ((_CHECKPOINT.match(n), os.path.join(output_dir, n)) for n in os.listdir(output_dir))
    return sorted(((int(m.group(1)), path) for m, path in found if m and os.path.isdir(path)), reverse=True)


def _nonempty(folder: str, *names: str) -> bool:
    return any(os.path.isfile(p := os.path.join(folder, n)) and os.path.getsize(p) > 0 for n in names)


def _has_weights(folder: str, names: set[str]) -> bool:
    if _nonempty(folder, *_WEIGHTS):
        return True
    for index in filter(lambda name: _nonempty(folder, name), _WEIGHT_INDEXES):
        try:
            with open(os.path.join(folder, index), encoding="utf-8") as f:
                shards = set(json.load(f)["weight_map"].values())
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if shards and all(_nonempty(folder, s) for s in shards):
            return True
    # FSDP (``pytorch_model_fsdp*``) and DeepSpeed (``global_step*``) keep weights and optimizer in their own folders
    return any(n.startswith(("pytorch_model_fsdp", "global_step")) for n in names)


def checkpoint_problems(folder: str) -> list[str]:
    """What keeps ``folder`` from resuming (docs/design.md), e.g. ``["no trainer_state.json"]``; ``[]``: complete.
    Each one but those of :data:`_RESUMABLE` is fatal: ``Trainer.train`` cannot resume at all (it raises)."""
    if not os.path.isdir(folder):
        return ["not a folder"]
    names = set(os.listdir(folder))
    problems = []
    if not _nonempty(folder, "trainer_state.json"):
        problems.append("no trainer_state.json")
    else:
        try:
            with open(os.path.join(folder, "trainer_state.json"), encoding="utf-8") as f:
                step = json.load(f).get("global_step")
        except (OSError, ValueError, AttributeError):
            problems.append("trainer_state.json is not valid JSON (cut short?)")
        else:
            match = _CHECKPOINT.match(os.path.basename(os.path.normpath(folder)))
            if match and step != int(match.group(1)):
                problems.append(f"trainer_state.json says global_step {step}, the folder name {match.group(1)}")
    if not _has_weights(folder, names):
        problems.append("no model weights (model.safetensors / pytorch_model.bin / adapter_model.*)")
    # (files, folder-name prefixes that hold it instead (FSDP, DeepSpeed)) of each resumable part
    parts = (
        (("optimizer.pt", "optimizer.bin"), ("pytorch_model_fsdp", "global_step", "optimizer_")),
        (("scheduler.pt",), ("global_step",)),
        ([n for n in names if n.startswith("rng_state") and n.endswith(".pth")], ()),
    )
    problems += [
        message
        for (files, prefixes), message in zip(parts, _RESUMABLE)
        if not _nonempty(folder, *files) and not any(n.startswith(prefixes) for n in names)
    ]
    return problems


def last_complete_checkpoint(output_dir: str) -> str | None:
    """The newest complete ``checkpoint-<step>`` folder of ``output_dir`` (``None`` when there is none), with a
    warning naming each incomplete one passed over and what it lacks."""
    skipped = []
    for _, path in list_checkpoints(output_dir):
        problems = checkpoint_problems(path)
        if not problems:
            if skipped:
                logger.warning(
                    "--resume_from_checkpoint: skipping incomplete checkpoint(s) %s (a run killed while "
                    "saving?); resuming from %s",
                    ", ".join(skipped),
                    path,
                )
            return path
        skipped.append(f"{os.path.basename(path)} ({'; '.join(problems)})")
    if skipped:
        logger.warning(
            "--resume_from_checkpoint: no complete checkpoint in %s — incomplete: %s (a run killed while "
            "saving?); training starts from step 0 and a save at the same step replaces them",
            output_dir,
            ", ".join(skipped),
        )
    return None


def resolve_resume(resume, output_dir: str) -> str | None:
    """The checkpoint folder for ``Trainer.train(resume_from_checkpoint=...)``, ``None`` for a fresh start:
    ``resume`` ``None``/``""``/``False`` gives ``None``, ``auto``/``True`` the newest complete checkpoint of
    ``output_dir`` (or ``None``), a path itself once checked: ``FileNotFoundError`` when it does not exist,
    ``ValueError`` (naming what is missing) when it is not a complete checkpoint."""
    if (
        resume is None
        or resume is False
        or (isinstance(resume, str) and resume.strip().lower() in ("", "false", "none"))
    ):
        return None
    if is_auto(resume):
        chosen = last_complete_checkpoint(output_dir)
        logger.info(
            "--resume_from_checkpoint %s: %s",
            resume,
            f"resuming from {chosen}"
            if chosen is not None
            else f"no complete checkpoint in {output_dir}, training from the start",
        )
        return chosen
    path = str(resume)
    if not os.path.exists(path):
        raise FileNotFoundError(f"--resume_from_checkpoint {path}: no such checkpoint folder")
    problems = checkpoint_problems(path)
    if set(problems) - set(_RESUMABLE):
        raise ValueError(
            f"--resume_from_checkpoint {path}: not a complete checkpoint "
            f"({'; '.join(problems)}); expected what Trainer saves (trainer_state.json, "
            "weights, optimizer.pt, scheduler.pt, rng_state.pth) — pass an earlier checkpoint or "
            "--resume_from_checkpoint auto"
        )
    if problems:
        logger.warning(
            "--resume_from_checkpoint %s: %s; Trainer resumes the weights and step but the run will not "
            "continue exactly as the interrupted one",
            path,
            "; ".join(problems),
        )
    return path


def output_dir_is_finished(output_dir: str) -> bool:
    """True when ``output_dir`` holds a finished run (``all_results.json``)."""
    return os.path.isfile(os.path.join(output_dir, "all_results.json"))


def check_output_dir(training_args) -> None:
    """Refuse to write over earlier results in ``training_args.output_dir``: ``FileExistsError`` (naming the flags)
    for a finished run (``all_results.json``) without ``--overwrite_output_dir`` or an explicit
    ``--resume_from_checkpoint PATH``, or an unfinished run's checkpoints without ``--resume_from_checkpoint``."""
    out, resume = training_args.output_dir, training_args.resume_from_checkpoint
    if training_args.overwrite_output_dir or not os.path.isdir(out):
        return
    if output_dir_is_finished(out) and (not resume or is_auto(resume)):
        raise FileExistsError(
            f"--output_dir {out} already holds a finished run (all_results.json); "
            "pass --overwrite_output_dir to replace it or choose another folder"
        )
    checkpoints = list_checkpoints(out)
    if checkpoints and not resume:
        raise FileExistsError(
            f"--output_dir {out} holds checkpoints of an unfinished run (last: {os.path.basename(checkpoints[0][1])}); "
            f"pass --resume_from_checkpoint {AUTO_RESUME} to continue it, or --overwrite_output_dir to start again"
        )


def start_run(training_args) -> str | None:
    """:func:`check_output_dir` (``FileExistsError``), then :func:`resolve_resume` of ``--resume_from_checkpoint``
    (``FileNotFoundError``, ``ValueError``): the checkpoint to resume from, ``None`` for a fresh start."""
    check_output_dir(training_args)
    return resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)


__all__ = [
    "AUTO_RESUME",
    "AUTO_VALUES",
    "check_output_dir",
    "checkpoint_problems",
    "is_auto",
    "last_complete_checkpoint",
    "list_checkpoints",
    "resolve_resume",
    "start_run",
]


def loss_over_all_steps(
    checkpoint: str, global_step: int, resumed_loss: float, resumed_loss_sum: float | None = None
) -> dict[str, float]:
    """The training loss of a run resumed from ``checkpoint`` over all its steps, not only the resumed ones
    (``Trainer``'s ``train_loss`` covers the steps of its own call, ``resumed_loss``): the losses logged before the
    checkpoint (its ``trainer_state.json`` ``log_history``, each a mean over the steps since the previous log),
    weighted by their steps, with the resumed steps' mean over ``global_step - checkpoint step`` steps. That mean is
    ``resumed_loss_sum`` (the sum of the resumed steps' losses, ``Trainer._total_loss_scalar``) over those steps when
    given: ``Trainer``'s own ``train_loss`` divides that sum by the steps of its call in recent transformers (5.25)
    but by ``global_step``, every step, in older 5.x (5.13), which would count the checkpoint's steps as zero loss.

    Returns ``train_loss`` (over ``train_loss_steps`` steps: all of them when the checkpoint's step was a logging
    step; else the steps between its last log and the checkpoint are missing, their losses never written),
    ``train_loss_resumed`` (``resumed_loss``) and ``train_loss_steps``. ``{}`` without the checkpoint's state.
    """
    path = os.path.join(checkpoint, "trainer_state.json")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        state = json.load(f)
    start = int(state.get("global_step", 0))
    logged = sorted((e["step"], e["loss"]) for e in state.get("log_history", []) if "loss" in e and e["step"] <= start)
    total, previous = 0.0, 0
    for step, loss in logged:
        total, previous = total + loss * (step - previous), step
    resumed = global_step - start
    steps = previous + resumed
    if steps <= 0:
        return {}
    if resumed_loss_sum is not None and resumed > 0:
        resumed_loss = resumed_loss_sum / resumed
    return {
        "train_loss": (total + resumed_loss * resumed) / steps,
        "train_loss_resumed": resumed_loss,
        "train_loss_steps": steps,
    }
