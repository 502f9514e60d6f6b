"""Documents → BERT pretraining instances (``[CLS] A [SEP] B [SEP]`` pairs with an NSP label), as a ``datasets`` map.

The rules are those of the paper (§3.1, Appendix A.1-A.2) as implemented by google-research/bert
``create_pretraining_data.py`` (``create_instances_from_document``, ``truncate_seq_pair``); differences are listed in
:func:`create_pretraining_examples`. MLM masking is *not* done here: it is the job of
:class:`hf_bert_tasks.collators.DataCollatorForBertPretraining` (dynamic masks at batch time, or static masks
precomputed with its :meth:`~hf_bert_tasks.collators.DataCollatorForBertPretraining.static_mask_map` over the output of
this module, ``dupe_factor`` times).

Input formats (a corpus is a sequence of documents; a document is a sequence of sentences):

* a text file with one sentence per line and a blank line between documents (google's format) —
  :func:`read_documents` / :func:`documents_dataset`;
* WikiText-style files whose articles start with a `` = Title = `` heading (``document_boundary="heading"``);
* paragraphs of running text: ``split_sentences=True`` splits each line after ``.``, ``!`` or ``?``.

Typical use::

    docs = documents_dataset(["corpus.txt"])                     # column "sentences": list[str] per document
    examples = build_pretraining_dataset(docs, tokenizer, max_seq_length=128, seed=0)
    # columns: input_ids, token_type_ids, next_sentence_label (0 = IsNext, 1 = NotNext), word_ids
"""

from __future__ import annotations

import hashlib
import random
import re
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

#: sentence end: . ! ? (optionally followed by a closing quote/bracket) then whitespace.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?])|(?<=[.!?][\"')\]]))\s+")
#: WikiText top-level heading `` = Title = `` (sub-headings `` = = Sub = = `` do not start a document).
_WIKITEXT_HEADING = re.compile(r"^\s*=\s[^=].*[^=]\s=\s*$")

IS_NEXT, NOT_NEXT = 0, 1


def split_into_sentences(text: str) -> list[str]:
    """Split running text into sentences after ``.``, ``!`` or ``?`` followed by whitespace (no abbreviation list).

    Example: ``split_into_sentences("It rained. We left!  Why?")`` → ``["It rained.", "We left!", "Why?"]``.
    Empty pieces are dropped.
    """
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _has_wikitext_headings(path: str, encoding: str, lines: int = 200) -> bool:
    with open(path, encoding=encoding, errors="replace") as f:
        for i, line in enumerate(f):
            if i >= lines:
                return False
            if _WIKITEXT_HEADING.match(line.rstrip("\r\n")):
                return True
    return False


def read_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> list[list[str]]:
    """Read a text file into documents (lists of sentences).

    Args:
        path: text file.
        document_boundary: ``"auto"`` — ``"heading"`` when the file has WikiText headings in its first 200 lines,
            else ``"blank_line"``; ``"blank_line"`` — a blank line ends a document (google-research/bert's input format);
            ``"heading"`` — a WikiText top-level heading line `` = Title = `` starts a new document and blank lines
            only separate paragraphs (the heading itself is kept as the document's first sentence).
        split_sentences: also split each line into sentences (:func:`split_into_sentences`); otherwise a line is
            a sentence.

    Returns:
        ``list[list[str]]``: documents in file order; documents without any non-blank line are dropped.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: unknown ``document_boundary``, or a file that is not UTF-8 (names the file and line).
    """
    return list(iter_file_documents(path, document_boundary, split_sentences, encoding))


