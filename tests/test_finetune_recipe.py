"""The fine-tune recipe end to end on the built-in samples with a tiny BERT (metric keys, files, pipeline round trip)."""

import json
import os

import pytest

from hf_bert_tasks.scripts import finetune
from tests.conftest import REPO, SAMPLES

FAST = ["--max_train_samples", "64", "--max_eval_samples", "32", "--max_predict_samples", "8",
        "--num_train_epochs", "1", "--per_device_train_batch_size", "16", "--learning_rate", "1e-3",
        "--save_strategy", "no", "--disable_tqdm", "true", "--report_to", "none"]


def run(task, folder, model_dir, out, *extra):
    return finetune.main(["--task", task, "--data_dir", os.path.join(SAMPLES, folder), "--model_name_or_path",
                          model_dir, "--output_dir", str(out), *FAST, *extra])


def read_results(out):
    with open(os.path.join(out, "all_results.json")) as f:
        return json.load(f)


def test_mrpc_writes_metrics_model_and_glue_submission(tiny_bert_dir, tmp_path):
    from transformers import pipeline

    out = tmp_path / "mrpc"
    run("mrpc", "MRPC", tiny_bert_dir, out)
    results = read_results(out)
    assert {"eval_f1", "eval_accuracy", "eval_loss", "eval_samples", "train_loss", "train_samples"} <= set(results)
    assert results["eval_samples"] == 32 and results["train_samples"] == 64
    for name in ("config.json", "model.safetensors", "tokenizer.json", "train_results.json", "eval_results.json"):
        assert (out / name).is_file(), name
    lines = (out / "MRPC.tsv").read_text().splitlines()
    assert lines[0] == "index\tprediction" and len(lines) == 9
    assert all(line.split("\t")[1] in ("0", "1") for line in lines[1:])
    clf = pipeline("text-classification", model=str(out))
    assert clf({"text": "anna fixed a clock .", "text_pair": "a clock was fixed ."})["label"] in ("equivalent", "not_equivalent")


def test_stsb_is_regression_and_the_pipeline_returns_a_score(tiny_bert_dir, tmp_path):
    from transformers import AutoConfig, pipeline

    out = tmp_path / "stsb"
    run("stsb", "STS-B", tiny_bert_dir, out)
    results = read_results(out)
    assert {"eval_pearson", "eval_spearmanr"} <= set(results)
    config = AutoConfig.from_pretrained(out)
    assert config.problem_type == "regression" and config.num_labels == 1
    pred = pipeline("text-classification", model=str(out))({"text": "anna fixed a clock .", "text_pair": "a clock ."})
    assert pred["label"] == "LABEL_0" and isinstance(pred["score"], float)


def test_mnli_reports_matched_accuracy_from_jsonl(tiny_bert_dir, tmp_path):
    out = tmp_path / "mnli"
    run("mnli", "MNLI", tiny_bert_dir, out)
    results = read_results(out)
    assert "eval_accuracy" in results and results["eval_samples"] == 32
    assert json.load(open(out / "config.json"))["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}


def test_mnli_mismatched_metrics_get_the_mm_suffix(tiny_bert_dir, tmp_path):
    data = tmp_path / "mnli_data"
    data.mkdir()
    lines = open(os.path.join(SAMPLES, "MNLI", "dev_matched.jsonl")).read().splitlines()
    (data / "train.jsonl").write_text("\n".join(lines[:40]) + "\n")
    (data / "dev_matched.jsonl").write_text("\n".join(lines[40:60]) + "\n")
    (data / "dev_mismatched.jsonl").write_text("\n".join(lines[60:90]) + "\n")
    out = tmp_path / "mnli_mm"
    finetune.main(["--task", "mnli", "--data_dir", str(data), "--model_name_or_path", tiny_bert_dir,
                   "--output_dir", str(out), *FAST])
    results = read_results(out)
    assert results["eval_samples"] == 20 and results["eval_samples_mm"] == 30
    assert "eval_accuracy" in results and "eval_accuracy_mm" in results


def test_a_finished_output_dir_is_not_overwritten_silently(tiny_bert_dir, tmp_path):
    out = tmp_path / "sst2"
    run("sst2", "SST-2", tiny_bert_dir, out)
    before = (out / "all_results.json").read_text()
    with pytest.raises(FileExistsError, match="overwrite_output_dir"):
        run("sst2", "SST-2", tiny_bert_dir, out)
    assert (out / "all_results.json").read_text() == before
    run("sst2", "SST-2", tiny_bert_dir, out, "--overwrite_output_dir")


def test_lr_grid_keeps_the_best_run_on_dev(tiny_bert_dir, tmp_path):
    out = tmp_path / "grid"
    run("sst2", "SST-2", tiny_bert_dir, out, "--lr_grid", "1e-3,1e-6", "--do_train", "--do_eval")
    grid = json.load(open(out / "lr_grid_results.json"))
    assert [r["learning_rate"] for r in grid["runs"]] == [1e-3, 1e-6]
    best = max(grid["runs"], key=lambda r: r["eval_accuracy"])
    assert grid["best_learning_rate"] == best["learning_rate"]
    assert read_results(out)["eval_accuracy"] == best["eval_accuracy"]
    assert (out / "lr_1e-06" / "all_results.json").is_file()


def test_yaml_config_gives_defaults_and_flags_win(tiny_bert_dir, tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(f"task: sst2\ndata_dir: {os.path.join(SAMPLES, 'SST-2')}\nmodel_name_or_path: {tiny_bert_dir}\n"
                      f"max_train_samples: 16\nlearning_rate: 0.5\n")
    out = tmp_path / "cfg"
    finetune.main(["--config", str(config), "--output_dir", str(out), "--learning_rate", "1e-3",
                   "--max_eval_samples", "8", "--num_train_epochs", "1", "--save_strategy", "no", "--do_train"])
    args = json.load(open(out / "trainer_state.json"))
    assert read_results(out)["train_samples"] == 16
    assert args["log_history"] is not None


def test_paper_defaults_apply_unless_given():
    from hf_bert_tasks.arguments import DataArguments, FinetuneTrainingArguments, ModelArguments, apply_task_defaults, parse_args
    from hf_bert_tasks import get_task

    _, data, training = parse_args((ModelArguments, DataArguments, FinetuneTrainingArguments),
                                   ["--task", "rte", "--output_dir", "x", "--num_train_epochs", "5"])
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
    text = open(os.path.join(REPO, "recipes", "finetune.py")).read()
    assert "from hf_bert_tasks.scripts.finetune import main" in text
