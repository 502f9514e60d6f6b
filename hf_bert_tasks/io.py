"""Readers for the original task files, with errors that name the file, the line and what was expected.

GLUE's TSV files must be read with quoting **off**: a field may start with ``"`` and contain tabs-free text with
unbalanced quotes; Python's default CSV quoting then swallows the following lines into one field and silently drops
rows (MRPC dev gives 408 rows only with quoting off). google-research/bert's ``run_classifier.py`` does the same
(``csv.reader(f, delimiter="\\t", quotechar=None)``). Splitting each line on ``\\t`` is exactly that.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass

logger = logging.getLogger(__name__)


@dataclass
class Row:
    """One data line of a file: ``fields`` (split on the delimiter) and its 1-based ``line`` number."""

    line: int
    fields: list[str]


def _decode_lines(path: str):
    """Yield ``(line_number, text)`` for every line of ``path``: UTF-8, BOM stripped, ``\\n``/``\\r\\n`` removed.

    Raises:
        FileNotFoundError: when ``path`` does not exist.
        ValueError: on bytes that are not UTF-8 (names file and line).
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise ValueError(
                    f"{path}, line {number}: bytes that are not UTF-8 at column {err.start + 1} "
                    f"({raw[err.start:err.start + 4]!r}); expected a UTF-8 text file"
                ) from None
            yield number, text.rstrip("\r\n")


def read_tsv(path: str, has_header: bool) -> tuple[list[str] | None, list[Row]]:
    """Read a tab-separated file with quoting disabled.

    Args:
        path: the file.
        has_header: whether the first line names the columns.

    Returns:
        ``(header, rows)``: the header fields (``None`` without header) and the data rows. Empty lines are skipped
        (and counted in a log message): GLUE files end with one.

    Raises:
        ValueError: if the file is empty (no header or no line at all).
    """
    header: list[str] | None = None
    rows: list[Row] = []
    blank = 0
    for number, text in _decode_lines(path):
        if header is None and has_header:
            header = text.split("\t")
            continue
        if not text.strip():
            blank += 1
            continue
        rows.append(Row(number, text.split("\t")))
    if has_header and header is None:
        raise ValueError(f"{path}: the file is empty; expected a header line and data rows")
    if blank:
        logger.info("%s: skipped %d empty line(s)", path, blank)
    return header, rows


def read_jsonl(path: str) -> list[tuple[int, dict]]:
    """Read a JSON-lines file: ``[(line_number, object), ...]``; empty lines are skipped.

    Raises:
        ValueError: for a line that is not a JSON object (names file and line).
    """
    out = []
    for number, text in _decode_lines(path):
        if not text.strip():
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {number}: not valid JSON ({err.msg}); expected one JSON object per line")
        if not isinstance(obj, dict):
            raise ValueError(f"{path}, line {number}: expected a JSON object, got {type(obj).__name__}")
        out.append((number, obj))
    return out


def find_file(data_dir: str, candidates: tuple[str, ...]) -> str | None:
    """The first of ``candidates`` that exists in ``data_dir`` (full path), or ``None``."""
    for name in candidates:
        path = os.path.join(data_dir, name)
        if os.path.isfile(path):
            return path
    return None