def iter_file_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> Iterator[list[str]]:
    """:func:`read_documents` as a generator: one document (``list[str]``) at a time, memory bounded by a document."""
    if document_boundary not in ("auto", "blank_line", "heading"):
        raise ValueError(f"document_boundary must be 'auto', 'blank_line' or 'heading', got {document_boundary!r}")
    if document_boundary == "auto":
        document_boundary = "heading" if _has_wikitext_headings(path, encoding) else "blank_line"
    current: list[str] = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode(encoding).lstrip("\ufeff").rstrip("\r\n")
            except UnicodeDecodeError as err:
                raise ValueError(f"{path}:{lineno}: not valid {encoding} text ({err.reason})") from None
            if document_boundary == "heading" and _WIKITEXT_HEADING.match(line):
                if current:
                    yield current
                current = [line.strip(" =")]
                continue
            if not line.strip():
                if document_boundary == "blank_line" and current:
                    yield current
                    current = []
                continue
            current.extend(split_into_sentences(line) if split_sentences else [line.strip()])
    if current:
        yield current


def documents_dataset(paths: str | Sequence[str], **read_kwargs):
    """A ``datasets.Dataset`` with one row per document and a ``sentences`` column (``list[str]``).

    ``read_kwargs`` go to :func:`read_documents`. Raises what it raises, and ``ValueError`` for no documents.
    """
    from datasets import Dataset

    paths = [paths] if isinstance(paths, str) else list(paths)
    documents = [doc for p in paths for doc in read_documents(p, **read_kwargs)]
    if not documents:
        raise ValueError(f"no documents (non-blank lines) in {paths}")
    return Dataset.from_dict({"sentences": documents})


def _batch_documents(
    batch: dict[str, list], sentences_column: str, text_column: str, split_sentences: bool
) -> list[list[str]]:
    if sentences_column in batch:
        docs = batch[sentences_column]
        for i, doc in enumerate(docs):
            if isinstance(doc, str) or not all(isinstance(s, str) for s in doc):
                raise ValueError(
                    f"column {sentences_column!r}, row {i} of the batch: expected a list of sentence strings, "
                    f"got {type(doc).__name__}"
                )
        docs = [list(d) for d in docs]
    elif text_column in batch:
        docs = []
        for i, text in enumerate(batch[text_column]):
            if not isinstance(text, str):
                raise ValueError(
                    f"column {text_column!r}, row {i} of the batch: expected a string, got {type(text).__name__}"
                )
            docs.append([ln.strip() for ln in text.split("\n") if ln.strip()])
    else:
        raise ValueError(
            f"a batch needs a {sentences_column!r} column (list of sentences per document) or a {text_column!r} "
            f"column (one document per row, one sentence per line); got columns {sorted(batch)}"
        )
    if split_sentences:
        docs = [[s for line in doc for s in split_into_sentences(line)] for doc in docs]
    return docs


def _batch_seed(seed: int, indices: Sequence[int] | None, docs: list[list[str]]) -> int:
    """Per-batch seed: from the row indices when ``datasets`` passes them, else from the batch's text (stable)."""
    h = hashlib.blake2b(digest_size=8)
    h.update(str(seed).encode())
    if indices is not None and len(indices):
        h.update(f"idx:{indices[0]}:{len(indices)}".encode())
    else:
        for doc in docs:
            for s in doc:
                h.update(s.encode("utf-8", "surrogatepass"))
                h.update(b"\n")
            h.update(b"\x00")
    return int.from_bytes(h.digest(), "little")


