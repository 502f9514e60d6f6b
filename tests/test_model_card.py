"""Model cards: metrics -> EvalResult -> model-index, the run record written while training, tables, pretraining
card (offline)."""

import json
import math
import os
import re
import socket
from types import SimpleNamespace

import pytest

from hf_bert_tasks import get_task
from hf_bert_tasks.finetune import card as mc
from hf_bert_tasks.finetune.grid import load_seed_runs
from hf_bert_tasks.finetune.record import RunRecordCallback, non_default_arguments
from hf_bert_tasks.hub.cards import card_text, eval_results_from_metrics, model_origin
from hf_bert_tasks.hub.push import (
    build_card,
    card_for_push,
    card_to_upload,
    eval_result_key,
    files_to_push,
    merge_eval_results,
    pop_push_settings,
    push_output_dir,
)
from tests.conftest import REPO, tiny_run_argv


def _squeeze(text: str) -> str:
    """``text`` with runs of spaces made one (``make_markdown_table`` pads cells to the column width)."""
    return re.sub(r" {2,}", " ", text)


def _results(task_name, metrics):
    return [
        (r.dataset_split, r.metric_type, r.metric_value)
        for r in eval_results_from_metrics(get_task(task_name), metrics)
    ]


def _write(folder, name, obj):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))


def test_mnli_matched_and_mismatched_are_two_results():
    got = _results(
        "mnli",
        {
            "eval_accuracy": 0.81,
            "eval_accuracy_mm": 0.8,
            "eval_loss": 0.5,
            "eval_loss_mm": 0.6,
            "eval_samples": 10,
            "eval_samples_mm": 10,
            "train_loss": 0.4,
        },
    )
    assert got == [("validation_matched", "accuracy", 0.81), ("validation_mismatched", "accuracy", 0.8)]


def test_stsb_reports_pearson_and_spearman_with_hub_metric_ids():
    got = _results("stsb", {"eval_spearmanr": 0.85, "eval_pearson": 0.86, "eval_runtime": 1.0})
    assert got == [("validation", "spearmanr", 0.85), ("validation", "pearsonr", 0.86)]


def test_nan_metric_is_left_out_of_model_index():
    assert _results("stsb", {"eval_spearmanr": math.nan, "eval_pearson": 0.5}) == [("validation", "pearsonr", 0.5)]


def test_cola_reports_matthews_correlation():
    assert _results("cola", {"eval_matthews_correlation": 0.52}) == [("validation", "matthews_correlation", 0.52)]


def test_conll_entity_metrics_on_dev_and_test_plus_per_type_extras():
    got = [
        (r.dataset_split, r.metric_type, r.metric_config, r.metric_value)
        for r in eval_results_from_metrics(
            get_task("conll2003"),
            {
                "eval_f1": 0.9,
                "eval_precision": 0.89,
                "eval_recall": 0.91,
                "eval_accuracy": 0.98,
                "eval_LOC_f1": 0.93,
                "eval_f1_test": 0.85,
                "eval_accuracy_test": 0.97,
            },
        )
    ]
    # per-type F1 is the Hub's "f1" told apart by metric_config (the entity type), not an invented id "LOC_f1"
    assert got == [
        ("validation", "f1", None, 0.9),
        ("validation", "precision", None, 0.89),
        ("validation", "recall", None, 0.91),
        ("validation", "accuracy", None, 0.98),
        ("validation", "f1", "LOC", 0.93),
        ("test", "f1", None, 0.85),
        ("test", "accuracy", None, 0.97),
    ]


def test_squad_keeps_exact_match_and_f1_on_the_0_100_scale():
    assert _results("squad_v1", {"eval_exact_match": 80.5, "eval_f1": 88.25}) == [
        ("validation", "f1", 88.25),
        ("validation", "exact_match", 80.5),
    ]


