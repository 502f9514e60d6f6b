"""A training mode defined here, outside the package, registers its own flag with one call
(``register_training_mode(mode, arguments_class)``): the flag joins the ``finetune`` command line, the recipe reads
its value, and a bad value or an unknown flag is one ``error:`` line, exit status 2."""

import json
import os
from dataclasses import dataclass, field

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.modes import TrainingMode, mode_arguments_class, register_training_mode, unregister_training_mode
from tests.conftest import SAMPLES, tiny_run_argv


@dataclass
class TopLayersArguments:
    """The toy mode's flag."""

    bounds = (("train_top_layers", 1, None, "a positive integer"),)

    train_top_layers: int = field(default=1, metadata={"help": "top_layers: encoder layers trained (from the top)."})


class TopLayersMode(TrainingMode):
    """Fine-tunes only the top ``--train_top_layers`` encoder layers and the task head."""

    name = "top_layers"
    help = "top encoder layers and head only"

    def build_model(self, task, model_args, training_args):
        from hf_bert_tasks.modes import load_task_model

        model = load_task_model(task, model_args)
        layers = model.config.num_hidden_layers
        trained = {f"bert.encoder.layer.{i}." for i in range(layers - training_args.train_top_layers, layers)}
        for name, p in model.named_parameters():
            p.requires_grad = name.startswith(("classifier.", "bert.pooler.", *trained))
        return model

    def variant(self, training_args):
        return f"top{training_args.train_top_layers}"


@pytest.fixture
def top_layers():
    mode = register_training_mode(TopLayersMode(), TopLayersArguments)
    yield mode
    unregister_training_mode(mode.name)


def finetune_argv(out, model, *extra):
    """``finetune``: 2 steps of 4 on 8 pairs of the MRPC sample, then ``extra``."""
    sizes = {"max_train_samples": 8, "max_eval_samples": 8, "max_steps": 2, "per_device_train_batch_size": 4}
    return ["finetune", *tiny_run_argv("mrpc", model, out, *extra, **sizes)]


def test_the_flags_class_is_registered_with_the_mode(top_layers):
    assert mode_arguments_class("top_layers") is TopLayersArguments
    assert "--train_top_layers TRAIN_TOP_LAYERS" in cli.fast_help("finetune")


def test_a_mode_registered_in_a_test_gets_its_flag_on_the_command_line(top_layers, tmp_path, tiny_bert_dir):
    from safetensors.torch import load_file

    out = tmp_path / "top"
    assert cli.main(finetune_argv(out, tiny_bert_dir, "--mode", "top_layers", "--train_top_layers", "1")) == 0
    before, after = load_file(os.path.join(tiny_bert_dir, "model.safetensors")), load_file(out / "model.safetensors")
    last = f"bert.encoder.layer.{sum(k.endswith('attention.self.query.weight') for k in after) - 1}"
    assert after["bert.encoder.layer.0.attention.self.query.weight"].equal(
        before["bert.encoder.layer.0.attention.self.query.weight"]
    )
    assert not after[f"{last}.attention.self.query.weight"].equal(before[f"{last}.attention.self.query.weight"])
    with open(out / "run_info.json") as f:
        recorded = json.load(f)["training_mode"]
    # the card's mode paragraph is recorded while training (TrainingMode.describe: the mode's default words)
    assert recorded == {"mode": "top_layers", "strategy": "top1", "description": "Training mode: **top_layers**."}


def test_a_bad_value_of_the_modes_flag_is_one_line(top_layers, tmp_path, capsys):
    argv = finetune_argv(tmp_path / "o", SAMPLES, "--mode", "top_layers", "--train_top_layers", "two")
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        "hf-bert-tasks: error: argument --train_top_layers/--train-top-layers: invalid int value: 'two'\n"
    )


def test_a_value_outside_the_modes_bounds_is_one_line(top_layers, tmp_path, capsys, tiny_bert_dir):
    argv = finetune_argv(tmp_path / "o", tiny_bert_dir, "--mode", "top_layers", "--train_top_layers", "0")
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == "hf-bert-tasks: error: --train_top_layers 0: expected a positive integer\n"


def test_the_flag_is_unknown_once_the_mode_is_unregistered(tmp_path, capsys):
    argv = finetune_argv(tmp_path / "o", SAMPLES, "--train_top_layers", "1")
    assert cli.main(argv) == 2
    assert (
        capsys.readouterr().err
        == "hf-bert-tasks: error: unrecognized arguments: --train_top_layers 1 (did you mean --reinit_layers?)\n"
    )


def test_a_modes_flag_that_is_already_a_flag_is_refused(tmp_path, capsys):
    @dataclass
    class Clashing:
        seed: int = 3

    mode = register_training_mode(type("Clash", (TopLayersMode,), {"name": "clash"})(), Clashing)
    try:
        assert cli.main(finetune_argv(tmp_path / "o", SAMPLES)) == 2
    finally:
        unregister_training_mode(mode.name)
    assert capsys.readouterr().err == (
        "hf-bert-tasks: error: training mode 'clash': its flag --seed is a TrainingArguments field\n"
    )


def test_compare_takes_the_modes_flag_in_its_arms(top_layers):
    from hf_bert_tasks.scripts.compare import arm_settings, given_settings

    assert given_settings(["--train_top_layers", "2"]) == {"train_top_layers": 2}
    assert arm_settings("{train_top_layers: 3}", "--top_layers_args") == {"train_top_layers": 3}
