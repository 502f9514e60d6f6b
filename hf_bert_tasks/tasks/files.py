"""The files a task reads and writes: a user's own CSV / TSV / JSON Lines files (:class:`UserFiles`, a base of
:class:`~hf_bert_tasks.tasks.base.Task`, reading each into :class:`Records`), UTF-8 text lines numbered for error
messages (:func:`text_lines`, :func:`line_of`) and indented JSON (:func:`write_json`)."""

from __future__ import annotations

import csv
import dataclasses
import io
import itertools
import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from ..console import close_names

logger = logging.getLogger(__name__)

#: the extensions read as JSON Lines (:func:`read_json_lines`; a single JSON array also works)
JSON_LINES = {".json": "JSON Lines", ".jsonl": "JSON Lines"}


def write_json(path: str, obj: Any) -> None:
    """Write ``obj`` as indented JSON (UTF-8), creating parent folders."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, ensure_ascii=False, sort_keys=False)
        f.write("\n")


def text_lines(path: str):
    """``(line number, text)`` of each line of a UTF-8 file (1-based; BOM and line end removed), for errors naming a
    line and the CoNLL reader (no ``datasets`` loader for it). Lines end at ``\\n`` only (``\\r\\n`` too): other
    Unicode line breaks (``\\u2028``, ``\\x0b`` …) are text, as Python's ``csv`` and ``json`` modules write them.

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
            yield number, text.removesuffix("\n").removesuffix("\r")


def line_of(path: str, row: int, header: bool) -> int:
    """The 1-based line of data row ``row`` (0-based, empty lines skipped as the loaders skip them) of ``path``."""
    return next(itertools.islice((n for n, text in text_lines(path) if text), row + header, None))


@dataclass
class Records:
    """A user file's records, as written: ``columns`` (the header of a CSV / TSV file; the keys of a JSON Lines file
    in first-seen order), ``rows`` (column -> one value per record: a string for CSV / TSV, any JSON value for JSON
    Lines, ``None`` where a JSON record has no such key) and ``lines`` (the 1-based line each record starts on, for
    errors; 0 where unknown). ``len(records)`` is the number of records (blank lines are not records)."""

    path: str
    columns: list[str]
    rows: dict[str, list]
    lines: list[int]

    def __len__(self) -> int:
        return len(self.lines)

    def where(self, row: int) -> str:
        """``"<path>, line <n>"`` of record ``row`` (0-based; ``"<path>, record <row + 1>"`` where its line is 0:
        unknown, as in a nested JSON file)."""
        line = self.lines[row]
        return f"{self.path}, line {line}" if line else f"{self.path}, record {row + 1}"

    def rename(self, names: dict[str, str]) -> Records:
        """The records with columns renamed (``file name -> canonical name``); a column already holding a canonical
        name that another column takes is dropped (the user's named column wins)."""
        taken = set(names.values())
        kept = [c for c in self.columns if c in names or c not in taken]
        columns = [names.get(c, c) for c in kept]
        return Records(self.path, columns, {names.get(c, c): self.rows[c] for c in kept}, self.lines)


def _decode_error(path: str, err: UnicodeDecodeError, data: bytes) -> ValueError:
    """The line-level error of bytes that are not UTF-8 at ``err.start`` of ``data``."""
    line = data.count(b"\n", 0, err.start) + 1
    column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
    return ValueError(
        f"{path}, line {line}: bytes that are not UTF-8 at column {column} "
        f"({data[err.start : err.start + 4]!r}); expected a UTF-8 text file"
    )


#: a field as a CSV writer quotes one holding a quote: ``"..."`` with the inner quotes doubled (``""``); no field of
#: GLUE's TSV files looks so (1,096 of their fields open with a quote, read as text)
CSV_QUOTED = re.compile(r'"(?:[^"]|"")*""(?:[^"]|"")*"')


