"""The quickstart: baselines and verdicts computed right, the head swap in one line, a reduced end-to-end run (default
suite), and the full run with every verdict holding (slow)."""

import json
import logging
import os
from dataclasses import replace

import pytest

from hf_bert_tasks.scripts import quickstart as Q
from tests.conftest import SAMPLES

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_a_row_works_only_with_the_margin():
    assert Q.Row("s", "m", 0.61, 0.5, "chance").works
    assert not Q.Row("s", "m", 0.59, 0.5, "chance").works  # above the baseline, but by less than 0.10
    assert not Q.Row("s", "m", 0.80, 0.76, "random init", kind="gain").works  # a gain needs +0.05
    assert Q.Row("s", "m", 0.82, 0.76, "random init", kind="gain").works


def test_constant_baseline_is_the_best_constant_prediction():
    from datasets import Dataset

    from hf_bert_tasks import get_task

    # 3 of 5 negative: accuracy's best constant is the majority class (0.6) ...
    acc, name = Q.constant_baseline(get_task("sst2"), Dataset.from_dict({"label": [0, 0, 0, 1, 1]}))
    assert (acc, name) == (0.6, "majority class")
    # ... but F1's best constant is "always equivalent": P = 2/5, R = 1, F1 = 2 * 0.4 / 1.4
    f1, name = Q.constant_baseline(get_task("mrpc"), Dataset.from_dict({"label": [0, 0, 0, 1, 1]}))
    assert f1 == pytest.approx(0.8 / 1.4, abs=1e-12) and name == "always 'equivalent'"


def test_unigram_baseline_counts_wordpieces(tmp_path, vocab_tokenizer):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat .\n\nthe dog ran .\n", encoding="utf-8")
    # 11 pieces, "the" 3 times
    assert Q.unigram_baseline(vocab_tokenizer, str(corpus)) == 3 / 11


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_head_swap_is_one_line_and_the_load_report_is_silenced(tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    from hf_bert_tasks import get_task

    records = _Records()
    logger = logging.getLogger("transformers.modeling_utils")
    logger.addHandler(records)
    try:
        AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir)
        assert any("LOAD REPORT" in m for m in records.messages)  # what users saw before: transformers' table
        records.messages.clear()
        line = Q.head_swap_line(tiny_bert_dir, get_task("sst2"))
        assert not any("LOAD REPORT" in m for m in records.messages)
    finally:
        logger.removeHandler(records)
    assert "\n" not in line
    assert "7 pretraining-head tensors dropped (cls.predictions.*, cls.seq_relationship.*)" in line
    assert "2 new sst2 head tensors initialised (classifier.bias, classifier.weight)" in line


#: seconds, not minutes: tiny budgets, so the verdicts are not expected to hold; the checks are on how they are made.
REDUCED = replace(
    Q.FULL, pretrain_steps=4, pretrain_batch_size=8, max_train_samples=32, max_eval_samples=40, lora_epochs=1,
    frozen_epochs=1, frozen_strategies=("last",), tasks=(Q.TaskRun("sst2", "SST-2", 1, 1e-3),
                                                         Q.TaskRun("mrpc", "MRPC", 1, 1e-3)),
)


@pytest.fixture(scope="module")
def reduced_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("quickstart")
    return out, Q.run_quickstart(str(out), seed=1, plan=REDUCED)


def _dev_labels(folder, n):
    with open(os.path.join(SAMPLES, folder, "dev.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()[1:]
    column = 1 if folder == "SST-2" else 0
    return [int(line.split("\t")[column]) for line in lines][:n]


def test_reduced_run_rows_compare_each_step_with_its_own_baseline(reduced_run):
    out, summary = reduced_run
    rows = {(r["step"], r["metric"]): r for r in summary["rows"]}
    sst2_labels = _dev_labels("SST-2", 40)  # the baseline is computed on the examples the run was scored on
    majority = max(sst2_labels.count(0), sst2_labels.count(1)) / len(sst2_labels)
    assert rows[("fine-tune sst2", "dev accuracy")]["baseline"] == majority
    mrpc_labels = _dev_labels("MRPC", 40)
    p = mrpc_labels.count(1) / len(mrpc_labels)
    assert rows[("fine-tune mrpc", "dev f1")]["baseline"] == pytest.approx(2 * p / (1 + p), abs=1e-12)
    gain = rows[("pretrained vs random init (sst2)", "dev accuracy")]
    assert gain["value"] == summary["fine-tuning"]["sst2"]["eval_accuracy"]
    assert gain["baseline"] == summary["random_init"]["eval_accuracy"]
    assert rows[("pretraining (4 steps)", "held-out NSP accuracy")]["baseline"] == 0.5
    for r in summary["rows"]:
        margin = Q.MARGIN[r["kind"]]
        assert r["works"] == (r["value"] >= r["baseline"] + margin)
        assert r["verdict"].startswith("works" if r["works"] else "NOT shown")
    assert summary["all_work"] == all(r["works"] for r in summary["rows"])


def test_reduced_run_writes_the_summary_png_and_the_comparison(reduced_run):
    out, summary = reduced_run
    assert (out / "quickstart_summary.png").read_bytes()[:8] == PNG_SIGNATURE
    saved = json.loads((out / "quickstart_summary.json").read_text())
    assert saved["rows"] == json.loads(json.dumps(summary["rows"]))
    comparison = json.loads((out / "compare" / "comparison.json").read_text())
    assert [r["name"] for r in comparison["rows"]] == ["finetune", "lora", "last"]
    # the comparison's fine-tuning arm is step 2's run (x100 in the report)
    assert comparison["rows"][0]["mean"] == 100 * summary["fine-tuning"]["sst2"]["eval_accuracy"]
    for arm in ("sst2", "sst2-random-init", "compare/lora", "compare/feature_based-last"):
        assert (out / arm / "training_curves.png").is_file()


@pytest.mark.slow
def test_full_quickstart_every_verdict_holds(tmp_path):
    summary = Q.run_quickstart(str(tmp_path), seed=42)
    failed = [(r["step"], r["metric"], r["verdict"]) for r in summary["rows"] if not r["works"]]
    assert not failed