def test_eval_result_carries_dataset_id_config_and_task_type():
    (r,) = eval_results_from_metrics(
        get_task("rte"), {"eval_accuracy": 0.6}, {"id": "nyu-mll/glue", "config": "rte", "revision": "abc123"}
    )
    assert (r.task_type, r.dataset_type, r.dataset_config, r.dataset_split, r.dataset_revision, r.dataset_name) == (
        "text-classification",
        "nyu-mll/glue",
        "rte",
        "validation",
        "abc123",
        "GLUE RTE",
    )


def test_merge_replaces_same_metric_in_place_and_keeps_others():
    task = get_task("mrpc")
    old = eval_results_from_metrics(task, {"eval_f1": 0.8, "eval_accuracy": 0.7})
    extra = eval_results_from_metrics(get_task("mrpc"), {"eval_f1": 0.5})
    extra[0].dataset_split = "test"
    new = eval_results_from_metrics(task, {"eval_f1": 0.9})
    merged = merge_eval_results(old + extra, new)
    assert [(r.dataset_split, r.metric_type, r.metric_value) for r in merged] == [
        ("validation", "f1", 0.9),
        ("validation", "accuracy", 0.7),
        ("test", "f1", 0.5),
    ]


@pytest.fixture
def mrpc_run(tmp_path):
    out = tmp_path / "mrpc"
    _write(
        out,
        "all_results.json",
        {
            "epoch": 3.0,
            "eval_f1": 0.875,
            "eval_accuracy": 0.8,
            "eval_loss": 0.4,
            "eval_samples": 408,
            "train_loss": 0.3,
        },
    )
    _write(
        out,
        "run_info.json",
        {
            "task": "mrpc",
            "model_name_or_path": "bert-base-uncased",
            "base_model": "google-bert/bert-base-uncased",
            "base_model_source": "the Hub id the run started from",
            "dataset": {"id": "nyu-mll/glue", "config": "mrpc", "revision": None, "local_files": True},
            "data_arguments": {"max_seq_length": 128},
            "training_mode": {"mode": "finetune", "strategy": None},
            "seed": 42,
            "hyperparameters": {"learning_rate": 2e-05, "warmup_steps": 0.1},
            "framework_versions": {"transformers": "5.24.0", "torch": "2.13.0"},
        },
    )
    _write(out, "config.json", {"id2label": {"0": "not_equivalent", "1": "equivalent"}})
    _write(out, "model.safetensors", "x")
    return str(out)


def test_finetune_card_round_trips_through_modelcard_parsing(mrpc_run):
    from huggingface_hub import ModelCard

    card = ModelCard(str(mc.build_finetune_card(mrpc_run, repo_id="org/bert-mrpc")))
    data = card.data.to_dict()
    assert (data["base_model"], data["pipeline_tag"], data["library_name"], data["license"], data["datasets"]) == (
        "google-bert/bert-base-uncased",
        "text-classification",
        "transformers",
        "apache-2.0",
        ["nyu-mll/glue"],
    )
    assert [(r.dataset_config, r.dataset_split, r.metric_type, r.metric_value) for r in card.data.eval_results] == [
        ("mrpc", "validation", "f1", 0.875),
        ("mrpc", "validation", "accuracy", 0.8),
    ]
    assert card.data.model_name == "bert-mrpc"


def test_finetune_card_body_has_hyperparameters_seed_versions_paper_and_citation(mrpc_run):
    text = _squeeze(str(mc.build_finetune_card(mrpc_run, repo_id="org/bert-mrpc")))
    assert "| learning_rate | `2e-05` |" in text and "| warmup_steps | `0.1` |" in text
    assert "Seed: 42 (one run)." in text and "- transformers 5.24.0" in text
    assert "| BERT-base | F1 | validation | 87.5 | 88.9 |" in text
    assert "Devlin, Jacob" in text and "**fine-tuning**" in text
    assert "Read from the original task files" in text


def test_a_folder_without_run_info_gets_no_mode_guessed_from_its_files(tmp_path):
    _write(tmp_path, "all_results.json", {"eval_accuracy": 0.6})
    _write(tmp_path, "config.json", {"model_type": "bert_feature_based", "feature_strategy": "sum_last_four"})
    _write(tmp_path, "adapter_config.json", {})  # peft's adapter file: no LoRA guessed either
    text = str(mc.build_finetune_card(str(tmp_path), task="rte"))
    assert "Training mode" not in text and "sum_last_four" not in text and "LoRA" not in text


