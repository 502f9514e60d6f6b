"""Documents → BERT pretraining instances, as ``datasets`` maps: NSP pairs ``[CLS] A [SEP] B [SEP]`` (the paper) or
MLM-only blocks packed across sentences and documents (RoBERTa's FULL-SENTENCES).

The pair rules are those of the paper (§3.1, Appendix A.1-A.2) as implemented by google-research/bert
``create_pretraining_data.py`` (``create_instances_from_document``, ``truncate_seq_pair``); differences are listed in
:func:`create_pretraining_examples`. MLM masking is *not* done here: it is the job of
:class:`hf_bert_tasks.collators.DataCollatorForBertPretraining` (dynamic masks at batch time, or static masks
precomputed with its ``static_mask_map`` over the output of this module, ``dupe_factor`` times).

Corpora (:func:`load_documents`) are read by ``datasets``' own ``text`` / ``json`` / ``parquet`` loaders; a small
``map`` turns their rows into documents (column ``sentences``: ``list[str]``):

* a text file with one sentence per line and a blank line between documents (google's format);
* WikiText-style files whose articles start with a `` = Title = `` heading (``document_boundary="heading"``);
* jsonl / parquet rows holding a ``sentences`` list or a ``text`` string (one sentence per line);
* paragraphs of running text: ``split_sentences=True`` splits each line after ``.``, ``!`` or ``?``.

Typical use::

    docs = load_documents(["corpus.txt"])                       # column "sentences": list[str] per document
    examples = build_pretraining_dataset(docs, tokenizer, max_seq_length=128, seed=0)
    # columns: input_ids, token_type_ids, next_sentence_label (0 = IsNext, 1 = NotNext), word_ids
"""

from __future__ import annotations

import hashlib
import itertools
import os
import random
import re
import warnings
from collections.abc import Iterator, Sequence
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


