"""What the CLI prints for a person: tables that fit the terminal without breaking a word (:func:`render_table`,
:func:`wrap_words`, :func:`terminal_width`) and the "did you mean" hint for a misspelt name (:func:`close_names`).

Rules (issue 58): the width is the terminal's (``shutil.get_terminal_size``, which reads ``COLUMNS`` first), 80
columns when unknown; a cell wraps after a space or a path separator (``/``), never inside a word; a table
whose columns cannot fit side by side is printed as one ``header: value`` block per row instead. Scripts read the
``--json`` form of each command, not these tables.
"""

from __future__ import annotations

import difflib
import re
import shutil
from collections.abc import Sequence

#: the width when the terminal's is unknown (``shutil.get_terminal_size``'s fallback, as ``COLUMNS`` unset off a tty)
DEFAULT_WIDTH = 80
#: spaces between two columns
GAP = 2
#: where a cell may wrap: after a run of spaces, or after a ``/`` (a long path); ``1,2,3`` stays whole
_BREAK = re.compile(r"[^ /]*(?:/| +|$)")


def terminal_width() -> int:
    """Columns of the terminal (``COLUMNS`` first, as ``shutil.get_terminal_size``), :data:`DEFAULT_WIDTH` when
    unknown or not positive."""
    width = shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return width if width > 0 else DEFAULT_WIDTH


def pieces(text: str) -> list[str]:
    """``text`` cut after each break point (spaces, ``/``), separators kept: ``"a/b c"`` ->
    ``["a/", "b ", "c"]``. Joined, the pieces give ``text`` back."""
    return [p for p in _BREAK.findall(text) if p]


