"""The package's CoNLL NER metrics equal the official ``conlleval`` on the full CoNLL-2003 test set (46435 words).

Predictions are the gold tags of ``conll2003/test.txt`` perturbed with a seeded RNG: type swaps, boundary errors,
dropped and spurious entities, IOB1-style ``I-`` starts, split entities and ``I-`` tags of another type. The
package writes them with :func:`hf_bert_tasks.tasks.conll2003.metrics.write_conll` (the recipe's file), ``perl conlleval`` scores that
file, and every number it prints must equal ours to its 2 printed decimals:

* ``entity_metrics(mode="conlleval")``: accuracy, precision, recall, F1, per type (the recipe's ``eval_accuracy``
  and ``eval_conlleval_*``);
* ``entity_metrics(mode="strict")`` (the recipe's ``eval_f1``, ``eval_<TYPE>_f1`` …): conlleval on the same file
  after every predicted ``I-X`` that does not continue a ``B-X``/``I-X`` run is set to ``O`` (seqeval's strict IOB2
  mode counts an entity only from ``B-X``).
"""

from __future__ import annotations

import random

import pytest

from hf_bert_tasks.tasks.conll2003 import ENTITY_TYPES, read_conll_file
from hf_bert_tasks.tasks.conll2003 import metrics as ner_metrics
from tests import oracles


def _spans(tags: list[str]) -> list[tuple[int, int, str]]:
    """Entities ``(start, end_exclusive, type)`` of a well-formed IOB2 sentence."""
    spans, start = [], None
    for i, tag in enumerate([*tags, "O"]):
        if start is not None and not (tag.startswith("I-") and tag[2:] == tags[start][2:]):
            spans.append((start, i, tags[start][2:]))
            start = None
        if tag.startswith("B-"):
            start = i
    return spans


def _place(pred: list[str], start: int, end: int, kind: str, first: str = "B") -> None:
    for i in range(start, end):
        pred[i] = f"{first if i == start else 'I'}-{kind}"


def perturb(gold: list[str], rng: random.Random, noise: float) -> list[str]:
    """A prediction for one sentence: each gold entity kept or changed with probability ``noise``."""
    n = len(gold)
    pred = ["O"] * n
    for start, end, kind in _spans(gold):
        other = rng.choice([t for t in ENTITY_TYPES if t != kind])
        r = rng.random() / max(noise, 1e-9)
        if r >= 1.0:
            _place(pred, start, end, kind)
        elif r < 0.2:
            _place(pred, start, end, other)  # type swap
        elif r < 0.4:  # boundary error: start or end moved by one word
            s = min(max(0, start + rng.choice([-1, 1])), end - 1) if rng.random() < 0.5 else start
            e = max(min(n, end + rng.choice([-1, 1])), s + 1) if s == start else end
            _place(pred, s, e, kind)
        elif r < 0.55:
            pass  # dropped
        elif r < 0.75:
            _place(pred, start, end, kind, first="I")  # IOB1-style start (conlleval accepts it, strict does not)
        elif r < 0.85 and end - start > 1:
            _place(pred, start, end, kind)
            pred[rng.randrange(start + 1, end)] = f"B-{kind}"  # split in two
        else:
            _place(pred, start, end, kind)
            pred[end - 1] = f"I-{other}"  # continues with another type
    for i in range(n):
        if gold[i] == "O" and pred[i] == "O" and rng.random() < noise / 10:
            pred[i] = f"{rng.choice('BI')}-{rng.choice(ENTITY_TYPES)}"  # spurious (B- or dangling I-)
    return pred


def iob1(tags: list[str]) -> list[str]:
    """IOB2 -> IOB1: ``B-X`` only where it follows an ``X`` token, else ``I-X``."""
    out = []
    for i, tag in enumerate(tags):
        if tag.startswith("B-") and not (i and tags[i - 1] != "O" and tags[i - 1][2:] == tag[2:]):
            tag = "I-" + tag[2:]
        out.append(tag)
    return out


def strict_repair(tags: list[str]) -> list[str]:
    """``O`` for every ``I-X`` that does not continue a ``B-X`` / ``I-X`` run it belongs to (hand rule)."""
    out: list[str] = []
    for tag in tags:
        if tag.startswith("I-") and not (out and out[-1] != "O" and out[-1][2:] == tag[2:]):
            tag = "O"
        out.append(tag)
    return out