def _documents(
    batch: dict[str, list],
    text_column: str = "text",
    split_sentences: bool = False,
    where: str = "batch",
    first_row: int = 0,
    sentences_column: str = "sentences",
) -> list[list[str]]:
    """The one normaliser of document rows: each row's ``sentences_column`` list, else its ``text_column`` string split
    into lines; sentences stripped, empty ones dropped (a document may end up empty). ``where``/``first_row`` name a bad
    row (``"<file>, row 3"``); rows are counted from ``first_row``."""
    sentences, texts = batch.get(sentences_column), batch.get(text_column)
    if sentences is None and texts is None:
        raise ValueError(
            f"{where}: needs a {sentences_column!r} column (a list of sentences per document) or a {text_column!r} column (one "
            f"document per row, one sentence per line); got columns {sorted(batch)}"
        )
    docs = []
    for i in range(len(sentences if sentences is not None else texts)):
        doc = sentences[i] if sentences is not None else None
        if doc is not None:
            if isinstance(doc, str) or not all(isinstance(s, str) for s in doc):
                raise ValueError(f"{where}, row {first_row + i}: {sentences_column!r} must be a list of strings, got {doc!r:.80}")
        elif texts is not None and texts[i] is not None:
            if not isinstance(texts[i], str):
                raise ValueError(f"{where}, row {first_row + i}: {text_column!r} must be a string, got {texts[i]!r:.80}")
            doc = texts[i].split("\n")
        else:
            raise ValueError(
                f"{where}, row {first_row + i}: a row needs a {sentences_column!r} (list of strings) or {text_column!r} (one "
                "sentence per line) value; it has neither"
            )
        if split_sentences:
            docs.append([s for line in doc for s in split_into_sentences(line)])
        else:
            docs.append([s.strip() for s in doc if s.strip()])
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
    next_sentence_prediction: bool = True,
) -> dict[str, list]:
    """Turn a batch of documents into pretraining instances (a batched ``datasets.map`` function).

    Use with ``Dataset.map`` or a streaming ``IterableDataset.map``::

        ds.map(create_pretraining_examples, batched=True, batch_size=1000, with_indices=True,
               remove_columns=ds.column_names, fn_kwargs={"tokenizer": tok, "max_seq_length": 128, "seed": 0})

    (:func:`build_pretraining_dataset` does exactly this.) Each row of ``batch`` is one document: a ``sentences``
    column (``list[str]``) or a ``text`` column (one sentence per line).

    NSP pairs (google-research/bert ``create_instances_from_document``, run over the batch's documents):

    1. Sentences are WordPiece-tokenized; sentences that tokenize to nothing and documents left empty are dropped.
    2. Per document, the target length is ``max_seq_length - 3`` (room for ``[CLS]``, ``[SEP]``, ``[SEP]``), or with
       probability ``short_seq_prob`` a random length in ``[2, max_seq_length - 3]`` (to mimic short fine-tuning
       inputs).
    3. Sentences are gathered into a chunk until the target is reached or the document ends; segment A = the first
       ``k`` sentences (``k`` uniform in ``[1, len(chunk) - 1]``); B = the rest (IsNext, label 0), or with
       probability ``nsp_probability`` sentences from a random start in a **different document of the batch**
       filling the remaining length (NotNext, label 1); the chunk's unused sentences are put back and start the next
       chunk. A one-sentence chunk that draws IsNext takes the document's next sentence as B (the pair is then
       trimmed); only a one-sentence chunk at the very end of a document is forced to NotNext.
    4. The pair is trimmed to ``max_seq_length - 3`` tokens by dropping one token of the longer side at a time,
       from the front or the back at random (so neither side is ever empty).
    5. ``[CLS] A [SEP] B [SEP]``, ``token_type_ids`` 0 for ``[CLS] A [SEP]`` and 1 for ``B [SEP]``.
    6. Everything is repeated ``dupe_factor`` times with fresh random choices (google's static-mask duplication).

    Differences from google's script: google forces NotNext for *every* one-sentence chunk, so with
    ``short_seq_prob`` its NotNext share exceeds ``nsp_probability`` (0.53-0.60 on the test corpus of
    tests/test_pretraining_data.py; rule 3 keeps it near 0.5); the NotNext document is drawn uniformly from the
    *other* documents of the *batch* (a streaming-friendly pool; use batch sizes ≥ 100; google retries a random index
    10 times and can pair a document with itself); instances are not shuffled (shuffle the dataset or the sampler).

    MLM only (``next_sentence_prediction=False``): RoBERTa's FULL-SENTENCES inputs (Liu et al. 2019, §4.2): the
    batch's sentences, in order, are packed into ``[CLS] ... [SEP]`` blocks of ``max_seq_length`` tokens, crossing
    document boundaries with an extra ``[SEP]`` between two documents; ``token_type_ids`` all 0 and no
    ``next_sentence_label``. A sentence that does not fit continues in the next block (as fairseq's
    ``TokenBlockDataset``), so every block but the batch's last is full and every token appears once per
    ``dupe_factor`` pass; ``short_seq_prob``, ``nsp_probability`` and ``on_single_document`` do not apply.

    Determinism: one ``random.Random`` per batch, seeded from ``seed`` and the batch's first row index (when
    ``with_indices=True``) or its text, so the same seed and data give identical output, also with ``num_proc``.

    Args:
        batch: columns of a batch of documents (see above).
        indices: row indices from ``with_indices=True`` (optional; used for the per-batch seed).
        tokenizer: a *fast* ``transformers`` tokenizer (its ``word_ids`` give the words for whole-word masking) with
            ``cls_token_id`` and ``sep_token_id``.
        max_seq_length: hard limit of an instance, in WordPiece tokens including the special tokens (≥ 5 with NSP,
            ≥ 3 without).
        short_seq_prob: probability of a shorter target length (0.1 in the paper's code).
        nsp_probability: probability of a NotNext pair (0.5 in the paper, §3.1 Task #2).
        dupe_factor: number of passes over the documents (google's default 10 with static masks; 1 for dynamic).
        seed: random seed.
        sentences_column / text_column: input column names.
        split_sentences: split each line further with :func:`split_into_sentences`.
        on_single_document: a batch holding a single (non-empty) document, where no NotNext pair can come from
            another document: ``"warn"`` — warn and emit IsNext pairs only (one-sentence chunks, which need a NotNext
            partner, are dropped); ``"error"`` — raise ``ValueError``.
        next_sentence_prediction: ``True`` — NSP pairs; ``False`` — MLM-only packed blocks (see above).

    Returns:
        ``dict`` of lists, one entry per instance: ``input_ids`` (``list[int]``, length ≤ ``max_seq_length``),
        ``token_type_ids`` (same length), ``next_sentence_label`` (NSP only; ``int``: 0 = IsNext, 1 = NotNext — the
        label convention of ``BertForPreTraining``), ``word_ids`` (same length; word index from 0 within the
        instance, ``-1`` for ``[CLS]``/``[SEP]``; pieces of one word share an index).

    Raises:
        ValueError: bad parameters, a batch without the expected column or with non-string sentences, a tokenizer
            that is not fast, or a single-document batch with ``on_single_document="error"``.

    Warns:
        UserWarning (NSP only): documents with a single sentence (they only give NotNext pairs, as in google's
            code), or a single-document batch with ``on_single_document="warn"``.
    """
    nsp = next_sentence_prediction
    if max_seq_length < (5 if nsp else 3):
        raise ValueError(
            f"max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP] with non-empty A and B) for NSP pairs, >= 3 "
            f"([CLS] x [SEP]) without, got {max_seq_length}"
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

    docs = _documents(batch, text_column, split_sentences, sentences_column=sentences_column)
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
                words = [next_word + (w if w is not None else 0) for w in enc.word_ids(k)]
                next_word = max(words) + 1
                sentences.append((ids, words))
            k += 1
        if sentences:
            tokenized.append(sentences)

    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    out: dict[str, list] = {"input_ids": [], "token_type_ids": [], "word_ids": []}
    if not nsp:
        for _ in range(dupe_factor):
            for ids, words in _packed_blocks(tokenized, max_seq_length - 2, sep_id):
                out["input_ids"].append([cls_id, *ids, sep_id])
                out["token_type_ids"].append([0] * (len(ids) + 2))
                out["word_ids"].append([-1, *_renumber(words), -1])
        return out
    out = {"input_ids": [], "token_type_ids": [], "next_sentence_label": [], "word_ids": []}
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

    max_num_tokens = max_seq_length - 3
    for _ in range(dupe_factor):
        for doc_index in range(len(tokenized)):
            for (a_ids, a_words), (b_ids, b_words), label in _instances_from_document(
                tokenized, doc_index, max_num_tokens, short_seq_prob, nsp_probability, rng
            ):
                out["input_ids"].append([cls_id, *a_ids, sep_id, *b_ids, sep_id])
                out["token_type_ids"].append([0] * (len(a_ids) + 2) + [1] * (len(b_ids) + 1))
                out["next_sentence_label"].append(label)
                out["word_ids"].append([-1, *_renumber([*a_words, -1, *b_words]), -1])
    return out


def _renumber(words: list[int]) -> list[int]:
    """Batch-unique word ids → 0, 1, 2 … in order; ``-1`` (an inner ``[SEP]``) is kept and does not end a word."""
    result, prev, n = [], None, -1
    for w in words:
        if w < 0:
            result.append(-1)
            continue
        if w != prev:
            n += 1
            prev = w
        result.append(n)
    return result


def _packed_blocks(docs, block: int, sep_id: int) -> Iterator[tuple[list[int], list[int]]]:
    """RoBERTa's FULL-SENTENCES packing: the documents' tokens in order, an extra ``[SEP]`` (word id -1) between two
    documents, cut into blocks of ``block`` tokens (the last may be shorter; a block never starts with that ``[SEP]``).
    """
    ids: list[int] = []
    words: list[int] = []
    for d, doc in enumerate(docs):
        if d and len(ids) % block:
            ids.append(sep_id)
            words.append(-1)
        for s_ids, s_words in doc:
            ids.extend(s_ids)
            words.extend(s_words)
    for start in range(0, len(ids), block):
        yield ids[start : start + block], words[start : start + block]


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




def build_pretraining_dataset(
    documents,
    tokenizer,
    *,
    batch_size: int = 1000,
    num_proc: int | None = None,
    next_sentence_prediction: bool = True,
    **kwargs,
):
    """Map :func:`create_pretraining_examples` over a (streaming or not) dataset of documents.

    Args:
        documents: ``datasets.Dataset`` or ``IterableDataset`` with a ``sentences`` or ``text`` column.
        tokenizer: fast tokenizer.
        batch_size: documents per batch, i.e. the pool NotNext segments are drawn from (and the unit of packing).
        num_proc: worker processes (``Dataset`` only; no gain on 2 cores).
        next_sentence_prediction: ``False`` for MLM-only packed blocks (no ``next_sentence_label`` column).
        kwargs: the keyword arguments of :func:`create_pretraining_examples` (``max_seq_length``, ``seed`` …).

    Returns:
        the mapped dataset with columns ``input_ids``, ``token_type_ids``, ``next_sentence_label`` (NSP only),
        ``word_ids``; a ``Dataset`` is cached under a fingerprint of the documents, tokenizer and parameters.
    """
    from datasets import IterableDataset

    kwargs["next_sentence_prediction"] = next_sentence_prediction
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


def add_example_index(batch: dict[str, list], indices: list[int]) -> dict[str, list]:
    """Batched ``map`` function (``with_indices=True``) adding the ``idx`` column that keys the collator's masks."""
    return {"idx": list(indices)}


# ------------------------------------------------------------------------------------------- corpora of any size
TEXT_SUFFIXES = (".txt", ".text", ".tokens", ".raw")
JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")
PARQUET_SUFFIXES = (".parquet",)


def resolve_corpus_files(patterns: str | Sequence[str]) -> list[str]:
    """Expand local paths and glob patterns (``data/*.txt``, ``shards/**/*.parquet``) into a sorted, de-duplicated
    file list, in the order of the patterns.

    Raises:
        FileNotFoundError: a pattern that matches no file (the message names it).
        ValueError: a compressed file (``.gz``, ``.bz2``, ``.xz``, ``.zst``).
    """
    import glob

    patterns = [patterns] if isinstance(patterns, str) else list(patterns)
    files: list[str] = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern, recursive=True)) if glob.has_magic(pattern) else [pattern]
        matched = [m for m in matched if os.path.isfile(m)]
        if not matched:
            raise FileNotFoundError(f"--train_files: {pattern} does not exist (no file matches)")
        files.extend(m for m in matched if m not in files)
    for f in files:
        _file_format(f)
    return files


