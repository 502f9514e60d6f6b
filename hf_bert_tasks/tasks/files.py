"""The files a task reads and writes: UTF-8 text lines numbered for error messages (:func:`text_lines`,
:func:`line_of`) and indented JSON (:func:`write_json`)."""

from __future__ import annotations

import itertools
import json
import os
from typing import Any


def write_json(path: str, obj: Any) -> None:
    """Write ``obj`` as indented JSON (UTF-8), creating parent folders."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=False)
        f.write("\n")


def text_lines(path: str):
    """``(line number, text)`` of each line of a UTF-8 file (1-based; BOM and line end removed), for errors naming a
    line and the CoNLL reader (no ``datasets`` loader for it).

    Raises:
        FileNotFoundError: ``path`` missing.
        ValueError: bytes that are not UTF-8 (names file, line and column).
    """
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                text = raw.decode("utf-8-sig" if number == 1 else "utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(
                    f"{path}, line {number}: bytes that are not UTF-8 at column {err.start + 1} "
                    f"({raw[err.start : err.start + 4]!r}); expected a UTF-8 text file"
                ) from None
            yield number, text.rstrip("\r\n")


def line_of(path: str, row: int, header: bool) -> int:
    """The 1-based line of data row ``row`` (0-based, empty lines skipped as the loaders skip them) of ``path``."""
    return next(itertools.islice((n for n, text in text_lines(path) if text), row + header, None))
