"""SQuAD post-processing (features cut in :mod:`hf_bert_tasks.tasks.squad.features`): windowed evaluation features as arrays, and
n-best answers from start/end logits. Pure numpy, in the style of transformers' examples ``utils_qa.py``; the rules
are google-research/bert ``run_squad.py``'s (paper §4.2-4.3). Dimensions: ``F`` features (windows), ``L`` tokens per
feature (padded), ``E`` examples, ``k`` candidates per feature (``min(n_best_size, L)``), ``N`` valid spans.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


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


def _ragged_to_padded(
    column, lengths: np.ndarray, width: int, inner: int | None, fill, dtype, name: str
) -> np.ndarray:
    """A pyarrow ``list<T>`` (``inner=None``) or ``list<list<T>[inner]>`` column, row lengths ``lengths`` ``[n_rows]``
    -> ``[n_rows, width(, inner)]`` padded with ``fill`` (``width >= lengths.max()``).

    Raises:
        ValueError: a missing row, or an inner list that is not ``inner`` long (names the column and row).
    """
    n = len(column)
    if column.null_count:
        raise ValueError(f"features column {name!r} has {column.null_count} missing rows; every feature needs one")
    values = column.flatten()  # respects slicing: only this column's rows
    tail = () if inner is None else (inner,)
    out = np.full((n, width, *tail), fill, dtype=dtype)
    if inner is not None:
        inner_lengths = values.value_lengths().to_numpy(zero_copy_only=False)
        if len(inner_lengths) and (inner_lengths != inner).any():
            bad = int(np.flatnonzero(inner_lengths != inner)[0])
            row = int(np.searchsorted(np.cumsum(lengths), bad, side="right"))
            raise ValueError(
                f"features column {name!r}, row {row}: every entry must be a pair [start, end]; "
                f"found one of length {int(inner_lengths[bad])}"
            )
        values = values.flatten()
    flat = np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype).reshape(-1, *tail)
    out[np.arange(width) < lengths[:, None]] = flat  # a boolean mask fills row by row: the ragged order
    return out


def features_to_arrays(features, example_ids: list[str]):
    """Arrays for :func:`postprocess_qa_predictions` from evaluation features with ``example_id``,
    ``offset_mapping``, ``token_is_max_context`` (:func:`hf_bert_tasks.tasks.squad.features.create_features`): a ``datasets.Dataset``
    (read through Arrow, in its row order) or a mapping of Python lists. Returns ``(feature_example_index [F] int,
    offsets [F, L, 2] int, max_context [F, L] bool)``, ``L`` the longest feature; shorter rows padded with ``-1``
    offsets and ``False``.

    Raises:
        KeyError: a feature's ``example_id`` is not in ``example_ids``.
        ValueError: an ``offset_mapping`` entry is not a ``[start, end]`` pair, or a row's ``offset_mapping`` and
            ``token_is_max_context`` differ in length (Dataset input).
    """
    import pyarrow as pa
    from datasets import Dataset

    position = {qid: i for i, qid in enumerate(example_ids)}
    names, columns = ("example_id", "offset_mapping", "token_is_max_context"), None
    if isinstance(features, Dataset):  # Arrow buffers: docs/design.md, 'postprocess.py: why Arrow buffers'
        table = features.select_columns(list(names)).with_format("arrow")[:]
        columns = {name: table.column(name).combine_chunks() for name in names}
        if not all(pa.types.is_list(columns[name].type) for name in names[1:]):  # e.g. ``Array2D``: Python lists
            columns = None
    ids = list(features["example_id"]) if columns is None else columns["example_id"].to_pylist()
    index = np.array([position[q] for q in ids], dtype=np.int64)
    if columns is None:
        offset_rows = list(features["offset_mapping"])
        width = max((len(r) for r in offset_rows), default=0)
        offsets = pad_2d(offset_rows, width, -1, np.int64) if offset_rows else np.zeros((0, 0, 2), np.int64)
        return index, offsets, pad_2d(list(features["token_is_max_context"]), width, False, bool)
    lengths = np.asarray(columns["offset_mapping"].value_lengths().to_numpy(zero_copy_only=False), np.int64)
    ctx_lengths = columns["token_is_max_context"].value_lengths().to_numpy(zero_copy_only=False)
    if (lengths != ctx_lengths).any():
        row = int(np.flatnonzero(lengths != ctx_lengths)[0])
        raise ValueError(
            f"features row {row}: 'offset_mapping' has {lengths[row]} positions but "
            f"'token_is_max_context' {ctx_lengths[row]}; both need one entry per token"
        )
    width = int(lengths.max()) if len(lengths) else 0
    offsets = _ragged_to_padded(columns["offset_mapping"], lengths, width, 2, -1, np.int64, "offset_mapping")
    max_ctx = _ragged_to_padded(
        columns["token_is_max_context"], lengths, width, None, False, bool, "token_is_max_context"
    )
    return index, offsets, max_ctx


class QAPredictions(NamedTuple):
    """Output of :func:`postprocess_qa_predictions` (see there)."""

    predictions: dict[str, str]
    nbest: dict[str, list[dict]]
    null_odds: dict[str, float]
    best_non_null: dict[str, str]


def _top_k(logits: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values per row, descending; ties keep the lower index first. ``[n, k]``: as
    ``np.argsort(-logits, kind="stable")[:, :k]``, via ``argpartition`` (docs/design.md, 'postprocess.py')."""
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