def _file_format(path: str) -> str:
    lower = path.lower()
    if lower.endswith((".gz", ".bz2", ".xz", ".zst")):
        raise ValueError(f"{path}: compressed corpus files are not read; decompress it or convert it to parquet")
    if lower.endswith(JSON_SUFFIXES):
        return "json"
    return "parquet" if lower.endswith(PARQUET_SUFFIXES) else "text"  # any other suffix: google's text format


def _has_wikitext_headings(path: str, encoding: str, lines: int = 200) -> bool:
    with open(path, encoding=encoding, errors="replace") as f:
        return any(_WIKITEXT_HEADING.match(line.rstrip("\r\n")) for line in itertools.islice(f, lines))


def _text_documents(batch: dict[str, list], indices, headings: bool, split_sentences: bool) -> dict[str, list]:
    """The map over the ``text`` loader's rows. With ``sample_by="paragraph"`` (google's format) a row is the text
    between two ``"\\n\\n"``; this map also ends a document at a whitespace-only line (google's reader strips lines),
    which the loader does not. WikiText headings (``headings=True``) start a document wherever they fall, a boundary
    no loader mode expresses, so those files come whole (``sample_by="document"``: one file in memory at a time) and
    are split here. The heading itself is kept as the document's first sentence."""
    docs: list[list[str]] = []
    current: list[str] = []
    for text in batch["text"]:
        for line in text.lstrip("\ufeff").split("\n"):
            if headings and _WIKITEXT_HEADING.match(line):
                docs.append(current)
                current = [line.strip(" =")]
            elif line.strip():
                current.extend(split_into_sentences(line) if split_sentences else [line.strip()])
            elif not headings:
                docs.append(current)
                current = []
        docs.append(current)
        current = []
    return {"sentences": [d for d in docs if d]}