def _truncate_pair(a: list, b: list, max_num_tokens: int, rng: random.Random) -> None:
    """google's ``truncate_seq_pair``: drop one token of the longer side (front or back, coin flip) until they fit."""
    while len(a) + len(b) > max_num_tokens:
        longer = a if len(a) > len(b) else b
        if rng.random() < 0.5:
            del longer[0]
        else:
            longer.pop()


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
) -> dict[str, list]:
    """Turn a batch of documents into NSP sentence-pair instances (a batched ``datasets.map`` function).

    Use with ``Dataset.map`` or a streaming ``IterableDataset.map``::

        ds.map(create_pretraining_examples, batched=True, batch_size=1000, with_indices=True,
               remove_columns=ds.column_names, fn_kwargs={"tokenizer": tok, "max_seq_length": 128, "seed": 0})

    (:func:`build_pretraining_dataset` does exactly this.) Each row of ``batch`` is one document: a ``sentences``
    column (``list[str]``) or a ``text`` column (one sentence per line).

    Rules (google-research/bert ``create_instances_from_document``, run over the batch's documents):

    1. Sentences are WordPiece-tokenized; sentences that tokenize to nothing and documents left empty are dropped.
    2. Per document, the target length is ``max_seq_length - 3`` (room for ``[CLS]``, ``[SEP]``, ``[SEP]``), or with
       probability ``short_seq_prob`` a random length in ``[2, max_seq_length - 3]`` (to mimic short fine-tuning
       inputs).
    3. Sentences are gathered into a chunk until the target is reached or the document ends; segment A = the first
       ``k`` sentences (``k`` uniform in ``[1, len(chunk) - 1]``); B = the rest (IsNext, label 0), or with
       probability ``nsp_probability`` sentences from a random start in a **different document of the batch**
       filling the remaining length (NotNext, label 1); the chunk's unused sentences are put back and start the next
       chunk. A one-sentence chunk (a short target, or a long sentence) that draws IsNext takes the document's next
       sentence as B (the pair is then trimmed); only a one-sentence chunk at the very end of a document is forced
       to NotNext.
    4. The pair is trimmed to ``max_seq_length - 3`` tokens by dropping one token of the longer side at a time,
       from the front or the back at random (so neither side is ever empty).
    5. ``[CLS] A [SEP] B [SEP]``, ``token_type_ids`` 0 for ``[CLS] A [SEP]`` and 1 for ``B [SEP]``.
    6. Everything is repeated ``dupe_factor`` times with fresh random choices (google's static-mask duplication: mask
       the output with the collator's ``static_mask_map`` to give each copy its own mask).

    Differences from google's script: google forces NotNext for *every* one-sentence chunk, so with
    ``short_seq_prob`` (a short target turns a whole document into one-sentence chunks) its NotNext share exceeds
    ``nsp_probability`` (0.53-0.60 NotNext on the test corpus of tests/test_pretraining_data.py with google's rule;
    rule 3 keeps it near 0.5); the NotNext document is drawn from the other documents of the *batch* (a
    streaming-friendly pool; use batch sizes ≥ 100), uniformly and never the same document (google retries a
    random index 10 times and can, in a one-document corpus, pair a document with itself); instances are not
    shuffled across the corpus (shuffle the dataset or use a shuffling sampler); the NSP probability is a parameter.

    Determinism: one ``random.Random`` per batch, seeded from ``seed`` and the batch's first row index (when
    ``with_indices=True``) or its text, so the same seed and data give identical output, also with ``num_proc``.

    Args:
        batch: columns of a batch of documents (see above).
        indices: row indices from ``with_indices=True`` (optional; used for the per-batch seed).
        tokenizer: a *fast* ``transformers`` tokenizer (its ``word_ids`` give the words for whole-word masking) with
            ``cls_token_id`` and ``sep_token_id``.
        max_seq_length: hard limit of an instance, in WordPiece tokens including the 3 special tokens (≥ 5).
        short_seq_prob: probability of a shorter target length (0.1 in the paper's code).
        nsp_probability: probability of a NotNext pair (0.5 in the paper, §3.1 Task #2).
        dupe_factor: number of passes over the documents (google's default 10 with static masks; 1 for dynamic).
        seed: random seed.
        sentences_column / text_column: input column names.
        split_sentences: split each line further with :func:`split_into_sentences`.
        on_single_document: what to do with a batch holding a single (non-empty) document, where no NotNext pair
            can come from another document: ``"warn"`` — warn and emit IsNext pairs only (one-sentence chunks, which
            need a NotNext partner, are dropped); ``"error"`` — raise ``ValueError``. A NotNext pair never has A and B
            from the same document.

    Returns:
        ``dict`` of lists, one entry per instance: ``input_ids`` (``list[int]``, length ≤ ``max_seq_length``),
        ``token_type_ids`` (same length), ``next_sentence_label`` (``int``: 0 = IsNext, 1 = NotNext — the label
        convention of ``BertForPreTraining``), ``word_ids`` (same length; word index from 0 within the instance,
        ``-1`` for ``[CLS]``/``[SEP]``; pieces of one word share an index).

    Raises:
        ValueError: bad parameters, a batch without the expected column or with non-string sentences, a tokenizer
            that is not fast, or a single-document batch with ``on_single_document="error"``.

    Warns:
        UserWarning: documents with a single sentence (they only give NotNext pairs, as in google's code), or a
            single-document batch with ``on_single_document="warn"``.
    """
    if max_seq_length < 5:
        raise ValueError(
            f"max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP] with non-empty A and B), got {max_seq_length}"
        )
    if not 0.0 <= short_seq_prob <= 1.0 or not 0.0 <= nsp_probability <= 1.0:
        raise ValueError(
            f"short_seq_prob and nsp_probability must be in [0, 1], got {short_seq_prob}, {nsp_probability}"
        )
    if dupe_factor < 1:
        raise ValueError(f"dupe_factor must be >= 1, got {dupe_factor}")
    if on_single_document not in ("warn", "error"):
        raise ValueError(f"on_single_document must be 'warn' or 'error', got {on_single_document!r}")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("create_pretraining_examples needs a fast tokenizer (word_ids for whole-word masking)")

    docs = _batch_documents(batch, sentences_column, text_column, split_sentences)
    rng = random.Random(_batch_seed(seed, indices, docs))

    # 1. tokenize every sentence of the batch in one call; give each word a batch-unique id.
    flat = [s for doc in docs for s in doc]
    enc = tokenizer(flat, add_special_tokens=False) if flat else {"input_ids": []}
    tokenized: list[list[tuple[list[int], list[int]]]] = []
    k, next_word = 0, 0
    for doc in docs:
        sentences = []
        for _ in doc:
            ids = enc["input_ids"][k]
            if ids:
                wids = enc.word_ids(k)
                base = next_word
                words = [base + (w if w is not None else 0) for w in wids]
                next_word = max(words) + 1
                sentences.append((ids, words))
            k += 1
        if sentences:
            tokenized.append(sentences)

    out: dict[str, list] = {"input_ids": [], "token_type_ids": [], "next_sentence_label": [], "word_ids": []}
    if not tokenized:
        return out
    single_sentence_docs = sum(len(d) == 1 for d in tokenized)
    if single_sentence_docs and len(tokenized) > 1:
        warnings.warn(
            f"{single_sentence_docs} of {len(tokenized)} documents in a batch have a single sentence: they only give "
            "NotNext pairs (as in google-research/bert); check the document boundaries (blank lines) of the corpus",
            UserWarning,
            stacklevel=2,
        )
    if len(tokenized) == 1:
        msg = (
            "a batch holds a single document, so NotNext pairs (B from another document) cannot be made; "
            "use more documents per batch (batch_size) or a corpus with several documents"
        )
        if on_single_document == "error":
            raise ValueError(msg)
        warnings.warn(msg + "; emitting IsNext pairs only", UserWarning, stacklevel=2)

    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    max_num_tokens = max_seq_length - 3
    for _ in range(dupe_factor):
        for doc_index in range(len(tokenized)):
            for a, b, label in _instances_from_document(
                tokenized, doc_index, max_num_tokens, short_seq_prob, nsp_probability, rng
            ):
                a_ids, a_words = a
                b_ids, b_words = b
                out["input_ids"].append([cls_id, *a_ids, sep_id, *b_ids, sep_id])
                out["token_type_ids"].append([0] * (len(a_ids) + 2) + [1] * (len(b_ids) + 1))
                out["next_sentence_label"].append(label)
                out["word_ids"].append([-1, *_renumber(a_words + b_words, len(a_words)), -1])
    return out


