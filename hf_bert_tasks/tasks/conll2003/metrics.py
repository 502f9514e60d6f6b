"""Named-entity recognition (paper §5.3) on the model's predictions over :mod:`hf_bert_tasks.tasks.conll2003.features`'s features:
WordPiece predictions back to words, seqeval entity metrics, and the CoNLL file ``perl conlleval`` reads.
Dimensions: ``F`` features (windows), ``L`` WordPieces per window (≤ ``max_seq_length``), ``C`` labels, ``S``
sentences.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger(__name__)

#: Label id ignored by PyTorch's cross-entropy (and by ``DataCollatorForTokenClassification``'s padding).
IGNORE_INDEX = -100


def word_predictions(
    token_predictions: np.ndarray,
    word_index: Sequence[Sequence[int]],
    sentence_index: Sequence[int],
    sentence_lengths: Sequence[int],
    fill: int = 0,
) -> list[list[int]]:
    """``S`` lists of label ids, ``sentence_lengths[s]`` long: each word's prediction at its first WordPiece.
    ``token_predictions``: ``[F, L']`` label ids, ``L'`` ≥ every window's length (``Trainer``'s ``-100`` padding is
    fine), or ``[F, L', C]`` logits; ``word_index``, ``sentence_index``: the columns of
    :func:`hf_bert_tasks.tasks.conll2003.features.tokenize_and_align`; ``fill``: the label id of words without a WordPiece (``0``: ``O``).
    """
    preds = np.asarray(token_predictions)
    if preds.ndim == 3:
        preds = preds.argmax(-1)
    out = [[fill] * n for n in sentence_lengths]
    seen = 0
    for f, (index, s) in enumerate(zip(word_index, sentence_index)):
        for t, w in enumerate(index):
            if w >= 0:
                out[s][w] = int(preds[f, t])
                seen += 1
    if missing := sum(sentence_lengths) - seen:
        logger.warning("%d word(s) had no WordPiece and were tagged with label id %d", missing, fill)
    return out


#: tag scheme -> the ``seqeval.scheme`` class of its strict mode
SCHEMES = ("IOB2", "IOBES", "BILOU")


def entity_metrics(
    true_tags: Sequence[Sequence[str]],
    pred_tags: Sequence[Sequence[str]],
    mode: str = "strict",
    scheme: str = "IOB2",
) -> dict[str, float]:
    """Entity-level precision/recall/F1 (overall and per type) and token accuracy with seqeval, of ``true_tags`` and
    ``pred_tags`` (tag names per word, sentence by sentence); ``mode``: ``"strict"`` (seqeval's strict mode in
    ``scheme``, one of :data:`SCHEMES`: ``IOB2`` for CoNLL-2003, ``IOBES`` / ``BILOU`` for a user's tags) or
    ``"conlleval"`` (seqeval's default mode, as conlleval; docs/design.md, 'tasks/conll2003/metrics.py').

    Returns:
        ``precision``, ``recall``, ``f1`` (micro over entities, in [0, 1]), ``accuracy`` (fraction of words whose tag
        is right), and per entity type with a gold or predicted entity ``<TYPE>_precision``, ``<TYPE>_recall``,
        ``<TYPE>_f1``, ``<TYPE>_number`` (gold entities of that type).

    Raises:
        ValueError: different numbers of sentences or words, an unknown ``mode`` or ``scheme``.
    """
    from seqeval import scheme as seqeval_schemes
    from seqeval.metrics import accuracy_score, classification_report

    if len(true_tags) != len(pred_tags) or any(len(t) != len(p) for t, p in zip(true_tags, pred_tags)):
        raise ValueError("true_tags and pred_tags must have the same sentences and the same number of words in each")
    if mode not in ("strict", "conlleval"):
        raise ValueError(f"mode {mode!r}: expected 'strict' or 'conlleval'")
    true_tags, pred_tags = [list(t) for t in true_tags], [list(p) for p in pred_tags]
    if scheme not in SCHEMES:
        raise ValueError(f"scheme {scheme!r}: expected one of {list(SCHEMES)}")
    kwargs = {"mode": "strict", "scheme": getattr(seqeval_schemes, scheme)} if mode == "strict" else {}
    report = classification_report(true_tags, pred_tags, output_dict=True, zero_division=0, **kwargs)
    overall = report.pop("micro avg")
    out = {
        "precision": float(overall["precision"]),
        "recall": float(overall["recall"]),
        "f1": float(overall["f1-score"]),
        "accuracy": float(accuracy_score(true_tags, pred_tags)) if any(true_tags) else 0.0,
    }
    for name, row in sorted(item for item in report.items() if not item[0].endswith(" avg")):
        out.update(
            {
                f"{name}_precision": float(row["precision"]),
                f"{name}_recall": float(row["recall"]),
                f"{name}_f1": float(row["f1-score"]),
                f"{name}_number": int(row["support"]),
            }
        )
    return out


def token_level_metrics(
    predictions: np.ndarray,
    labels: np.ndarray,
    label_names: Sequence[str],
    mode: str = "strict",
    scheme: str = "IOB2",
) -> dict[str, float]:
    """:func:`entity_metrics` (``mode``, ``scheme``) over WordPiece positions whose label is not ``-100`` (one
    sequence per window; ``predictions``/``labels``: ``[F, L]`` ids, or ``[F, L, C]`` logits)."""
    predictions = np.asarray(predictions)
    if predictions.ndim == 3:
        predictions = predictions.argmax(-1)
    labels = np.asarray(labels)
    keep = labels != IGNORE_INDEX
    true_tags = [[label_names[i] for i in row[k]] for row, k in zip(labels, keep)]
    pred_tags = [[label_names[i] for i in row[k]] for row, k in zip(predictions, keep)]
    return entity_metrics(true_tags, pred_tags, mode, scheme)


def write_conll(
    path: str,
    tokens: Sequence[Sequence[str]],
    pred_tags: Sequence[Sequence[str]],
    gold_tags: Sequence[Sequence[str]] | None = None,
    overwrite: bool = False,
) -> None:
    """Write predictions in the CoNLL format conlleval reads: ``token gold pred`` per word (without ``gold_tags``:
    ``token pred``), a blank line per sentence. Whitespace in a token and an empty token become ``_``,
    ``-X-`` becomes ``_-X-``; no ``-DOCSTART-`` lines (why: docs/design.md, 'tasks/conll2003/metrics.py').

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is false.
        ValueError: a sentence whose tag list does not match its words.
    """
    import os

    if os.path.exists(path) and not overwrite:
        raise FileExistsError(f"{path} already exists; remove it or write the predictions elsewhere")
    with open(path, "w", encoding="utf-8") as f:
        for s, words in enumerate(tokens):
            gold = gold_tags[s] if gold_tags is not None else None
            if len(pred_tags[s]) != len(words) or (gold is not None and len(gold) != len(words)):
                raise ValueError(f"sentence {s}: {len(words)} words but a different number of tags")
            tags = (pred_tags[s],) if gold is None else (gold, pred_tags[s])
            for i, word in enumerate(words):
                # one conlleval field: whitespace runs and an empty token -> ``_``, the boundary mark -X- -> _-X-
                word = "_".join(word.split()) or "_"
                f.write(" ".join(["_" + word if word == "-X-" else word, *(t[i] for t in tags)]) + "\n")
            f.write("\n")


def all_outside_scores(task, raw) -> dict[str, float]:
    """Token classification's trivial baseline (``ProblemType.baseline``): the scores of tagging every word ``O`` on
    the labelled raw split ``raw`` (label ids per word in ``task.label_column``), in the task's strict scheme:
    entity precision / recall / F1 0 and word accuracy the ``O`` share, for each of ``task.metric_names``."""
    gold = [[task.label_names[i] for i in row] for row in raw[task.label_column]]
    scheme = getattr(task, "tag_scheme", "IOB2")
    scores = entity_metrics(gold, [["O"] * len(row) for row in gold], mode="strict", scheme=scheme)
    return {m: float(scores.get(m, 0.0)) for m in task.metric_names}
