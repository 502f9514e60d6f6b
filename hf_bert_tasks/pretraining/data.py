"""Documents → BERT pretraining instances: NSP pairs (§3.1, Appendix A; google-research/bert
``create_pretraining_data.py``) or MLM-only blocks (RoBERTa); the collator masks. Documents come from
:mod:`hf_bert_tasks.pretraining.documents` (:func:`load_documents`, ``datasets``' loaders)::

    docs = load_documents(["corpus.txt"])      # google's format: one sentence per line, blank line between documents
    examples = build_pretraining_dataset(docs, tokenizer, max_seq_length=128, seed=0)
"""

from __future__ import annotations

import hashlib
import itertools
import random
import warnings
from collections.abc import Sequence
from typing import Any

# the corpus readers, documented here before they had their own module (docs/design.md, docs/bad_inputs.md)
from .documents import (
    documents_dataset,
    load_documents,
    read_documents,
    resolve_corpus_files,
    rows_to_documents,
    split_into_sentences,
)

__all__ = [
    "IS_NEXT",
    "NOT_NEXT",
    "add_example_index",
    "build_pretraining_dataset",
    "create_pretraining_examples",
    "documents_dataset",
    "load_documents",
    "read_documents",
    "resolve_corpus_files",
    "split_into_sentences",
]

IS_NEXT, NOT_NEXT = 0, 1


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
    batch from ``seed`` and ``indices`` (else the text). Rules: docs/design.md, "pretraining/data.py: instance rules".

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
    _check_instance_settings(
        tokenizer, max_seq_length, short_seq_prob, nsp_probability, dupe_factor, on_single_document, nsp
    )
    docs = rows_to_documents(batch, text_column, split_sentences, sentences_column=sentences_column)
    rng = _batch_rng(seed, indices, docs)
    tokenized = _tokenize_documents(tokenizer, docs)
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
        stream = _token_stream(tokenized, block, sep_id)
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


def _check_instance_settings(
    tokenizer,
    max_seq_length: int,
    short_seq_prob: float,
    nsp_probability: float,
    dupe_factor: int,
    on_single_document: str,
    nsp: bool,
) -> None:
    """Raise ``ValueError`` for a setting :func:`create_pretraining_examples` cannot use (names it and the range)."""
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


def _batch_rng(seed: int, indices: Sequence[int] | None, docs: list[list[str]]) -> random.Random:
    """The batch's generator: seeded from ``seed`` and the batch's row indices, else its text (each sentence + ``\\n``,
    each document + ``\\0``), so a batch gets the same instances whichever worker or run maps it."""
    batch_seed = hashlib.blake2b(str(seed).encode(), digest_size=8)
    if indices is not None and len(indices):
        batch_seed.update(f"idx:{indices[0]}:{len(indices)}".encode())
    else:
        text = "".join("".join(s + "\n" for s in doc) + "\x00" for doc in docs)
        batch_seed.update(text.encode("utf-8", "surrogatepass"))
    return random.Random(int.from_bytes(batch_seed.digest(), "little"))


def _tokenize_documents(tokenizer, docs: list[list[str]]) -> list[list[list[tuple[int, int]]]]:
    """Every sentence of the batch in one tokenizer call, as ``(token id, word id)`` pairs per sentence per document,
    word ids unique over the batch; sentences that tokenize to nothing and documents left empty are dropped."""
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
    return tokenized


def _token_stream(tokenized: list[list[list[tuple[int, int]]]], block: int, sep_id: int) -> list[tuple[int, int]]:
    """RoBERTa's FULL-SENTENCES stream: every ``(token id, word id)`` pair in order, an extra ``[SEP]`` (word id -1)
    between two documents unless the next document starts a block of ``block`` tokens."""
    stream: list[tuple[int, int]] = []
    for d, doc in enumerate(tokenized):
        if d and len(stream) % block:
            stream.append((sep_id, -1))
        stream.extend(pair for sentence in doc for pair in sentence)
    return stream


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
