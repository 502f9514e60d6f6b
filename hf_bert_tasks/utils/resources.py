"""The built-in samples installed with the package (``hf_bert_tasks/samples/``, from ``tools/make_samples.py``), found
through :mod:`importlib.resources`: the quickstart and the tests run on them offline."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

PACKAGE = "hf_bert_tasks"


def sample_path(*parts: str) -> str:
    """Filesystem path of ``samples/<parts...>`` in the installed package (``sample_path("MRPC")``: the MRPC
    sample's ``--data_dir``; ``sample_path()``: the samples folder).

    Raises:
        FileNotFoundError: no such sample (names the path).
        OSError: the package is not files on disk (e.g. a zip import).
    """
    resource = files(PACKAGE).joinpath("samples", *parts)
    try:
        path = os.fspath(resource)
    except TypeError:
        raise OSError(
            f"{resource}: the package's samples are not files on disk (a zip import?); install "
            f"{PACKAGE} as a regular package to use them"
        ) from None
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such sample in {PACKAGE}/samples")
    return path


def sample_texts() -> list[str]:
    """Every non-empty line of every sample file (``os.walk`` order, files sorted within a folder): the corpus the
    quickstart trains its WordPiece vocabulary on."""
    paths = [Path(root, name) for root, _, names in os.walk(sample_path()) for name in sorted(names)]
    return [line for path in paths for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
