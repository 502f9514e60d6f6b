"""Intra-op threads for the small models (the quickstart, the ``tiny``/``mini`` presets): one unless the user asks for
more. Why: docs/design.md, "threads: one thread for small models"."""

from __future__ import annotations

import os
from collections.abc import Mapping

#: presets whose runs default to one thread (``hf_bert_tasks.utils.modeling.BERT_PRESETS``)
SMALL_PRESETS = ("tiny", "mini")


def choose_threads(requested: int | None = None, environ: Mapping[str, str] | None = None) -> tuple[int, str]:
    """``(threads, where it comes from)`` for a small-model job: ``requested`` (a ``--threads`` flag), else
    ``OMP_NUM_THREADS`` from ``environ`` (default ``os.environ``), else 1.

    Raises:
        ValueError: ``requested`` below 1, or ``OMP_NUM_THREADS`` set to something other than a positive integer.
    """
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--threads must be a positive integer, got {requested}")
        return requested, "--threads"
    value = (os.environ if environ is None else environ).get("OMP_NUM_THREADS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"OMP_NUM_THREADS must be a positive integer, got {value!r}")
        return int(value), "OMP_NUM_THREADS"
    return 1, "default for small models; --threads N or OMP_NUM_THREADS=N to change"


def use_threads(requested: int | None = None, preset: str | None = None) -> str | None:
    """Apply :func:`choose_threads` with ``torch.set_num_threads``; returns the line to print, ``None`` (nothing set)
    for a pretraining ``preset`` not in :data:`SMALL_PRESETS` (``None``: the quickstart)."""
    if preset is not None and preset not in SMALL_PRESETS:
        return None
    import torch

    threads, source = choose_threads(requested)
    torch.set_num_threads(threads)
    return f"torch intra-op threads: {threads} ({source})"
