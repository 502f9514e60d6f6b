"""n-best post-processing (hf_bert_tasks.tasks.squad.postprocess.postprocess_qa_predictions) on literal logits and offsets."""

import math

import numpy as np
import pytest

from hf_bert_tasks.tasks.squad.postprocess import postprocess_qa_predictions

# One feature of 6 positions: [CLS] q [SEP] "red"(0,3) "fox"(4,7) [SEP]
CONTEXT = "red fox"
OFFSETS = np.array([[[-1, -1], [-1, -1], [-1, -1], [0, 3], [4, 7], [-1, -1]]])
NEG = -10.0


def logits(**at):
    """A [1, 6] row of NEG with the given {position: value}."""
    row = np.full((1, 6), NEG)
    for key, value in at.items():
        row[0, int(key[1:])] = value
    return row


def run(start, end, offsets=OFFSETS, contexts=(CONTEXT,), index=(0,), ids=("q",), **kw):
    return postprocess_qa_predictions(list(ids), list(contexts), np.array(index), start, end, offsets, **kw)


def test_best_span_text_comes_from_the_context_offsets():
    out = run(logits(p3=5.0), logits(p4=4.0))
    assert out.predictions == {"q": "red fox"}
    assert out.nbest["q"][0]["text"] == "red fox" and out.nbest["q"][0]["offsets"] == [0, 7]
    assert out.nbest["q"][0]["start_logit"] == 5.0 and out.nbest["q"][0]["end_logit"] == 4.0
    assert out.null_odds == {}


def test_spans_longer_than_max_answer_length_are_skipped():
    out = run(logits(p3=5.0, p4=1.0), logits(p4=4.0), max_answer_length=1)
    assert out.predictions == {"q": "fox"}


def test_an_end_before_the_start_is_never_chosen():
    out = run(logits(p4=5.0, p3=1.0), logits(p3=9.0, p4=0.0))
    # (4,3) is invalid; the candidates are (4,4)=5.0, (3,3)=10.0, (3,4)=1.0 -> "red"
    assert [e["text"] for e in out.nbest["q"]] == ["red", "fox", "red fox"]
    assert out.predictions == {"q": "red"}


def test_nbest_is_unique_sorted_and_its_probabilities_are_a_softmax():
    out = run(logits(p3=2.0, p4=1.0), logits(p3=1.0, p4=2.0), n_best_size=2)
    nbest = out.nbest["q"]
    assert [e["text"] for e in nbest] == ["red fox", "red"]  # scores 4.0, 3.0 (then "fox" 3.0 is cut)
    expected = np.exp([4.0, 3.0]) / np.exp([4.0, 3.0]).sum()
    assert [e["probability"] for e in nbest] == pytest.approx(expected.tolist())


def test_question_and_special_tokens_never_become_answers():
    out = run(logits(p1=50.0, p3=1.0), logits(p2=50.0, p3=1.0))
    assert out.predictions == {"q": "red"}


def test_v2_null_wins_when_score_diff_exceeds_tau():
    start, end = logits(p0=3.0, p3=2.0), logits(p0=3.0, p4=2.0)  # null 6.0, best "red fox" 4.0, diff 2.0
    out = run(start, end, version_2_with_negative=True, null_score_diff_threshold=0.0)
    assert out.predictions == {"q": ""} and out.null_odds == {"q": 2.0} and out.best_non_null == {"q": "red fox"}
    assert run(start, end, version_2_with_negative=True, null_score_diff_threshold=2.0).predictions == {"q": "red fox"}
    # n-best: null 6.0, "red fox" 2+2 = 4.0, "red" 2-10 = -8.0, "fox" -10+2 = -8.0 (score, then start order);
    # probabilities are the softmax over these four scores, computed here by hand
    assert [(e["text"], e["start_logit"], e["end_logit"]) for e in out.nbest["q"]] == [
        ("", 3.0, 3.0),
        ("red fox", 2.0, 2.0),
        ("red", 2.0, NEG),
        ("fox", NEG, 2.0),
    ]
    weights = [math.exp(s - 6.0) for s in (6.0, 4.0, -8.0, -8.0)]
    assert [e["probability"] for e in out.nbest["q"]] == pytest.approx([w / sum(weights) for w in weights])
    assert out.nbest["q"][0]["offsets"] == [0, 0]


