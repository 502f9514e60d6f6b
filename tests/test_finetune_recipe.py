"""The fine-tune recipe end to end with a tiny BERT: learning on written fixture data (single sentence, sentence
pair, regression), metrics recomputed from the saved model, files, pipeline round trip, CLI behaviour."""

import json
import os
import pathlib
import random

import numpy as np
import pytest

from hf_bert_tasks.finetune import recipe as finetune
from tests.conftest import REPO, SAMPLES, build_learnable_bert, majority_accuracy, predict_labels, tiny_run_argv

FAST = [
    "--max_train_samples",
    "64",
    "--max_eval_samples",
    "32",
    "--max_predict_samples",
    "8",
    "--num_train_epochs",
    "1",
    "--per_device_train_batch_size",
    "16",
    "--learning_rate",
    "1e-3",
    "--disable_tqdm",
    "true",
]


def run(task, model_dir, out, *extra):
    """A short run on the bundled sample of ``task`` (:data:`FAST`), then ``extra``."""
    return finetune.main(tiny_run_argv(task, model_dir, out, *FAST, *extra))


def read_results(out):
    with open(os.path.join(out, "all_results.json")) as f:
        return json.load(f)


# ------------------------------------------------------------------ learnable fixture data (one rule per task family)
# Word pools written for these tests; a seeded rng only picks the fillers. The label of every row follows from one
# keyword, which a 2-layer, hidden-32 BERT learns in a few dozen steps; the fillers carry no signal.
NAMES = ["nadia", "hiro", "priya", "ines", "omar", "greta"]
OBJECTS = ["kettle", "lamp", "map", "violin", "clock", "kite"]
PLACES = ["market", "harbour", "museum", "garden"]
SUBJECTS = ["the film", "the plot", "the cast", "this story", "the music", "the ending", "the script", "the book"]
VERBS = ["was", "is", "seemed", "felt"]
TAILS = ["today .", "to me .", "overall .", "."]
POSITIVE, NEGATIVE = ["good", "great", "lovely", "superb"], ["bad", "awful", "dull", "poor"]
#: STS-B: the adverb of sentence 2 alone sets the similarity score (0-5).
DEGREES = {"never": 0.0, "rarely": 1.25, "sometimes": 2.5, "often": 3.75, "always": 5.0}


def sst2_rows(n: int, seed: int, positive_every: int) -> list[tuple[str, int]]:
    """Single sentences; label 1 iff the adjective is positive. Every ``positive_every``-th row (from 0) is negative."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = int(i % positive_every != 0)
        adjective = rng.choice(POSITIVE if label else NEGATIVE)
        rows.append((f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {adjective} {rng.choice(TAILS)}", label))
    return rows


def mrpc_rows(n: int, seed: int, positive_every: int) -> list[tuple[str, str, int]]:
    """Sentence pairs; label 1 (equivalent) iff sentence 2 says "the same", 0 iff it says "a different": the keyword
    sits in segment B only, so the model has to read the second sentence."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        label = int(i % positive_every != 0)
        thing = rng.choice(OBJECTS)
        first = f"{rng.choice(NAMES)} bought the {thing} at the {rng.choice(PLACES)} ."
        second = (
            f"at the {rng.choice(PLACES)} , {rng.choice(NAMES)} got {'the same' if label else 'a different'} {thing} ."
        )
        rows.append((first, second, label))
    return rows


