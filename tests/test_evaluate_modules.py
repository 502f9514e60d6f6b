"""The `evaluate` modules shipped in hf_bert_tasks/metrics_evaluate load offline and equal the package's functions.

Equality is exact: the module calls the same function on the same values (ints/strings, and float64 through Arrow,
which round-trips floats bitwise). A few expected values are also computed by hand in the test.
"""

import os

import numpy as np
import pytest

import hf_bert_tasks
from hf_bert_tasks import get_task, list_tasks, metric_path
from hf_bert_tasks.tasks.glue import GlueTask

evaluate = pytest.importorskip("evaluate")

GLUE_TASKS = [name for name in list_tasks() if isinstance(get_task(name), GlueTask)]

#: literal predictions / references per GLUE task (label ids; STS-B scores)
PREDS = {3: [0, 1, 2, 2, 1, 0, 1, 2], 2: [1, 0, 1, 1, 0, 1, 0, 0]}
REFS = {3: [0, 1, 1, 2, 2, 0, 1, 0], 2: [1, 0, 0, 1, 1, 1, 0, 1]}
STSB_PREDS = [0.5, 2.25, 3.0, 4.75, 1.0, 3.5]
STSB_REFS = [0.0, 2.0, 3.2, 5.0, 1.4, 2.8]


def test_every_module_folder_holds_its_script():
    for name in hf_bert_tasks.METRIC_MODULES:
        assert os.path.isfile(os.path.join(metric_path(name), f"{name}.py"))


def test_unknown_metric_name_is_a_value_error():
    with pytest.raises(ValueError, match="unknown metric 'sqaud'.*squad_v2"):
        metric_path("sqaud")


@pytest.mark.parametrize("name", GLUE_TASKS)
def test_glue_module_equals_the_task_metrics(name):
    task = get_task(name)
    if task.problem_type == "regression":
        preds, refs = STSB_PREDS, STSB_REFS
    else:
        preds, refs = PREDS[task.num_labels], REFS[task.num_labels]
    expected = task.compute_metrics(np.asarray(preds), np.asarray(refs))
    got = evaluate.load(metric_path("glue"), name).compute(predictions=preds, references=refs)
    assert got == expected
    assert set(got) == set(task.metric_names)


def test_glue_mrpc_by_hand():
    # predictions [1,0,1,1,0,1,0,0] vs references [1,0,0,1,1,1,0,1]: TP=3, FP=1, FN=2 -> F1 = 6/9; 5 of 8 right.
    got = evaluate.load(metric_path("glue"), "mrpc").compute(predictions=PREDS[2], references=REFS[2])
    assert got["f1"] == pytest.approx(6 / 9, abs=1e-12)  # sklearn's float arithmetic, not the same expression
    assert got["accuracy"] == 5 / 8


def test_glue_accepts_the_hubs_mnli_config_names():
    got = evaluate.load(metric_path("glue"), "mnli_mismatched").compute(predictions=PREDS[3], references=REFS[3])
    assert got == {"accuracy": 5 / 8}


def test_glue_unknown_config_names_the_known_ones():
    with pytest.raises(KeyError, match="unknown configuration 'mrcp'.*mrpc"):
        evaluate.load(metric_path("glue"), "mrcp")


SQUAD_PREDS = [{"id": "q1", "prediction_text": "the Denver Broncos"}, {"id": "q2", "prediction_text": "Carolina"}]
SQUAD_REFS = [
    {"id": "q1", "answers": {"text": ["Denver Broncos", "Broncos"], "answer_start": [177, 184]}},
    {"id": "q2", "answers": {"text": ["Carolina Panthers"], "answer_start": [249]}},
]


def test_squad_module_equals_the_task_metrics():
    from hf_bert_tasks.tasks.squad import metrics as SM

    got = evaluate.load(metric_path("squad")).compute(predictions=SQUAD_PREDS, references=SQUAD_REFS)
    preds = {p["id"]: p["prediction_text"] for p in SQUAD_PREDS}
    refs = SM.references_from_rows([r["id"] for r in SQUAD_REFS], [r["answers"] for r in SQUAD_REFS])
    assert got == get_task("squad_v1").compute_metrics(preds, refs)
    # by hand: q1 exact after dropping "the"; q2 F1 = 2 * (1/1 * 1/2) / (1 + 1/2) = 2/3 -> EM 50, F1 (100 + 66.67) / 2
    assert got["exact_match"] == 50.0
    assert got["f1"] == pytest.approx(100 * (1 + 2 / 3) / 2, abs=1e-9)


