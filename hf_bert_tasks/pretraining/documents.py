"""Corpora → documents (lists of sentences), through ``datasets``' ``text`` / ``json`` / ``parquet`` loaders: corpus
globs resolved (:func:`resolve_corpus_files`), document boundaries (blank lines, WikiText headings, one row per
document), compressed files, rule-based sentence splitting (:func:`split_into_sentences`). Rules: docs/design.md,
"pretraining/documents.py: sentence splitting"::

    docs = load_documents(["corpus.txt"])      # google's format: one sentence per line, blank line between documents
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import io
import itertools
import os
import re
from collections.abc import Iterator, Sequence
from typing import Any

#: sentence-end candidate: a word ending in . ! ? or an ellipsis (runs: "?!"), closing quotes (group 1), spaces (2)
_SENTENCE_END = re.compile(r"(\S*?(?:[.!?]|\u2026)[\"'\u201d\u2019)\]]*)(\s+)")
#: abbreviations (lower case, no final dot) whose period ends no sentence; NUMBER_: words too ("I said no."): not
#: an end only before a digit ("No. 7"). Rules: docs/design.md, "pretraining/documents.py: sentence splitting".
ABBREVIATIONS = frozenset(
    {
        "mr",
        "mrs",
        "ms",
        "messrs",
        "mme",
        "mlle",
        "dr",
        "prof",
        "rev",
        "hon",
        "st",
        "mt",
        "ft",
        "gen",
        "col",
        "capt",
        "lt",
        "sgt",
        "cpl",
        "maj",
        "adm",
        "gov",
        "sen",
        "rep",
        "jr",
        "sr",
        "e.g",
        "i.e",
        "etc",
        "cf",
        "viz",
        "vs",
        "a.m",
        "p.m",
        "ca",
        "esp",
        "approx",
        "inc",
        "ltd",
        "co",
        "bros",
        "dept",
    }
)
NUMBER_ABBREVIATIONS = frozenset({"no", "nos", "vol", "vols", "pp", "fig", "ch", "art", "sec"})
#: WikiText top-level heading `` = Title = `` (sub-headings `` = = Sub = = `` do not start a document).
_WIKITEXT_HEADING = re.compile(r"^\s*=\s[^=].*[^=]\s=\s*$")


def split_into_sentences(text: str) -> list[str]:
    """A paragraph as sentences (google's format): split after ``.`` ``!`` ``?`` or an ellipsis (+ closing quotes)
    and whitespace, unless the next character is lower case (``"Late?" she asked``) or the word is an abbreviation
    (:data:`ABBREVIATIONS`; ``Mr. Smith``), one letter (``J. Smith``), dotted letters (``U.S.``; "5 p.m. Then" stays
    whole) or ``No.`` ... before a digit. ``split_into_sentences('It rained. We left!  Why? "Because." Done')`` ->
    ``["It rained.", "We left!", "Why?", '"Because."', "Done"]``; empty pieces dropped (docs/design.md)."""
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        end, word = match.end(), match.group(1)
        stem = re.search(r"[\w.]*$", word[:-1]).group().lower() if word[-2:-1] != "." else ""  # '"Mr.' -> "mr"
        if (
            (end < len(text) and text[end].islower())
            or word.endswith(".")
            and (
                stem in ABBREVIATIONS
                or (len(stem) == 1 and stem.isalpha())
                or re.fullmatch(r"(?:[a-z]\.)+[a-z]", stem)
                or (stem in NUMBER_ABBREVIATIONS and text[end : end + 1].isdigit())
            )
        ):
            continue
        sentences.append(text[start : match.start(2)].strip())
        start = end
    return [s for s in [*sentences, text[start:].strip()] if s]


#: compressions datasets' ``text`` / ``json`` loaders read by file suffix, and the modules that open them here
COMPRESSED_SUFFIXES = {".xz": "lzma", ".gz": "gzip", ".bz2": "bz2"}


def _open_binary(path: str):
    module = COMPRESSED_SUFFIXES.get(os.path.splitext(path)[1].lower())  # bytes, decompressed by suffix
    return importlib.import_module(module).open(path, "rb") if module else open(path, "rb")


def resolve_corpus_files(patterns: str | Sequence[str], flag: str = "--train_files") -> list[str]:
    """Local paths and globs (``shards/**/*.parquet``, ``*.txt.xz``) as a de-duplicated file list (sorted per pattern).
    Raises ``FileNotFoundError`` naming ``flag`` and a pattern that matches no file, ``ValueError`` for a compression
    other than :data:`COMPRESSED_SUFFIXES` (text and JSON lines only)."""
    files: list[str] = []
    for pattern in [patterns] if isinstance(patterns, str) else patterns:
        matched = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        matched = [m for m in matched if os.path.isfile(m)]
        if not matched:
            raise FileNotFoundError(f"{flag}: {pattern} does not exist (no file matches)")
        files.extend(m for m in matched if m not in files)
    for f in files:
        stem, suffix = os.path.splitext(f.lower())
        if suffix == ".zst" or (suffix in COMPRESSED_SUFFIXES and stem.endswith(".parquet")):
            raise ValueError(
                f"{f}: this compression is not read (text and JSON lines may be .xz, .gz or .bz2); "
                "decompress it or convert it to parquet"
            )
    return files


def _file_kind(path: str, document_boundary: str, encoding: str) -> str:
    """``json``, ``parquet``, or text's boundary ``heading`` / ``blank_line`` (``"auto"``: a heading in 200 lines)."""
    name = (
        os.path.splitext(path.lower())[0] if os.path.splitext(path.lower())[1] in COMPRESSED_SUFFIXES else path.lower()
    )
    if name.endswith((".jsonl", ".json", ".ndjson", ".parquet")):
        return "parquet" if name.endswith(".parquet") else "json"
    if document_boundary == "auto":
        with io.TextIOWrapper(_open_binary(path), encoding=encoding, errors="replace") as f:
            heading = any(_WIKITEXT_HEADING.match(line.rstrip("\r\n")) for line in itertools.islice(f, 200))
        return "heading" if heading else "blank_line"
    return document_boundary


def rows_to_documents(
    batch: dict[str, list],
    text_column: str = "text",
    split_sentences: bool = False,
    where: str = "batch",
    first_row: int = 0,
    sentences_column: str = "sentences",
) -> list[list[str]]:
    """Rows as sentence lists (stripped, empty ones dropped): ``sentences_column``, else ``text_column`` split into
    lines. ``where`` and the row (from ``first_row``) name a bad row."""
    sentences, texts = batch.get(sentences_column), batch.get(text_column)
    if sentences is None and texts is None:
        raise ValueError(
            f"{where}: needs a {sentences_column!r} column (a list of sentences per document) or a "
            f"{text_column!r} column (one document per row, one sentence per line); got {sorted(batch)}"
        )
    docs = []
    for i, (doc, text) in enumerate(itertools.zip_longest(sentences or (), texts or ())):
        if doc is None:
            if not isinstance(text, str):
                raise ValueError(
                    f"{where}, row {first_row + i}: a row needs a {sentences_column!r} (list of strings) "
                    f"or {text_column!r} (one sentence per line) value; got {text!r:.80}"
                )
            doc = text.split("\n")
        elif isinstance(doc, str) or not all(isinstance(x, str) for x in doc):
            raise ValueError(
                f"{where}, row {first_row + i}: {sentences_column!r} must be a list of strings, got {doc!r:.80}"
            )
        docs.append(
            [x for line in doc for x in split_into_sentences(line)]
            if split_sentences
            else [x.strip() for x in doc if x.strip()]
        )
    return docs


def _text_documents(
    batch: dict[str, list], indices, kind: str, where: str, text_column: str, split_sentences: bool
) -> dict[str, list]:
    """The map over a loader's rows, empty documents dropped: ``json`` / ``parquet`` / Hub rows one document each
    (:func:`rows_to_documents`); text paragraphs, also ended at a blank-looking line
    (google's reader), or (``heading``) whole files split at each WikiText heading (the document's first sentence)."""
    headings = kind == "heading"
    if kind not in ("heading", "blank_line"):
        docs = rows_to_documents(batch, text_column, split_sentences, where, indices[0] + 1 if indices else 1)
    else:
        docs = []
        for text in batch["text"]:
            docs.append([])
            for line in text.lstrip("\ufeff").split("\n"):
                if headings and _WIKITEXT_HEADING.match(line):
                    docs.append([line.strip(" =")])
                elif line.strip():
                    docs[-1].extend(split_into_sentences(line) if split_sentences else [line.strip()])
                elif not headings:
                    docs.append([])
    return {"sentences": [d for d in docs if d]}


def _decode_error(files: Sequence[str], encoding: str) -> ValueError | None:
    """A ``ValueError`` naming the first file and line that is not ``encoding`` text (the loader's names neither)."""
    for path in files:
        with _open_binary(path) as f:
            for lineno, raw in enumerate(f, 1):
                try:
                    raw.decode(encoding)
                except UnicodeDecodeError as err:
                    return ValueError(f"{path}:{lineno}: not valid {encoding} text ({err.reason})")
    return None


def load_documents(
    train_files: str | Sequence[str] | None = None,
    *,
    dataset_name: str | None = None,
    dataset_config_name: str | None = None,
    dataset_split: str = "train",
    text_column: str = "text",
    document_boundary: str = "auto",
    split_sentences: bool = False,
    streaming: bool = False,
    cache_dir: str | None = None,
    encoding: str = "utf-8",
    num_proc: int | None = None,
):
    """A corpus as a ``datasets`` table (``IterableDataset`` when ``streaming``) of documents (column ``sentences``:
    ``list[str]``): local files (``train_files``: paths or globs, mixed formats, in file order) of text (one sentence
    per line, a blank line or, ``document_boundary="heading"``, a WikiText heading between documents; ``"auto"``
    detects it) or ``.jsonl`` / ``.json`` / ``.ndjson`` / ``.parquet`` (a document per row); or a Hub dataset
    (``dataset_name``, its config, split); text / JSON lines may be ``.xz`` / ``.gz`` / ``.bz2``; ``num_proc``: map
    processes. Reading, cache keys: docs/design.md, "pretraining/documents.py: loading documents".

    Raises ``FileNotFoundError`` for a path or pattern that matches nothing; ``ValueError`` for neither or both of
    ``train_files`` / ``dataset_name``, only empty files, a file that is not ``encoding`` text (file and line named)
    or not JSON, a row without a document (file and row named).
    """
    from datasets import Features, List, Value, concatenate_datasets, load_dataset
    from datasets.exceptions import DatasetGenerationError

    if (train_files is None) == (dataset_name is None):
        raise ValueError("give exactly one of train_files (local files/globs) and dataset_name (a Hub dataset id)")
    if document_boundary not in ("auto", "blank_line", "heading"):
        raise ValueError(f"document_boundary must be 'auto', 'blank_line' or 'heading', got {document_boundary!r}")
    groups = [("rows", [])]  # a Hub dataset
    if train_files is not None:
        files = [os.path.abspath(p) for p in resolve_corpus_files(train_files) if os.path.getsize(p)]
        if not files:  # the text loader finds no split in empty files
            raise ValueError(f"no documents (non-blank lines) in {train_files}: the files are empty")
        groups = [
            (kind, list(group))
            for kind, group in itertools.groupby(files, key=lambda p: _file_kind(p, document_boundary, encoding))
        ]
    parts = []
    for kind, group in groups:  # one loader per run of files of one kind; text: paragraphs or whole files
        where = group[0] if len(group) == 1 else str(group or dataset_name)
        fn_kwargs = {"kind": kind, "where": where, "text_column": text_column, "split_sentences": split_sentences}
        args, options = [dataset_name, dataset_config_name], {"split": dataset_split}
        if group:
            args, options = [kind], {"data_files": group, "split": "train"}
        if kind in ("heading", "blank_line"):
            args = ["text"]
            options.update(
                sample_by="document" if kind == "heading" else "paragraph",
                encoding=encoding,
                features=Features({"text": Value("string")}),
            )
        try:
            raw = load_dataset(*args, streaming=streaming, cache_dir=cache_dir, **options)
        except DatasetGenerationError as err:
            cause = err.__cause__
            named = _decode_error(group, encoding) if isinstance(cause, UnicodeDecodeError) else None
            raise named or ValueError(f"{where}: cannot be read as {args[0]}: {cause}") from None
        map_kwargs: dict[str, Any] = {
            "batched": True,
            "with_indices": True,
            "fn_kwargs": fn_kwargs,
            "remove_columns": raw.column_names,
            "features": Features({"sentences": List(Value("string"))}),
        }
        if not streaming:  # our cache key, not a hash of the function (tests swap the function for a trap)
            stats = [(p, os.path.getsize(p), os.stat(p).st_mtime_ns) for p in group]
            key = repr((raw._fingerprint, kind, sorted(fn_kwargs.items()), stats)).encode()
            map_kwargs.update(
                desc="documents", new_fingerprint=hashlib.blake2b(key, digest_size=16).hexdigest(), num_proc=num_proc
            )
        parts.append(raw.map(_text_documents, **map_kwargs))
    return parts[0] if len(parts) == 1 else concatenate_datasets(parts)


def iter_file_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> Iterator[list[str]]:
    """One file's documents (lists of sentences) in file order, one at a time: a streaming :func:`load_documents`.
    Raises ``FileNotFoundError`` for a missing ``path``, ``ValueError`` naming the file and line of bad bytes."""
    try:
        for row in load_documents(
            path,
            document_boundary=document_boundary,
            split_sentences=split_sentences,
            encoding=encoding,
            streaming=True,
        ):
            yield row["sentences"]
    except UnicodeDecodeError:
        raise _decode_error([path], encoding) from None


def read_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> list[list[str]]:
    """:func:`iter_file_documents` as a list (small files: tests, benchmarks)."""
    return list(iter_file_documents(path, document_boundary, split_sentences, encoding))


def documents_dataset(paths: str | Sequence[str], **read_kwargs):
    """:func:`load_documents` over ``paths`` (``read_kwargs`` go to it) that raises ``ValueError`` for no documents."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    documents = load_documents(paths, **read_kwargs)
    if not len(documents):
        raise ValueError(f"no documents (non-blank lines) in {paths}")
    return documents