def test_the_recorded_mode_is_the_cards_mode(mrpc_run):
    info = mc.read_record(mrpc_run)
    info["training_mode"] = {"mode": "feature_based", "strategy": "sum_last_four"}
    _write(mrpc_run, "run_info.json", info)
    text = str(mc.build_finetune_card(mrpc_run))
    assert "**feature-based**" in text and "Feature strategy: `sum_last_four`." in text


def test_base_model_override_wins_over_run_info(mrpc_run):
    card = mc.build_finetune_card(mrpc_run, base_model="org/other")
    assert card.data.base_model == "org/other"


def test_building_a_card_makes_no_network_call(mrpc_run, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network call while building a card")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert len(mc.build_finetune_card(mrpc_run).data.eval_results) == 2


def test_missing_all_results_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="all_results.json: not found"):
        mc.build_finetune_card(str(tmp_path))


def test_malformed_results_json_names_file_and_line(tmp_path):
    _write(tmp_path, "all_results.json", '{\n"eval_f1": 0.5,\n}')
    with pytest.raises(ValueError, match=r"all_results.json: line 3: not valid JSON"):
        mc.build_finetune_card(str(tmp_path), task="mrpc")


def test_seed_runs_render_mean_and_sample_std(mrpc_run):
    runs = [
        {"seed": 1, "metrics": {"eval_f1": 0.8, "eval_accuracy": 0.7}},
        {"seed": 2, "metrics": {"eval_f1": 0.9, "eval_accuracy": 0.7}},
    ]
    text = _squeeze(str(mc.build_finetune_card(mrpc_run, seed_runs=runs)))
    assert "### Over 2 seeds (1, 2)" in text
    assert "| validation | F1 | 0.8500 ± 0.0707 | 2 |" in text


def test_conll_paper_rows_compare_test_f1_with_our_test_split(tmp_path):
    _write(tmp_path, "all_results.json", {"eval_f1": 0.9, "eval_f1_test": 0.85})
    text = _squeeze(str(mc.build_finetune_card(str(tmp_path), task="conll2003")))
    assert "| BERT-base (dev) | F1 | validation | 90.0 | 96.4 |" in text
    assert "| BERT-base (test) | F1 | test | 85.0 | 92.4 |" in text


def test_a_folder_without_the_record_needs_the_task(tmp_path):
    # the task is never guessed from label names (these fit MRPC only)
    _write(tmp_path, "all_results.json", {"eval_f1": 0.5})
    _write(tmp_path, "config.json", {"id2label": {"0": "not_equivalent", "1": "equivalent"}})
    with pytest.raises(ValueError, match=r"no run_info.json names the task .*; pass --task"):
        mc.build_finetune_card(str(tmp_path))


def test_a_folder_without_the_record_gets_a_card_without_its_fields_and_a_warning(tmp_path, caplog):
    _write(tmp_path, "all_results.json", {"eval_f1": 0.5, "eval_accuracy": 0.75})
    _write(tmp_path, "config.json", {"_name_or_path": "acme/parent", "model_type": "bert"})
    card = mc.build_finetune_card(str(tmp_path), task="mrpc")
    assert card.data.base_model is None and len(card.data.eval_results) == 2
    assert "Seed: not recorded (one run)." in card.text
    assert card.text.count("Not recorded by the run.") == 2  # hyperparameters and training log
    assert (
        "run_info.json (written while training by RunRecordCallback)" in caplog.text and "--base_model" in caplog.text
    )


def test_a_push_without_weights_names_the_weights_before_the_missing_record(tmp_path):
    # an older run's folder: no run_info.json (so no task for the card) and no weights; the weights are the blocker
    _write(tmp_path, "all_results.json", {"eval_f1": 0.5})
    with pytest.raises(
        FileNotFoundError, match=r"no \*\.safetensors weights to push \(found \['all_results.json'\]\)"
    ):
        push_output_dir(str(tmp_path), "org/m")  # raised before any network call


