"""Corpora → documents (:func:`load_documents`, ``datasets``' loaders) → BERT pretraining instances: NSP pairs (§3.1,
Appendix A; google-research/bert ``create_pretraining_data.py``) or MLM-only blocks (RoBERTa); the collator masks::

    docs = load_documents(["corpus.txt"])      # google's format: one sentence per line, blank line between documents
    examples = build_pretraining_dataset(docs, tokenizer, max_seq_length=128, seed=0)
"""

from __future__ import annotations

import glob
import hashlib
import importlib
import io
import itertools
import os
import random
import re
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

#: sentence-end candidate: a word ending in . ! ? or an ellipsis (runs: "?!"), closing quotes (group 1), spaces (2)
_SENTENCE_END = re.compile(r"(\S*?(?:[.!?]|\u2026)[\"'\u201d\u2019)\]]*)(\s+)")
#: abbreviations (lower case, no final dot) whose period ends no sentence; NUMBER_: words too ("I said no."): not
#: an end only before a digit ("No. 7"). Rules: docs/design.md, "pretraining_data: sentence splitting".
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

IS_NEXT, NOT_NEXT = 0, 1


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


def _documents(
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


def create_pretraining_examples(
    batch: dict[str, list],
    indices: Sequence[int] | None = None,
    *,
    tokenizer,
    max_seq_length: int = 128,
    short_seq_prob: float = 0.1,
    nsp_probability: float = 0.5,
    dupe_factor: int = 1,
    seed: int = 0,
    sentences_column: str = "sentences",
    text_column: str = "text",
    split_sentences: bool = False,
    on_single_document: str = "warn",
    next_sentence_prediction: bool = True,
) -> dict[str, list]:
    """Batched ``datasets`` map function: documents (rows: a ``sentences`` list or a ``text`` string, one sentence per
    line, split further with ``split_sentences``) → pretraining instances, made with a *fast* tokenizer and seeded per
    batch from ``seed`` and ``indices`` (else the text). Rules: docs/design.md, "pretraining_data: instance rules".

    NSP pairs ``[CLS] A [SEP] B [SEP]`` (google-research/bert ``create_instances_from_document``, §3.1), label 0
    IsNext / 1 NotNext (B from another document of the batch), ``dupe_factor`` passes, not shuffled; MLM only:
    RoBERTa's FULL-SENTENCES blocks (Liu et al. 2019 §4.2). Lists per instance: ``input_ids`` (<= ``max_seq_length``),
    ``token_type_ids``, ``next_sentence_label`` (NSP only), ``word_ids`` (from 0 per instance, ``-1`` at ``[CLS]``,
    ``[SEP]``). Warns (NSP only) of single-sentence documents, of a single-document batch (IsNext pairs only).

    Raises ``ValueError`` for bad parameters (``max_seq_length`` < 5 with NSP, < 3 without), a batch without the
    expected column or with non-string sentences, a slow tokenizer, or a single-document batch with
    ``on_single_document="error"``.
    """
    nsp = next_sentence_prediction
    if max_seq_length < (5 if nsp else 3):
        raise ValueError(
            f"max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP]) with NSP, >= 3 ([CLS] x [SEP]) "
            f"without, got {max_seq_length}"
        )
    if not 0.0 <= short_seq_prob <= 1.0 or not 0.0 <= nsp_probability <= 1.0:
        raise ValueError(
            f"short_seq_prob and nsp_probability must be in [0, 1], got {short_seq_prob}, {nsp_probability}"
        )
    if dupe_factor < 1 or on_single_document not in ("warn", "error"):
        raise ValueError(
            f"dupe_factor must be >= 1 and on_single_document 'warn' or 'error', got {dupe_factor}, "
            f"{on_single_document!r}"
        )
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("create_pretraining_examples needs a fast tokenizer (word_ids for whole-word masking)")
    docs = _documents(batch, text_column, split_sentences, sentences_column=sentences_column)
    batch_seed = hashlib.blake2b(str(seed).encode(), digest_size=8)  # stable: the row indices, else the text
    if indices is not None and len(indices):
        batch_seed.update(f"idx:{indices[0]}:{len(indices)}".encode())
    else:  # each sentence + "\n", each document + "\0"
        text = "".join("".join(s + "\n" for s in doc) + "\x00" for doc in docs)
        batch_seed.update(text.encode("utf-8", "surrogatepass"))
    rng = random.Random(int.from_bytes(batch_seed.digest(), "little"))
    # every sentence of the batch in one tokenizer call, as (token id, word id) pairs with batch-unique word ids;
    # sentences that tokenize to nothing and documents left empty are dropped
    flat = [s for doc in docs for s in doc]
    enc = tokenizer(flat, add_special_tokens=False) if flat else {"input_ids": []}
    tokenized: list[list[list[tuple[int, int]]]] = []
    next_word = 0
    for lo, hi in itertools.pairwise(itertools.accumulate(map(len, docs), initial=0)):
        sentences = []
        for k in range(lo, hi):
            if enc["input_ids"][k]:
                words = [next_word + (w if w is not None else 0) for w in enc.word_ids(k)]
                next_word = max(words) + 1
                sentences.append(list(zip(enc["input_ids"][k], words)))
        if sentences:
            tokenized.append(sentences)
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    out: dict[str, list] = {"input_ids": [], "token_type_ids": [], "next_sentence_label": [], "word_ids": []}
    single_sentence_docs = sum(len(d) == 1 for d in tokenized)
    if nsp and single_sentence_docs and len(tokenized) > 1:
        warnings.warn(
            f"{single_sentence_docs} of {len(tokenized)} documents in a batch have a single sentence: they "
            "only give NotNext pairs (as in google-research/bert); check the document boundaries (blank "
            "lines) of the corpus",
            UserWarning,
            stacklevel=2,
        )
    if nsp and len(tokenized) == 1:
        msg = (
            "a batch holds a single document, so NotNext pairs (B from another document) cannot be made; "
            "use more documents per batch (batch_size) or a corpus with several documents"
        )
        if on_single_document == "error":
            raise ValueError(msg)
        warnings.warn(msg + "; emitting IsNext pairs only", UserWarning, stacklevel=2)
    if nsp:  # google's loop: (A, B, label) per pair, dupe_factor passes over the documents
        instances = (
            pair
            for _ in range(dupe_factor)
            for d in range(len(tokenized))
            for pair in _pairs_from_document(tokenized, d, max_seq_length - 3, short_seq_prob, nsp_probability, rng)
        )
    else:  # RoBERTa's FULL-SENTENCES: the tokens in order, an extra [SEP] (word id -1) between two documents (none
        # at a block start), cut into blocks of max_seq_length - 2 tokens (the last may be shorter)
        del out["next_sentence_label"]
        block = max_seq_length - 2
        stream: list[tuple[int, int]] = []
        for d, doc in enumerate(tokenized):
            if d and len(stream) % block:
                stream.append((sep_id, -1))
            stream.extend(pair for sentence in doc for pair in sentence)
        instances = ((stream[i : i + block], None) for _ in range(dupe_factor) for i in range(0, len(stream), block))
    for *segments, label in instances:  # [CLS] A [SEP] (B [SEP]): segment k has token type k
        ids, types, words = [cls_id], [0], [-1]
        for token_type, segment in enumerate(segments):
            segment_ids, segment_words = zip(*segment)
            ids += [*segment_ids, sep_id]
            types += [token_type] * (len(segment_ids) + 1)
            words += [*segment_words, -1]
        out["input_ids"].append(ids)
        out["token_type_ids"].append(types)
        # batch-unique word ids -> 0, 1, 2 ... in order of appearance (a word's pieces are contiguous); -1 stays -1
        rank = {w: i for i, w in enumerate(w for w in dict.fromkeys(words) if w != -1)}
        rank[-1] = -1
        out["word_ids"].append(list(map(rank.__getitem__, words)))
        if nsp:
            out["next_sentence_label"].append(label)
    return out


def _pairs_from_document(docs, doc_index, max_num_tokens, short_seq_prob, nsp_probability, rng):
    """Yield ``(a, b, label)`` (``(token, word)`` pairs) for one document (google's loop, rules in the caller)."""
    document = docs[doc_index]
    can_pick_other = len(docs) > 1
    target = max_num_tokens
    if rng.random() < short_seq_prob:
        target = rng.randint(2, max_num_tokens)
    chunk: list[list[tuple[int, int]]] = []
    length = i = 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i])
        if i == len(document) - 1 or length >= target:
            random_next = rng.random() < nsp_probability and can_pick_other
            if len(chunk) == 1 and not random_next:
                if i + 1 < len(document):  # IsNext needs a second sentence: take the next one (trimmed below)
                    i += 1
                    chunk.append(document[i])
                elif can_pick_other:  # last sentence of the document: only a NotNext pair is possible
                    random_next = True
                else:  # one document, one sentence left: no partner at all, drop it
                    chunk, length, i = [], 0, i + 1
                    continue
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            a = [p for s in chunk[:a_end] for p in s]
            b: list[tuple[int, int]] = []
            if random_next:
                other = rng.randrange(len(docs) - 1)
                random_doc = docs[other + (other >= doc_index)]  # uniform over the *other* documents
                for j in range(rng.randint(0, len(random_doc) - 1), len(random_doc)):
                    b.extend(random_doc[j])
                    if len(b) >= target - len(a):
                        break
                i -= len(chunk) - a_end  # put the unused sentences back
            else:
                b = [p for s in chunk[a_end:] for p in s]
            # google's truncate_seq_pair: drop a token of the longer side (front or back, coin flip) until they fit
            while len(a) + len(b) > max_num_tokens:
                longer = a if len(a) > len(b) else b
                del longer[0 if rng.random() < 0.5 else -1]
            yield a, b, NOT_NEXT if random_next else IS_NEXT
            chunk, length = [], 0
        i += 1


