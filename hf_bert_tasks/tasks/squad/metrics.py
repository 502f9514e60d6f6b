"""SQuAD v1.1 and v2.0 scoring: a port of the official ``evaluate-v1.1.py`` and ``evaluate-v2.0.py`` (Rajpurkar et
al., 2016 / 2018) giving identical numbers (``tests/test_oracle_squad.py``). The rules: docs/design.md,
'tasks/squad/metrics.py: the official SQuAD rules'. A question without a prediction (or odds) is a ``ValueError``.
References are the official JSON's ``data`` list or plain ``{id: [gold texts]}`` mappings.
"""

from __future__ import annotations

import collections
import re
import string
from collections.abc import Iterable, Mapping

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = frozenset(string.punctuation)


def normalize_answer(text: str) -> str:
    """The official ``normalize_answer``: ``normalize_answer("The  Eiffel-Tower!")`` -> ``"eiffeltower"``."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction: str, gold: str) -> int:
    """1 if the normalized strings are equal, else 0."""
    return int(normalize_answer(prediction) == normalize_answer(gold))


def _overlap_f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    """F1 of the common tokens (a multiset), 0 when nothing overlaps (both official scripts)."""
    same = sum((collections.Counter(pred_tokens) & collections.Counter(gold_tokens)).values())
    if same == 0:
        return 0
    precision, recall = 1.0 * same / len(pred_tokens), 1.0 * same / len(gold_tokens)
    return (2 * precision * recall) / (precision + recall)


def f1_v1(prediction: str, gold: str) -> float:
    """Token-overlap F1 of v1.1 (``f1_score``): 0 when nothing overlaps (also when one side is empty)."""
    return _overlap_f1(normalize_answer(prediction).split(), normalize_answer(gold).split())


def f1_v2(prediction: str, gold: str) -> float:
    """Token-overlap F1 of v2.0 (``compute_f1``): if either side is empty, 1 when both are empty, else 0."""
    gold_tokens = normalize_answer(gold).split() if gold else []
    pred_tokens = normalize_answer(prediction).split() if prediction else []
    if not gold_tokens or not pred_tokens:
        return int(gold_tokens == pred_tokens)
    return _overlap_f1(pred_tokens, gold_tokens)


def references_from_json(data: list) -> dict[str, list[str]]:
    """Question id -> gold answer texts from the official JSON's ``data`` list (in file order).

    Raises:
        ValueError: an entry lacks ``paragraphs``/``qas``/``id``/``answers`` (names the article).
    """
    refs: dict[str, list[str]] = {}
    for a, article in enumerate(data):
        try:
            for paragraph in article["paragraphs"]:
                for qa in paragraph["qas"]:
                    refs[qa["id"]] = [ans["text"] for ans in qa["answers"]]
        except (KeyError, TypeError) as err:
            raise ValueError(
                f"SQuAD data, article {a}: missing field {err}; expected data -> paragraphs -> qas -> id/answers/text"
            ) from None
    return refs


def squad_v1(references: Mapping[str, list[str]] | list, predictions: Mapping[str, str]) -> dict[str, float]:
    """Official SQuAD v1.1 ``{"exact_match", "f1"}`` in [0, 100] over every question of ``references`` (id -> gold
    texts, or the JSON ``data`` list); ``predictions``: id -> text, a missing id scores 0.

    Raises:
        ValueError: no questions, or a predicted question with no gold answer (v1.1 questions always have one).
    """
    if isinstance(references, list):
        references = references_from_json(references)
    if not references:
        raise ValueError("SQuAD v1.1 scoring needs at least one question")
    em = f1 = 0
    for qid, golds in references.items():
        if qid not in predictions:
            continue
        if not golds:
            raise ValueError(f"question {qid!r} has no gold answer; SQuAD v1.1 questions need at least one")
        prediction = predictions[qid]
        em += max(normalize_answer(prediction) == normalize_answer(g) for g in golds)
        f1 += max(f1_v1(prediction, g) for g in golds)
    return {"exact_match": 100.0 * em / len(references), "f1": 100.0 * f1 / len(references)}


def _eval_dict(exact: Mapping[str, float], f1: Mapping[str, float], qids: list[str] | None = None) -> dict:
    qids = qids or list(exact)
    total = len(qids)
    return {
        "exact": 100.0 * sum(exact[k] for k in qids) / total,
        "f1": 100.0 * sum(f1[k] for k in qids) / total,
        "total": total,
    }


def _best_threshold(preds, scores, na_probs, has_ans) -> tuple[float, float]:
    """Official ``find_best_thresh``: start from "all unanswerable", answer questions in increasing odds order."""
    cur = best = sum(1 for k in has_ans if not has_ans[k])
    best_thresh = 0.0
    for qid in sorted(na_probs, key=lambda k: na_probs[k]):
        if qid not in scores:
            continue
        cur += scores[qid] if has_ans[qid] else (-1 if preds[qid] else 0)
        if cur > best:
            best = cur
            best_thresh = na_probs[qid]
    return 100.0 * best / len(scores), best_thresh


def _check_complete(references: Mapping, given: Mapping, what: str, hint: str) -> None:
    """Raise ``ValueError`` naming the questions of ``references`` that are not keys of ``given``."""
    if missing := [qid for qid in references if qid not in given]:
        shown = ", ".join(repr(q) for q in missing[:5]) + (", ..." if len(missing) > 5 else "")
        raise ValueError(
            f"SQuAD v2.0 scoring: {len(missing)} of {len(references)} question(s) lack {what}: {shown}; "
            f"expected one for every question of the references ({hint}), as the official "
            "evaluate-v2.0.py does"
        )


def squad_v2(
    references: Mapping[str, list[str]] | list,
    predictions: Mapping[str, str],
    na_probs: Mapping[str, float] | None = None,
    na_prob_thresh: float = 1.0,
) -> dict[str, float]:
    """Official SQuAD v2.0 scores: ``exact``, ``f1``, ``total``, ``HasAns_*``, ``NoAns_*`` and, with ``na_probs``,
    ``best_exact``, ``best_exact_thresh``, ``best_f1``, ``best_f1_thresh`` (keys and order as the official output).

    Args:
        references: question id -> gold answer texts (``[]`` for an unanswerable question), or the JSON ``data`` list.
        predictions: question id -> text (``""`` = no answer), for **every** question (extra ids are ignored).
        na_probs: question id -> no-answer odds (e.g. ``null_odds.json``), for every question; default 0.0 for each.
        na_prob_thresh: odds above this score as predicted unanswerable (official ``-t``, default 1.0).

    Raises:
        ValueError: no question in ``references``; a question without a prediction, or (with ``na_probs``) without
            odds — the message gives the count and the first ids.
    """
    if isinstance(references, list):
        references = references_from_json(references)
    if not references:
        raise ValueError("SQuAD v2.0 scoring needs at least one question")
    _check_complete(references, predictions, "a prediction", 'predict "" for no answer')
    if na_probs is not None:
        _check_complete(references, na_probs, "no-answer odds (na_probs)", "e.g. the null_odds.json written with them")
    has_ans = {qid: bool(golds) for qid, golds in references.items()}
    golds = {qid: [g for g in texts if normalize_answer(g)] or [""] for qid, texts in references.items()}
    exact_raw = {qid: max(exact_match(g, predictions[qid]) for g in texts) for qid, texts in golds.items()}
    f1_raw = {qid: max(f1_v2(predictions[qid], g) for g in texts) for qid, texts in golds.items()}
    given_odds = na_probs is not None
    na_probs = na_probs if given_odds else dict.fromkeys(predictions, 0.0)

    def thresholded(scores):
        return {q: float(not has_ans[q]) if na_probs[q] > na_prob_thresh else s for q, s in scores.items()}

    exact_t, f1_t = thresholded(exact_raw), thresholded(f1_raw)
    out = _eval_dict(exact_t, f1_t)
    for prefix, qids in (
        ("HasAns", [k for k, v in has_ans.items() if v]),
        ("NoAns", [k for k, v in has_ans.items() if not v]),
    ):
        if qids:
            out.update({f"{prefix}_{k}": v for k, v in _eval_dict(exact_t, f1_t, qids).items()})
    if given_odds:
        out["best_exact"], out["best_exact_thresh"] = _best_threshold(predictions, exact_raw, na_probs, has_ans)
        out["best_f1"], out["best_f1_thresh"] = _best_threshold(predictions, f1_raw, na_probs, has_ans)
    return out


def references_from_rows(ids: Iterable[str], answers: Iterable[Mapping]) -> dict[str, list[str]]:
    """Question id -> gold texts from Hub-style rows (``answers = {"text": [...], "answer_start": [...]}``)."""
    return {qid: list(ans["text"]) for qid, ans in zip(ids, answers)}


def empty_answer_scores(task, raw) -> dict[str, float]:
    """Question answering's trivial baseline (``ProblemType.baseline``): the task's scores of answering ``""`` to
    every question of the raw split ``raw`` (Hub-style ``answers``; v1.1: 0, v2.0: the unanswerable share), for
    each of ``task.metric_names`` it reports; ``{}`` for a split without any gold answer (an unlabelled test split)."""
    answers = raw[task.label_column]
    if not any(a["text"] for a in answers):
        return {}
    references = references_from_rows(raw["id"], answers)
    scores = task.compute_metrics(dict.fromkeys(references, ""), references)
    return {m: float(scores[m]) for m in task.metric_names if m in scores}