def _row_documents(batch: dict[str, list], indices, where: str, text_column: str, split_sentences: bool):
    """The map over the ``json`` / ``parquet`` / Hub loaders' rows: one document per row (:func:`_documents`)."""
    first_row = indices[0] + 1 if indices else 1
    return {"sentences": [d for d in _documents(batch, text_column, split_sentences, where, first_row) if d]}


def _decode_error(files: Sequence[str], encoding: str) -> ValueError | None:
    """The first line of ``files`` that is not ``encoding`` text, as a ``ValueError`` naming file and line (the text
    loader's ``UnicodeDecodeError`` names neither)."""
    for path in files:
        with open(path, "rb") as f:
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
):
    """A corpus as a ``datasets`` table of documents (column ``sentences``: ``list[str]``), never as Python lists.

    Local files (``train_files``: paths or globs, mixed formats allowed; documents in file order), each run of
    consecutive files of one kind read by one ``datasets.load_dataset`` call:

    * text (any suffix but the ones below), ``load_dataset("text", sample_by="paragraph")``: one sentence per line, a
      blank line between documents (google's format). ``document_boundary``: ``"auto"`` — ``"heading"`` when the
      file has a WikiText heading `` = Title = `` in its first 200 lines, else ``"blank_line"``; ``"heading"`` — a
      top-level heading starts a document and blank lines only separate paragraphs (``sample_by="document"``);
    * ``.jsonl`` / ``.json`` / ``.ndjson`` (``"json"`` loader), ``.parquet`` (``"parquet"`` loader): one document per
      row — a ``sentences`` list or a ``text_column`` string with one sentence per line.

    ``split_sentences`` also splits each line with :func:`split_into_sentences`. Documents left empty are dropped.
    The loaders write ``datasets``' Arrow cache (``cache_dir``, default ``HF_DATASETS_CACHE``) one chunk at a time,
    keyed by the files' paths and modification times; the document ``map`` is cached under that fingerprint plus the
    files' sizes and the options, so a second run over unchanged files reads the cache. ``streaming=True`` returns an
    ``IterableDataset`` instead (nothing written; errors surface while iterating).

    A Hub dataset (``dataset_name``, ``dataset_config_name``, ``dataset_split``) is loaded with
    ``datasets.load_dataset`` (``streaming`` as given); each row is one document (``sentences`` or ``text_column``).

    Raises:
        ValueError: neither or both of ``train_files`` / ``dataset_name``; an unknown ``document_boundary``; a
            file that is not ``encoding`` text (file and line named), not JSON, or a row without a document (file
            and row named).
        FileNotFoundError: a path or pattern that matches nothing.
    """
    from datasets import Features, List, Value, concatenate_datasets, load_dataset
    from datasets.exceptions import DatasetGenerationError

    if (train_files is None) == (dataset_name is None):
        raise ValueError("give exactly one of train_files (local files/globs) and dataset_name (a Hub dataset id)")
    if document_boundary not in ("auto", "blank_line", "heading"):
        raise ValueError(f"document_boundary must be 'auto', 'blank_line' or 'heading', got {document_boundary!r}")
    load = {"split": dataset_split, "streaming": streaming, "cache_dir": cache_dir}
    if dataset_name is not None:
        runs = [("rows", None, dataset_name, load_dataset(dataset_name, dataset_config_name, **load))]
    else:
        load["split"] = "train"

        def kind(path: str) -> str:
            fmt = _file_format(path)
            if fmt != "text":
                return fmt
            heading = document_boundary == "heading" or (
                document_boundary == "auto" and _has_wikitext_headings(path, encoding)
            )
            return "heading" if heading else "blank_line"

        runs = []
        for k, group in itertools.groupby(map(os.path.abspath, resolve_corpus_files(train_files)), key=kind):
            files = list(group)
            options = {"data_files": files, **load}
            if k in ("heading", "blank_line"):
                sample_by = "document" if k == "heading" else "paragraph"
                options.update(sample_by=sample_by, encoding=encoding, features=Features({"text": Value("string")}))
            try:
                raw = load_dataset("text" if k in ("heading", "blank_line") else k, **options)
            except DatasetGenerationError as err:
                cause = err.__cause__
                named = _decode_error(files, encoding) if isinstance(cause, UnicodeDecodeError) else None
                raise named or ValueError(f"{files}: cannot be read as {k}: {cause}") from None
            runs.append((k, files, files[0] if len(files) == 1 else str(files), raw))
    parts = []
    for k, files, where, raw in runs:
        if k in ("heading", "blank_line"):
            fn, fn_kwargs = _text_documents, {"headings": k == "heading", "split_sentences": split_sentences}
        else:
            fn, fn_kwargs = _row_documents, {"where": where, "text_column": text_column, "split_sentences": split_sentences}
        map_kwargs: dict[str, Any] = {"batched": True, "with_indices": True, "fn_kwargs": fn_kwargs}
        if not streaming:
            h = hashlib.blake2b(digest_size=16)
            stats = [(p, os.path.getsize(p), os.stat(p).st_mtime_ns) for p in files or ()]
            h.update(repr((raw._fingerprint, k, sorted(fn_kwargs.items()), stats)).encode())
            map_kwargs.update(new_fingerprint="documents-" + h.hexdigest(), desc="documents")
        features = Features({"sentences": List(Value("string"))})
        parts.append(raw.map(fn, remove_columns=raw.column_names, features=features, **map_kwargs))
    return parts[0] if len(parts) == 1 else concatenate_datasets(parts)


