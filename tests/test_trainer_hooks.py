"""Evaluation through Trainer's public hooks (issue 40) and one evaluation / one copy of the model (issue 44 item 5):
each fault with its own test, the expected values recomputed from the written prediction files or from literals."""

import json
import os

import numpy as np
import pytest
from transformers import EvalPrediction

from hf_bert_tasks import cli
from hf_bert_tasks.tasks.metrics import TaskMetrics, join_batches
from tests.conftest import SAMPLES

MRPC = os.path.join(SAMPLES, "MRPC")
SMALL = [
    "--max_train_samples",
    "16",
    "--max_eval_samples",
    "10",
    "--max_predict_samples",
    "4",
    "--max_seq_length",
    "48",
    "--per_device_train_batch_size",
    "4",
    "--per_device_eval_batch_size",
    "3",
    "--report_to",
    "none",
    "--disable_tqdm",
    "True",
    "--seed",
    "3",
]


def finetune(capsys, out, *extra, task="mrpc", data=MRPC, model):
    status = cli.main(
        [
            "finetune",
            "--task",
            task,
            "--data_dir",
            data,
            "--model_name_or_path",
            model,
            "--output_dir",
            str(out),
            *SMALL,
            *extra,
        ]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err[-3000:]
    with open(os.path.join(out, "all_results.json")) as f:
        return json.load(f), captured


def tsv_rows(path):
    with open(path) as f:
        header, *rows = [line.split("\t") for line in f.read().splitlines()]
    return [dict(zip(header, row)) for row in rows]


def accuracy_of_file(path) -> float:
    rows = tsv_rows(path)
    return sum(r["prediction"] == r["label"] for r in rows) / len(rows)


# ------------------------------------------------------------------------------------------ unit: joins, metrics


def test_join_batches_pads_a_ragged_second_dimension_with_minus_100():
    joined = join_batches([np.array([[1, 2]]), np.array([[3, 4, 5], [6, 7, 8]])])
    assert joined.tolist() == [[1, 2, -100], [3, 4, 5], [6, 7, 8]]
    start, end = join_batches(
        [(np.array([[1.0]]), np.array([[2.0]])), (np.array([[3.0, 4.0]]), np.array([[5.0, 6.0]]))]
    )
    assert start.tolist() == [[1.0, -100.0], [3.0, 4.0]] and end.tolist() == [[2.0, -100.0], [5.0, 6.0]]
    assert join_batches(None) is None


def test_task_metrics_scores_the_whole_split_also_batch_by_batch():
    seen = []

    def score(predictions, labels):
        seen.append((predictions.tolist(), labels.tolist()))
        return {"n": len(labels)}

    metrics = TaskMetrics(score)
    assert (
        metrics(EvalPrediction(predictions=np.array([1, 2]), label_ids=np.array([0, 1])), compute_result=False) == {}
    )
    assert metrics(EvalPrediction(predictions=np.array([3]), label_ids=np.array([1])), compute_result=True) == {"n": 3}
    assert seen == [([1, 2, 3], [0, 1, 1])]
    # separate batches without compute_result (--eval_do_concat_batches False): joined, then scored once
    assert metrics(
        EvalPrediction(predictions=[np.array([1]), np.array([0])], label_ids=[np.array([1]), np.array([1])])
    ) == {"n": 2}


# ---------------------------------------------------------------------------------------- recipe, end to end


def test_drop_last_never_drops_dev_rows(capsys, tmp_path, tiny_bert_dir):
    # 10 dev rows in batches of 3: a dropped last batch would leave 9
    results, _ = finetune(
        capsys, tmp_path / "o", "--dataloader_drop_last", "True", "--max_steps", "3", model=tiny_bert_dir
    )
    path = tmp_path / "o" / "validation_predictions.tsv"
    assert len(tsv_rows(path)) == 10 and results["eval_samples"] == 10
    assert results["eval_accuracy"] == pytest.approx(accuracy_of_file(path))


@pytest.mark.parametrize("flag", [("--eval_do_concat_batches", "False"), ("--batch_eval_metrics", "True")])
def test_separate_batches_and_batch_metrics_score_like_whole_split(capsys, tmp_path, tiny_bert_dir, flag):
    plain, _ = finetune(
        capsys,
        tmp_path / "plain",
        "--max_steps",
        "2",
        "--eval_strategy",
        "steps",
        "--eval_steps",
        "1",
        model=tiny_bert_dir,
    )
    other, _ = finetune(
        capsys,
        tmp_path / "other",
        "--max_steps",
        "2",
        "--eval_strategy",
        "steps",
        "--eval_steps",
        "1",
        *flag,
        model=tiny_bert_dir,
    )
    path = tmp_path / "other" / "validation_predictions.tsv"
    assert other["eval_accuracy"] == pytest.approx(accuracy_of_file(path))
    assert other["eval_accuracy"] == pytest.approx(plain["eval_accuracy"])
    assert other["eval_f1"] == pytest.approx(plain["eval_f1"])
    with open(tmp_path / "other" / "trainer_state.json") as f:
        during = [e for e in json.load(f)["log_history"] if e.get("step") == 1 and "eval_f1" in e]
    assert len(during) == 1  # the in-training evaluation has its metric too


def test_prediction_loss_only_gives_the_loss_says_so_and_writes_no_predictions(
    capsys, caplog, tmp_path, tiny_bert_dir
):
    results, _ = finetune(
        capsys, tmp_path / "o", "--prediction_loss_only", "True", "--max_steps", "2", model=tiny_bert_dir
    )
    assert "eval_loss" in results and "eval_accuracy" not in results and "eval_f1" not in results
    assert not [n for n in os.listdir(tmp_path / "o") if "predictions" in n or n == "MRPC.tsv"]
    assert "--prediction_loss_only: evaluation reports the loss only" in caplog.text


def test_the_final_evaluation_runs_once_and_the_run_ends_with_its_folder(capsys, tmp_path, tiny_bert_dir):
    _, captured = finetune(
        capsys,
        tmp_path / "o",
        "--max_steps",
        "4",
        "--eval_strategy",
        "steps",
        "--eval_steps",
        "2",
        model=tiny_bert_dir,
    )
    with open(tmp_path / "o" / "trainer_state.json") as f:
        evals = [e["step"] for e in json.load(f)["log_history"] if "eval_f1" in e]
    assert evals == [2, 4]  # step 2 in training; step 4 once (the final evaluation, not also Trainer's)
    assert captured.out.count("'eval_f1'") == 2  # each evaluation printed once
    assert captured.out.rstrip().splitlines()[-1] == f"outputs in {tmp_path / 'o'}"


def test_no_second_copy_of_the_model_unless_checkpoints_were_asked_for(capsys, tmp_path, tiny_bert_dir):
    finetune(capsys, tmp_path / "default", "--max_steps", "2", model=tiny_bert_dir)
    assert not [n for n in os.listdir(tmp_path / "default") if n.startswith("checkpoint-")]
    assert os.path.isfile(tmp_path / "default" / "model.safetensors")
    finetune(
        capsys,
        tmp_path / "asked",
        "--max_steps",
        "2",
        "--save_strategy",
        "steps",
        "--save_steps",
        "1",
        model=tiny_bert_dir,
    )
    assert sorted(n for n in os.listdir(tmp_path / "asked") if n.startswith("checkpoint-")) == ["checkpoint-2"]


def test_squad_evaluates_f1_during_training_and_keeps_the_best_checkpoint_by_f1(capsys, tmp_path, tiny_bert_dir):
    from tests.test_squad_recipe import write_folder

    data = write_folder(tmp_path, "1.1")
    out = tmp_path / "squad"
    results, _ = finetune(
        capsys,
        out,
        "--max_steps",
        "6",
        "--eval_strategy",
        "steps",
        "--eval_steps",
        "2",
        "--save_strategy",
        "steps",
        "--save_steps",
        "2",
        "--load_best_model_at_end",
        "True",
        "--learning_rate",
        "3e-3",
        "--max_seq_length",
        "64",
        "--max_query_length",
        "16",
        "--doc_stride",
        "24",
        task="squad_v1",
        data=data,
        model=tiny_bert_dir,
    )
    with open(out / "trainer_state.json") as f:
        state = json.load(f)
    during = {e["step"]: e["eval_f1"] for e in state["log_history"] if "eval_f1" in e and e["step"] < 6}
    assert sorted(during) == [2, 4]
    at_six = [e["eval_f1"] for e in state["log_history"] if "eval_f1" in e and e["step"] == 6]
    best_step = int(state["best_model_checkpoint"].rsplit("-", 1)[1])
    scores = {**during, 6: at_six[0]}
    assert state["best_metric"] == pytest.approx(max(scores.values()))
    assert scores[best_step] == pytest.approx(max(scores.values()))
    # the final evaluation scores the loaded best model: its F1 is the best one
    assert results["eval_f1"] == pytest.approx(state["best_metric"])
