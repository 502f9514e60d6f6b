"""GLUE-server submission files (``GlueTask.predict``): name, header, label coding and row count for every GLUE task.

The expected names and codings are the GLUE server's (gluebenchmark.com submission format, as written by
jiant/``run_glue``-style exporters): ``<TASK>.tsv`` with ``index\\tprediction``; 0/1 for CoLA, SST-2, MRPC, QQP and
WNLI, label names for MNLI, QNLI and RTE, similarity scores in [0, 5] for STS-B. The model is replaced by literal
logits (a stand-in trainer), the data by the contract test's tiny files of each task.
"""

from types import SimpleNamespace

import numpy as np
import pytest

from hf_bert_tasks.scripts.suite_report import check_submission_file
from hf_bert_tasks.tasks import TASK_REGISTRY
from hf_bert_tasks.tasks.glue import GlueTask
from tests.test_contract_task_mode import write_tiny_data

#: task -> {test split: (file name, the label each class id is written as)}; STS-B: scores.
EXPECTED = {
    "cola": {"test": ("CoLA.tsv", ["0", "1"])},
    "sst2": {"test": ("SST-2.tsv", ["0", "1"])},
    "mrpc": {"test": ("MRPC.tsv", ["0", "1"])},
    "stsb": {"test": ("STS-B.tsv", None)},
    "qqp": {"test": ("QQP.tsv", ["0", "1"])},
    "mnli": {
        "test_matched": ("MNLI-m.tsv", ["entailment", "neutral", "contradiction"]),
        "test_mismatched": ("MNLI-mm.tsv", ["entailment", "neutral", "contradiction"]),
        "test_ax": ("AX.tsv", ["entailment", "neutral", "contradiction"]),  # the diagnostic set, MNLI's model
    },
    "qnli": {"test": ("QNLI.tsv", ["entailment", "not_entailment"])},
    "rte": {"test": ("RTE.tsv", ["entailment", "not_entailment"])},
    "wnli": {"test": ("WNLI.tsv", ["0", "1"])},
}
GLUE = [name for name, task in TASK_REGISTRY.items() if isinstance(task, GlueTask)]
#: STS-B regression outputs, two of them outside the server's [0, 5], and what the file must hold for them.
SCORES, WRITTEN_SCORES = [-0.42, 5.37, 2.5, 0.25], ["0.000", "5.000", "2.500", "0.250"]


class StandInTrainer:
    """What ``predict`` uses of a ``Trainer``: ``predict`` (literal logits) and ``is_world_process_zero``."""

    def __init__(self, logits):
        self.logits = np.asarray(logits, dtype=np.float32)

    def predict(self, features, metric_key_prefix="predict"):
        return SimpleNamespace(predictions=self.logits, label_ids=None, metrics={})

    def is_world_process_zero(self):
        return True


def _logits(task, n: int) -> np.ndarray:
    """Row ``i`` predicts class ``i % num_labels`` (STS-B: ``SCORES[i % 4]``)."""
    if task.problem_type == "regression":
        return np.array([[SCORES[i % len(SCORES)]] for i in range(n)])
    return np.eye(task.num_labels)[[i % task.num_labels for i in range(n)]] * 3.0


def test_every_glue_task_has_an_expected_submission_format():
    assert sorted(GLUE) == sorted(EXPECTED)


@pytest.mark.parametrize("name", GLUE)
def test_submission_file_name_header_coding_and_rows(name, tmp_path):
    task = TASK_REGISTRY[name]
    raw = task.load(write_tiny_data(task, tmp_path / "data"))
    assert sorted(task.test_splits) == sorted(EXPECTED[name])
    for split, (file_name, coding) in EXPECTED[name].items():
        n = len(raw[split])
        paths = task.predict(StandInTrainer(_logits(task, n)), raw[split], None, split, str(tmp_path))
        assert paths == [str(tmp_path / file_name)]
        lines = (tmp_path / file_name).read_text(encoding="utf-8").splitlines()
        assert lines[0] == "index\tprediction"
        rows = [line.split("\t") for line in lines[1:]]
        assert len(rows) == n  # one row per test example
        assert [int(r[0]) for r in rows] == list(raw[split]["idx"])
        assert check_submission_file(paths[0], task) == n  # what the suite's zip accepts
        if coding is None:
            assert [r[1] for r in rows] == [WRITTEN_SCORES[i % len(SCORES)] for i in range(n)]
        else:
            assert [r[1] for r in rows] == [coding[i % len(coding)] for i in range(n)]


def test_stsb_dev_predictions_keep_the_raw_scores(tmp_path):
    """Only the submission file is clipped: ``<split>_predictions.tsv`` (from which dev metrics recompute) keeps
    -0.42 and 5.37."""
    task = TASK_REGISTRY["stsb"]
    raw = task.load(write_tiny_data(task, tmp_path / "data"))["validation"].select(range(4))
    output = SimpleNamespace(predictions=np.array([[x] for x in SCORES], np.float32), label_ids=None)
    path = task.write_eval_predictions(raw, output, str(tmp_path / "validation_predictions.tsv"))
    with open(path, encoding="utf-8") as f:
        written = [float(line.split("\t")[1]) for line in f.read().splitlines()[1:]]
    np.testing.assert_array_equal(written, np.array(SCORES, np.float32))


def test_mnli_from_the_hub_adds_the_diagnostic_set_from_its_ax_config(monkeypatch):
    """nyu-mll/glue keeps the diagnostic set as its own config ("ax", one ``test`` split); MNLI loaded from the Hub
    predicts it as ``test_ax`` (-> ``AX.tsv``), and only when the task's own dataset and config are read."""
    import datasets

    calls = []

    def fake_load_dataset(path, name=None, split=None, **kwargs):
        calls.append((path, name, split))
        row = {"premise": ["a"], "hypothesis": ["b"], "label": [-1], "idx": [0]}
        if split is not None:
            return datasets.Dataset.from_dict(row)
        return datasets.DatasetDict({"test_matched": datasets.Dataset.from_dict(row)})

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    raw = TASK_REGISTRY["mnli"].load()
    assert calls == [("nyu-mll/glue", "mnli", None), ("nyu-mll/glue", "ax", "test")]
    assert sorted(raw) == ["test_ax", "test_matched"]
    calls.clear()
    assert sorted(TASK_REGISTRY["mnli"].load(dataset_name="me/nli")) == ["test_matched"]
    assert calls == [("me/nli", "mnli", None)]
