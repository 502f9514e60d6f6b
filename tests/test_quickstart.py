"""The quickstart: baselines and verdicts computed right, the head swap in one line, a reduced end-to-end run (default
suite), and the full run with every verdict holding (slow)."""

import json
import logging
import os
from dataclasses import replace

import pytest

from hf_bert_tasks.scripts import quickstart as Q
from hf_bert_tasks.scripts import quickstart_report as QR
from hf_bert_tasks.scripts import quickstart_steps as QS
from tests.conftest import SAMPLES

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_a_row_works_only_with_the_margin():
    assert QR.Row("s", "m", 0.61, 0.5, "chance").works
    assert not QR.Row("s", "m", 0.59, 0.5, "chance").works  # above the baseline, but by less than 0.10
    assert not QR.Row("s", "m", 0.80, 0.76, "random init", kind="gain").works  # a gain needs +0.05
    assert QR.Row("s", "m", 0.82, 0.76, "random init", kind="gain").works


def test_constant_baseline_is_the_best_constant_prediction():
    from datasets import Dataset

    from hf_bert_tasks import get_task

    # 3 of 5 negative: accuracy's best constant is the majority class (0.6) ...
    acc, name = QR.constant_baseline(get_task("sst2"), Dataset.from_dict({"label": [0, 0, 0, 1, 1]}))
    assert (acc, name) == (0.6, "majority class")
    # ... but F1's best constant is "always equivalent": P = 2/5, R = 1, F1 = 2 * 0.4 / 1.4
    f1, name = QR.constant_baseline(get_task("mrpc"), Dataset.from_dict({"label": [0, 0, 0, 1, 1]}))
    assert f1 == pytest.approx(0.8 / 1.4, abs=1e-12) and name == "always 'equivalent'"


def test_unigram_baseline_counts_wordpieces(tmp_path, vocab_tokenizer):
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat .\n\nthe dog ran .\n", encoding="utf-8")
    # 11 pieces, "the" 3 times
    assert QR.unigram_baseline(vocab_tokenizer, str(corpus)) == 3 / 11


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_head_swap_is_one_line_and_the_load_report_is_silenced(tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    records = _Records()
    logger = logging.getLogger("transformers.modeling_utils")
    logger.addHandler(records)
    try:
        AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir)
        assert any("LOAD REPORT" in m for m in records.messages)  # what users saw before: transformers' table
        records.messages.clear()
        with QS.quiet_load_report():
            AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir)
        assert not any("LOAD REPORT" in m for m in records.messages)
    finally:
        logger.removeHandler(records)
    swaps = [m for m in records.messages if "head swap (expected)" in m]
    assert len(swaps) == 1 and "\n" not in swaps[0]
    assert "7 checkpoint tensors dropped (cls.predictions.*, cls.seq_relationship.*)" in swaps[0]
    assert "2 new head tensors initialised (classifier.bias, classifier.weight)" in swaps[0]