@pytest.mark.parametrize(
    "name, folder, expected",
    [
        ("google-bert/bert-base-uncased", False, ("hub", "google-bert/bert-base-uncased")),
        ("runs/pretrain", False, ("hub", "runs/pretrain")),  # no such folder at load time: it was a Hub id
        ("runs/pretrain", True, ("local", None)),  # the folder existed when the model was loaded
        ("../x/model", False, ("local", None)),  # not a valid repo id (validate_repo_id): not from the Hub
        (None, False, ("random", None)),
    ],
)
def test_model_origin_is_decided_by_the_folder_at_load_time(name, folder, expected, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    if folder:
        os.makedirs(name)
    got = model_origin(name)
    assert (got["model_origin"], got["base_model"]) == expected
    assert model_origin(name, "org/given")["base_model"] == "org/given"


def test_a_local_folder_is_recorded_by_its_last_two_path_parts(tmp_path, monkeypatch):
    (tmp_path / "home" / "runs" / "pretrain").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "home")
    assert model_origin("runs/pretrain")["model_name_or_path"] == "runs/pretrain"
    assert model_origin(str(tmp_path / "home" / "runs" / "pretrain"))["model_name_or_path"] == "runs/pretrain"


def _record_run(output_dir, model_name_or_path):
    """What the fine-tune recipe records for a run started from ``model_name_or_path`` (in the current folder)."""
    from transformers import TrainingArguments

    from hf_bert_tasks.finetune.args import DataArguments

    args = TrainingArguments(output_dir=str(output_dir), report_to="none")
    callback = RunRecordCallback(
        get_task("mrpc"), SimpleNamespace(model_name_or_path=model_name_or_path), DataArguments(task="mrpc")
    )
    callback.on_init_end(args, None, None)
    _write(output_dir, "all_results.json", {"eval_f1": 0.5})


def test_a_card_built_from_another_directory_never_names_a_local_path_as_base_model(tmp_path, monkeypatch):
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    # a local folder whose name is also a valid Hub id, whose config names another local folder (older transformers)
    _write(work / "runs" / "pretrain", "config.json", {"_name_or_path": "runs/phase1"})
    elsewhere.mkdir()
    monkeypatch.chdir(work)
    _record_run(tmp_path / "out", "runs/pretrain")
    recorded = {"init": "runs/pretrain", "base_model": model_origin("runs/pretrain")["base_model"]}  # as the recipe
    _write(tmp_path / "pre", "pretraining_summary.json", {"model": recorded})
    _write(tmp_path / "old_pre", "pretraining_summary.json", {"model": {"init": "runs/pretrain"}})  # records no origin
    for folder in (work, elsewhere):
        monkeypatch.chdir(folder)
        card = build_card(str(tmp_path / "out"), repo_id="org/m")
        assert card.data.base_model is None and "huggingface.co/runs" not in card.text, folder
        for pre in ("pre", "old_pre"):
            assert build_card(str(tmp_path / pre)).data.base_model is None, (folder, pre)
    # control: the same name with no such folder when the model was loaded is a Hub id, named from any folder
    monkeypatch.chdir(elsewhere)
    _record_run(tmp_path / "hub_run", "runs/pretrain")
    monkeypatch.chdir(work)
    assert build_card(str(tmp_path / "hub_run")).data.base_model == "runs/pretrain"


def test_no_pickle_is_loaded_from_an_output_folder(tmp_path, capsys):
    import torch

    marker = tmp_path / "unpickled.marker"

    class Trap:  # unpickling it calls open(marker, "w"): the marker file appears
        def __reduce__(self):
            return open, (str(marker), "w")

    out = tmp_path / "run"
    _write(out, "all_results.json", {"eval_f1": 0.5, "eval_accuracy": 0.75})
    _write(out, "model.safetensors", "x")
    torch.save(Trap(), out / "training_args.bin")  # no run_info.json: the old card code read this pickle instead
    from hf_bert_tasks.scripts import push

    build_card(str(out), task="mrpc")
    load_seed_runs([str(out), str(out)])
    _write(out, "run_info.json", {"task": "mrpc"})  # push renders a card only from a record
    assert push.main([str(out), "--repo_id", "org/m", "--task", "mrpc", "--dry_run"]) == 0
    assert "training_args.bin" not in files_to_push(str(out))
    assert not marker.exists()
    torch.load(out / "training_args.bin", weights_only=False)  # control: the trap does fire when unpickled
    assert marker.exists()


