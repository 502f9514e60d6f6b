"""Chance levels of pretraining: held-out MLM accuracy against the most frequent masked token, NSP against 0.5
(:func:`chance_levels`, kept in the summary), and the warning at the end of a run at or below them
(:func:`warn_at_chance`), with what can help the model at hand."""

from __future__ import annotations

import json
import logging
import os
import pathlib

import numpy as np

logger = logging.getLogger(__name__)


def chance_levels(eval_ds, tokenizer) -> dict:
    """What a model that learnt nothing scores on the held-out instances ``eval_ds`` (static masks: ``labels`` ``int
    [L]`` per row, ``-100`` where not predicted; ``next_sentence_label``): ``mlm_accuracy``, the share of the most
    frequent masked token (``mlm_most_frequent_token``: what a context-free guess answers), and ``nsp_accuracy``,
    0.5 or the share of the more frequent NSP label if higher (no ``nsp_*`` without NSP labels); ``{}`` without
    targets."""
    labels = np.concatenate([np.asarray(row, dtype=np.int64) for row in eval_ds["labels"]] or [np.zeros(0, np.int64)])
    labels = labels[labels != -100]
    if not len(labels):
        return {}
    ids, counts = np.unique(labels, return_counts=True)
    out = {
        "mlm_accuracy": float(counts.max() / counts.sum()),
        "mlm_most_frequent_token": tokenizer.convert_ids_to_tokens(int(ids[counts.argmax()])),
    }
    if "next_sentence_label" in eval_ds.column_names:
        nsp = np.asarray(eval_ds["next_sentence_label"])
        out["nsp_accuracy"] = max(0.5, float(np.bincount(nsp, minlength=2).max() / len(nsp))) if len(nsp) else 0.5
    return out


#: a final accuracy this close to its chance level (0-1 scale, :func:`chance_levels`) is a model at chance
CHANCE_MARGIN = 0.02


def warn_at_chance(summary: dict, hidden_size: int | None, learning_rate: float) -> str | None:
    """Log (and return) one warning when the final held-out MLM accuracy is within :data:`CHANCE_MARGIN` of the most
    frequent token's share, or NSP within it of 0.5 (``summary``'s ``final_*_accuracy`` and ``chance``), with what
    can help this model: a small one's learning rate (``utils.modeling.suggested_learning_rate``: 1e-3 for
    ``tiny``; BERT-BASE's 1e-4 leaves its NSP at a constant answer, README) and more steps. ``None``: above both."""
    from ..utils.modeling import suggested_learning_rate

    chance, parts = summary.get("chance") or {}, []
    for key, name in (("mlm", "MLM"), ("nsp", "NSP")):
        value, level = summary.get(f"final_{key}_accuracy"), chance.get(f"{key}_accuracy")
        if isinstance(value, (int, float)) and level is not None and value < level + CHANCE_MARGIN:
            against = (
                f"the most frequent token {chance.get('mlm_most_frequent_token')!r}'s share {level:.3f}"
                if key == "mlm"
                else f"chance {level:.3f}"
            )
            parts.append(f"held-out {name} accuracy {value:.3f} against {against}")
    if not parts:
        return None
    tips = []
    suggested = suggested_learning_rate(hidden_size) if hidden_size else None
    if suggested is not None and learning_rate < suggested / 2:
        tips.append(
            f"--learning_rate {suggested:g} for this small model (hidden size {hidden_size}; it ran at {learning_rate:g})"
        )
    tips.append(f"more steps (--max_steps; this run: {summary.get('steps')})")
    message = "; ".join(parts) + ": pretraining has learnt next to nothing. What can help: " + "; ".join(tips) + "."
    logger.warning(message)
    return message


def model_hidden_size(output_dir: str) -> int | None:
    """``hidden_size`` of ``output_dir/config.json`` (``None`` without one)."""
    path = os.path.join(output_dir, "config.json")
    if not os.path.isfile(path):
        return None
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8")).get("hidden_size")