def _renumber(words: list[int], a_len: int) -> list[int]:
    """Batch-unique word ids → 0, 1, 2 … in order, with [SEP] (-1) inserted after segment A."""
    result, prev, n = [], None, -1
    for w in words:
        if w != prev:
            n += 1
            prev = w
        result.append(n)
    result.insert(a_len, -1)
    return result


def _instances_from_document(docs, doc_index, max_num_tokens, short_seq_prob, nsp_probability, rng):
    """Yield ``((a_ids, a_words), (b_ids, b_words), label)`` for one document (google's loop, see the caller)."""
    document = docs[doc_index]
    can_pick_other = len(docs) > 1
    target = max_num_tokens
    if rng.random() < short_seq_prob:
        target = rng.randint(2, max_num_tokens)
    chunk: list[tuple[list[int], list[int]]] = []
    length = 0
    i = 0
    while i < len(document):
        chunk.append(document[i])
        length += len(document[i][0])
        if i == len(document) - 1 or length >= target:
            random_next = rng.random() < nsp_probability and can_pick_other
            if len(chunk) == 1 and not random_next:
                if i + 1 < len(document):  # IsNext needs a second sentence: take the next one (trimmed below)
                    i += 1
                    chunk.append(document[i])
                elif can_pick_other:  # last sentence of the document: only a NotNext pair is possible
                    random_next = True
                else:  # one document, one sentence left: no partner at all, drop it
                    chunk, length = [], 0
                    i += 1
                    continue
            a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
            a_ids = [t for s in chunk[:a_end] for t in s[0]]
            a_words = [w for s in chunk[:a_end] for w in s[1]]
            b_ids: list[int] = []
            b_words: list[int] = []
            if random_next:
                target_b = target - len(a_ids)
                other = rng.randrange(len(docs) - 1)
                other += other >= doc_index  # uniform over the *other* documents
                random_doc = docs[other]
                for j in range(rng.randint(0, len(random_doc) - 1), len(random_doc)):
                    b_ids.extend(random_doc[j][0])
                    b_words.extend(random_doc[j][1])
                    if len(b_ids) >= target_b:
                        break
                i -= len(chunk) - a_end  # put the unused sentences back
            else:
                for s in chunk[a_end:]:
                    b_ids.extend(s[0])
                    b_words.extend(s[1])
            a_pair, b_pair = list(zip(a_ids, a_words)), list(zip(b_ids, b_words))
            _truncate_pair(a_pair, b_pair, max_num_tokens, rng)
            yield (
                ([t for t, _ in a_pair], [w for _, w in a_pair]),
                ([t for t, _ in b_pair], [w for _, w in b_pair]),
                NOT_NEXT if random_next else IS_NEXT,
            )
            chunk, length = [], 0
        i += 1