SQUAD_V2_PREDS = [
    {"id": "a", "prediction_text": "Broncos", "no_answer_probability": -3.0},
    {"id": "b", "prediction_text": "in 1990", "no_answer_probability": 2.5},
    {"id": "c", "prediction_text": "Panthers", "no_answer_probability": 0.5},
]
SQUAD_V2_REFS = [
    {"id": "a", "answers": {"text": ["Denver Broncos"], "answer_start": [0]}},
    {"id": "b", "answers": {"text": [], "answer_start": []}},
    {"id": "c", "answers": {"text": [], "answer_start": []}},
]


@pytest.mark.parametrize("threshold", [1.0, 0.0, 3.0])
def test_squad_v2_module_equals_the_official_port(threshold):
    from hf_bert_tasks.tasks.squad import metrics as SM

    got = evaluate.load(metric_path("squad_v2")).compute(
        predictions=SQUAD_V2_PREDS, references=SQUAD_V2_REFS, no_answer_threshold=threshold
    )
    expected = SM.squad_v2(
        {"a": ["Denver Broncos"], "b": [], "c": []},
        {p["id"]: p["prediction_text"] for p in SQUAD_V2_PREDS},
        {p["id"]: p["no_answer_probability"] for p in SQUAD_V2_PREDS},
        na_prob_thresh=threshold,
    )
    assert got == expected


def test_squad_v2_by_hand_at_threshold_1():
    # a: F1 2/3 (Broncos vs Denver Broncos), answered; b: odds 2.5 > 1 -> unanswered = right; c: odds 0.5 -> answered
    # "Panthers" to an unanswerable question = wrong. exact = 1/3, f1 = (2/3 + 1) / 3.
    got = evaluate.load(metric_path("squad_v2")).compute(predictions=SQUAD_V2_PREDS, references=SQUAD_V2_REFS)
    assert got["exact"] == pytest.approx(100 / 3, abs=1e-9)
    assert got["f1"] == pytest.approx(100 * (2 / 3 + 1) / 3, abs=1e-9)
    assert got["total"] == 3 and got["NoAns_total"] == 2


CONLL_GOLD = [["B-PER", "I-PER", "O", "B-LOC"], ["O", "B-ORG", "I-ORG", "O", "B-MISC"]]
CONLL_PRED = [["B-PER", "I-PER", "O", "B-ORG"], ["O", "I-ORG", "I-ORG", "O", "B-MISC"]]


@pytest.mark.parametrize("mode", ["strict", "conlleval"])
def test_conll2003_module_equals_entity_metrics(mode):
    from hf_bert_tasks.tasks.conll2003 import metrics as ner_metrics

    module = evaluate.load(metric_path("conll2003"))
    got = module.compute(predictions=CONLL_PRED, references=CONLL_GOLD, mode=mode)
    assert got == ner_metrics.entity_metrics(CONLL_GOLD, CONLL_PRED, mode=mode)


def test_conll2003_by_hand():
    # gold entities PER, LOC, ORG, MISC; strict: predicted PER, ORG(wrong span type at LOC), MISC (I-ORG I-ORG after O
    # is no entity) -> TP 2 of 3 predicted, of 4 gold: P 2/3, R 1/2; conlleval also counts I-ORG I-ORG as ORG: TP 3/4.
    module = evaluate.load(metric_path("seqeval"))
    strict = module.compute(predictions=CONLL_PRED, references=CONLL_GOLD)
    assert (strict["precision"], strict["recall"]) == pytest.approx((2 / 3, 1 / 2), abs=1e-12)
    lenient = module.compute(predictions=CONLL_PRED, references=CONLL_GOLD, mode="conlleval")
    assert (lenient["precision"], lenient["recall"]) == pytest.approx((3 / 4, 3 / 4), abs=1e-12)


def test_swag_module_equals_the_task_metrics_and_skips_unlabelled_rows():
    preds, refs = [0, 3, 1, 2, 2], [0, 3, 2, -1, 2]
    got = evaluate.load(metric_path("swag")).compute(predictions=preds, references=refs)
    assert got == get_task("swag").compute_metrics(np.asarray(preds), np.asarray(refs))
    assert got == {"accuracy": 3 / 4}  # the -1 row is not a choice