def longest_word(text: str) -> int:
    """Width of the widest piece of ``text`` that may not be broken (trailing spaces not counted); 0 for ``""``."""
    return max((len(p.rstrip(" ")) for p in pieces(text)), default=0)


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` as lines of at most ``width`` characters, broken only at :func:`pieces`' break points (a piece wider
    than ``width`` stands alone on its line, unbroken); lines keep no trailing spaces; ``[""]`` for ``""``. Line
    breaks in ``text`` are kept."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for piece in pieces(paragraph):
            if line and len(line + piece.rstrip(" ")) > width:
                lines.append(line.rstrip(" "))
                line = piece.lstrip(" ")
            else:
                line += piece
        lines.append(line.rstrip(" "))
    return lines


def hanging(text: str, width: int, indent: int = 2) -> list[str]:
    """:func:`wrap_words` of ``text`` at ``width``, every line after the first indented by ``indent`` spaces (a
    paragraph's continuation lines stand out from the next paragraph)."""
    first, *rest = wrap_words(text, width)
    rest = wrap_words(" ".join(rest), width - indent) if rest else []
    return [first, *(" " * indent + line for line in rest)]


def column_widths(header: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Each column's width so that the table fits ``width`` (columns joined by :data:`GAP` spaces): its natural
    width (widest cell) when all fit, else at least its longest word and the space left shared out, the smallest
    needs met in full first; ``None`` when even the longest words do not fit side by side."""
    table = [list(header), *map(list, rows)]
    natural = [max(len(line) for row in table for line in row[i].split("\n")) for i in range(len(header))]
    minimum = [max(longest_word(row[i]) for row in table) for i in range(len(header))]
    room = width - GAP * (len(header) - 1)
    if sum(natural) <= room:
        return natural
    if sum(minimum) > room:
        return None
    widths, spare = list(minimum), room - sum(minimum)
    order = sorted(range(len(header)), key=lambda i: natural[i] - minimum[i])  # the smallest needs met in full first
    for k, i in enumerate(order):
        grow = min(natural[i] - minimum[i], spare // (len(order) - k))  # all it needs, or an equal share of the rest
        widths[i] += grow
        spare -= grow
    return widths


def render_table(
    header: Sequence[str],
    rows: Sequence[Sequence[str]],
    width: int | None = None,
    notes: Sequence[Sequence[str]] | None = None,
    indent: int = 2,
    headings: Sequence[str | None] | None = None,
) -> list[str]:
    """The lines of a table of ``rows`` (cells as strings) under ``header``, no line wider than ``width``
    (:func:`terminal_width` when ``None``) unless a single word is, no word broken (:func:`wrap_words`).

    ``notes[i]``: lines of text printed under row ``i``, wrapped at ``width`` and indented by ``indent`` spaces
    (what does not belong in a column: a task's columns, a verdict; continuation lines indented further,
    :func:`hanging`). A table whose longest words do not fit side by
    side becomes one block per row: the first cell, then ``header: cell`` lines indented by ``indent``.

    Raises:
        ValueError: a row whose number of cells is not the header's, or ``notes`` not one entry per row.
    """
    width = terminal_width() if width is None else width
    notes = notes if notes is not None else [()] * len(rows)
    headings = headings if headings is not None else [None] * len(rows)
    for name, given in (("notes", notes), ("headings", headings)):
        if len(given) != len(rows):
            raise ValueError(f"render_table: {len(given)} {name} for {len(rows)} rows; expected one entry per row")
    for n, row in enumerate(rows):
        if len(row) != len(header):
            raise ValueError(f"render_table: row {n} has {len(row)} cells; expected {len(header)} (the header's)")
    pad = " " * indent
    note_lines = [[line for note in row_notes for line in hanging(note, width - indent)] for row_notes in notes]
    widths = column_widths(header, rows, width)
    lines: list[str] = []
    if widths is None:  # too narrow for columns: a block per row
        for row, row_notes, heading in zip(rows, note_lines, headings):
            lines += wrap_words(heading, width) if heading else []
            lines += wrap_words(row[0], width)
            for name, cell in zip(header[1:], row[1:]):
                lines += [pad + line for line in wrap_words(f"{name}: {cell}", width - indent)]
            lines += [pad + line for line in row_notes]
        return lines
    for row, row_notes, heading in [(header, [], None), *zip(rows, note_lines, headings)]:
        lines += wrap_words(heading, width) if heading else []
        wrapped = [wrap_words(cell, w) for cell, w in zip(row, widths)]
        for i in range(max(map(len, wrapped))):
            cells = [(col[i] if i < len(col) else "").ljust(w) for col, w in zip(wrapped, widths)]
            lines.append((" " * GAP).join(cells).rstrip())
        lines += [pad + line for line in row_notes]
        if row is header:
            lines.append((" " * GAP).join("-" * w for w in widths))
    return lines


def print_table(header: Sequence[str], rows: Sequence[Sequence[str]], **options) -> None:
    """Print :func:`render_table` (same arguments) line by line."""
    for line in render_table(header, rows, **options):
        print(line)


def fill(text: str, width: int | None = None, indent: str = "") -> str:
    """``text`` wrapped at ``width`` (:func:`terminal_width` when ``None``) as :func:`wrap_words` wraps, every line
    after ``indent``; one string with line breaks."""
    width = terminal_width() if width is None else width
    return "\n".join(indent + line for line in wrap_words(text, width - len(indent)))


def closest(name: str, known: Sequence[str], cutoff: float = 0.75) -> str | None:
    """The one of ``known`` closest to ``name`` (:func:`difflib.get_close_matches`, compared case-insensitively;
    ``cutoff``: its similarity threshold, 0.75 as for a misspelt flag, so ``sentence`` finds ``sentense`` but not
    ``sentiment``), ``None`` when none is that close."""
    lowered = {str(k).lower(): str(k) for k in known}
    close = difflib.get_close_matches(str(name).lower(), list(lowered), n=1, cutoff=cutoff)
    return lowered[close[0]] if close else None


def close_names(names: Sequence[str], known: Sequence[str], cutoff: float = 0.75) -> str:
    """`` (did you mean 'sentence'?)`` for one misspelt name, `` (did you mean 'sentence' for 'sentense', 'label' for
    'lable'?)`` for several: the :func:`closest` of ``known`` to each of ``names``; ``""`` when none is close."""
    pairs = [(name, match) for name in names if (match := closest(name, known, cutoff)) is not None]
    if not pairs:
        return ""
    if len(names) == 1:
        return f" (did you mean {pairs[0][1]!r}?)"
    return " (did you mean " + ", ".join(f"{m!r} for {n!r}" for n, m in pairs) + "?)"
