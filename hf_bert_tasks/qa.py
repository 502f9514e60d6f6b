"""Extractive question answering (SQuAD): windowed features and n-best post-processing.

Feature creation follows google-research/bert ``run_squad.py`` (paper §4.2-4.3) on top of a fast tokenizer's
character offsets:

* the question is tokenized alone and cut to ``max_query_length`` WordPieces (longer questions do not fail);
* the context is tokenized alone (with character offsets) and cut into windows of at most
  ``max_seq_length - len(question) - 3`` tokens whose starts are ``doc_stride`` tokens apart (``doc_stride`` is the
  distance between window starts, as in google's code; transformers' tokenizer ``stride`` is the *overlap* instead);
* each window becomes ``[CLS] question [SEP] context-window [SEP]`` with ``token_type_ids`` 0 / 1;
* training labels are token indices of the answer's first and last WordPiece; a window that does not hold the
  whole answer, and an unanswerable question, point at ``[CLS]`` (0, 0). Only context tokens are ever labelled;
* evaluation features keep ``example_id``, the character ``offset_mapping`` of context tokens (``[-1, -1]`` for
  question / special tokens) and ``token_is_max_context`` (google's rule: a token seen in several windows belongs
  to the window where it has the most context, ``min(left, right) + 0.01 * window_length``).

:func:`postprocess_qa_predictions` is a pure numpy function over the logits (n-best, ``max_answer_length``, the
max-context rule, and for SQuAD 2.0 the null score from ``[CLS]`` with ``score_diff = null - best non-null`` and
the answer ``""`` when ``score_diff > null_score_diff_threshold``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

#: Columns of training features (besides what the collator pads).
TRAIN_COLUMNS = ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
#: Columns the model receives at evaluation time.
MODEL_INPUT_COLUMNS = ("input_ids", "token_type_ids", "attention_mask")


@dataclass(frozen=True)
class WindowConfig:
    """How a (question, context) pair is cut into features.

    Attributes:
        max_seq_length: WordPieces per feature including ``[CLS]`` and two ``[SEP]`` (paper: 384).
        doc_stride: context tokens between the starts of two consecutive windows (google's ``doc_stride``: 128).
        max_query_length: question WordPieces kept (google: 64); longer questions are cut.
    """

    max_seq_length: int = 384
    doc_stride: int = 128
    max_query_length: int = 64

    def validate(self) -> None:
        """Raise ``ValueError`` when the settings leave no room for context or would skip context tokens."""
        if self.max_query_length < 1:
            raise ValueError(f"max_query_length must be >= 1, got {self.max_query_length}")
        room = self.max_seq_length - self.max_query_length - 3
        if room < 1:
            raise ValueError(
                f"max_seq_length {self.max_seq_length} leaves no room for context: it must exceed "
                f"max_query_length ({self.max_query_length}) + 3 special tokens"
            )
        if not 1 <= self.doc_stride <= room:
            raise ValueError(
                f"doc_stride {self.doc_stride} must be between 1 and {room} (= max_seq_length {self.max_seq_length} "
                f"- max_query_length {self.max_query_length} - 3) so that consecutive windows leave no context "
                "token out"
            )


def window_spans(n_tokens: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Context windows ``(start, length)`` over ``n_tokens`` tokens (google ``run_squad.py``'s ``doc_spans``).

    Windows start at 0, ``stride``, ``2*stride`` … and the last one ends at the last token. An empty context gives
    one empty window ``(0, 0)``.

    Example: ``window_spans(10, 4, 3)`` -> ``[(0, 4), (3, 4), (6, 4)]``.
    """
    spans = []
    start = 0
    while True:
        length = min(window, n_tokens - start)
        spans.append((start, length))
        if start + length >= n_tokens:
            return spans
        start += min(length, stride)


def max_context_mask(spans: list[tuple[int, int]]) -> list[list[bool]]:
    """For each window, whether each of its tokens has its maximum context there (google ``_check_is_max_context``).

    The score of token ``t`` in window ``(start, length)`` is ``min(t - start, start + length - 1 - t) + 0.01 *
    length``; the first window with the highest score wins.

    Returns:
        one list per window, ``length`` booleans each.
    """
    out = []
    for index, (start, length) in enumerate(spans):
        flags = []
        for t in range(start, start + length):
            best, best_index = None, None
            for j, (s, n) in enumerate(spans):
                if not s <= t < s + n:
                    continue
                score = min(t - s, s + n - 1 - t) + 0.01 * n
                if best is None or score > best:
                    best, best_index = score, j
            flags.append(best_index == index)
        out.append(flags)
    return out


def _special_ids(tokenizer) -> tuple[int, int]:
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    if cls_id is None or sep_id is None:
        raise ValueError(
            f"{type(tokenizer).__name__} has no [CLS]/[SEP] token; SQuAD features need a BERT-style tokenizer"
        )
    return cls_id, sep_id


def _token_span(offsets: list[tuple[int, int]], start_char: int, end_char: int) -> tuple[int, int] | None:
    """First and last context token (indices into ``offsets``) overlapping characters ``[start_char, end_char)``."""
    first = last = None
    for i, (s, e) in enumerate(offsets):
        if e <= s:
            continue
        if first is None and e > start_char:
            first = i
        if s < end_char:
            last = i
    if first is None or last is None or last < first:
        return None
    return first, last


def create_features(
    questions: list[str],
    contexts: list[str],
    tokenizer,
    config: WindowConfig,
    answers: list[dict] | None = None,
    example_ids: list[str] | None = None,
) -> dict[str, list]:
    """Cut (question, context) pairs into windowed BERT features.

    Args:
        questions, contexts: ``n_examples`` strings each.
        tokenizer: a *fast* BERT tokenizer (character offsets are needed).
        config: the window settings (validated here).
        answers: for training features, one ``{"text": [...], "answer_start": [...]}`` per example (the first
            answer is the label; an empty list marks an unanswerable SQuAD 2.0 question).
        example_ids: for evaluation features, one id per example.

    Returns:
        Columns of equal length ``n_features`` (lists, unpadded): ``input_ids``, ``token_type_ids``,
        ``attention_mask``; with ``answers`` also ``start_positions``/``end_positions`` (int token indices, 0 =
        ``[CLS]``); with ``example_ids`` also ``example_id``, ``offset_mapping`` (``[seq_len, 2]`` character spans
        into the context, ``[-1, -1]`` outside it) and ``token_is_max_context`` (``[seq_len]`` bool).

    Raises:
        ValueError: bad window settings; a slow tokenizer; an answer text that does not match the context at its
            ``answer_start`` (the message gives the example index).
    """
    config.validate()
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("SQuAD features need a fast tokenizer (character offsets); load it with use_fast=True")
    cls_id, sep_id = _special_ids(tokenizer)
    q_ids = tokenizer(list(questions), add_special_tokens=False)["input_ids"]
    # Whole contexts may exceed the model's 512 positions: they are cut into windows below (verbose=False silences
    # the tokenizer's "sequence length is longer than the specified maximum" warning, which does not apply).
    ctx = tokenizer(list(contexts), add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    out: dict[str, list] = {k: [] for k in MODEL_INPUT_COLUMNS}
    if answers is not None:
        out["start_positions"], out["end_positions"] = [], []
    if example_ids is not None:
        out["example_id"], out["offset_mapping"], out["token_is_max_context"] = [], [], []
    for i, question_ids in enumerate(q_ids):
        question_ids = question_ids[: config.max_query_length]
        doc_ids, doc_offsets = ctx["input_ids"][i], ctx["offset_mapping"][i]
        window = config.max_seq_length - len(question_ids) - 3
        spans = window_spans(len(doc_ids), window, config.doc_stride)
        answer_tokens = None
        if answers is not None and answers[i]["text"]:
            text, start = answers[i]["text"][0], int(answers[i]["answer_start"][0])
            if contexts[i][start : start + len(text)] != text:
                raise ValueError(
                    f"example {i}: answer {text!r} does not match the context at answer_start {start} "
                    f"(found {contexts[i][start : start + len(text)]!r})"
                )
            answer_tokens = _token_span(doc_offsets, start, start + len(text))
        is_max = max_context_mask(spans) if example_ids is not None else None
        prefix = [cls_id, *question_ids, sep_id]
        for w, (start, length) in enumerate(spans):
            ids = prefix + doc_ids[start : start + length] + [sep_id]
            out["input_ids"].append(ids)
            out["token_type_ids"].append([0] * len(prefix) + [1] * (length + 1))
            out["attention_mask"].append([1] * len(ids))
            first_ctx = len(prefix)
            if answers is not None:
                s = e = 0
                if answer_tokens is not None and start <= answer_tokens[0] and answer_tokens[1] < start + length:
                    s, e = answer_tokens[0] - start + first_ctx, answer_tokens[1] - start + first_ctx
                out["start_positions"].append(s)
                out["end_positions"].append(e)
            if example_ids is not None:
                offsets = (
                    [[-1, -1]] * len(prefix) + [list(o) for o in doc_offsets[start : start + length]] + [[-1, -1]]
                )
                out["example_id"].append(example_ids[i])
                out["offset_mapping"].append(offsets)
                out["token_is_max_context"].append([False] * len(prefix) + is_max[w] + [False])
    return out


def pad_2d(rows: list, width: int, fill, dtype) -> np.ndarray:
    """Stack ragged per-feature lists into a ``[n_rows, width, ...]`` array, padded with ``fill``."""
    rows = list(rows)
    first = np.asarray(rows[0]) if rows else np.zeros((0,))
    out = np.full((len(rows), width, *first.shape[1:]), fill, dtype=dtype)
    for i, row in enumerate(rows):
        row = np.asarray(row, dtype=dtype)
        n = min(len(row), width)
        out[i, :n] = row[:n]
    return out


class QAPredictions(NamedTuple):
    """Output of :func:`postprocess_qa_predictions` (see there)."""

    predictions: dict[str, str]
    nbest: dict[str, list[dict]]
    null_odds: dict[str, float]
    best_non_null: dict[str, str]


def _top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values per row, descending; ties keep the lower index first. ``[n, k]``.

    Same result as ``np.argsort(-logits, kind="stable")[:, :k]``, via ``argpartition`` (linear) and a sort of the ``k``
    picked; rows where the ``k``-th value is tied (the partition may pick any of the tied indices) use the full sort.
    """
    width = logits.shape[1]
    if k >= width:
        return np.argsort(-logits, axis=1, kind="stable")
    part = np.argpartition(-logits, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(logits, part, axis=1)
    # sort the k picked by value descending, then index ascending
    order = np.lexsort((part, -values), axis=1)
    top = np.take_along_axis(part, order, axis=1)
    kth = np.take_along_axis(logits, top[:, -1:], axis=1)
    tied = np.flatnonzero((logits == kth).sum(axis=1) > 1)
    if len(tied):
        top[tied] = np.argsort(-logits[tied], axis=1, kind="stable")[:, :k]
    return top


def postprocess_qa_predictions(
    example_ids: list[str],
    contexts: list[str],
    feature_example_index: np.ndarray,
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    offsets: np.ndarray,
    max_context: np.ndarray | None = None,
    n_best_size: int = 20,
    max_answer_length: int = 30,
    version_2_with_negative: bool = False,
    null_score_diff_threshold: float = 0.0,
):
    """Turn start/end logits of windowed features into one answer text per example.

    Args:
        example_ids: ``[n_examples]`` question ids.
        contexts: ``[n_examples]`` context strings (offsets index into them).
        feature_example_index: int ``[n_features]``: the example each feature (window) belongs to.
        start_logits, end_logits: float ``[n_features, seq_len]`` (padding positions may hold anything, e.g. -100).
        offsets: int ``[n_features, seq_len, 2]`` character ``[start, end)`` of each context token in its context;
            ``-1`` for question, special and padding tokens (they can never start or end an answer).
        max_context: bool ``[n_features, seq_len]``: whether a token has its maximum context in this window
            (google's rule); an answer may only start at such a token. ``None`` allows every context token.
        n_best_size: start and end candidates taken per feature (top logits), and answers kept per example (20).
        max_answer_length: longest answer in WordPieces (30).
        version_2_with_negative: SQuAD 2.0: add the null answer, scored ``start_logits[f, 0] + end_logits[f, 0]``
            (``[CLS]``; the minimum over the example's windows).
        null_score_diff_threshold: tau; predict ``""`` when ``null - best non-null > tau`` (paper §4.3).

    Returns:
        :class:`QAPredictions` ``(predictions, nbest, null_odds, best_non_null)``: ``{id: text}``;
        ``{id: [{"text", "probability", "start_logit", "end_logit", "offsets"}...]}`` best first, unique texts, at
        most ``n_best_size`` entries (probabilities are a softmax over them; the null answer appears as ``text ""``
        in v2); and for v2 ``{id: score_diff}`` (``math.inf`` when no valid span exists, e.g. all candidates null)
        else ``{}``. An example without any valid span predicts ``""``; nothing raises on it. ``best_non_null`` is
        ``{id: best non-empty span text}`` (``""`` when none), i.e. the predictions at tau = +inf, which the official
        v2 threshold search needs.

    Raises:
        ValueError: when array shapes disagree or an example has no feature.
    """
    start_logits = np.asarray(start_logits, dtype=np.float64)
    end_logits = np.asarray(end_logits, dtype=np.float64)
    offsets = np.asarray(offsets)
    feature_example_index = np.asarray(feature_example_index, dtype=np.int64)
    n_features, seq_len = start_logits.shape
    if end_logits.shape != start_logits.shape or offsets.shape != (n_features, seq_len, 2):
        raise ValueError(
            f"shape mismatch: start_logits {start_logits.shape}, end_logits {end_logits.shape}, "
            f"offsets {offsets.shape}; expected [n_features, seq_len] twice and [n_features, seq_len, 2]"
        )
    if feature_example_index.shape != (n_features,):
        raise ValueError(f"feature_example_index has shape {feature_example_index.shape}; expected ({n_features},)")
    n_examples = len(example_ids)
    counts = np.bincount(feature_example_index, minlength=n_examples)
    if len(counts) > n_examples or (n_examples and counts.min() == 0):
        missing = [example_ids[i] for i in np.flatnonzero(counts[:n_examples] == 0)[:3]]
        raise ValueError(f"every example needs at least one feature; none for {missing} (or an index is out of range)")
    k = min(n_best_size, seq_len)
    valid_token = offsets[:, :, 0] >= 0
    start_ok = valid_token if max_context is None else valid_token & np.asarray(max_context, dtype=bool)

    # Candidates: top-k starts x top-k ends of every feature, [n_features, k, k].
    top_s, top_e = _top_k(start_logits, k), _top_k(end_logits, k)
    rows = np.arange(n_features)[:, None]
    s_idx = np.broadcast_to(top_s[:, :, None], (n_features, k, k))
    e_idx = np.broadcast_to(top_e[:, None, :], (n_features, k, k))
    ok = (
        start_ok[rows, top_s][:, :, None]
        & valid_token[rows, top_e][:, None, :]
        & (e_idx >= s_idx)
        & (e_idx - s_idx + 1 <= max_answer_length)
    )
    feat, si, ei = np.nonzero(ok)
    cs, ce = s_idx[feat, si, ei], e_idx[feat, si, ei]
    c_start_logit, c_end_logit = start_logits[feat, cs], end_logits[feat, ce]
    c_score = c_start_logit + c_end_logit
    c_example = feature_example_index[feat]
    # Order: example, score descending, then feature, start, end (deterministic ties).
    order = np.lexsort((ce, cs, feat, -c_score, c_example))
    bounds = np.searchsorted(c_example[order], np.arange(n_examples + 1)).tolist()
    # Python lists for the per-example loop below (numpy scalar indexing is slow there).
    o_score, o_start_logit, o_end_logit = (
        c_score[order].tolist(),
        c_start_logit[order].tolist(),
        c_end_logit[order].tolist(),
    )
    o_char_start = offsets[feat[order], cs[order], 0].tolist()
    o_char_end = offsets[feat[order], ce[order], 1].tolist()

    null_score = None
    if version_2_with_negative:
        feature_null = start_logits[:, 0] + end_logits[:, 0]
        null_score = np.full(n_examples, np.inf)
        np.minimum.at(null_score, feature_example_index, feature_null)
        # The [CLS] logits of the window with the smallest null score (google keeps that feature's logits).
        by_null = np.lexsort((np.arange(n_features), feature_null, feature_example_index))
        null_feature = by_null[np.searchsorted(feature_example_index[by_null], np.arange(n_examples))]

    predictions: dict[str, str] = {}
    nbest: dict[str, list[dict]] = {}
    null_odds: dict[str, float] = {}
    non_null: dict[str, str] = {}
    null_scores = null_score.tolist() if null_score is not None else None
    for ex in range(n_examples):
        context = contexts[ex]
        # entries: (text, score, start_logit, end_logit, char_start, char_end), best first
        entries: list[tuple] = []
        seen: set[str] = set()
        null_entry = None
        if null_scores is not None:
            f = null_feature[ex]
            null_entry = ("", null_scores[ex], float(start_logits[f, 0]), float(end_logits[f, 0]), 0, 0)
        best_non_null = None
        null_pending = null_entry is not None
        for j in range(bounds[ex], bounds[ex + 1]):
            if len(entries) >= n_best_size and best_non_null is not None:
                break
            score = o_score[j]
            if null_pending and null_entry[1] > score and len(entries) < n_best_size:
                entries.append(null_entry)
                null_pending = False
            char_start, char_end = o_char_start[j], o_char_end[j]
            text = context[char_start:char_end]
            if text in seen:
                continue
            seen.add(text)
            entry = (text, score, o_start_logit[j], o_end_logit[j], char_start, char_end)
            if best_non_null is None and text:
                best_non_null = entry
            if len(entries) < n_best_size:
                entries.append(entry)
        if null_pending and len(entries) < n_best_size:
            entries.append(null_entry)
        if not entries:
            entries.append(("", 0.0, 0.0, 0.0, 0, 0))
        top = max(e[1] for e in entries)
        weights = [math.exp(e[1] - top) for e in entries]
        total = sum(weights)
        qid = example_ids[ex]
        nbest[qid] = [
            {"text": e[0], "probability": w / total, "start_logit": e[2], "end_logit": e[3], "offsets": [e[4], e[5]]}
            for e, w in zip(entries, weights)
        ]
        non_null[qid] = best_non_null[0] if best_non_null is not None else ""
        if null_entry is None:
            predictions[qid] = non_null[qid]
        else:
            diff = math.inf if best_non_null is None else null_entry[1] - best_non_null[1]
            null_odds[qid] = diff
            predictions[qid] = "" if diff > null_score_diff_threshold else non_null[qid]
    return QAPredictions(predictions, nbest, null_odds, non_null)


def _arrow_columns(features, names: tuple[str, ...]):
    """``{name: pyarrow.Array}`` of a ``datasets.Dataset``'s columns in row order (its indices mapping applied), or
    ``None`` for any other input. Reading a ``Dataset`` column with ``list(ds[name])`` formats it row by row in Python
    (measured: two thirds of post-processing time on SQuAD dev); Arrow hands the same values over as flat buffers."""
    try:
        from datasets import Dataset
    except ImportError:  # pragma: no cover - datasets is a dependency; plain columns still work without it
        return None
    if not isinstance(features, Dataset):
        return None
    import pyarrow as pa

    table = features.select_columns(list(names)).with_format("arrow")[:]
    columns = {name: table.column(name).combine_chunks() for name in names}
    # the ragged columns (all but example_id) must be list<...>, as create_features makes them; anything else (e.g.
    # an Array2D extension type) is read row by row by the caller
    if not all(pa.types.is_list(columns[name].type) for name in names[1:]):
        return None
    return columns


def _ragged_to_padded(column, lengths: np.ndarray, width: int, inner: int | None, fill, dtype, name: str) -> np.ndarray:
    """A pyarrow ``list<T>`` (``inner=None``) or ``list<list<T>[inner]>`` column -> ``[n_rows, width(, inner)]``.

    ``lengths`` ``[n_rows]`` are the column's row lengths (the caller has read them); rows shorter than ``width`` are
    padded with ``fill`` (``width >= lengths.max()``). Raises ``ValueError`` naming the column when an inner list is
    not ``inner`` long.
    """
    n = len(column)
    if column.null_count:
        raise ValueError(f"features column {name!r} has {column.null_count} missing rows; every feature needs one")
    values = column.flatten()  # respects slicing: only this column's rows
    shape = (n, width) if inner is None else (n, width, inner)
    out = np.full(shape, fill, dtype=dtype)
    if inner is not None:
        inner_lengths = values.value_lengths().to_numpy(zero_copy_only=False)
        if len(inner_lengths) and (inner_lengths != inner).any():
            bad = int(np.flatnonzero(inner_lengths != inner)[0])
            row = int(np.searchsorted(np.cumsum(lengths), bad, side="right"))
            raise ValueError(f"features column {name!r}, row {row}: every entry must be a pair [start, end]; "
                             f"found one of length {int(inner_lengths[bad])}")
        values = values.flatten()
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype)
    if inner is not None:
        flat = flat.reshape(-1, inner)
    rows = np.repeat(np.arange(n), lengths)
    starts = np.cumsum(lengths) - lengths
    positions = np.arange(len(rows)) - np.repeat(starts, lengths)
    out[rows, positions] = flat
    return out


def features_to_arrays(features, example_ids: list[str]):
    """Arrays for :func:`postprocess_qa_predictions` from evaluation features (a ``datasets.Dataset`` or columns).

    Args:
        features: has ``example_id``, ``offset_mapping``, ``token_is_max_context`` (from :func:`create_features`):
            a ``datasets.Dataset`` (read through Arrow, in its row order) or a mapping of Python lists.

    Returns:
        ``(feature_example_index [n_features] int, offsets [n_features, L, 2] int, max_context [n_features, L] bool)``
        with ``L`` the longest feature; shorter rows are padded with ``-1`` offsets and ``False``.

    Raises:
        KeyError: a feature's ``example_id`` is not in ``example_ids``.
        ValueError: an ``offset_mapping`` entry is not a ``[start, end]`` pair, or a row's ``offset_mapping`` and
            ``token_is_max_context`` differ in length (Dataset input).
    """
    position = {qid: i for i, qid in enumerate(example_ids)}
    columns = _arrow_columns(features, ("example_id", "offset_mapping", "token_is_max_context"))
    if columns is not None:
        feature_ids = columns["example_id"].to_pylist()
        index = np.array([position[q] for q in feature_ids], dtype=np.int64)
        lengths = np.asarray(columns["offset_mapping"].value_lengths().to_numpy(zero_copy_only=False), np.int64)
        ctx_lengths = columns["token_is_max_context"].value_lengths().to_numpy(zero_copy_only=False)
        if (lengths != ctx_lengths).any():
            row = int(np.flatnonzero(lengths != ctx_lengths)[0])
            raise ValueError(f"features row {row}: 'offset_mapping' has {lengths[row]} positions but "
                             f"'token_is_max_context' {ctx_lengths[row]}; both need one entry per token")
        width = int(lengths.max()) if len(lengths) else 0
        offsets = _ragged_to_padded(columns["offset_mapping"], lengths, width, 2, -1, np.int64, "offset_mapping")
        max_ctx = _ragged_to_padded(columns["token_is_max_context"], lengths, width, None, False, bool,
                                    "token_is_max_context")
        return index, offsets, max_ctx
    feature_ids = list(features["example_id"])
    index = np.array([position[q] for q in feature_ids], dtype=np.int64)
    offset_rows = list(features["offset_mapping"])
    width = max((len(r) for r in offset_rows), default=0)
    offsets = pad_2d(offset_rows, width, -1, np.int64) if offset_rows else np.zeros((0, 0, 2), np.int64)
    max_ctx = pad_2d(list(features["token_is_max_context"]), width, False, bool)
    return index, offsets, max_ctx
