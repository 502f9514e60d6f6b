"""The files a task reads and writes: a user's own CSV / TSV / JSON Lines files (:class:`UserFiles`, a base of
:class:`~hf_bert_tasks.tasks.base.Task`), UTF-8 text lines numbered for error messages (:func:`text_lines`,
:func:`line_of`) and indented JSON (:func:`write_json`)."""

from __future__ import annotations

import itertools
import json
import os
from typing import Any, ClassVar

from ..console import close_names

#: the extensions ``datasets``' ``json`` loader reads as JSON Lines (:meth:`UserFiles.read_user_file`)
JSON_LINES = {".json": "JSON Lines", ".jsonl": "JSON Lines"}


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


class UserFiles:
    """Reading a user's own files (``--train_file`` / ``--validation_file`` / ``--test_file``, as ``run_glue.py``)
    into the Hub dataset's columns: the part of :class:`~hf_bert_tasks.tasks.base.Task` used only with such files.
    Needs the task's ``user_files``, ``user_columns``, ``text_columns``, ``label_column`` and ``test_splits``; a
    family reads them by overriding :meth:`from_user_columns`."""

    #: extension -> what a ``--train_file`` of it holds (:meth:`read_user_file`'s loaders); a family whose
    #: ``read_user_file`` reads other files, or not all of these, declares its own (``hf-bert-tasks tasks`` lists it)
    user_file_formats: ClassVar[dict[str, str]] = {
        ".csv": "a header row",
        ".tsv": "a header row",
        **JSON_LINES,
    }

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
        """:meth:`read_user_file` of each of :attr:`user_files` (``--train_file`` … as ``run_glue.py``).

        Raises:
            ValueError: ``--data_dir`` given as well; a bad file (:meth:`read_user_file`).
        """
        import datasets

        if data_dir is not None:
            raise ValueError(
                f"--data_dir {data_dir} and --train_file/--validation_file/--test_file were both given; "
                "expected one source of data"
            )
        return datasets.DatasetDict(
            {split: self.read_user_file(path, split) for split, path in self.user_files.items()}
        )

    def read_user_file(self, path: str, split: str) -> datasets.Dataset:  # noqa: F821
        """One user file of ``split`` (``.csv``, ``.tsv``, ``.json`` / ``.jsonl``: JSON Lines) read by ``datasets``'
        ``csv`` / ``json`` loaders, its :meth:`required_columns` renamed to the canonical ones, then
        :meth:`from_user_columns` (the family's label mapping and checks) into the Hub dataset's columns.

        Raises:
            FileNotFoundError: no such file.
            ValueError: an extension not in :attr:`user_file_formats`; a column missing (names the file, the columns
                found, the closest found to each missing one, "did you mean" as for a misspelt flag, and those expected);
                a bad value (:meth:`from_user_columns`).
        """
        import datasets

        if not os.path.isfile(path):
            raise FileNotFoundError(f"{path}: no such file (given as the {split} file)")
        ext = os.path.splitext(path)[1].lower()
        builders = {
            ".csv": ("csv", {}),
            ".tsv": ("csv", {"delimiter": "\t"}),
            ".json": ("json", {}),
            ".jsonl": ("json", {}),
        }
        if ext not in builders or ext not in self.user_file_formats:
            raise ValueError(
                f"{path}: extension {ext or '(none)'!r}; task {self.name!r} reads {self.user_file_formats_text()}"
            )
        builder, options = builders[ext]
        if builder == "csv":
            options.update(na_filter=False)  # "NA" or "null" stays text, as written
        try:
            ds = datasets.load_dataset(builder, data_files={split: path}, split=split, **options)
        except Exception as err:  # the loader's error names no file: name it
            raise ValueError(f"{path}: could not be read as {ext[1:].upper()} ({type(err).__name__}: {err})") from err
        wanted = self.required_columns()
        optional = {self.label_column} if split in self.test_splits else set()
        missing = [name for c, name in wanted.items() if name not in ds.column_names and c not in optional]
        if missing:
            unused = [c for c in ds.column_names if c not in wanted.values()]  # a found column is no misspelling
            hints = close_names(missing, unused)
            raise ValueError(
                f"{path}: column(s) {missing} not found{hints}; found {ds.column_names}, expected "
                f"{list(wanted.values())} for task {self.name!r} (name yours with --text_column_names "
                "a,b / --label_column_name c)"
            )
        rename = {name: c for c, name in wanted.items() if name in ds.column_names and name != c}
        clash = [c for c in rename.values() if c in ds.column_names and c not in rename]
        ds = ds.remove_columns(clash).rename_columns(rename)
        if len(ds) == 0:
            raise ValueError(f"{path}: no data rows; expected at least one example")
        return self.from_user_columns(ds, path, split, header=builder == "csv")

    def from_user_columns(self, ds, path: str, split: str, header: bool) -> datasets.Dataset:  # noqa: F821
        """A user file's rows (canonical column names) in the Hub dataset's columns; ``header``: CSV/TSV (data row
        ``i`` is on line ``i + 2``), else JSON Lines (line ``i + 1``).

        Raises:
            ValueError: this task reads no user files (the default).
        """
        raise ValueError(f"task {self.name!r} reads no --train_file/--validation_file/--test_file")