def test_v2_all_null_nbest_gives_empty_text_without_a_crash():
    no_context = np.full((1, 6, 2), -1)
    out = run(logits(p0=1.0), logits(p0=1.0), offsets=no_context, version_2_with_negative=True)
    assert out.predictions == {"q": ""} and out.best_non_null == {"q": ""}
    assert out.null_odds == {"q": math.inf}
    assert [e["text"] for e in out.nbest["q"]] == [""] and out.nbest["q"][0]["probability"] == 1.0


def test_v1_without_any_valid_span_predicts_empty_text():
    out = run(logits(p0=1.0), logits(p0=1.0), offsets=np.full((1, 6, 2), -1))
    assert out.predictions == {"q": ""} and out.nbest["q"][0]["text"] == ""


def test_v2_null_score_is_the_minimum_over_windows():
    # two windows of one example: null scores 6.0 and 1.0 -> 1.0; best span 4.0 -> diff -3.0
    start = np.concatenate([logits(p0=3.0, p3=2.0), logits(p0=0.5)])
    end = np.concatenate([logits(p0=3.0, p4=2.0), logits(p0=0.5)])
    offsets = np.concatenate([OFFSETS, OFFSETS])
    out = run(start, end, offsets=offsets, index=(0, 0), version_2_with_negative=True)
    assert out.null_odds == {"q": -3.0} and out.predictions == {"q": "red fox"}


def test_max_context_rule_drops_starts_outside_their_best_window():
    # window 0 sees "red" with the higher logit but "red" has its max context in window 1
    start = np.concatenate([logits(p3=9.0, p4=1.0), logits(p3=2.0)])
    end = np.concatenate([logits(p3=9.0, p4=1.0), logits(p3=2.0)])
    offsets = np.concatenate([OFFSETS, OFFSETS])
    max_context = np.array([[False, False, False, False, True, False], [False, False, False, True, False, False]])
    out = run(start, end, offsets=offsets, index=(0, 0), max_context=max_context)
    assert out.predictions == {"q": "red"} and out.nbest["q"][0]["start_logit"] == 2.0
    assert [e["text"] for e in out.nbest["q"]] == ["red", "fox", "red fox"]  # 4.0, 2.0, -8.0


def test_features_are_grouped_by_example():
    start = np.concatenate([logits(p3=5.0), logits(p4=5.0)])
    end = np.concatenate([logits(p3=5.0), logits(p4=5.0)])
    out = run(
        start,
        end,
        offsets=np.concatenate([OFFSETS, OFFSETS]),
        contexts=(CONTEXT, CONTEXT),
        index=(1, 0),
        ids=("a", "b"),
    )
    assert out.predictions == {"a": "fox", "b": "red"}


def test_padding_logits_beyond_the_offsets_are_ignored():
    start = np.concatenate([logits(p3=5.0), np.full((1, 2), 100.0)], axis=1)
    end = np.concatenate([logits(p4=5.0), np.full((1, 2), 100.0)], axis=1)
    offsets = np.concatenate([OFFSETS, np.full((1, 2, 2), -1)], axis=1)
    assert run(start, end, offsets=offsets).predictions == {"q": "red fox"}


def test_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match=r"shape mismatch: start_logits \(1, 6\), end_logits \(1, 5\)"):
        run(logits(), logits()[:, :5])


def test_an_example_without_features_is_an_error():
    with pytest.raises(ValueError, match=r"none for \['b'\]"):
        run(logits(p3=1.0), logits(p3=1.0), contexts=(CONTEXT, CONTEXT), ids=("a", "b"))


def test_a_text_seen_twice_in_one_window_takes_one_nbest_slot():
    # "red fox red": one-token spans "red" (0,3) 10.0, "red" (8,11) 9.0, "fox" 8.0 -> the second "red" is dropped
    offsets = np.array([[[-1, -1], [0, 3], [4, 7], [8, 11], [-1, -1]]])
    start = np.array([[NEG, 5.0, 4.0, 4.5, NEG]])
    end = np.array([[NEG, 5.0, 4.0, 4.5, NEG]])
    out = run(start, end, offsets=offsets, contexts=("red fox red",), n_best_size=3, max_answer_length=1)
    assert [e["text"] for e in out.nbest["q"]] == ["red", "fox"]
    assert out.nbest["q"][0]["offsets"] == [0, 3]