def read_delimited(path: str, delimiter: str) -> Records:
    """A CSV (``delimiter=","``: Python's ``csv`` module, RFC 4180 quoting, ``strict``: a quoted field may hold
    commas, quotes doubled, line breaks) or TSV file (``"\\t"``: one record per line, fields split at tabs, quoting
    **off**, as the package's GLUE reader and ``run_glue.py``'s GLUE files: a ``"`` is text) with a header line; UTF-8,
    an optional BOM, ``\\n`` or ``\\r\\n`` line ends (a lone ``\\r`` is text, as ``csv.writer(lineterminator="\\n")``
    writes it unquoted; in a file without ``\\n`` it ends lines). Blank lines are skipped (not records); every record
    must have as many fields as the header.

    Raises:
        ValueError: an empty file, a broken quote (CSV), a TSV field quoted as a CSV writer quotes (:data:`CSV_QUOTED`:
            read with quoting off it would keep the doubled quotes), a record with another number of fields, a header
            naming a column twice, bytes that are not UTF-8; each names the file and the line.
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise _decode_error(path, err, data) from None
    if not text.strip():
        raise ValueError(f"{path}: the file is empty; expected a header line and data rows")
    if delimiter == "\t":
        numbered = [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), start=1)]
        found = [(n, line.split("\t")) for n, line in numbered if line]
    else:
        found, mark = [], ""
        if "\r" in text and "\n" in text:  # lines end at \n: a lone \r is text (csv.writer(lineterminator="\n") does
            # not quote it), kept apart as a character the text lacks, and put back in the fields
            mark = next(chr(c) for c in range(0xE000, 0x110000) if chr(c) not in text)
            text = re.sub(r"\r(?!\n)", mark, text)
        reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # as open(newline=""): the csv docs' rule
        start = 1
        try:
            for fields in reader:
                if fields:
                    found.append((start, [f.replace(mark, "\r") for f in fields] if mark else fields))
                start = reader.line_num + 1
        except csv.Error as err:
            what = "a quoted field is not closed" if "unexpected end" in str(err) else str(err)
            raise ValueError(
                f"{path}, line {start}: broken quoting ({what}); expected comma-separated fields, a field "
                'with commas, quotes or line breaks inside "double quotes", a quote inside it doubled ("")'
            ) from None
    if delimiter == "\t" and (
        quoted := next(((n, f) for n, fs in found for f in fs if CSV_QUOTED.fullmatch(f)), None)
    ):
        raise ValueError(
            f'{path}, line {quoted[0]}: field {quoted[1][:40]!r} is quoted as a CSV writer quotes ("..." with "" '
            "inside); a .tsv is read with quoting off, as GLUE's files: write the fields tab-joined, or name it .csv"
        )
    (first, header), body = found[0], found[1:]
    if len(set(header)) != len(header):
        twice = sorted({c for c in header if header.count(c) > 1})
        raise ValueError(f"{path}, line {first}: the header names column(s) {twice} twice; expected unique names")
    kind = "comma" if delimiter == "," else "tab"
    for line, fields in body:
        if len(fields) != len(header):
            raise ValueError(
                f"{path}, line {line}: found {len(fields)} {kind}-separated field(s), the header has {len(header)}; "
                f"expected columns {header}"
            )
    rows = {c: [fields[i] for _, fields in body] for i, c in enumerate(header)}
    return Records(path, list(header), rows, [line for line, _ in body])


def read_json_lines(path: str) -> Records:
    """A JSON Lines file (one JSON object per line; UTF-8, optional BOM, blank lines skipped) or, where the file is
    one JSON array, the objects of that array (``lines``: the array's line for each).

    Raises:
        ValueError: an empty file, a line that is not valid JSON or not an object, bytes that are not UTF-8; each
            names the file and the line.
    """
    lines = [(n, text) for n, text in text_lines(path) if text.strip()]
    if not lines:
        raise ValueError(f"{path}: the file is empty; expected one JSON object per line (JSON Lines)")
    objects: list[tuple[int, Any]] = []
    if lines[0][1].lstrip().startswith("["):  # one JSON array of objects
        with open(path, encoding="utf-8-sig") as f:
            try:
                array = json.load(f)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {err.lineno}: not valid JSON ({err.msg}); expected JSON") from None
        objects = [(lines[0][0], obj) for obj in array]
    for line, text in [] if objects else lines:
        try:
            objects.append((line, json.loads(text)))
        except json.JSONDecodeError as err:
            raise ValueError(
                f"{path}, line {line}: not valid JSON ({err.msg} at column {err.colno}); expected one JSON "
                "object per line (JSON Lines)"
            ) from None
    columns: dict[str, None] = {}
    for line, obj in objects:
        if not isinstance(obj, dict):
            raise ValueError(f"{path}, line {line}: a JSON {type(obj).__name__}; expected a JSON object per record")
        columns.update(dict.fromkeys(obj))
    rows = {c: [obj.get(c) for _, obj in objects] for c in columns}
    return Records(path, list(columns), rows, [line for line, _ in objects])


#: extension -> reader of a user file (:meth:`UserFiles.read_records`)
READERS = {
    ".csv": lambda path: read_delimited(path, ","),
    ".tsv": lambda path: read_delimited(path, "\t"),
    ".json": read_json_lines,
    ".jsonl": read_json_lines,
}


class UserFiles:
    """Reading a user's own files (``--train_file`` / ``--validation_file`` / ``--test_file``, as ``run_glue.py``)
    into the Hub dataset's columns: the part of :class:`~hf_bert_tasks.tasks.base.Task` used only with such files.
    Needs the task's ``user_files``, ``user_columns``, ``text_columns``, ``label_column`` and ``test_splits``; a
    family reads them by overriding :meth:`from_user_columns` (and :meth:`labels_from_records`, where the label set
    comes from the data).

    The contract, for every family: a file is read whole or refused in one line naming the file, the line and what
    was expected; the rows read are the records in the file (:func:`read_delimited`, :func:`read_json_lines`)."""

    #: extension -> what a ``--train_file`` of it holds (:data:`READERS`); a family whose ``read_records`` reads
    #: other files, or not all of these, declares its own (``hf-bert-tasks tasks`` lists it)
    user_file_formats: ClassVar[dict[str, str]] = {".csv": "a header row", ".tsv": "a header row", **JSON_LINES}

    def user_file_formats_text(self) -> str:
        """:attr:`user_file_formats` in one line, extensions of the same kind together:
        ``".csv / .tsv (a header row), .json / .jsonl (JSON Lines)"``."""
        kinds: dict[str, list[str]] = {}
        for ext, kind in self.user_file_formats.items():
            kinds.setdefault(kind, []).append(ext)
        return ", ".join(f"{' / '.join(exts)} ({kind})" for kind, exts in kinds.items())

    def required_columns(self) -> dict[str, str]:
        """Canonical column -> the column a user file must have (:attr:`user_columns`, else the canonical name): the
        text columns and the label column (the label is optional in a test file)."""
        return {c: self.user_columns.get(c, c) for c in (*self.text_columns, self.label_column)}

    def read_user_files(self, data_dir: str | None = None) -> datasets.DatasetDict:  # noqa: F821
        """:meth:`read_records` of each of :attr:`user_files` (``--train_file`` … as ``run_glue.py``), then
        :meth:`labels_from_records` (all files read first) and :meth:`from_user_columns` of each.

        Raises:
            ValueError: ``--data_dir`` given as well; a bad file (:meth:`read_records`, :meth:`from_user_columns`).
        """
        import datasets

        if data_dir is not None:
            raise ValueError(
                f"--data_dir {data_dir} and --train_file/--validation_file/--test_file were both given; "
                "expected one source of data"
            )
        records = {split: self.read_records(path, split) for split, path in self.user_files.items()}
        self.labels_from_records(records)
        return datasets.DatasetDict({split: self.from_user_columns(rec, split) for split, rec in records.items()})

    def read_user_file(self, path: str, split: str) -> datasets.Dataset:  # noqa: F821
        """One user file of ``split`` in the Hub dataset's columns (:meth:`read_records`, then
        :meth:`from_user_columns`; the label set as it is, not taken from this file)."""
        return self.from_user_columns(self.read_records(path, split), split)

    def read_records(self, path: str, split: str) -> Records:
        """One user file of ``split`` (``.csv``, ``.tsv``, ``.json`` / ``.jsonl``: JSON Lines; :data:`READERS`) as
        :class:`Records` with its :meth:`required_columns` renamed to the canonical ones.

        Raises:
            FileNotFoundError: no such file.
            ValueError: an extension not in :attr:`user_file_formats`; an empty file, a broken quote, a record of
                another width, bad JSON (file and line named); a column missing (names the file, the columns found,
                the closest found to each missing one, "did you mean" as for a misspelt flag, and those expected); no
                data rows.
        """
        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such file (given as the {split} file)")
        ext = os.path.splitext(path)[1].lower()
        if ext not in READERS or ext not in self.user_file_formats:
            raise ValueError(
                f"{path}: extension {ext or '(none)'!r}; task {self.name!r} reads {self.user_file_formats_text()}"
            )
        records = READERS[ext](path)
        wanted = self.required_columns()
        optional = {self.label_column} if split in self.test_splits else set()
        missing = [name for c, name in wanted.items() if name not in records.columns and c not in optional]
        if missing:
            where = f"{path}, line 1" if ext in (".csv", ".tsv") else path
            unused = [c for c in records.columns if c not in wanted.values()]  # a found column is no misspelling
            raise ValueError(
                f"{where}: column(s) {missing} not found{close_names(missing, unused)}; found {records.columns}, expected "
                f"{list(wanted.values())} for task {self.name!r} (name yours with --text_column_names "
                "a,b / --label_column_name c)"
            )
        if not len(records):
            raise ValueError(f"{path}: no data rows; expected at least one example")
        if ext in (".json", ".jsonl"):  # a key present in some records only: name the first record without it
            for c, name in wanted.items():
                values = records.rows.get(name)
                if values is not None and c not in optional and None in values:
                    row = values.index(None)
                    raise ValueError(f"{records.where(row)}: no field {name!r}; expected {list(wanted.values())}")
        return records.rename({name: c for c, name in wanted.items() if name in records.columns and name != c})

    def with_label_names(self, names) -> Task:  # noqa: F821
        """A copy whose label set is ``names`` (id order: a saved model's ``config.json`` ``id2label``), as
        :meth:`labels_from_records` sets it for a user's files; the task itself when the names are its own or it has
        no label set (regression, QA)."""
        names = tuple(names)
        if not self.label_names or self.problem_type == "regression" or names == tuple(self.label_names):
            return self
        return dataclasses.replace(self, label_names=names)

    def user_data_description(self) -> str:
        """One line for a card of a model trained on the user's own files (not the Hub dataset :attr:`description`
        describes): the problem and :attr:`label_names`."""
        what = self.problem_type.replace("_", " ")
        labels = f"; labels {', '.join(self.label_names)}" if self.label_names else ""
        return f"{what[0].upper()}{what[1:]} as task {self.name!r}, on the user's own data{labels}"

    def labels_from_records(self, records: dict[str, Records]) -> None:
        """Take the label set from the user's files (``split -> Records`` of every given file), where the family
        does; the default keeps the task's."""

    def from_user_columns(self, records: Records, split: str) -> datasets.Dataset:  # noqa: F821
        """A user file's records (canonical column names) in the Hub dataset's columns.

        Raises:
            ValueError: this task reads no user files (the default).
        """
        raise ValueError(f"task {self.name!r} reads no --train_file/--validation_file/--test_file")
