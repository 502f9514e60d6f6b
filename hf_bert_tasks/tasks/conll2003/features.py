"""Named-entity recognition features (paper §5.3: "the representation of the first sub-token as the input to the
token-level classifier over the NER label set"): tag schemes (IOB1 / IOB2), WordPiece label alignment, windows of
whole words (every word labelled in exactly one window; why: docs/design.md, 'IOB1 / IOB2 and windows').
Predictions back to words, metrics and CoNLL output: :mod:`hf_bert_tasks.tasks.conll2003.metrics`. Dimensions: ``F`` features
(windows), ``L`` WordPieces per window (≤ ``max_seq_length``), ``S`` sentences, ``W_s`` words of sentence ``s``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from .metrics import IGNORE_INDEX


def split_tag(tag: str) -> tuple[str, str | None]:
    """``"B-PER"`` -> ``("B", "PER")``; ``"O"`` -> ``("O", None)``.

    Raises:
        ValueError: for a tag that is neither ``O`` nor ``B-TYPE`` / ``I-TYPE``.
    """
    if tag == "O":
        return "O", None
    if len(tag) > 2 and tag[1] == "-" and tag[0] in "BI":
        return tag[0], tag[2:]
    raise ValueError(f"tag {tag!r} is not 'O', 'B-TYPE' or 'I-TYPE'")


def starts_entity_in_iob2_error(previous: str | None, tag: str) -> bool:
    """True when ``tag`` is an ``I-X`` that does not continue an entity of type ``X`` after ``previous`` (the tag
    before it in the sentence, ``None`` at the start): how IOB1 starts an entity, invalid in IOB2."""
    prefix, kind = split_tag(tag)
    return prefix == "I" and (previous is None or split_tag(previous)[1] != kind)  # "O" has no kind


def detect_scheme(sentences: Sequence[Sequence[str]]) -> str:
    """``"IOB1"`` if any of the tag sequences (one per sentence of a file) has an ``I-X`` that starts an entity, else
    ``"IOB2"`` (IOB1 as Tjong Kim Sang & De Meulder, 2003; IOB2 as Ratnaparkhi)."""
    pairs = (pair for tags in sentences for pair in zip([None, *tags[:-1]], tags))
    return "IOB1" if any(starts_entity_in_iob2_error(previous, tag) for previous, tag in pairs) else "IOB2"


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """One sentence's tags from IOB1 to IOB2: an ``I-X`` that starts an entity becomes ``B-X``.
    ``["I-PER", "I-PER", "O", "I-LOC", "B-LOC"]`` -> ``["B-PER", "I-PER", "O", "B-LOC", "B-LOC"]``."""
    return [
        "B-" + tag[2:] if starts_entity_in_iob2_error(previous, tag) else tag
        for previous, tag in zip([None, *tags[:-1]], tags)
    ]


def inside_label_map(label_names: Sequence[str]) -> list[int]:
    """For every label id, the id on the later WordPieces of a word with ``label_all_tokens``: ``B-X`` -> ``I-X``,
    every other label itself.

    Raises:
        ValueError: if some ``B-X`` has no ``I-X`` in ``label_names``.
    """
    index = {name: i for i, name in enumerate(label_names)}
    missing = [name for name in label_names if name.startswith("B-") and "I-" + name[2:] not in index]
    if missing:
        raise ValueError(f"label {missing[0]!r} has no matching {'I-' + missing[0][2:]!r} in {list(label_names)}")
    return [index["I-" + name[2:]] if name.startswith("B-") else i for i, name in enumerate(label_names)]


def align_labels(
    word_ids: Sequence[int | None],
    word_labels: Sequence[int],
    label_all_tokens: bool = False,
    inside_map: Sequence[int] | None = None,
    labelled_words: range | None = None,
) -> list[int]:
    """``L`` labels for one tokenized sequence (``word_ids``: a fast tokenizer's ``word_ids()``, ``None`` for special
    tokens): ``word_labels[word]`` on a word's first piece, ``-100`` on special tokens, on words outside
    ``labelled_words`` (the window's targets; ``None``: every word) and on later pieces, which with
    ``label_all_tokens`` (``run_ner.py``'s option) get ``inside_map[label]`` (:func:`inside_label_map`) instead.
    ``[CLS] un ##believ ##able york [SEP]`` of words ``[B-MISC, B-LOC]`` -> ``[-100, B-MISC, -100, -100, B-LOC,
    -100]``; with ``label_all_tokens`` ``[-100, B-MISC, I-MISC, I-MISC, B-LOC, -100]``.

    Raises:
        ValueError: ``label_all_tokens`` without ``inside_map``.
    """
    if label_all_tokens and inside_map is None:
        raise ValueError("label_all_tokens needs inside_map (see inside_label_map)")
    labels: list[int] = []
    for word, previous in zip(word_ids, [None, *word_ids[:-1]]):
        if word is None or (labelled_words is not None and word not in labelled_words):
            labels.append(IGNORE_INDEX)
        elif word != previous:
            labels.append(int(word_labels[word]))
        else:
            labels.append(int(inside_map[word_labels[word]]) if label_all_tokens else IGNORE_INDEX)
    return labels


def first_piece_word_index(
    word_ids: Sequence[int | None], labelled_words: range | None = None, offset: int = 0
) -> list[int]:
    """For each WordPiece, ``word - offset`` if it is the first piece of a labelled word (with ``offset`` set so the
    result is the word's index in its sentence), else ``-1``: how predictions and features go back to words."""
    return [
        w - offset if w is not None and w != previous and (labelled_words is None or w in labelled_words) else -1
        for w, previous in zip(word_ids, [None, *word_ids[:-1]])
    ]


@dataclass
class Window:
    """One model input: ``words``, the ``(sentence, word)`` positions of whole words (context + target + context);
    the words ``[target_start, target_end)`` of ``sentence``, from position ``target_offset``, are labelled."""

    sentence: int
    target_start: int
    target_end: int
    words: list[tuple[int, int]]
    target_offset: int


def _chunks(counts: Sequence[int], budget: int) -> list[tuple[int, int]]:
    """Split word piece counts into consecutive ranges of at most ``budget`` pieces (a longer word stands alone)."""
    ranges, start, used = [], 0, 0
    for i, n in enumerate(counts):
        if i > start and used + n > budget:
            ranges.append((start, i))
            start, used = i, 0
        used += n
    ranges.append((start, len(counts)))
    return ranges


def plan_windows(
    piece_counts: Sequence[Sequence[int]],
    max_pieces: int,
    document_ids: Sequence[int] | None = None,
    document_context: bool = False,
) -> list[Window]:
    """The windows of a split, in sentence order, every word labelled in exactly one: greedy target ranges of at
    most ``max_pieces`` WordPieces (``max_seq_length - 2``), grown by whole context words left and right
    (docs/design.md, 'windows'); a sentence with no words gets none. ``piece_counts``: ``S`` lists of WordPieces per
    word. ``document_ids``: each sentence's document (consecutive equal ids), for ``document_context``: context from
    the document's neighbouring sentences (paper §5.3), else from the sentence only.

    Raises:
        ValueError: ``max_pieces < 1``, or ``document_context`` without ``document_ids`` / with a negative id
            (unknown document, e.g. Hub data that lost its ``-DOCSTART-`` lines).
    """
    if max_pieces < 1:
        raise ValueError(f"max_pieces must be >= 1, got {max_pieces} (max_seq_length too small for [CLS] and [SEP])")
    if document_context and (document_ids is None or any(d < 0 for d in document_ids)):
        raise ValueError(
            "document_context needs the document of every sentence (document_id >= 0); this data has "
            "none — read the original CoNLL files (--data_dir) whose -DOCSTART- lines mark documents"
        )
    pool_of = document_ids.__getitem__ if document_context else None  # None: every sentence its own pool
    groups = [list(g) for _, g in itertools.groupby(range(len(piece_counts)), pool_of)]  # sentences sharing a pool
    windows: list[Window] = []
    for group in groups:
        pool = [(s, w) for s in group for w in range(len(piece_counts[s]))]
        counts = [piece_counts[s][w] for s, w in pool]
        first = dict(zip(group, itertools.accumulate((len(piece_counts[s]) for s in group), initial=0)))
        for s in group:
            for start, end in _chunks(piece_counts[s], max_pieces) if piece_counts[s] else []:
                left, right = first[s] + start, first[s] + end
                budget = max_pieces - sum(counts[left:right])
                grown = True
                while grown:
                    grown = False
                    if left > 0 and counts[left - 1] <= budget:
                        left, budget, grown = left - 1, budget - counts[left - 1], True
                    if right < len(pool) and counts[right] <= budget:
                        right, budget, grown = right + 1, budget - counts[right], True
                windows.append(Window(s, start, end, pool[left:right], first[s] + start - left))
    return windows


def pretokenized_tokenizer(tokenizer):
    """``tokenizer``, or for a byte-level BPE without a prefix space (RoBERTa, GPT-2: ``ByteLevel(add_prefix_space=
    False)``) a copy with it: pre-split words are otherwise each encoded as at the start of a text (``met`` ->
    ``me``, ``t`` instead of ``Ġmet``, the piece of running text); transformers' ``run_ner.py`` loads those
    tokenizers with ``add_prefix_space=True`` for the same reason."""
    import copy

    pre = getattr(getattr(tokenizer, "backend_tokenizer", None), "pre_tokenizer", None)
    if type(pre).__name__ != "ByteLevel" or pre.add_prefix_space:
        return tokenizer
    from tokenizers.pre_tokenizers import ByteLevel

    spaced = copy.deepcopy(tokenizer)
    spaced.backend_tokenizer.pre_tokenizer = ByteLevel(
        add_prefix_space=True, trim_offsets=pre.trim_offsets, use_regex=pre.use_regex
    )
    return spaced


def word_piece_counts(tokenizer, sentences: Sequence[Sequence[str]]) -> list[list[int]]:
    """WordPieces per word (``S`` lists of ``W_s`` ints; may be 0), each distinct word tokenized once, alone, with
    ``is_split_into_words=True`` as in the windows."""
    vocab = sorted({w for words in sentences for w in words})
    singles = [[w] for w in vocab]
    encoded = tokenizer(singles, add_special_tokens=False, is_split_into_words=True)["input_ids"] if vocab else []
    size = {w: len(ids) for w, ids in zip(vocab, encoded)}
    return [[size[w] for w in words] for words in sentences]


def tokenize_and_align(
    tokens: Sequence[Sequence[str]],
    tokenizer,
    max_seq_length: int,
    tags: Sequence[Sequence[int]] | None = None,
    label_names: Sequence[str] | None = None,
    label_all_tokens: bool = False,
    document_ids: Sequence[int] | None = None,
    document_context: bool = False,
) -> dict[str, list]:
    """Turn ``S`` sentences of words (``tokens``) into model features, one per :class:`Window` of at most
    ``max_seq_length`` tokens (the tokenizer's special tokens included), with a *fast* tokenizer (``word_ids()``). ``tags``: label ids per word, or
    ``None`` (no ``labels`` column); ``label_names`` in id order, for ``label_all_tokens`` (:func:`align_labels`);
    ``document_ids``, ``document_context``: see :func:`plan_windows`. Returns ``F``-long columns: ``input_ids``,
    ``token_type_ids`` (all 0; only when the tokenizer's ``model_input_names`` hold them), ``attention_mask`` (unpadded, ``L`` each), ``labels`` (``L`` ints, ``-100`` where
    ignored; only with ``tags``), ``word_index`` (``L`` ints: index in the sentence of the word whose first piece is
    here, else ``-1``) and ``sentence_index`` (int).

    Raises:
        ValueError: a slow tokenizer; or (internal check) a labelled word that got no piece in its window.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            "NER alignment needs a fast tokenizer (word_ids()); load it with AutoTokenizer.from_pretrained(...)"
        )
    inside = inside_label_map(label_names) if label_all_tokens else None
    tokenizer = pretokenized_tokenizer(tokenizer)
    counts = word_piece_counts(tokenizer, tokens)
    specials = tokenizer.num_special_tokens_to_add(pair=False)  # BERT [CLS] [SEP], RoBERTa <s> </s>: 2
    windows = plan_windows(counts, max_seq_length - specials, document_ids, document_context)
    batch_words = [[tokens[s][w] for s, w in win.words] for win in windows]
    inputs = [k for k in ("input_ids", "token_type_ids", "attention_mask") if k in tokenizer.model_input_names]
    keys = (*inputs, "word_index", "sentence_index")
    out: dict[str, list] = {k: [] for k in keys + (("labels",) if tags is not None else ())}
    step = 1000
    for begin in range(0, len(windows), step):
        enc = tokenizer(
            batch_words[begin : begin + step],
            is_split_into_words=True,
            truncation=True,
            max_length=max_seq_length,
        )
        for j, win in enumerate(windows[begin : begin + step]):
            word_ids = enc.word_ids(j)
            target = range(win.target_offset, win.target_offset + win.target_end - win.target_start)
            index = first_piece_word_index(word_ids, target, offset=win.target_offset - win.target_start)
            found = {i for i in index if i >= 0}
            for w in range(win.target_start, win.target_end):
                if w not in found and counts[win.sentence][w] > 0:
                    raise ValueError(f"sentence {win.sentence}, word {w}: lost in tokenization (internal error)")
            for key in inputs:
                out[key].append(enc[key][j])
            out["word_index"].append(index)
            out["sentence_index"].append(win.sentence)
            if tags is not None:
                word_labels = [tags[s][w] for s, w in win.words]
                out["labels"].append(align_labels(word_ids, word_labels, label_all_tokens, inside, target))
    return out