@pytest.fixture(scope="module")
def test_set():
    cols = read_conll_file(oracles.shared_file("data", "conll2003", "test.txt"))
    return cols["tokens"], cols["ner_tags"]


def score_file(tmp_path, name, tokens, gold, pred) -> oracles.Conlleval:
    path = tmp_path / name
    ner_metrics.write_conll(str(path), tokens, pred, gold)
    return oracles.conlleval(str(path))


def assert_equal_to_conlleval(ours: dict, official: oracles.Conlleval, accuracy: bool = True) -> None:
    for key in ("precision", "recall", "f1") + (("accuracy",) if accuracy else ()):
        printed = official.f1 if key == "f1" else getattr(official, key)
        oracles.assert_two_decimals(ours[key], printed, key)
    types = {k[: -len("_f1")] for k in ours if k.endswith("_f1") and k != "f1"}
    assert types == set(official.per_type)
    for kind, printed in official.per_type.items():
        for key in ("precision", "recall", "f1"):
            oracles.assert_two_decimals(ours[f"{kind}_{key}"], printed[key], f"{kind}_{key}")
    assert sum(ours[f"{t}_number"] for t in types) == official.gold_phrases


@pytest.mark.parametrize("scenario", ["mixed", "iob1", "noisy"])
def test_entity_metrics_equal_conlleval_on_the_full_test_set(test_set, tmp_path, scenario):
    tokens, gold = test_set
    rng = random.Random({"mixed": 0, "iob1": 1, "noisy": 2}[scenario])
    if scenario == "iob1":  # a whole prediction in IOB1 with some boundary errors
        pred = [iob1(perturb(g, rng, 0.1)) for g in gold]
    else:
        pred = [perturb(g, rng, 0.3 if scenario == "mixed" else 0.9) for g in gold]
    official = score_file(tmp_path, "pred.txt", tokens, gold, pred)
    assert official.tokens == sum(len(t) for t in tokens) == 46435  # one line per word, no -DOCSTART- lines
    assert official.gold_phrases == 5648  # LOC 1668 + MISC 702 + ORG 1661 + PER 1617 (data MANIFEST)
    assert 20.0 < official.f1 < 99.0  # the perturbations matter
    assert_equal_to_conlleval(ner_metrics.entity_metrics(gold, pred, mode="conlleval"), official)

    strict = ner_metrics.entity_metrics(gold, pred, mode="strict")
    repaired = score_file(tmp_path, "strict.txt", tokens, gold, [strict_repair(p) for p in pred])
    assert_equal_to_conlleval(strict, repaired, accuracy=False)
    oracles.assert_two_decimals(strict["accuracy"], official.accuracy, "accuracy")  # tags of the file as written


def test_an_iob1_prediction_of_the_gold_entities_is_perfect_for_conlleval_only(test_set, tmp_path):
    tokens, gold = test_set
    pred = [iob1(g) for g in gold]
    official = score_file(tmp_path, "pred.txt", tokens, gold, pred)
    assert (official.precision, official.recall, official.f1) == (100.0, 100.0, 100.0)
    assert ner_metrics.entity_metrics(gold, pred, mode="conlleval")["f1"] == 1.0
    assert ner_metrics.entity_metrics(gold, pred, mode="strict")["f1"] < 0.2  # strict IOB2 sees (almost) no B- start


def test_tokens_that_conlleval_would_misread_are_written_as_one_field(tmp_path):
    tokens = [["New York", "-X-", "", "visited"]]
    gold = [["B-LOC", "O", "O", "O"]]
    path = tmp_path / "odd.txt"
    ner_metrics.write_conll(str(path), tokens, gold, gold)
    assert path.read_text(encoding="utf-8").splitlines() == [
        "New_York B-LOC B-LOC",
        "_-X- O O",
        "_ O O",
        "visited O O",
        "",
    ]
    official = oracles.conlleval(str(path))
    assert (official.tokens, official.gold_phrases, official.accuracy) == (4, 1, 100.0)
