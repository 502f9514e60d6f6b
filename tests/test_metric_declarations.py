"""Every task declares its metrics (``Task.metrics``: key, Hub id, display name, scale, direction, metric or not);
cards, ``model-index`` and reports read that declaration. One contract over every registered task."""

import dataclasses
import json
import re
from types import SimpleNamespace

import numpy as np
import pytest

import hf_bert_tasks
from hf_bert_tasks import get_task
from hf_bert_tasks.finetune import card as mc
from hf_bert_tasks.hub.cards import TRAINER_KEYS, eval_results_from_metrics
from hf_bert_tasks.hub.push import eval_result_key
from hf_bert_tasks.tasks.base import MetricSpec
from hf_bert_tasks.tasks.squad.postprocess import QAPredictions

ALL_TASKS = hf_bert_tasks.list_tasks()
#: The Hub's metric ids the package may write as ``metric_type`` (https://huggingface.co/metrics).
HUB_METRIC_IDS = {
    "accuracy",
    "f1",
    "precision",
    "recall",
    "matthews_correlation",
    "pearsonr",
    "spearmanr",
    "exact_match",
}


class _Trainer:
    """What ``Task.evaluate`` asks of a Trainer here: ``predict(..., metric_key_prefix="eval")`` (metrics as Trainer
    builds them from ``compute_metrics``: ``eval_`` + name, plus its bookkeeping), ``log`` and
    ``is_world_process_zero``."""

    def __init__(self, metrics):
        self.metrics = metrics

    def predict(self, features, metric_key_prefix="eval"):
        metrics = {
            f"{metric_key_prefix}_loss": 0.5,
            **{f"{metric_key_prefix}_{k}": v for k, v in self.metrics.items()},
            f"{metric_key_prefix}_runtime": 1.0,
            f"{metric_key_prefix}_samples_per_second": 9.0,
            f"{metric_key_prefix}_steps_per_second": 1.0,
        }
        return SimpleNamespace(metrics=metrics, predictions=None, label_ids=None)

    def log(self, metrics):
        pass

    def is_world_process_zero(self):
        return True


def _evaluate_keys(task, split):
    """The keys ``task.evaluate`` returns for ``split``, run on literal predictions that reach every branch (all
    entity types for CoNLL, answerable and unanswerable questions with null odds for SQuAD v2)."""
    if task.problem_type == "question_answering":
        raw = {
            "id": ["q1", "q2"],
            "answers": [{"text": ["the mat"], "answer_start": [0]}, {"text": [], "answer_start": []}],
        }
        result = QAPredictions(
            predictions={"q1": "the mat", "q2": ""},
            nbest={},
            null_odds={"q1": -2.0, "q2": 1.5},
            best_non_null={"q1": "the mat", "q2": "a cat"},
        )
        if not task.version_2_with_negative:
            raw["answers"][1] = {"text": ["a cat"], "answer_start": [0]}
        stub = dataclasses.replace(task)
        object.__setattr__(stub, "run_postprocess", lambda *a, **k: result)
        return stub.evaluate(_Trainer({}), raw, None, split, output_dir=None)
    if task.problem_type == "token_classification":
        tags = [["B-PER", "I-PER", "O", "B-ORG", "O", "B-LOC", "B-MISC"]]
        pred = [["B-PER", "I-PER", "O", "B-ORG", "O", "B-MISC", "B-MISC"]]
        gold_ids = [[task.label_names.index(t) for t in row] for row in tags]
        stub = dataclasses.replace(task)
        object.__setattr__(
            stub,
            "word_level",
            lambda *a, **k: (
                pred,
                SimpleNamespace(metrics={"eval_loss": 0.3, "eval_runtime": 1.0, "eval_samples_per_second": 5.0}),
            ),
        )
        return stub.evaluate(
            _Trainer({}), {task.label_column: gold_ids, "tokens": [list("abcdefg")]}, None, split, output_dir=None
        )
    if task.problem_type == "regression":
        refs, preds = np.array([0.0, 1.0, 2.5, 4.0]), np.array([0.5, 1.0, 2.0, 4.5])
    else:
        refs = np.array([0, 1, 1, 0, 1, 2, 3]) % task.num_labels
        preds = np.array([0, 1, 0, 0, 1, 2, 2]) % task.num_labels
    return task.evaluate(_Trainer(task.compute_metrics(preds, refs)), None, None, split)


@pytest.mark.parametrize("name", ALL_TASKS)
def test_every_key_evaluate_returns_is_declared(name):
    task = get_task(name)
    for split in task.eval_splits:
        suffix = task.split_metric_suffix(split)
        returned = _evaluate_keys(task, split)
        for key in returned:
            base = key.removeprefix("eval_")
            base = base[: -len(suffix)] if suffix and base.endswith(suffix) else base
            assert base in TRAINER_KEYS or task.metric_spec(base) is not None, f"{name}/{split}: {key} undeclared"


@pytest.mark.parametrize("name", ALL_TASKS)
def test_declaration_is_complete_and_uses_hub_ids(name):
    task = get_task(name)
    assert task.metric_spec(task.primary_metric).is_metric
    assert all(task.metric_spec(m).is_metric for m in task.metric_names)
    for spec in task.metrics:
        assert spec.display and spec.scale in (1.0, 100.0)
        assert (spec.hub_id in HUB_METRIC_IDS) if spec.is_metric else spec.hub_id is None, spec
    json.dumps(task.describe()["metric_declarations"])