def test_the_package_source_never_unpickles():
    offenders = []
    for root, _, names in os.walk(os.path.join(REPO, "hf_bert_tasks")):
        for name in (n for n in names if n.endswith(".py")):
            with open(os.path.join(root, name), encoding="utf-8") as f:
                source = f.read()
            offenders += [
                (name, hit) for hit in re.findall(r"torch\.load\(|pickle\.loads?\(|weights_only\s*=\s*False", source)
            ]
    assert offenders == []


def test_the_record_is_written_while_training(tiny_bert_dir, tmp_path, monkeypatch):
    from hf_bert_tasks.finetune import recipe as finetune

    snapshots = []

    def snapshot(self, args, state, control, **kwargs):  # after each optimizer step, before that step's log
        with open(os.path.join(args.output_dir, "run_info.json"), encoding="utf-8") as f:
            snapshots.append((state.global_step, json.load(f)))

    monkeypatch.setattr(RunRecordCallback, "on_step_end", snapshot)
    out = tmp_path / "mrpc"
    finetune.main(
        tiny_run_argv(
            "mrpc",
            tiny_bert_dir,
            out,
            "--do_train",
            "--do_eval",
            max_train_samples=16,
            max_eval_samples=8,
            per_device_train_batch_size=8,
            num_train_epochs=1,
            learning_rate="1e-3",
            logging_steps=1,
            eval_strategy="steps",
            eval_steps=1,
        )
    )
    assert [step for step, _ in snapshots] == [1, 2]
    first, second = snapshots[0][1], snapshots[1][1]
    assert first["task"] == "mrpc" and first["hyperparameters"]["learning_rate"] == 1e-3
    assert first["hyperparameters"]["train_batch_size"] == 8 and first["seed"] == 42
    assert first["model_origin"] == "local" and first["base_model"] is None
    assert "log_history" not in first  # step 1 was not logged yet
    # by step 2, step 1's training loss and evaluation were recorded, before any card exists
    assert [e["step"] for e in second["log_history"] if "loss" in e] == [1]
    assert [e["step"] for e in second["log_history"] if "eval_f1" in e] == [1]
    assert set(second["metrics"]) >= {"eval_f1", "eval_accuracy", "eval_loss"}
    final = json.loads((out / "run_info.json").read_text())
    assert any("train_loss" in e for e in final["log_history"])
    assert "| Training Loss | Epoch | Step | Validation Loss |" in _squeeze(build_card(str(out)).text)


def test_a_finetune_run_writes_its_card_whose_model_index_is_its_all_results(tiny_bert_dir, tmp_path):
    from huggingface_hub import ModelCard

    from hf_bert_tasks.finetune import recipe as finetune
    from hf_bert_tasks.hub.cards import readme_edited

    out = tmp_path / "mrpc"
    finetune.main(
        tiny_run_argv("mrpc", tiny_bert_dir, out, max_train_samples=16, max_eval_samples=8, num_train_epochs=1)
    )
    results = json.loads((out / "all_results.json").read_text())
    card = ModelCard.load(out / "README.md")
    got = sorted((r.dataset_split, r.dataset_args, r.metric_type, r.metric_value) for r in card.data.eval_results)
    assert results["examples_scored"] == 8
    assert got == [
        ("validation[:8]", {"num_examples": 8}, "accuracy", round(results["eval_accuracy"], 6)),
        ("validation[:8]", {"num_examples": 8}, "f1", round(results["eval_f1"], 6)),
    ]
    assert "**fine-tuning**" in card.text and "| learning_rate |" in _squeeze(card.text)
    assert not readme_edited((out / "README.md").read_text(encoding="utf-8"))