#: seconds, not minutes: tiny budgets, so the verdicts are not expected to hold; the checks are on how they are made.
REDUCED = replace(
    Q.FULL,
    pretrain_steps=4,
    pretrain_batch_size=8,
    max_train_samples=32,
    max_eval_samples=40,
    lora_epochs=1,
    frozen_epochs=1,
    frozen_strategies=("last",),
    gain_train_samples=16,
    gain_epochs=1,
    tasks=(Q.TaskRun("sst2", "SST-2", 1, 1e-3), Q.TaskRun("mrpc", "MRPC", 1, 1e-3)),
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
    gain = rows[("pretrained vs random init (sst2, 16 labels)", "dev accuracy")]  # label efficiency
    for name, value in (("pretrained", gain["value"]), ("random-init", gain["baseline"])):
        results = json.loads((out / f"sst2-16-labels-{name}" / "all_results.json").read_text())
        assert (results["train_samples"], results["eval_accuracy"]) == (16, value)
    assert rows[("pretraining (4 steps)", "held-out NSP accuracy")]["baseline"] == 0.5
    for r in summary["rows"]:
        margin = QR.MARGIN[r["kind"]]
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
    for arm in ("sst2", "sst2-16-labels-random-init", "compare/lora", "compare/feature_based-last"):
        assert (out / arm / "training_curves.png").is_file()


def test_reduced_run_comparison_states_each_arms_budget(reduced_run):
    from transformers import AutoConfig, BertForSequenceClassification

    out, _ = reduced_run
    rows = {r["name"]: r for r in json.loads((out / "compare" / "comparison.json").read_text())["rows"]}
    assert [(rows[n]["epochs"], rows[n]["learning_rate"]) for n in ("finetune", "lora", "last")] == [
        ("1", "0.001"),
        ("1", "0.002"),
        ("1", "0.003"),
    ]  # REDUCED's SST-2 run, lora_ and frozen_learning_rate
    config = AutoConfig.from_pretrained(out / "pretrained-bert", num_labels=2)
    assert rows["finetune"]["trainable_parameters"] == sum(
        p.numel() for p in BertForSequenceClassification(config).parameters()
    )
    # LoRA r=8 on query and value of each layer (A: 8 x H, B: H x 8) + the classifier (H x 2 + 2)
    h, layers = config.hidden_size, config.num_hidden_layers
    assert rows["lora"]["trainable_parameters"] == layers * 2 * (8 * h + h * 8) + (h * 2 + 2)
    assert "| 1 | 0.002 | " in (out / "compare" / "comparison.md").read_text()


#: tools/make_samples.py's adjectives that never occur in the SST-2 sample's training split
HELD_OUT_ADJECTIVES = {"joyful", "clever", "splendid", "tender", "grim", "stale", "sloppy", "hollow"}


def test_reduced_run_showcase_reports_the_held_out_word_accuracy(reduced_run):
    _, summary = reduced_run
    with open(os.path.join(SAMPLES, "SST-2", "dev.tsv"), encoding="utf-8") as f:
        dev = [line.split("\t") for line in f.read().splitlines()[1:]]
    held = [int(label) for text, label in dev if HELD_OUT_ADJECTIVES & set(text.split())]
    showcase = summary["showcase"]
    assert (showcase["n_held_out"], showcase["n_seen"]) == (len(held), len(dev) - len(held)) == (47, 353)
    assert set(showcase["held_out_accuracy"]) == {"pretrained", "pretrained, 16 labels", "random-init, 16 labels"}
    names = {"0": "negative", "1": "positive"}
    gold = {text: names[label] for text, label in dev}
    assert len(showcase["examples"]) == 6
    for e in showcase["examples"]:  # the label shown is the sample's own
        assert e["label"] == gold[e["text"]]
        assert (e["group"] == "held-out words") == bool(HELD_OUT_ADJECTIVES & set(e["text"].split()))


@pytest.mark.slow
def test_full_quickstart_every_verdict_holds(tmp_path):
    summary = Q.run_quickstart(str(tmp_path), seed=42)
    failed = [(r["step"], r["metric"], r["verdict"]) for r in summary["rows"] if not r["works"]]
    assert not failed


def test_threads_default_to_one_for_small_models():
    from hf_bert_tasks.utils.threads import choose_threads

    assert choose_threads(None, {})[0] == 1
    assert choose_threads(None, {"OMP_NUM_THREADS": "2"}) == (2, "OMP_NUM_THREADS")
    assert choose_threads(3, {"OMP_NUM_THREADS": "2"}) == (3, "--threads")  # the flag wins over the environment


def test_threads_reject_a_bad_count():
    from hf_bert_tasks.utils.threads import choose_threads

    with pytest.raises(ValueError, match="OMP_NUM_THREADS must be a positive integer, got 'two'"):
        choose_threads(None, {"OMP_NUM_THREADS": "two"})
    with pytest.raises(ValueError, match="--threads must be a positive integer, got 0"):
        choose_threads(0, {})


def test_use_threads_leaves_larger_presets_alone():
    from hf_bert_tasks.utils.threads import use_threads

    assert use_threads(None, preset="base") is None


def test_held_out_rows_are_dev_sentences_with_a_word_unseen_in_training():
    train = ["the plot was dull .", "what a lovely cast ."]
    dev = ["the cast was dull .", "the plot was grim .", "What a LOVELY plot ."]
    assert QR.held_out_rows(train, dev) == [1]


def test_each_run_gets_a_new_folder_and_names_the_previous_one(tmp_path, monkeypatch, capsys):
    def fake_run(output_dir, seed, plan):
        (tmp_path / output_dir / "quickstart_summary.json").write_text("{}")
        return {"output_dir": output_dir}

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Q, "run_quickstart", fake_run)
    monkeypatch.setattr("hf_bert_tasks.utils.threads.use_threads", lambda n: "threads: not changed in tests")
    first = Q.main([])["output_dir"]
    assert "no earlier run" in capsys.readouterr().out
    second = Q.main([])["output_dir"]
    out = capsys.readouterr().out
    assert first != second and first.startswith("runs/quickstart-") and second.startswith("runs/quickstart-")
    assert f"the previous run is kept in {first}" in out
    assert (tmp_path / first / "quickstart_summary.json").is_file()  # not replaced
    assert os.path.realpath(tmp_path / "runs" / "quickstart") == str(tmp_path / second)


def test_an_explicit_finished_folder_is_refused_without_the_flag(tmp_path):
    (tmp_path / "quickstart_summary.json").write_text("{}")
    with pytest.raises(FileExistsError, match="--overwrite_output_dir"):
        Q.main(["--output_dir", str(tmp_path)])


def test_json_puts_only_the_summary_on_stdout(tmp_path, monkeypatch, capsys):
    def fake_run(output_dir, seed, plan):
        print("== 1. a step's progress")
        return {"output_dir": output_dir, "all_work": True}

    monkeypatch.setattr(Q, "run_quickstart", fake_run)
    monkeypatch.setattr("hf_bert_tasks.utils.threads.use_threads", lambda n: "threads: not changed in tests")
    Q.main(["--output_dir", str(tmp_path / "q"), "--json"])
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"output_dir": str(tmp_path / "q"), "all_work": True}
    assert "== 1. a step's progress" in captured.err