def iter_file_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> Iterator[list[str]]:
    """:func:`read_documents` as a generator (a streaming :func:`load_documents`): one document at a time."""
    stream = load_documents(
        path, document_boundary=document_boundary, split_sentences=split_sentences, encoding=encoding, streaming=True
    )
    try:
        for row in stream:
            yield row["sentences"]
    except UnicodeDecodeError:
        raise _decode_error([path], encoding) from None


def read_documents(
    path: str, document_boundary: str = "auto", split_sentences: bool = False, encoding: str = "utf-8"
) -> list[list[str]]:
    """Read one text file into documents (lists of sentences), in file order: :func:`load_documents` streamed into a
    list (for small files: tests, benchmarks).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: unknown ``document_boundary``, or a file that is not ``encoding`` text (names the file and line).
    """
    return list(iter_file_documents(path, document_boundary, split_sentences, encoding))


def documents_dataset(paths: str | Sequence[str], **read_kwargs):
    """:func:`load_documents` over ``paths`` (``read_kwargs`` go to it) that raises ``ValueError`` for no documents."""
    paths = [paths] if isinstance(paths, str) else list(paths)
    documents = load_documents(paths, **read_kwargs)
    if not len(documents):
        raise ValueError(f"no documents (non-blank lines) in {paths}")
    return documents
