"""``--padding_free`` through the command line (``hf-bert-tasks finetune`` / ``pretrain``, in process: the CLI's
``main``): for every task family of the registry (one task per problem type, tiny files of its own format) and for
pretraining, ``--padding_free true`` and ``false`` each train 2 steps, evaluate and save; the padding-free run's
batches hold only real tokens (Trainer's ``num_input_tokens_seen`` counts ``input_ids`` elements: fewer than the
padded run's on the same batches) and its saved model is a plain checkpoint. LoRA takes the flag; the feature-based
mode refuses it with one line naming it."""

from __future__ import annotations

import json
import math
import os

import pytest

from hf_bert_tasks import cli
from tests.test_contract_task_mode import COMMON, data_dirs, tiny_model_dir  # noqa: F401 - fixtures
from tests.test_padding_free import FAMILIES
from tests.test_pretrain_recipe import FAST, SIZE, corpus  # noqa: F401 - fixture

#: every run counts the tokens of its batches (``input_ids`` elements: real ones only when padding-free)
TOKENS = ["--include_num_input_tokens_seen", "true"]  # "all"


def _state(out) -> dict:
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        return json.load(f)


def _tokens_seen(out) -> int:
    return max(h.get("num_input_tokens_seen", 0) for h in _state(out)["log_history"])


def _finetune(name, model, data_dir, out, padding_free: bool, *extra) -> int:
    argv = ["finetune", "--task", name, "--data_dir", data_dir, "--model_name_or_path", model, "--output_dir", out]
    argv += [*COMMON, *TOKENS, "--save_strategy", "no", "--report_to", "none", "--no_group_by_length"]
    return cli.main([*argv, "--train_sampling_strategy", "sequential", "--padding_free", str(padding_free), *extra])


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family_runs(request, tmp_path_factory, tiny_model_dir, data_dirs):  # noqa: F811 - the imported fixtures
    """``(task name, {padding_free: output folder})`` of one family's two runs (same data, order and seed)."""
    name = FAMILIES[request.param]
    outs = {}
    for padding_free in (False, True):
        out = str(tmp_path_factory.mktemp(f"{name}-pf{int(padding_free)}"))
        assert _finetune(name, tiny_model_dir, data_dirs(name), out, padding_free) == 0
        outs[padding_free] = out
    return name, outs


def test_each_family_trains_evaluates_and_saves_with_and_without_padding_free(family_runs):
    name, outs = family_runs
    for padding_free, out in outs.items():
        assert _state(out)["global_step"] == 2, (name, padding_free)
        with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
            results = json.load(f)
        assert math.isfinite(results["train_loss"]) and any(k.startswith("eval_") for k in results), results
        with open(os.path.join(out, "run_info.json"), encoding="utf-8") as f:  # the run record
            assert json.load(f)["hyperparameters"].get("padding_free", False) is padding_free  # non-defaults only


def test_padding_free_run_feeds_only_real_tokens_and_saves_a_plain_checkpoint(family_runs):
    name, outs = family_runs
    assert 0 < _tokens_seen(outs[True]) < _tokens_seen(outs[False]), name
    with open(os.path.join(outs[True], "config.json"), encoding="utf-8") as f:
        assert "hf_bert_tasks" not in f.read()


def test_lora_takes_padding_free(tmp_path, tiny_model_dir, data_dirs):  # noqa: F811
    name = FAMILIES["single_label_classification"]
    out = str(tmp_path / "lora")
    lora = ["--mode", "lora", "--lora_r", "2", "--lora_alpha", "4"]
    assert _finetune(name, tiny_model_dir, data_dirs(name), out, True, *lora) == 0
    assert _state(out)["global_step"] == 2
    with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
        assert "hf_bert_tasks" not in f.read()


def test_feature_based_mode_refuses_padding_free(tmp_path, tiny_model_dir, data_dirs, capsys):  # noqa: F811
    name = FAMILIES["single_label_classification"]
    code = _finetune(name, tiny_model_dir, data_dirs(name), str(tmp_path / "fb"), True, "--mode", "feature_based")
    assert code != 0
    assert "--padding_free: not with --mode feature_based" in capsys.readouterr().err


@pytest.mark.parametrize("padding_free", [False, True])
def test_pretrain_trains_with_and_without_padding_free(padding_free, corpus, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    argv = ["pretrain", "--train_files", corpus, "--output_dir", str(out), "--vocab_size", "120"]
    argv += ["--max_seq_length", "32", "--max_steps", "2", *SIZE, *FAST, *TOKENS, "--padding_free", str(padding_free)]
    assert cli.main(argv) == 0
    state = _state(out)
    assert state["global_step"] == 2
    evals = [h for h in state["log_history"] if "eval_mlm_accuracy" in h]
    assert evals and math.isfinite(evals[-1]["eval_loss"])
    with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
        assert "hf_bert_tasks" not in f.read()