def test_write_card_keeps_a_readme_the_user_edited(mrpc_run, caplog):
    _write(mrpc_run, "README.md", "# my own notes\n")
    assert mc.write_finetune_card(mrpc_run) is None
    with open(os.path.join(mrpc_run, "README.md"), encoding="utf-8") as f:
        assert f.read() == "# my own notes\n"
    assert "README.md was edited or not written by hf_bert_tasks: kept" in caplog.text


def test_write_card_replaces_the_card_an_earlier_run_wrote(mrpc_run):
    from huggingface_hub import ModelCard

    mc.write_finetune_card(mrpc_run)
    _write(mrpc_run, "all_results.json", {"eval_f1": 0.5, "eval_accuracy": 0.25})
    path = mc.write_finetune_card(mrpc_run)
    assert [(r.metric_type, r.metric_value) for r in ModelCard.load(path).data.eval_results] == [
        ("f1", 0.5),
        ("accuracy", 0.25),
    ]


def test_push_uploads_the_runs_card_rendered_for_the_repo_id(mrpc_run):
    """The card the run wrote loads the local folder; the pushed one loads the repo id (issue 54), nothing else
    rendered differently but the name and the file list."""
    mc.write_finetune_card(mrpc_run)
    with open(os.path.join(mrpc_run, "README.md"), encoding="utf-8") as f:
        local = f.read()
    text = card_for_push(mrpc_run, "org/m", files_to_push(mrpc_run), {"task": None, "license": None})
    assert f'model="{mrpc_run}"' in local and 'model="org/m"' in text and str(mrpc_run) not in text
    assert text == card_text(mc.build_finetune_card(mrpc_run, repo_id="org/m", files=files_to_push(mrpc_run)))
    assert card_to_upload(None, text) == text  # no card on the Hub yet
    assert card_to_upload(text, text) == text  # the Hub's results all replaced by the same keys


def test_push_of_a_folder_without_card_or_record_names_the_folder_and_both_files(tmp_path):
    _write(tmp_path, "all_results.json", {"eval_f1": 0.5})
    _write(tmp_path, "model.safetensors", "x")
    _write(tmp_path, "config.json", {"model_type": "bert_feature_based"})
    with pytest.raises(FileNotFoundError, match=rf"^{re.escape(str(tmp_path))}: no README.md .* no run_info.json"):
        push_output_dir(str(tmp_path), "org/m")  # raised before any network call


def test_card_flags_render_the_runs_unedited_card_again(mrpc_run):
    from huggingface_hub import ModelCard

    mc.write_finetune_card(mrpc_run)
    text = card_for_push(mrpc_run, "org/m", [], {"base_model": "org/base"})
    assert ModelCard(text).data.base_model == "org/base"


def test_card_flags_for_an_edited_readme_are_refused(mrpc_run):
    _write(mrpc_run, "README.md", "# my own notes\n")
    with pytest.raises(ValueError, match=r"README.md was edited, so --base_model cannot be applied to it"):
        card_for_push(mrpc_run, "org/m", [], {"base_model": "org/base", "task": None})


def test_non_default_arguments_never_include_the_token(tmp_path):
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    args = FinetuneTrainingArguments(output_dir=str(tmp_path), learning_rate=3e-5, hub_token="hf_secret")
    diff = non_default_arguments(args)
    assert diff["learning_rate"] == 3e-5 and diff["weight_decay"] == 0.01
    assert "hub_token" not in diff and "hf_secret" not in json.dumps(diff) and "output_dir" not in diff


def test_pop_push_settings_turns_trainer_push_off_and_removes_the_token(tmp_path):
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    args = FinetuneTrainingArguments(
        output_dir=str(tmp_path), push_to_hub=True, hub_model_id="org/m", hub_token="hf_secret"
    )
    push = pop_push_settings(args)
    assert push == {"repo_id": "org/m", "private": False, "revision": None, "token": "hf_secret"}
    assert args.push_to_hub is False and args.hub_token is None


