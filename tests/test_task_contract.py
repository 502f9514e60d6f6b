"""One contract over every registered task (later task families join automatically)."""

import json
import math

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
    assert defaults.learning_rate in defaults.lr_grid  # the default is one of the rates the paper searches
    json.dumps(task.describe())  # JSON-able for `hf-bert-tasks tasks --json` and cards
    assert task.local_files, "every task reads the original local files"
    for model_key, metrics in task.paper_results.items():
        assert set(metrics) <= {*task.metric_names, *(f"{m}_mm" for m in task.metric_names)}, model_key


#: Fine-tuning settings stated in the paper (Devlin et al., 2018): GLUE §4.1 (batch 32, 3 epochs, lr grid
#: {5e-5, 4e-5, 3e-5, 2e-5}), SQuAD v1.1 §4.2 (3 epochs, lr 5e-5, batch 32), SQuAD v2.0 §4.3 (2 epochs, lr 5e-5, batch
#: 48), SWAG §4.4 (3 epochs, lr 2e-5, batch 16). (batch, epochs, lr grid) per task.
PAPER_SETTINGS = {
    **{
        name: (32, 3.0, (5e-5, 4e-5, 3e-5, 2e-5))
        for name in ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli")
    },
    "squad_v1": (32, 3.0, (5e-5,)),
    "squad_v2": (48, 2.0, (5e-5,)),
    "swag": (16, 3.0, (2e-5,)),
}


@pytest.mark.parametrize("name", [n for n in ALL_TASKS if n in PAPER_SETTINGS])
def test_paper_defaults_are_the_papers_settings(name):
    d = hf_bert_tasks.get_task(name).paper_defaults
    assert (d.per_device_train_batch_size, d.num_train_epochs, tuple(d.lr_grid)) == PAPER_SETTINGS[name]


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
    assert all(isinstance(v, float) for v in metrics.values())
    # hand-computed on these five items. Classes: tp=2 tn=2 fp=0 fn=1 -> accuracy 4/5, P=1 R=2/3 F1=0.8,
    # MCC (2*2 - 0*1)/sqrt(2*3*2*3) = 2/3. Regression: pred ranks 1 2 3 5 4 vs 1 2 3 4 5 -> Spearman 1 - 6*2/(5*24)
    # = 0.9; Pearson: deviations (-2.5,-1.5,0,1.5,2.5) x (-1.9,-1.4,-0.4,2.1,1.6): 14 / sqrt(17 * 12.7).
    expected = {
        "accuracy": 0.8,
        "f1": 0.8,
        "matthews_correlation": 2 / 3,
        "spearmanr": 0.9,
        "pearson": 14 / math.sqrt(17 * 12.7),
    }
    assert metrics == {name: pytest.approx(expected[name]) for name in task.metric_names}


def test_unknown_task_lists_the_known_ones():
    with pytest.raises(KeyError) as err:
        hf_bert_tasks.get_task("mrcp")
    assert "mrcp" in str(err.value) and "mrpc" in str(err.value) and "cola" in str(err.value)


def test_registering_a_duplicate_name_fails():
    with pytest.raises(ValueError, match="already registered"):
        hf_bert_tasks.register_task(TASK_REGISTRY["mrpc"])