class _Candidates(NamedTuple):
    """The valid spans of all features (``N`` each, Python lists), sorted by example, score descending, then
    feature, start, end. ``bounds`` (``E + 1`` ints): example ``e``'s spans are ``bounds[e]:bounds[e + 1]``."""

    score: list[float]
    start_logit: list[float]
    end_logit: list[float]
    char_start: list[int]
    char_end: list[int]
    bounds: list[int]


def _span_candidates(
    start_logits: np.ndarray,
    end_logits: np.ndarray,
    offsets: np.ndarray,
    start_ok: np.ndarray,
    end_ok: np.ndarray,
    feature_example_index: np.ndarray,
    n_examples: int,
    k: int,
    max_answer_length: int,
) -> _Candidates:
    """Top-``k`` starts x top-``k`` ends of every feature (``[F, k, k]``) that form a valid span: start where
    ``start_ok``, end where ``end_ok`` (bool ``[F, L]``), ``end >= start``, at most ``max_answer_length`` tokens;
    scored ``start_logit + end_logit``. Logits float ``[F, L]``, offsets int ``[F, L, 2]``, example index ``[F]``."""
    n_features = start_logits.shape[0]
    top_s, top_e = _top_k(start_logits, k), _top_k(end_logits, k)
    rows = np.arange(n_features)[:, None]
    s_idx = np.broadcast_to(top_s[:, :, None], (n_features, k, k))
    e_idx = np.broadcast_to(top_e[:, None, :], (n_features, k, k))
    ok = (
        start_ok[rows, top_s][:, :, None]
        & end_ok[rows, top_e][:, None, :]
        & (e_idx >= s_idx)
        & (e_idx - s_idx + 1 <= max_answer_length)
    )
    feat, si, ei = np.nonzero(ok)
    cs, ce = s_idx[feat, si, ei], e_idx[feat, si, ei]
    c_start_logit, c_end_logit = start_logits[feat, cs], end_logits[feat, ce]
    c_score = c_start_logit + c_end_logit
    c_example = feature_example_index[feat]
    order = np.lexsort((ce, cs, feat, -c_score, c_example))  # deterministic ties: feature, start, end
    return _Candidates(
        c_score[order].tolist(),
        c_start_logit[order].tolist(),
        c_end_logit[order].tolist(),
        offsets[feat[order], cs[order], 0].tolist(),
        offsets[feat[order], ce[order], 1].tolist(),
        np.searchsorted(c_example[order], np.arange(n_examples + 1)).tolist(),
    )


