"""The package's SQuAD scores equal the official ``evaluate-v1.1.py`` / ``evaluate-v2.0.py`` on the full dev files.

Predictions for every question of ``dev-v1.1.json`` (10570) and ``dev-v2.0.json`` (11873) are drawn with a seeded
RNG from gold answers changed in the ways answer normalization must handle (articles, ASCII and Unicode
punctuation, accents, case, odd whitespace), partial overlaps, wrong and empty answers; v2 adds no-answer odds with
ties and infinities and several thresholds. The official script runs in a subprocess on the written files and every
key it prints must equal ours to 1e-9 (``best_*_thresh`` included).
"""

from __future__ import annotations

import json
import math
import random
import unicodedata

import pytest

from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.squad import metrics as SM
from tests import oracles

#: Texts that normalize to nothing or keep Unicode punctuation / symbols the official rule does not strip.
ODD_TEXTS = [
    "",
    " ",
    "the",
    "a an the",
    "...",
    "—",
    "«»",
    "\u00a0",
    "\u200b",
    "Ⅻ",
    "İstanbul",
    "ΟΔΟΣ",
    "straße",
    "ﬁnal",
    "ＡＢＣ",
    "naïve café",
    "“quoted”",
    "‘single’",
    "1,000",
    "U.S.",
    "–",
    "3½",
    "\t\n",
]


def _accent(text: str) -> str:
    return text.replace("e", "é").replace("a", "à").replace("o", "ö")


def _variant(gold: str, rng: random.Random) -> str:
    """A gold answer changed in one of the ways normalization must (or must not) undo."""
    words = gold.split()
    choices = [
        lambda: "The " + gold,
        lambda: "a " + gold,
        lambda: "an " + gold + " the",
        lambda: gold + ".",
        lambda: '"' + gold + '"',
        lambda: "(" + gold + ")!",
        lambda: gold.upper(),
        lambda: gold.lower(),
        lambda: "  " + "   ".join(words) + " \t",
        lambda: "\u00a0".join(words),
        lambda: "\n".join(words),
        lambda: unicodedata.normalize("NFD", _accent(gold)),
        lambda: _accent(gold),
        lambda: gold + "—",
        lambda: "—".join(words),
        lambda: "–".join(words),
        lambda: "-".join(words),
        lambda: "“" + gold + "”",
        lambda: "\u200b".join(words),
        lambda: "İ" + gold,
        lambda: gold.replace(" ", ""),
        lambda: gold + " " + gold,
    ]
    return rng.choice(choices)()


