"""Issue 44 item 2: the trivial baseline (best constant answer) of every problem type, against values computed
independently (sklearn / scipy / arithmetic on the literal labels)."""

import datasets
import numpy as np
import pytest
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.metrics import baseline_metrics, constant_scores, near_baseline


def glue_split(task, labels):
    return datasets.Dataset.from_dict({**{c: ["x"] * len(labels) for c in task.text_columns}, "label": labels})


def test_mrpc_majority_accuracy_and_best_constant_f1():
    labels = [1, 1, 1, 0, 1, 0, 1]
    scores = constant_scores(get_task("mrpc"), glue_split(get_task("mrpc"), labels))
    ones = np.ones(len(labels), dtype=int)
    assert scores["accuracy"] == pytest.approx(accuracy_score(labels, ones))  # 5/7, the majority share
    assert scores["f1"] == pytest.approx(f1_score(labels, ones))  # 2p/(1+p) with p = 5/7


def test_f1_best_constant_when_positives_are_the_minority():
    labels = [0, 0, 0, 1]
    scores = constant_scores(get_task("qqp"), glue_split(get_task("qqp"), labels))
    assert scores["accuracy"] == pytest.approx(0.75)
    assert scores["f1"] == pytest.approx(f1_score(labels, [1, 1, 1, 1]))  # 0.4: beats the majority's F1 of 0


def test_cola_constant_has_zero_matthews():
    labels = [1, 0, 1, 1]
    scores = constant_scores(get_task("cola"), glue_split(get_task("cola"), labels))
    assert scores["matthews_correlation"] == matthews_corrcoef(labels, [1, 1, 1, 1]) == 0.0


def test_stsb_constant_has_no_correlation():
    task = get_task("stsb")
    assert constant_scores(task, glue_split(task, [0.5, 4.0, 2.0])) == {"spearmanr": 0.0, "pearson": 0.0}


def test_unlabelled_split_has_no_baseline():
    task = get_task("sst2")
    assert constant_scores(task, glue_split(task, [-1, -1])) == {}


def test_mnli_mismatched_baseline_gets_the_suffix():
    task = get_task("mnli")
    out = baseline_metrics(
        task,
        {"validation_matched": glue_split(task, [0, 0, 2]), "validation_mismatched": glue_split(task, [1, 2, 2, 2])},
    )
    assert out == {
        "baseline_accuracy": pytest.approx(2 / 3),
        "baseline_accuracy_mm": pytest.approx(3 / 4),
        "examples_scored": 3,
        "examples_scored_mm": 4,
    }


def test_swag_majority_choice():
    from hf_bert_tasks.tasks.swag import SWAG_COLUMNS

    rows = {**{c: ["x"] * 5 for c in SWAG_COLUMNS}, "label": [2, 2, 0, 3, 2]}
    assert constant_scores(get_task("swag"), datasets.Dataset.from_dict(rows)) == {"accuracy": pytest.approx(0.6)}


def test_ner_all_o_scores_zero_f1_and_the_o_share_of_words():
    task = get_task("conll2003")
    tags = [[1, 0, 0], [0, 5, 6, 0]]  # B-PER O O / O B-LOC I-LOC O: 4 of 7 words are O
    scores = constant_scores(task, datasets.Dataset.from_dict({"tokens": [["w"] * 3, ["w"] * 4], "ner_tags": tags}))
    assert scores == {"f1": 0.0, "precision": 0.0, "recall": 0.0, "accuracy": pytest.approx(4 / 7)}


def squad_split(answers):
    n = len(answers)
    return datasets.Dataset.from_dict(
        {
            "id": [str(i) for i in range(n)],
            "title": [""] * n,
            "context": ["c"] * n,
            "question": ["q"] * n,
            "answers": answers,
        }
    )


def test_squad_v1_empty_answer_scores_zero():
    scores = constant_scores(get_task("squad_v1"), squad_split([{"text": ["Ines"], "answer_start": [0]}] * 2))
    assert scores["f1"] == 0.0 and scores["exact_match"] == 0.0


def test_squad_v2_empty_answer_scores_the_unanswerable_share():
    answers = [
        {"text": [], "answer_start": []},
        {"text": ["Ines"], "answer_start": [0]},
        {"text": [], "answer_start": []},
        {"text": [], "answer_start": []},
    ]
    scores = constant_scores(get_task("squad_v2"), squad_split(answers))
    assert scores["f1"] == pytest.approx(75.0) and scores["exact_match"] == pytest.approx(75.0)


def test_warning_when_within_two_points_of_the_baseline():
    task = get_task("sst2")
    message = near_baseline(task, {"eval_accuracy": 0.5092, "baseline_accuracy": 0.5092})
    assert "50.92" in message and "learning rate" in message and "labels" in message
    assert near_baseline(task, {"eval_accuracy": 0.726, "baseline_accuracy": 0.5092}) is None
    assert near_baseline(get_task("squad_v1"), {"eval_f1": 1.5, "baseline_f1": 0.0}) is not None  # a 0-100 metric