@pytest.mark.parametrize("name", ALL_TASKS)
def test_model_index_holds_exactly_the_declared_metrics(name):
    task = get_task(name)
    values = {f"eval_{spec.key}": (0.5 if spec.is_metric else 7) for spec in task.metrics}
    results = eval_results_from_metrics(task, {**values, "eval_loss": 0.25, "eval_runtime": 3.0})
    got = sorted((r.metric_type, r.metric_config or "", r.metric_name) for r in results)
    want = sorted((s.hub_id, s.config or "", s.display) for s in task.metrics if s.is_metric)
    assert got == want
    # one entry per (metric id, config) on a split, so a re-push replaces each in place
    assert len({eval_result_key(r) for r in results}) == len(results)


def test_squad_v2_thresholds_never_reach_model_index():
    metrics = {
        "eval_f1": 70.5,
        "eval_exact_match": 67.25,
        "eval_best_f1": 71.0,
        "eval_best_f1_thresh": -1.75,
        "eval_best_exact_match": 68.0,
        "eval_best_exact_match_thresh": -2.5,
        "eval_null_score_diff_threshold": 0.0,
        "eval_HasAns_f1": 80.0,
        "eval_NoAns_f1": 61.0,
    }
    results = eval_results_from_metrics(get_task("squad_v2"), metrics)
    assert {r.metric_value for r in results} == {70.5, 67.25, 71.0, 68.0, 80.0, 61.0}
    assert ("f1", "best threshold", 71.0) in [(r.metric_type, r.metric_config, r.metric_value) for r in results]


def test_conll_entity_counts_never_reach_model_index():
    metrics = {
        "eval_f1": 0.9,
        "eval_PER_f1": 0.95,
        "eval_PER_number": 1842,
        "eval_ORG_number": 1341,
        "eval_PER_number_test": 1617,
    }
    results = eval_results_from_metrics(get_task("conll2003"), metrics)
    assert [(r.dataset_split, r.metric_type, r.metric_config, r.metric_value) for r in results] == [
        ("validation", "f1", None, 0.9),
        ("validation", "f1", "PER", 0.95),
    ]


def test_undeclared_key_is_left_out_of_model_index(caplog):
    results = eval_results_from_metrics(get_task("mrpc"), {"eval_f1": 0.8, "eval_mystery": 0.3})
    assert [r.metric_type for r in results] == ["f1"]
    assert "eval_mystery is not declared" in caplog.text


def test_lr_grid_mean_and_std_of_a_declared_metric_are_dropped_without_a_warning(caplog):
    metrics = {"eval_f1": 0.8, "eval_f1_mean": 0.78, "eval_f1_std": 0.02, "eval_mystery_std": 0.1}
    results = eval_results_from_metrics(get_task("mrpc"), metrics)
    assert [r.metric_type for r in results] == ["f1"]
    assert "eval_f1_mean" not in caplog.text and "eval_f1_std" not in caplog.text
    assert "eval_mystery_std is not declared" in caplog.text  # an undeclared base metric still warns


def test_scale_conversions():
    squad_em, glue_acc = get_task("squad_v1").metric_spec("exact_match"), get_task("sst2").metric_spec("accuracy")
    assert (squad_em.scale, glue_acc.scale) == (100.0, 1.0)
    assert squad_em.to_percent(0.8) == 0.8  # an EM of 0.8 on the 0-100 scale stays 0.8 (no |v| <= 1 guess)
    assert glue_acc.to_percent(0.8) == 80.0
    assert squad_em.to_unit(80.5) == 0.805
    assert glue_acc.to_unit(0.25) == 0.25
    assert get_task("cola").metric_spec("matthews_correlation").to_percent(-0.5) == -50.0


def test_a_scale_other_than_1_or_100_is_refused():
    with pytest.raises(ValueError, match="scale 50"):
        MetricSpec("f1", "f1", "F1", scale=50)
    with pytest.raises(ValueError, match="needs a Hub metric id"):
        MetricSpec("f1", None, "F1")


def test_card_keeps_a_small_squad_score_on_its_scale(tmp_path):
    (tmp_path / "all_results.json").write_text(json.dumps({"eval_exact_match": 0.8, "eval_f1": 1.5}))
    text = re.sub(" +", " ", str(mc.build_finetune_card(str(tmp_path), task="squad_v1")))  # make_markdown_table pads
    assert "| BERT-base | Exact match | validation | 0.8 | 80.8 |" in text
    assert "| BERT-base | F1 | validation | 1.5 | 88.5 |" in text


def test_card_lists_thresholds_as_reported_numbers_not_results(tmp_path):
    (tmp_path / "all_results.json").write_text(
        json.dumps(
            {
                "eval_f1": 70.5,
                "eval_exact_match": 67.25,
                "eval_best_f1_thresh": -1.75,
                "eval_null_score_diff_threshold": 0.0,
            }
        )
    )
    card = mc.build_finetune_card(str(tmp_path), task="squad_v2")
    text = re.sub(" +", " ", str(card))  # make_markdown_table pads cells
    assert (
        "Null-score threshold of the best F1 = -1.7500 (validation); Null-score threshold applied = 0 (validation)"
    ) in text
    assert "| validation | 70.5000 | 67.2500 |" in text and "0-100 scale" in text
    index = card.data.to_dict()["model-index"][0]["results"]
    assert sorted(m["type"] for r in index for m in r["metrics"]) == ["exact_match", "f1"]


def test_compare_report_puts_a_squad_f1_on_the_0_100_scale_once(tmp_path, tiny_bert_dir):
    from hf_bert_tasks.scripts.compare import main

    done = tmp_path / "done"
    done.mkdir()
    (done / "all_results.json").write_text(json.dumps({"eval_f1": 88.5, "eval_exact_match": 81.0}))
    summary = main(
        [
            "--task",
            "squad_v1",
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(tmp_path / "c"),
            "--modes",
            "finetune",
            "--reuse",
            f"finetune={done}",
        ]
    )
    assert summary["rows"][0]["mean"] == 88.5