def _example_nbest(
    context: str, cand: _Candidates, lo: int, hi: int, null_entry: tuple | None, n_best_size: int
) -> tuple[list[tuple], tuple | None]:
    """The n-best list of one example from its sorted spans ``lo:hi`` of ``cand``, and its best non-null entry
    (first non-empty text, else ``None``; it may be left out of a full list). Entries: ``(text, score, start_logit,
    end_logit, char_start, char_end)``, best first, one per distinct text, at most ``n_best_size``; ``null_entry``
    (SQuAD 2.0, else ``None``) at its score's rank; one empty answer of score 0 when there is none. The scan stops
    once the list is full and a non-empty text has been seen."""
    entries: list[tuple] = []
    seen: set[str] = set()
    best_non_null = None
    null_pending = null_entry is not None
    for j in range(lo, hi):
        if len(entries) >= n_best_size and best_non_null is not None:
            break
        score = cand.score[j]
        if null_pending and null_entry[1] > score and len(entries) < n_best_size:
            entries.append(null_entry)
            null_pending = False
        char_start, char_end = cand.char_start[j], cand.char_end[j]
        text = context[char_start:char_end]
        if text in seen:
            continue
        seen.add(text)
        entry = (text, score, cand.start_logit[j], cand.end_logit[j], char_start, char_end)
        if best_non_null is None and text:
            best_non_null = entry
        if len(entries) < n_best_size:
            entries.append(entry)
    if null_pending and len(entries) < n_best_size:
        entries.append(null_entry)
    if not entries:
        entries.append(("", 0.0, 0.0, 0.0, 0, 0))
    return entries, best_non_null


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
    """Turn start/end logits of windowed features into one answer text per example (google's ``run_squad.py``).

    Args:
        example_ids, contexts: ``[E]`` question ids and context strings (offsets index into them).
        feature_example_index: int ``[F]``: the example each feature (window) belongs to.
        start_logits, end_logits: float ``[F, L]`` (padding positions may hold anything, e.g. -100).
        offsets: int ``[F, L, 2]`` character ``[start, end)`` of each context token, ``-1`` elsewhere (never answers).
        max_context: bool ``[F, L]``: an answer starts only where its token has its maximum context (google's
            rule); ``None`` allows every context token.
        n_best_size, max_answer_length: candidates per feature and side, answers kept (20); longest answer (30).
        version_2_with_negative: SQuAD 2.0: add the null answer from ``[CLS]`` (the minimum over the windows).
        null_score_diff_threshold: tau; predict ``""`` when ``null - best non-null > tau`` (paper §4.3).

    Returns:
        :class:`QAPredictions` ``(predictions, nbest, null_odds, best_non_null)``: ``{id: text}`` (``""`` without a
        valid span); ``{id: [{"text", "probability", "start_logit", "end_logit", "offsets"}...]}``, best first,
        unique texts, at most ``n_best_size``, probabilities a softmax over them (v2's null answer: text ``""``); v2
        ``{id: null - best non-null}`` (``math.inf`` without a valid span) else ``{}``; ``{id: best non-empty
        text}`` (the predictions at tau = +inf, for the official v2 threshold search).

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
    valid_token = offsets[:, :, 0] >= 0
    start_ok = valid_token if max_context is None else valid_token & np.asarray(max_context, dtype=bool)
    cand = _span_candidates(
        start_logits,
        end_logits,
        offsets,
        start_ok,
        valid_token,
        feature_example_index,
        n_examples,
        min(n_best_size, seq_len),
        max_answer_length,
    )
    null_entries = [None] * n_examples
    if version_2_with_negative:  # ("", score, start_logit, end_logit, 0, 0) of [CLS] in the window of least score
        feature_null = start_logits[:, 0] + end_logits[:, 0]  # (google's run_squad.py; the first window on a tie)
        by_null = np.lexsort((np.arange(n_features), feature_null, feature_example_index))
        null_feature = by_null[np.searchsorted(feature_example_index[by_null], np.arange(n_examples))]
        null_entries = [
            ("", float(feature_null[f]), float(start_logits[f, 0]), float(end_logits[f, 0]), 0, 0)
            for f in null_feature
        ]
    predictions, nbest, null_odds, non_null = {}, {}, {}, {}
    for ex, null_entry in enumerate(null_entries):
        entries, best_non_null = _example_nbest(
            contexts[ex], cand, cand.bounds[ex], cand.bounds[ex + 1], null_entry, n_best_size
        )
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