def test_push_to_hub_without_model_id_is_an_error(tmp_path):
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    args = FinetuneTrainingArguments(output_dir=str(tmp_path), push_to_hub=True)
    with pytest.raises(ValueError, match="--push_to_hub needs --hub_model_id"):
        pop_push_settings(args)


def test_files_to_push_skip_pickles_checkpoints_and_local_readme(tmp_path):
    for name in (
        "model.safetensors",
        "config.json",
        "training_args.bin",
        "README.md",
        "all_results.json",
        "MRPC.tsv",
        "optimizer.pt",
        "comparison.png",
        "vocab.txt",
    ):
        _write(tmp_path, name, "x")
    (tmp_path / "checkpoint-10").mkdir()
    assert files_to_push(str(tmp_path)) == [
        "MRPC.tsv",
        "all_results.json",
        "comparison.png",
        "config.json",
        "model.safetensors",
        "vocab.txt",
    ]


def test_pretraining_card_reports_mlm_and_nsp_accuracy_without_local_paths(tmp_path):
    _write(
        tmp_path,
        "pretraining_summary.json",
        {
            "corpus": {
                "files": ["/secret/home/corpus.txt"],
                "documents": 10,
                "train_documents": 9,
                "eval_documents": 1,
                "sentences": 100,
                "document_boundary": "blank",
            },
            "model": {"preset": "tiny", "overrides": {}, "vocab_size": 1000, "init": "random"},
            "tokenizer": "WordPiece",
            "objective": "MLM + NSP (BertForPreTraining)",
            "seed": 0,
            "phases": [
                {
                    "phase": 1,
                    "max_seq_length": 128,
                    "steps": 50,
                    "batch_size": 8,
                    "learning_rate": 1e-4,
                    "train_instances": 200,
                    "final_eval": {"eval_mlm_accuracy": 0.2, "eval_nsp_accuracy": 0.6},
                }
            ],
            "steps": 50,
            "masking_recipe": {"mlm_probability": 0.15, "mask/random/keep": [0.8, 0.1, 0.1]},
            "final_mlm_accuracy": 0.2,
            "final_nsp_accuracy": 0.6,
        },
    )
    card = build_card(str(tmp_path), repo_id="org/tiny-pretrained")
    text = _squeeze(str(card))
    assert [(r.metric_name, r.metric_value) for r in card.data.eval_results] == [
        ("MLM accuracy", 0.2),
        ("NSP accuracy", 0.6),
    ]
    assert len({eval_result_key(r) for r in card.data.eval_results}) == 2  # a re-push keeps both
    assert card.data.pipeline_tag == "fill-mask" and card.data.base_model is None
    assert "`corpus.txt`" in text and "/secret/home" not in text
    assert "| mlm_probability | 0.1500 |" in text


def test_push_dry_run_prints_the_card_and_files(mrpc_run, capsys):
    from hf_bert_tasks.scripts import push

    assert push.main([mrpc_run, "--repo_id", "org/bert-mrpc", "--dry_run"]) == 0
    printed = capsys.readouterr().out
    assert "model-index:" in printed and "files to push: all_results.json, config.json, model.safetensors" in printed


def test_push_rejects_a_malformed_repo_id(mrpc_run):
    from hf_bert_tasks.scripts import push

    with pytest.raises(ValueError, match="expected 'org/name'"):
        push.main([mrpc_run, "--repo_id", "no-namespace", "--dry_run"])


@pytest.mark.parametrize(
    "repo_id, rule",
    [
        ("org/na--me", "Cannot have -- or .."),
        ("org/name.git", "cannot end by '.git'"),
        ("org/-name", "alphanumeric chars"),
    ],
)
def test_check_repo_id_applies_huggingface_hubs_own_rules(repo_id, rule):
    from hf_bert_tasks.hub.push import check_repo_id

    assert check_repo_id("org/name-1.2_x") == "org/name-1.2_x"
    with pytest.raises(
        ValueError, match=rf"--repo_id '{re.escape(repo_id)}': expected 'org/name' \(.*{re.escape(rule)}"
    ):
        check_repo_id(repo_id)