def build_pretraining_dataset(documents, tokenizer, *, batch_size: int = 1000, num_proc: int | None = None, **kwargs):
    """Map :func:`create_pretraining_examples` over a (streaming or not) dataset of documents.

    Args:
        documents: ``datasets.Dataset`` or ``IterableDataset`` with a ``sentences`` or ``text`` column.
        tokenizer: fast tokenizer.
        batch_size: documents per batch, i.e. the pool NotNext segments are drawn from.
        num_proc: worker processes (``Dataset`` only; no gain on 2 cores).
        kwargs: the keyword arguments of :func:`create_pretraining_examples` (``max_seq_length``, ``seed`` …).

    Returns:
        the mapped dataset with columns ``input_ids``, ``token_type_ids``, ``next_sentence_label``, ``word_ids``.
    """
    from datasets import IterableDataset

    map_kwargs: dict[str, Any] = {
        "batched": True,
        "batch_size": batch_size,
        "with_indices": True,
        "fn_kwargs": {"tokenizer": tokenizer, **kwargs},
    }
    columns = documents.column_names
    if columns is not None:
        map_kwargs["remove_columns"] = list(columns)
    if not isinstance(documents, IterableDataset):
        map_kwargs["num_proc"] = num_proc
        map_kwargs["desc"] = "pretraining instances"
        map_kwargs["new_fingerprint"] = _fingerprint(documents, tokenizer, batch_size, kwargs)
    return documents.map(create_pretraining_examples, **map_kwargs)


