"""One contract over every registered task (later task families join automatically)."""

import json

import numpy as np
import pytest

import hf_bert_tasks
from hf_bert_tasks.tasks import PROBLEM_TYPES, TASK_REGISTRY

ALL_TASKS = hf_bert_tasks.list_tasks()


def test_the_paper_glue_tasks_are_registered():
    for name in ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli"):
        assert name in ALL_TASKS


@pytest.mark.parametrize("name", ALL_TASKS)
def test_get_task_returns_the_registered_instance(name):
    assert hf_bert_tasks.get_task(name) is TASK_REGISTRY[name]
    assert hf_bert_tasks.get_task(name.upper()).name == name


@pytest.mark.parametrize("name", ALL_TASKS)
def test_task_contract(name):
    task = hf_bert_tasks.get_task(name)
    assert task.description and task.hub_dataset
    assert task.problem_type in PROBLEM_TYPES
    assert task.primary_metric in task.metric_names
    assert task.text_columns and all(isinstance(c, str) for c in task.text_columns)
    assert task.model_class().__name__ == task.model_head
    assert task.pipeline_tag
    assert task.eval_splits and task.train_split
    defaults = task.paper_defaults
    assert defaults.learning_rate > 0 and defaults.per_device_train_batch_size > 0 and defaults.max_seq_length > 0
    json.dumps(task.describe())  # JSON-able for `hf-bert-tasks tasks --json` and cards
    assert task.local_files, "every task reads the original local files"
    for model_key, metrics in task.paper_results.items():
        assert set(metrics) <= {*task.metric_names, *(f"{m}_mm" for m in task.metric_names)}, model_key


@pytest.mark.parametrize("name", [n for n in ALL_TASKS if TASK_REGISTRY[n].label_names])
def test_label_names_and_config_agree(name):
    task = hf_bert_tasks.get_task(name)
    kwargs = task.model_config_kwargs()
    assert kwargs["id2label"] == dict(enumerate(task.label_names))
    assert kwargs["label2id"] == {label: i for i, label in enumerate(task.label_names)}
    assert len(set(task.label_names)) == len(task.label_names)


@pytest.mark.parametrize(
    "name", [n for n in ALL_TASKS if TASK_REGISTRY[n].problem_type in ("single_label_classification", "regression")]
)
def test_compute_metrics_returns_every_named_float(name):
    task = hf_bert_tasks.get_task(name)
    if task.problem_type == "regression":
        refs = np.array([0.0, 1.0, 2.5, 4.0, 5.0])
        preds = np.array([0.5, 1.0, 2.0, 4.5, 4.0])
    else:
        refs = np.array([0, 1, 1, 0, 1]) % task.num_labels
        preds = np.array([0, 1, 0, 0, 1]) % task.num_labels
    metrics = task.compute_metrics(preds, refs)
    assert list(metrics) == list(task.metric_names)
    assert all(isinstance(v, float) and np.isfinite(v) for v in metrics.values())


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(KeyError) as err:
        hf_bert_tasks.get_task("mrcp")
    assert "mrcp" in str(err.value) and "mrpc" in str(err.value) and "cola" in str(err.value)


def test_registering_a_duplicate_name_fails():
    with pytest.raises(ValueError, match="already registered"):
        hf_bert_tasks.register_task(TASK_REGISTRY["mrpc"])