def stsb_rows(n: int, seed: int) -> list[tuple[str, str, float]]:
    """Sentence pairs scored by the adverb of sentence 2 (:data:`DEGREES`), the five adverbs in turn."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        adverb = list(DEGREES)[i % len(DEGREES)]
        rows.append(
            (
                f"{rng.choice(NAMES)} plays the {rng.choice(OBJECTS)} .",
                f"{rng.choice(NAMES)} {adverb} plays at the {rng.choice(PLACES)} .",
                DEGREES[adverb],
            )
        )
    return rows


def write_tsv(path, header: str, lines) -> None:
    path.write_text(header + "\n" + "".join(line + "\n" for line in lines), encoding="utf-8")


LEARN = [
    "--per_device_train_batch_size",
    "16",
    "--warmup_steps",
    "0.1",
    "--max_seq_length",
    "32",
    "--eval_strategy",
    "no",
    "--disable_tqdm",
    "true",
]


def learn(task, data_dir, model_dir, out, epochs, learning_rate, *extra):
    return finetune.main(
        tiny_run_argv(
            task,
            model_dir,
            out,
            *LEARN,
            *extra,
            data_dir=data_dir,
            num_train_epochs=epochs,
            learning_rate=learning_rate,
            seed=0,
        )
    )


def test_sst2_single_sentences_learn_the_keyword_rule(tmp_path):
    train, dev = sst2_rows(64, seed=0, positive_every=2), sst2_rows(32, seed=1, positive_every=3)
    data = tmp_path / "sst2"
    data.mkdir()
    for name, rows in (("train.tsv", train), ("dev.tsv", dev)):
        write_tsv(data / name, "sentence\tlabel", (f"{text}\t{label}" for text, label in rows))
    model = build_learnable_bert(tmp_path / "bert", [text for text, _ in train + dev])
    out = tmp_path / "out"
    metrics = learn("sst2", data, model, out, 10, 3e-3)  # 40 steps
    majority = majority_accuracy([label for _, label in dev])  # 21 of 32 positive: 0.656
    # measured 1.0 with seeds 0, 1, 2 (OMP_NUM_THREADS unset and 1); the majority class scores 0.656
    assert metrics["eval_accuracy"] >= majority + 0.25
    predicted = predict_labels(out, [(text, None) for text, _ in dev])
    assert metrics["eval_accuracy"] == pytest.approx(np.mean(np.array(predicted) == [label for _, label in dev]))


def test_mrpc_sentence_pairs_learn_and_write_metrics_model_and_glue_submission(tmp_path):
    from transformers import pipeline

    train, dev, test = (
        mrpc_rows(96, seed=0, positive_every=2),
        mrpc_rows(32, seed=1, positive_every=3),
        mrpc_rows(8, seed=2, positive_every=2),
    )
    data = tmp_path / "mrpc"
    data.mkdir()
    header = "#1 ID\t#2 ID\t#1 String\t#2 String"
    for name, rows in (("train.tsv", train), ("dev.tsv", dev)):
        write_tsv(
            data / name, "Quality\t" + header, (f"{y}\t{i}\t{i + 500}\t{a}\t{b}" for i, (a, b, y) in enumerate(rows))
        )
    write_tsv(
        data / "test.tsv", "index\t" + header, (f"{i}\t{i}\t{i + 500}\t{a}\t{b}" for i, (a, b, _) in enumerate(test))
    )
    model = build_learnable_bert(tmp_path / "bert", [f"{a} {b}" for a, b, _ in train + dev + test])
    out = tmp_path / "out"
    run_metrics = learn("mrpc", data, model, out, 8, 3e-3)  # 48 steps
    results = read_results(out)
    gold = [y for *_, y in dev]
    majority = majority_accuracy(gold)  # 21 of 32 equivalent: 0.656
    positive_rate = np.mean(gold)
    constant_f1 = 2 * positive_rate / (1 + positive_rate)  # F1 of always predicting "equivalent": 0.792
    # measured accuracy and F1 1.0 with seeds 0, 1, 2 (OMP_NUM_THREADS unset and 1)
    assert results["eval_accuracy"] >= majority + 0.2 and results["eval_f1"] >= constant_f1 + 0.1
    assert run_metrics["eval_accuracy"] == results["eval_accuracy"]
    assert (results["eval_samples"], results["train_samples"]) == (32, 96)
    # the reported metrics are those of the saved model: recomputed from its predictions on the dev pairs
    predicted = np.array(predict_labels(out, [(a, b) for a, b, _ in dev]))
    tp = int(((predicted == 1) & (np.array(gold) == 1)).sum())
    assert results["eval_accuracy"] == pytest.approx(np.mean(predicted == gold))
    assert results["eval_f1"] == pytest.approx(2 * tp / (predicted.sum() + sum(gold)))
    for name in ("config.json", "model.safetensors", "tokenizer.json", "train_results.json", "eval_results.json"):
        assert (out / name).is_file(), name
    # the GLUE submission: one line per test pair, in order, with the saved model's labels
    lines = (out / "MRPC.tsv").read_text().splitlines()
    expected = predict_labels(out, [(a, b) for a, b, _ in test])
    assert lines == ["index\tprediction"] + [f"{i}\t{y}" for i, y in enumerate(expected)]
    clf = pipeline("text-classification", model=str(out))
    labels = [clf({"text": a, "text_pair": b})["label"] for a, b, _ in dev[:3]]
    assert labels == [("not_equivalent", "equivalent")[y] for y in predicted[:3]]


def test_stsb_regression_learns_the_score_and_the_pipeline_returns_it(tmp_path):
    from scipy.stats import pearsonr, spearmanr
    from transformers import AutoConfig, pipeline

    train, dev = stsb_rows(80, seed=0), stsb_rows(30, seed=1)
    data = tmp_path / "stsb"
    data.mkdir()
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    for name, rows in (("train.tsv", train), ("dev.tsv", dev)):
        write_tsv(
            data / name,
            header,
            (f"{i}\tx\tx\t2026\t{i}\tnone\tnone\t{a}\t{b}\t{y}" for i, (a, b, y) in enumerate(rows)),
        )
    model = build_learnable_bert(tmp_path / "bert", [f"{a} {b}" for a, b, _ in train + dev])
    out = tmp_path / "out"
    learn("stsb", data, model, out, 20, 5e-3)  # 100 steps
    results = read_results(out)
    gold = [y for *_, y in dev]
    constant_mse = float(np.var(gold))  # MSE of the best constant prediction (the dev mean): 3.125
    # Measured with model seeds 0-3 (OMP_NUM_THREADS unset and 1): eval MSE 0.16-0.64, Pearson 0.92-0.98, Spearman
    # 0.88-0.98. A constant prediction has MSE 3.125 and no correlation (NaN); the loss bound also rules out a model
    # that predicts the mean with tiny, accidentally ordered wiggles.
    assert results["eval_loss"] <= 0.4 * constant_mse
    assert results["eval_pearson"] >= 0.8 and results["eval_spearmanr"] >= 0.7
    config = AutoConfig.from_pretrained(out)
    assert config.problem_type == "regression" and config.num_labels == 1
    scorer = pipeline("text-classification", model=str(out))
    scores = [scorer({"text": a, "text_pair": b}, function_to_apply="none") for a, b, _ in dev]
    assert {s["label"] for s in scores} == {"LABEL_0"}
    # the reported correlations are those of the saved model's raw scores on the dev pairs (scipy as the reference)
    raw = [s["score"] for s in scores]
    assert results["eval_pearson"] == pytest.approx(pearsonr(raw, gold)[0], abs=1e-5)
    # Spearman only to 2e-3: scores of pairs with the same adverb nearly tie, so float rounding (the Trainer's padded
    # batches vs one pair at a time) can swap neighbouring ranks, ~1e-4 per swap (seen: 1.1e-4)
    assert results["eval_spearmanr"] == pytest.approx(spearmanr(raw, gold)[0], abs=2e-3)


def jsonl_accuracy(out, lines) -> float:
    """Accuracy of the model saved in ``out`` on MNLI jsonl lines, recomputed outside the recipe."""
    rows = [json.loads(line) for line in lines]
    label2id = json.loads((out / "config.json").read_text())["label2id"]
    predicted = predict_labels(out, [(r["premise"], r["hypothesis"]) for r in rows])
    return float(np.mean([p == label2id[r["label"]] for p, r in zip(predicted, rows)]))


def test_mnli_reports_matched_accuracy_from_jsonl(tiny_bert_dir, tmp_path):
    out = tmp_path / "mnli"
    run("mnli", tiny_bert_dir, out)
    results = read_results(out)
    assert results["eval_samples"] == 32
    assert json.loads(pathlib.Path(out / "config.json").read_text())["id2label"] == {
        "0": "entailment",
        "1": "neutral",
        "2": "contradiction",
    }
    with open(os.path.join(SAMPLES, "MNLI", "dev_matched.jsonl"), encoding="utf-8") as f:
        lines = f.read().splitlines()[:32]
    assert results["eval_accuracy"] == pytest.approx(jsonl_accuracy(out, lines))


def test_mnli_mismatched_metrics_get_the_mm_suffix(tiny_bert_dir, tmp_path):
    data = tmp_path / "mnli_data"
    data.mkdir()
    lines = pathlib.Path(SAMPLES, "MNLI", "dev_matched.jsonl").read_text().splitlines()
    (data / "train.jsonl").write_text("\n".join(lines[:40]) + "\n")
    (data / "dev_matched.jsonl").write_text("\n".join(lines[40:60]) + "\n")
    (data / "dev_mismatched.jsonl").write_text("\n".join(lines[60:90]) + "\n")
    out = tmp_path / "mnli_mm"
    finetune.main(tiny_run_argv("mnli", tiny_bert_dir, out, *FAST, data_dir=data))
    results = read_results(out)
    assert results["eval_samples"] == 20 and results["eval_samples_mm"] == 30
    # each accuracy is the saved model's on its own file (matched: lines 40-59, mismatched: lines 60-89)
    assert results["eval_accuracy"] == pytest.approx(jsonl_accuracy(out, lines[40:60]))
    assert results["eval_accuracy_mm"] == pytest.approx(jsonl_accuracy(out, lines[60:90]))


def test_a_finished_output_dir_is_not_overwritten_silently(tiny_bert_dir, tmp_path):
    out = tmp_path / "sst2"
    run("sst2", tiny_bert_dir, out)
    before = (out / "all_results.json").read_text()
    with pytest.raises(FileExistsError, match="overwrite_output_dir"):
        run("sst2", tiny_bert_dir, out)
    assert (out / "all_results.json").read_text() == before
    run("sst2", tiny_bert_dir, out, "--overwrite_output_dir")


def test_lr_grid_keeps_the_best_run_on_dev(tiny_bert_dir, tmp_path):
    out = tmp_path / "grid"
    run("sst2", tiny_bert_dir, out, "--lr_grid", "1e-3,1e-6", "--do_train", "--do_eval")
    grid = json.loads(pathlib.Path(out / "lr_grid_results.json").read_text())
    assert [r["learning_rate"] for r in grid["runs"]] == [1e-3, 1e-6]
    best = max(grid["runs"], key=lambda r: r["eval_accuracy"])
    assert grid["best_learning_rate"] == best["learning_rate"]
    assert read_results(out)["eval_accuracy"] == best["eval_accuracy"]
    assert (out / "lr_1e-06" / "all_results.json").is_file()


def test_yaml_config_gives_defaults_and_flags_win(tiny_bert_dir, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(
        f"task: sst2\ndata_dir: {os.path.join(SAMPLES, 'SST-2')}\nmodel_name_or_path: {tiny_bert_dir}\n"
        f"max_train_samples: 16\nlearning_rate: 0.5\n"
    )
    out = tmp_path / "cfg"
    finetune.main(
        [
            "--config",
            str(config),
            "--output_dir",
            str(out),
            "--learning_rate",
            "1e-3",
            "--max_eval_samples",
            "8",
            "--num_train_epochs",
            "1",
            "--save_strategy",
            "no",
            "--do_train",
        ]
    )
    assert read_results(out)["train_samples"] == 16  # from the YAML file
    run_info = json.loads(pathlib.Path(out / "run_info.json").read_text())
    assert run_info["hyperparameters"]["learning_rate"] == 1e-3  # the flag wins over the file's 0.5
    assert (
        run_info["task"] == "sst2"
        and json.loads(pathlib.Path(out / "trainer_state.json").read_text())["num_train_epochs"] == 1
    )


def test_paper_defaults_apply_unless_given():
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments, apply_task_defaults
    from hf_bert_tasks.flags.training import parse_args

    _, data, training = parse_args(
        (ModelArguments, DataArguments, FinetuneTrainingArguments),
        ["--task", "rte", "--output_dir", "x", "--num_train_epochs", "5"],
    )
    apply_task_defaults(get_task("rte"), data, training)
    assert (training.learning_rate, training.per_device_train_batch_size, training.num_train_epochs) == (2e-5, 32, 5.0)
    assert (training.warmup_steps, training.weight_decay, data.max_seq_length) == (0.1, 0.01, 128)


def test_cli_lists_every_task(capsys):
    from hf_bert_tasks import cli, list_tasks

    assert cli.main(["tasks"]) == 0
    out = capsys.readouterr().out
    for name in list_tasks():
        assert f"\n{name} " in out


def test_recipe_script_is_the_same_code_path():
    text = pathlib.Path(REPO, "recipes", "finetune.py").read_text()
    assert "from hf_bert_tasks.finetune.recipe import main" in text


def test_load_best_model_at_end_keeps_the_best_primary_metric_not_the_lowest_loss(
    tmp_path, tiny_bert_dir, monkeypatch
):
    """Without --metric_for_best_model, --load_best_model_at_end selects on the task's primary dev metric (MRPC: F1,
    higher is better), not Trainer's default lowest eval_loss. compute_metrics is replaced by one whose "f1" *is*
    the eval cross-entropy of the logits, so the best-metric checkpoint is the highest-loss one: the two rules
    disagree whenever the epochs' losses differ."""
    import numpy as np
    from scipy.special import log_softmax

    from hf_bert_tasks.tasks.glue import GlueTask

    def cross_entropy_as_metrics(self):
        def compute(pred):
            logp = log_softmax(np.asarray(pred.predictions, dtype=np.float64), axis=-1)
            ce = float(-logp[np.arange(len(pred.label_ids)), pred.label_ids].mean())
            return {"f1": ce, "accuracy": 0.5}

        return compute

    monkeypatch.setattr(GlueTask, "trainer_compute_metrics", cross_entropy_as_metrics)
    out = tmp_path / "best"
    finetune.main(
        [
            "--task",
            "mrpc",
            "--data_dir",
            os.path.join(SAMPLES, "MRPC"),
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--max_train_samples",
            "32",
            "--max_eval_samples",
            "16",
            "--num_train_epochs",
            "3",
            "--per_device_train_batch_size",
            "8",
            "--learning_rate",
            "3e-3",
            "--do_train",
            "--do_eval",
            "--load_best_model_at_end",
            "--save_total_limit",
            "1",
            "--disable_tqdm",
            "true",
            "--report_to",
            "none",
        ]
    )
    with open(out / "trainer_state.json") as f:
        state = json.load(f)
    # the in-training evaluations, one per epoch of 4 steps (the final evaluation of the kept model follows them)
    evals = {e["step"]: e for e in [e for e in state["log_history"] if "eval_f1" in e][:3]}
    assert sorted(evals) == [4, 8, 12]
    best_metric_step = max(evals, key=lambda s: evals[s]["eval_f1"])
    lowest_loss_step = min(evals, key=lambda s: evals[s]["eval_loss"])
    assert best_metric_step != lowest_loss_step  # the two rules disagree on this run
    assert state["best_model_checkpoint"].endswith(f"checkpoint-{best_metric_step}")
    assert state["best_metric"] == pytest.approx(evals[best_metric_step]["eval_f1"])