def _fingerprint(documents, tokenizer, batch_size: int, kwargs: dict) -> str:
    """Cache key of the map: the input's fingerprint, the tokenizer's serialised form and the parameters (cheaper than
    ``datasets`` pickling the tokenizer to hash it)."""
    h = hashlib.blake2b(digest_size=16)
    h.update(str(getattr(documents, "_fingerprint", "")).encode())
    backend = getattr(tokenizer, "backend_tokenizer", None)
    h.update(backend.to_str().encode() if backend is not None else repr(sorted(tokenizer.get_vocab().items())).encode())
    h.update(repr((batch_size, sorted(kwargs.items()))).encode())
    return "pretraining-" + h.hexdigest()


def iter_documents(lines: Iterable[str]) -> Iterable[list[str]]:
    """Group an iterable of lines (one sentence per line, blank line between documents) into documents."""
    current: list[str] = []
    for line in lines:
        line = line.strip()
        if line:
            current.append(line)
        elif current:
            yield current
            current = []
    if current:
        yield current


# ------------------------------------------------------------------------------------------- corpora of any size
TEXT_SUFFIXES = (".txt", ".text", ".tokens", ".raw")
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)


def resolve_corpus_files(patterns: str | Sequence[str]) -> list[str]:
    """Expand local paths and glob patterns (``data/*.txt``, ``shards/**/*.parquet``) into a sorted, de-duplicated
    file list, in the order of the patterns.

    Raises:
        FileNotFoundError: a pattern that matches no file (the message names it).
        ValueError: a file whose suffix is not a known corpus format (text, jsonl, parquet).
    """
    import glob
    import os

    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    files: list[str] = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        matched = [m for m in matched if os.path.isfile(m)]
        if not matched:
            raise FileNotFoundError(f"--train_files: {pattern} does not exist (no file matches)")
        for m in matched:
            if m not in files:
                files.append(m)
    for f in files:
        _file_format(f)
    return files


def _file_format(path: str) -> str:
    lower = path.lower()
    for suffix in (".gz", ".bz2", ".xz", ".zst"):
        if lower.endswith(suffix):
            raise ValueError(f"{path}: compressed corpus files are not read; decompress it or convert it to parquet")
    if lower.endswith(JSON_SUFFIXES):
        return "json"
    if lower.endswith(PARQUET_SUFFIXES):
        return "parquet"
    return "text"  # any other suffix: one sentence per line, blank line between documents (google's format)


def _row_sentences(row: dict, where: str, text_column: str, split_sentences: bool) -> list[str] | None:
    if "sentences" in row and row["sentences"] is not None:
        sentences = row["sentences"]
        if isinstance(sentences, str) or not all(isinstance(x, str) for x in sentences):
            raise ValueError(f"{where}: 'sentences' must be a list of strings, got {type(sentences).__name__}")
        sentences = [x.strip() for x in sentences if x.strip()]
    elif text_column in row:
        text = row[text_column]
        if not isinstance(text, str):
            raise ValueError(f"{where}: {text_column!r} must be a string, got {type(text).__name__}")
        sentences = [ln.strip() for ln in text.split("\n") if ln.strip()]
    else:
        raise ValueError(
            f"{where}: a row needs a 'sentences' (list of strings) or {text_column!r} (one sentence per line) field; "
            f"got {sorted(row)}"
        )
    if split_sentences:
        sentences = [x for line in sentences for x in split_into_sentences(line)]
    return sentences or None