def _partial(gold: str, context: str, start: int, rng: random.Random) -> str:
    words = gold.split()
    if len(words) > 1 and rng.random() < 0.5:
        k = rng.randrange(1, len(words))
        return " ".join(words[:k] if rng.random() < 0.5 else words[k:])
    end = start + len(gold)
    extra = context[end : end + rng.randrange(3, 30)]
    before = context[max(0, start - rng.randrange(0, 15)) : start]
    return before + gold + extra


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _questions(data: dict):
    for article in data["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                yield paragraph["context"], qa


def make_predictions(data: dict, rng: random.Random, missing: float = 0.0) -> dict[str, str]:
    """One prediction per question (a share ``missing`` left out), kinds drawn with ``rng``."""
    all_golds = [a["text"] for _, qa in _questions(data) for a in qa["answers"]]
    preds = {}
    for context, qa in _questions(data):
        if rng.random() < missing:
            continue
        answers = qa["answers"] or qa.get("plausible_answers") or []
        r = rng.random()
        if not answers or r < 0.08:
            text = rng.choice(ODD_TEXTS)
        elif r < 0.30:
            text = rng.choice(answers)["text"]
        elif r < 0.55:
            text = _variant(rng.choice(answers)["text"], rng)
        elif r < 0.75:
            answer = rng.choice(answers)
            text = _partial(answer["text"], context, answer["answer_start"], rng)
        elif r < 0.88:
            text = rng.choice(all_golds)
        else:
            text = ""
        if not qa["answers"] and rng.random() < 0.5:
            text = ""  # unanswerable: abstain half the time
        preds[qa["id"]] = text
    preds["not-a-dev-question"] = "ignored by both scorers"
    return preds


def make_odds(ids: list[str], rng: random.Random) -> dict[str, float]:
    """No-answer odds with many ties (one decimal), exact zeros, infinities; in shuffled order (ties keep it)."""
    odds = {}
    for qid in ids:
        r = rng.random()
        if r < 0.5:
            odds[qid] = round(rng.gauss(0.0, 3.0), 1)
        elif r < 0.6:
            odds[qid] = 0.0
        elif r < 0.63:
            odds[qid] = math.inf
        elif r < 0.64:
            odds[qid] = -math.inf
        else:
            odds[qid] = rng.uniform(-8.0, 8.0)
    order = list(odds)
    rng.shuffle(order)
    return {q: odds[q] for q in order}


def write_json(path, obj) -> str:
    # ensure_ascii=False: the scorers must read the UTF-8 bytes the package writes
    path.write_text(json.dumps(obj, ensure_ascii=False), encoding="utf-8")
    return str(path)


def assert_same_scores(ours: dict, official: dict) -> None:
    """Same keys in the same order; counts equal; scores and thresholds equal to 1e-9 (infinities exactly)."""
    assert list(ours) == list(official)
    for key, value in official.items():
        mine = ours[key]
        if isinstance(value, int) or math.isinf(value):
            assert mine == value, key
        else:
            # both sides add the same per-question floats in the same order; 1e-9 is the bound
            assert abs(mine - value) <= 1e-9, (key, mine, value)


@pytest.fixture(scope="module")
def dev_v1():
    path = oracles.shared_file("data", "squad", "dev-v1.1.json")
    return path, _load(path)


@pytest.fixture(scope="module")
def dev_v2():
    path = oracles.shared_file("data", "squad", "dev-v2.0.json")
    data = _load(path)
    cols = get_task("squad_v2").read_json(path)  # the task reader: the references the recipe scores against
    return path, data, SM.references_from_rows(cols["id"], cols["answers"])


def test_v1_equals_the_official_script_on_the_full_dev_file(dev_v1, tmp_path):
    path, data = dev_v1
    preds = make_predictions(data, random.Random(1), missing=0.05)  # v1.1 scores a missing prediction 0
    official, unanswered = oracles.squad_v1(path, write_json(tmp_path / "pred.json", preds))
    assert unanswered == 10570 - (len(preds) - 1) > 400
    cols = get_task("squad_v1").read_json(path)
    refs = SM.references_from_rows(cols["id"], cols["answers"])
    ours = SM.squad_v1(refs, preds)
    assert_same_scores(ours, official)
    assert_same_scores(SM.squad_v1(data["data"], preds), official)  # the official JSON layout as input
    # the task wrapper (what the recipe reports, keys in its own order) gives the same numbers
    assert get_task("squad_v1").compute_metrics(preds, refs) == {"f1": ours["f1"], "exact_match": ours["exact_match"]}
    assert 5.0 < official["exact_match"] < 60.0  # the draw mixes right and wrong answers


@pytest.mark.parametrize("thresh", ["no odds", None, 0.0, -1.5])
def test_v2_equals_the_official_script_on_the_full_dev_file(dev_v2, tmp_path, thresh):
    path, data, refs = dev_v2
    rng = random.Random(7)
    preds = make_predictions(data, rng)
    pred_file = write_json(tmp_path / "pred.json", preds)
    if thresh == "no odds":  # scores of the texts as given (official: threshold 1.0 over odds 0)
        official = oracles.squad_v2(path, pred_file)
        assert "best_f1" not in official
        assert_same_scores(SM.squad_v2(data["data"], preds), official)  # the JSON layout as input, once
        return
    odds = make_odds(list(refs) + ["not-a-dev-question"], rng)
    na_file = write_json(tmp_path / "na.json", odds)
    official = oracles.squad_v2(path, pred_file, na_file, thresh)  # None: no -t, the default 1.0
    assert {"best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh", "HasAns_f1", "NoAns_f1"} <= set(official)
    ours = SM.squad_v2(refs, preds, odds) if thresh is None else SM.squad_v2(refs, preds, odds, na_prob_thresh=thresh)
    assert_same_scores(ours, official)


def test_v2_without_a_prediction_for_every_question_fails_in_both(dev_v2, tmp_path):
    data = dev_v2[1]
    # the official README's way to score a subset: a DATA file with the first article only
    first = {"version": data["version"], "data": data["data"][:1]}
    subset = SM.references_from_json(first["data"])
    preds = dict(list(make_predictions(first, random.Random(3)).items())[:-4])  # drops 3 questions + the extra id
    with pytest.raises(AssertionError, match="KeyError"):  # the official script prints "Missing" and crashes
        oracles.squad_v2(write_json(tmp_path / "first.json", first), write_json(tmp_path / "pred.json", preds))
    with pytest.raises(ValueError, match=rf"3 of {len(subset)} question\(s\) lack a prediction"):  # we name them
        SM.squad_v2(subset, preds)
