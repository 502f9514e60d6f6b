"""Intra-op thread count for the small models (the quickstart, the ``tiny``/``mini`` presets).

torch's default is one thread per core. A model of L=2/H=128 gains nothing from a second thread, and when another
process holds a core the threads wait on each other: 30 tiny training steps took 7.7 s / 19.1 s with the default
threads against 0.99 s / 0.72 s with one thread on a 2-core machine with one core busy (issue 27). So these jobs run
one thread unless the user asks for more (``--threads N`` where the command has it, else ``OMP_NUM_THREADS``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

#: presets whose runs default to one thread (``hf_bert_tasks.modeling.BERT_PRESETS``)
SMALL_PRESETS = ("tiny", "mini")


def choose_threads(requested: int | None = None, environ: Mapping[str, str] | None = None) -> tuple[int, str]:
    """The intra-op thread count for a small-model job, and where it comes from.

    Order: ``requested`` (a ``--threads`` flag), then ``OMP_NUM_THREADS`` from ``environ`` (default ``os.environ``),
    then 1.

    Raises:
        ValueError: ``requested`` below 1, or ``OMP_NUM_THREADS`` set to something other than a positive integer.
    """
    environ = os.environ if environ is None else environ
    if requested is not None:
        if requested < 1:
            raise ValueError(f"--threads must be a positive integer, got {requested}")
        return requested, "--threads"
    value = environ.get("OMP_NUM_THREADS", "").strip()
    if value:
        if not value.isdigit() or int(value) < 1:
            raise ValueError(f"OMP_NUM_THREADS must be a positive integer, got {value!r}")
        return int(value), "OMP_NUM_THREADS"
    return 1, "default for small models; --threads N or OMP_NUM_THREADS=N to change"


def use_threads(requested: int | None = None, preset: str | None = None) -> str | None:
    """Apply :func:`choose_threads` with ``torch.set_num_threads`` and return the line to print.

    ``preset``: the model size of a pretraining run; only :data:`SMALL_PRESETS` (or ``None``, a caller that is small
    by construction such as the quickstart) are changed, any other preset keeps torch's default and returns ``None``.
    """
    if preset is not None and preset not in SMALL_PRESETS:
        return None
    import torch

    threads, source = choose_threads(requested)
    torch.set_num_threads(threads)
    return f"torch intra-op threads: {threads} ({source})"