def build_pretraining_dataset(
    documents,
    tokenizer,
    *,
    batch_size: int = 1000,
    num_proc: int | None = None,
    next_sentence_prediction: bool = True,
    **kwargs,
):
    """Map :func:`create_pretraining_examples` (``kwargs``: its parameters) over a ``Dataset`` (cached under a key of
    the documents, tokenizer and parameters; ``num_proc`` workers) or ``IterableDataset`` of documents, ``batch_size``
    documents per batch (the NotNext pool)."""
    from datasets import IterableDataset

    kwargs["next_sentence_prediction"] = next_sentence_prediction
    map_kwargs: dict[str, Any] = {
        "batched": True,
        "batch_size": batch_size,
        "with_indices": True,
        "fn_kwargs": {"tokenizer": tokenizer, **kwargs},
    }
    if documents.column_names is not None:
        map_kwargs["remove_columns"] = list(documents.column_names)
    if not isinstance(documents, IterableDataset):
        # our cache key: cheaper than datasets pickling the tokenizer to hash it
        backend = getattr(tokenizer, "backend_tokenizer", None)
        vocab = backend.to_str() if backend is not None else repr(sorted(tokenizer.get_vocab().items()))
        key = repr((documents._fingerprint, vocab, batch_size, sorted(kwargs.items()))).encode()
        map_kwargs.update(
            num_proc=num_proc,
            desc="pretraining instances",
            new_fingerprint="pretraining-" + hashlib.blake2b(key, digest_size=16).hexdigest(),
        )
    return documents.map(create_pretraining_examples, **map_kwargs)


def add_example_index(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
    """Batched ``map`` function (``with_indices=True``) adding the ``idx`` column that keys the collator's masks."""
    return {"idx": list(indices)}


# ------------------------------------------------------------------------------------------- corpora of any size
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


def _text_documents(
    batch: dict[str, list], indices, kind: str, where: str, text_column: str, split_sentences: bool
) -> dict[str, list]:
    """The map over a loader's rows, empty documents dropped: ``json`` / ``parquet`` / Hub rows one document each
    (:func:`_documents`); text paragraphs, also ended at a blank-looking line (google's reader), or (``heading``)
    whole files split at each WikiText heading (the document's first sentence)."""
    headings = kind == "heading"
    if kind not in ("heading", "blank_line"):
        docs = _documents(batch, text_column, split_sentences, where, indices[0] + 1 if indices else 1)
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
    processes. Reading, cache keys: docs/design.md, "pretraining_data: loading documents".

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
