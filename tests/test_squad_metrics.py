"""The port of the official SQuAD v1.1 / v2.0 scorers on hand-computed cases."""

import pytest

from hf_bert_tasks.tasks.squad import metrics as SM


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The Cat!", "cat"),
        ("an apple, a pear", "apple pear"),
        ("theatre and another", "theatre and another"),  # articles only as whole words
        ("  Denver   Broncos.  ", "denver broncos"),
        ("U.S.-based", "usbased"),
        ("«Zürich»", "«zürich»"),  # only ASCII punctuation is removed
    ],
)
def test_normalize_answer(text, expected):
    assert SM.normalize_answer(text) == expected


def test_f1_is_token_overlap_of_normalized_strings():
    # pred [cat, sat, on, mat] vs gold [cat, sat]: precision 2/4, recall 2/2 -> 2 * 0.5 * 1 / 1.5
    assert SM.f1_v1("cat sat on the mat", "The cat sat") == pytest.approx(2 / 3)
    assert SM.f1_v1("dog", "cat") == 0


def test_v1_takes_the_max_over_gold_answers_and_averages_x100():
    refs = {"q1": ["Denver Broncos", "the Broncos"], "q2": ["in 1990", "1990"], "q3": ["red fox"]}
    preds = {"q1": "broncos", "q2": "1990.", "q3": "a red dog"}
    # q1: EM 1 (vs "the Broncos"); q2: EM 1; q3: EM 0, F1 = P 1/2, R 1/2 -> 0.5
    scores = SM.squad_v1(refs, preds)
    assert scores["exact_match"] == pytest.approx(200 / 3)
    assert scores["f1"] == pytest.approx(100 * (1 + 1 + 0.5) / 3)


def test_v1_missing_prediction_scores_zero_but_counts():
    assert SM.squad_v1({"q1": ["a cat"], "q2": ["dog"]}, {"q1": "cat"}) == {"exact_match": 50.0, "f1": 50.0}


def test_v1_reads_the_official_json_layout():
    data = [{"title": "t", "paragraphs": [{"context": "c", "qas": [{"id": "q", "answers": [{"text": "x y"}]}]}]}]
    assert SM.squad_v1(data, {"q": "y"}) == {"exact_match": 0.0, "f1": pytest.approx(100 * 2 / 3)}


def test_v2_empty_prediction_on_a_no_answer_question_is_correct():
    refs = {"a": ["blue whale"], "n1": [], "n2": []}
    preds = {"a": "", "n1": "", "n2": "whale"}
    scores = SM.squad_v2(refs, preds)
    assert scores == {
        "exact": pytest.approx(100 / 3),
        "f1": pytest.approx(100 / 3),
        "total": 3,
        "HasAns_exact": 0.0,
        "HasAns_f1": 0.0,
        "HasAns_total": 1,
        "NoAns_exact": 50.0,
        "NoAns_f1": 50.0,
        "NoAns_total": 2,
    }


def test_v2_gold_answers_that_normalize_to_nothing_mean_no_answer():
    assert SM.squad_v2({"q": ["the"]}, {"q": ""})["exact"] == 100.0


def test_v2_threshold_turns_high_odds_into_no_answer():
    refs = {"a": ["blue whale"], "n": []}
    preds = {"a": "blue whale", "n": "krill"}
    odds = {"a": -1.0, "n": 0.5}
    assert SM.squad_v2(refs, preds, odds, na_prob_thresh=0.0)["exact"] == 100.0
    assert SM.squad_v2(refs, preds, odds, na_prob_thresh=1.0)["exact"] == 50.0


def test_v2_best_threshold_follows_the_official_search():
    # ascending odds: n1 -2 (answering it costs 1), a1 -1 (gains 1), a2 0.5 (gains 0.5 F1), n2 1.0 (costs 1)
    refs = {"a1": ["red fox"], "a2": ["big blue whale"], "n1": [], "n2": []}
    preds = {"a1": "red fox", "a2": "blue whale", "n1": "dog", "n2": "cat"}
    odds = {"a1": -1.0, "a2": 0.5, "n1": -2.0, "n2": 1.0}
    scores = SM.squad_v2(refs, preds, odds, na_prob_thresh=0.0)
    # start: 2 (both no-answer right); n1 -> 1; a1 -> 2 (not > 2); a2 -> EM 2 / F1 2.8 (best); n2 -> 1 / 1.8
    assert scores["best_exact"] == 50.0 and scores["best_exact_thresh"] == 0.0
    assert scores["best_f1"] == pytest.approx(100 * 2.8 / 4) and scores["best_f1_thresh"] == 0.5
    # at tau 0: a2 and n2 count as no-answer -> a1 right, n1 wrong, a2 wrong, n2 right
    assert scores["exact"] == 50.0 and scores["f1"] == 50.0


def test_v2_f1_of_an_empty_side_is_one_only_when_both_are_empty():
    assert SM.f1_v2("", "") == 1 and SM.f1_v2("x", "") == 0 and SM.f1_v2("", "x") == 0


def test_v1_question_without_gold_is_an_error():
    with pytest.raises(ValueError, match="question 'q' has no gold answer"):
        SM.squad_v1({"q": []}, {"q": ""})


def test_v2_question_without_prediction_is_a_value_error_naming_it():
    # the case: q3 has no prediction (the official evaluate-v2.0.py prints "Missing prediction" and crashes)
    refs = {"q1": ["1976"], "q2": [], "q3": ["Paris"]}
    with pytest.raises(ValueError, match=r"1 of 3 question\(s\) lack a prediction: 'q3'"):
        SM.squad_v2(refs, {"q1": "1976", "q2": ""})


def test_v2_missing_predictions_message_shows_five_ids_and_the_count():
    refs = {f"q{i}": ["x"] for i in range(8)}
    with pytest.raises(
        ValueError, match=r"7 of 8 question\(s\) lack a prediction: 'q1', 'q2', 'q3', 'q4', 'q5', \.\.\.;"
    ):
        SM.squad_v2(refs, {"q0": "x"})


def test_v2_question_without_odds_is_a_value_error_naming_it():
    refs = {"q1": ["1976"], "q2": []}
    with pytest.raises(ValueError, match=r"1 of 2 question\(s\) lack no-answer odds \(na_probs\): 'q2'"):
        SM.squad_v2(refs, {"q1": "1976", "q2": ""}, {"q1": 0.5})


def test_v2_ignores_predictions_for_ids_outside_the_references():
    # as the official script, which loops over the data file only
    assert SM.squad_v2({"q1": ["1976"]}, {"q1": "1976", "zzz": "x"}, {"q1": 0.0, "zzz": 9.0})["exact"] == 100.0


def test_task_wrapper_v2_raises_the_same_value_error():
    from hf_bert_tasks.tasks import get_task

    with pytest.raises(ValueError, match="'q3'"):
        get_task("squad_v2").compute_metrics({"q1": "1976", "q2": ""}, {"q1": ["1976"], "q2": [], "q3": ["Paris"]})


def test_task_wrapper_v1_scores_a_missing_prediction_zero_as_the_official_v1_script():
    from hf_bert_tasks.tasks import get_task

    scores = get_task("squad_v1").compute_metrics({"q1": "1976"}, {"q1": ["1976"], "q2": ["Paris"]})
    assert scores == {"f1": 50.0, "exact_match": 50.0}  # 1 of 2 right; the unanswered one counts as 0
