"""A published card works where it is read (issue 54): on push its "How to use" loads the repo id, not the local
folder; its pipeline tag is one the installed transformers serves, or the package's registered pipeline, named and
explained (SQuAD: ``extractive-question-answering``); a run resumed from a checkpoint reports its training loss over
all its steps (``checkpoints.loss_over_all_steps``) in its results, its card and its curve. No network: the push
tests render the card a push uploads (``hub.card_for_push``); the round trip against a local Hub is
tests/test_hub.py's."""

import json
import logging
import os
import shutil

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.finetune import card as mc
from hf_bert_tasks.hub.push import card_for_push, files_to_push
from hf_bert_tasks.utils.checkpoints import loss_over_all_steps
from tests.conftest import tiny_run_argv


def _write(folder, name, obj):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))


def _run(tmp_path, task: str, results: dict) -> str:
    out = str(tmp_path / "runs" / task)
    _write(out, "all_results.json", results)
    _write(out, "run_info.json", {"task": task, "model_name_or_path": "runs/pretrained", "seed": 1})
    _write(out, "config.json", {"architectures": ["BertForQuestionAnswering"]})
    _write(out, "model.safetensors", "x")
    return out


# ---------------------------------------------------------------------------------------------- the repo id
def test_a_pushed_card_without_base_model_loads_the_repo_id(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = os.path.relpath(_run(tmp_path, "mrpc", {"eval_f1": 0.5, "eval_accuracy": 0.6}))
    mc.write_finetune_card(out)
    with open(os.path.join(out, "README.md"), encoding="utf-8") as f:
        assert 'model="runs/mrpc"' in f.read()  # the local card: the local folder
    text = card_for_push(out, "me/model", files_to_push(out), {"task": None, "base_model": None})
    assert 'classifier = pipeline("text-classification", model="me/model")' in text
    assert "runs/mrpc" not in text


def test_an_edited_readme_that_loads_the_folder_is_pushed_as_it_is_with_a_warning(tmp_path, caplog):
    out = _run(tmp_path, "mrpc", {"eval_f1": 0.5})
    _write(out, "README.md", f'# mine\n\npipeline(model="{out}")\n')
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.hub.push"):
        assert card_for_push(out, "me/model", [], None) == f'# mine\n\npipeline(model="{out}")\n'
    assert [r.getMessage() for r in caplog.records] == [
        f"{out}/README.md loads the local folder in its usage code, not me/model: change it by hand"
    ]


# ------------------------------------------------------------------------------------------- the pipeline tag
def test_question_answering_is_not_a_pipeline_of_the_installed_transformers():
    """The premise: transformers 5 removed it (pipeline("question-answering") raises): recent 5.x say so, 5.13 (the
    lowest version pyproject.toml allows) calls it an unknown task."""
    from transformers.pipelines import check_task

    removed = "question-answering has been removed from transformers|Unknown task question-answering"
    with pytest.raises(KeyError, match=removed):
        check_task("question-answering")  # what pipeline("question-answering") calls first


def test_a_squad_card_tags_the_packages_pipeline_and_explains_it(tmp_path):
    from huggingface_hub import ModelCard

    out = _run(tmp_path, "squad_v1", {"eval_exact_match": 12.5, "eval_f1": 20.0})
    text = str(mc.build_finetune_card(out, repo_id="me/qa"))
    assert ModelCard(text).data.pipeline_tag == "extractive-question-answering"
    assert (
        'transformers 5 has no `question-answering` pipeline (`pipeline("question-answering")` raises), so this '
        "card's pipeline tag is `extractive-question-answering`: the pipeline `hf_bert_tasks` registers"
    ) in text
    assert 'qa = pipeline("extractive-question-answering", model="me/qa")' in text


def test_a_swag_card_names_no_pipeline_tag_and_says_why(tmp_path):
    from huggingface_hub import ModelCard

    out = _run(tmp_path, "swag", {"eval_accuracy": 0.3})
    text = str(mc.build_finetune_card(out, repo_id="me/swag"))
    assert ModelCard(text).data.pipeline_tag is None and "multiple-choice" in ModelCard(text).data.tags
    assert "No `transformers.pipeline` serves multiple-choice models" in text


# ------------------------------------------------------------------------------------ a resumed run's loss
def test_loss_over_all_steps_weights_each_logged_mean_by_its_steps(tmp_path):
    log = [{"step": 2, "loss": 1.0}, {"step": 4, "loss": 0.5}, {"step": 4, "eval_loss": 9.0}]
    _write(tmp_path, "trainer_state.json", {"global_step": 4, "log_history": log})
    # steps 1-4: 1.0, 1.0, 0.5, 0.5; steps 5-10 (resumed): mean 0.25
    assert loss_over_all_steps(str(tmp_path), 10, 0.25) == {
        "train_loss": pytest.approx((2 * 1.0 + 2 * 0.5 + 6 * 0.25) / 10),
        "train_loss_resumed": 0.25,
        "train_loss_steps": 10,
    }


def test_the_resumed_steps_loss_sum_is_divided_by_the_resumed_steps(tmp_path):
    """Trainer's own train_loss is that sum over the call's steps in transformers 5.25 but over every step in 5.13:
    the sum, when given, decides (steps 5-12 resumed, sum 4.0: mean 0.5), whatever train_loss says."""
    _write(tmp_path, "trainer_state.json", {"global_step": 4, "log_history": [{"step": 4, "loss": 1.0}]})
    whole = loss_over_all_steps(str(tmp_path), 12, 4.0 / 12, resumed_loss_sum=4.0)
    assert whole == {
        "train_loss": pytest.approx((4 * 1.0 + 8 * 0.5) / 12),
        "train_loss_resumed": 0.5,
        "train_loss_steps": 12,
    }


def test_steps_after_the_checkpoints_last_log_are_not_counted(tmp_path):
    _write(tmp_path, "trainer_state.json", {"global_step": 5, "log_history": [{"step": 4, "loss": 1.0}]})
    whole = loss_over_all_steps(str(tmp_path), 9, 0.5)
    assert whole["train_loss_steps"] == 8 and whole["train_loss"] == pytest.approx((4 * 1.0 + 4 * 0.5) / 8)


def test_a_resumed_run_reports_the_uninterrupted_runs_loss_on_results_card_and_curve(tmp_path, tiny_bert_dir):
    from hf_bert_tasks.finetune.record import curve_series

    def flags(out, *extra):
        return tiny_run_argv(
            "mrpc",
            tiny_bert_dir,
            out,
            "--do_train",
            "--do_eval",
            *extra,
            num_train_epochs=2,
            per_device_train_batch_size=8,
            max_train_samples=48,
            max_eval_samples=16,
            learning_rate="1e-3",
            seed=11,
            save_strategy="steps",
            save_steps=4,
            save_total_limit=5,
            eval_strategy="no",
            logging_steps=2,
        )

    whole, resumed = tmp_path / "whole", tmp_path / "resumed"
    assert cli.main(["finetune", *flags(whole)]) == 0
    resumed.mkdir()
    shutil.copytree(whole / "checkpoint-4", resumed / "checkpoint-4")  # as a run killed after step 4 leaves it
    assert cli.main(["finetune", *flags(resumed, "--resume_from_checkpoint", "auto")]) == 0
    results = {r: json.loads((r / "all_results.json").read_text()) for r in (whole, resumed)}
    assert results[resumed]["train_loss"] == pytest.approx(results[whole]["train_loss"], rel=1e-6)
    assert results[resumed]["train_loss_steps"] == 12
    assert results[resumed]["train_loss_resumed"] != pytest.approx(results[whole]["train_loss"], rel=1e-6)
    card = (resumed / "README.md").read_text()
    loss = mc.format_cell(results[whole]["train_loss"])
    assert (
        f"Final training loss {loss} after 12 steps (2.00 epochs; resumed from a checkpoint: the mean over 12" in card
    )
    states = {r: json.loads((r / "trainer_state.json").read_text())["log_history"] for r in (whole, resumed)}
    assert curve_series(states[resumed])["train_loss"][0] == curve_series(states[whole])["train_loss"][0]
    assert curve_series(states[resumed])["train_loss"][0] == [2, 4, 6, 8, 10, 12]