def _generate_documents(files, document_boundary: str, split_sentences: bool, text_column: str):
    """``datasets`` generator: one ``{"sentences": [...]}`` per document of every file. ``files`` holds
    ``(path, size, mtime_ns)`` so that the cache key (a hash of the arguments) changes when a file changes."""
    import json

    for path, _size, _mtime in files:
        fmt = _file_format(path)
        if fmt == "text":
            for doc in iter_file_documents(path, document_boundary, split_sentences):
                yield {"sentences": doc}
        elif fmt == "json":
            with open(path, encoding="utf-8") as f:
                for lineno, line in enumerate(f, 1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as err:
                        raise ValueError(f"{path}:{lineno}: not a JSON object per line ({err.msg})") from None
                    if not isinstance(row, dict):
                        raise ValueError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
                    doc = _row_sentences(row, f"{path}:{lineno}", text_column, split_sentences)
                    if doc:
                        yield {"sentences": doc}
        else:
            import pyarrow.parquet as pq

            parquet = pq.ParquetFile(path)
            names = set(parquet.schema_arrow.names)
            columns = ["sentences"] if "sentences" in names else [text_column] if text_column in names else None
            if columns is None:
                raise ValueError(
                    f"{path}: a parquet corpus needs a 'sentences' (list of strings) or {text_column!r} column; "
                    f"it has {sorted(names)}"
                )
            row_number = 0
            for record_batch in parquet.iter_batches(batch_size=1000, columns=columns):
                for row in record_batch.to_pylist():
                    row_number += 1
                    doc = _row_sentences(row, f"{path} row {row_number}", text_column, split_sentences)
                    if doc:
                        yield {"sentences": doc}


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
):
    """A corpus as a ``datasets`` table of documents (column ``sentences``: ``list[str]``), never as Python lists.

    Local files (``train_files``: paths or globs, mixed formats allowed):

    * text (any suffix but the ones below): one sentence per line, blank line between documents (google's format), or
      WikiText headings (``document_boundary``, as :func:`read_documents`);
    * ``.jsonl`` / ``.json`` / ``.ndjson``: one JSON object per line, one document per object — a ``sentences`` list
      or a ``text_column`` string with one sentence per line;
    * ``.parquet``: the same two columns, read in record batches of 1,000 rows.

    Documents are written by ``Dataset.from_generator`` into ``datasets``' Arrow cache (``cache_dir``, default
    ``HF_DATASETS_CACHE``) one writer batch at a time and memory-mapped: memory stays flat whatever the corpus size.
    The cache key hashes the file paths, sizes and modification times and the reading options, so a second run over
    unchanged files reads the cache. ``streaming=True`` returns an ``IterableDataset`` instead (nothing written).

    A Hub dataset (``dataset_name``, ``dataset_config_name``, ``dataset_split``) is loaded with
    ``datasets.load_dataset`` (``streaming`` as given); each row is one document (``sentences`` or ``text_column``).

    Raises:
        ValueError: neither or both of ``train_files`` / ``dataset_name``; bad rows (file and line named).
        FileNotFoundError: a path or pattern that matches nothing.
    """
    import os

    from datasets import Dataset, Features, IterableDataset, List, Value

    if (train_files is None) == (dataset_name is None):
        raise ValueError("give exactly one of train_files (local files/globs) and dataset_name (a Hub dataset id)")
    features = Features({"sentences": List(Value("string"))})
    if dataset_name is not None:
        from datasets import load_dataset

        raw = load_dataset(
            dataset_name, dataset_config_name, split=dataset_split, streaming=streaming, cache_dir=cache_dir
        )
        columns = list(raw.column_names or [])

        def to_sentences(batch):
            rows = [{k: batch[k][i] for k in batch} for i in range(len(next(iter(batch.values()))))]
            docs = [_row_sentences(r, f"{dataset_name} row", text_column, split_sentences) for r in rows]
            return {"sentences": [d for d in docs if d]}

        return raw.map(to_sentences, batched=True, remove_columns=columns, features=features)
    files = [
        (os.path.abspath(p), os.path.getsize(p), os.stat(p).st_mtime_ns) for p in resolve_corpus_files(train_files)
    ]
    gen_kwargs = {
        "files": files,
        "document_boundary": document_boundary,
        "split_sentences": split_sentences,
        "text_column": text_column,
    }
    if streaming:
        return IterableDataset.from_generator(_generate_documents, features=features, gen_kwargs=gen_kwargs)
    from datasets.exceptions import DatasetGenerationError

    try:
        return Dataset.from_generator(
            _generate_documents, features=features, gen_kwargs=gen_kwargs, cache_dir=cache_dir
        )
    except DatasetGenerationError as err:  # surface our message (file and line) instead of datasets' wrapper
        cause = err.__cause__
        if isinstance(cause, (ValueError, OSError)):
            raise cause from None
        raise


def add_example_index(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
    """Batched ``map`` function (``with_indices=True``) adding the ``idx`` column that keys the collator's masks."""
    return {"idx": list(indices)}
