"""The training-mode registry (``hf_bert_tasks.modes``): a mode registered in a test is a ``--mode`` value of the
parser, the recipe trains the model it builds with its defaults and hooks, and the card prints its text."""

import json
import os

import pytest

from hf_bert_tasks.modes import (
    TRAINING_MODES,
    TrainingMode,
    get_training_mode,
    list_training_modes,
    register_training_mode,
    unregister_training_mode,
)
from tests.conftest import tiny_run_argv


class BiasOnlyMode(TrainingMode):
    """A toy mode (BitFit-like): the task model of fine-tuning with every weight frozen except biases and the head.

    Records its calls so the tests can see the recipe went through it."""

    name = "bias_only"
    help = "biases and head only"
    card_text = "Training mode: **bias-only** — only the biases and the task head were trained."
    default_learning_rate = 3e-3
    calls: list

    def __init__(self):
        self.calls = []

    def build_model(self, task, model_args, training_args):
        from hf_bert_tasks.modes import load_task_model

        model = load_task_model(task, model_args)
        for name, p in model.named_parameters():
            p.requires_grad = name.endswith(".bias") or name.startswith("classifier.")
        self.calls.append("build_model")
        return model

    def finish_training(self, trainer, output_dir):
        self.calls.append(("finish_training", output_dir))


@pytest.fixture
def bias_only():
    mode = register_training_mode(BiasOnlyMode())
    yield mode
    unregister_training_mode(mode.name)


def test_a_mode_without_build_model_cannot_be_instantiated():
    class NoModel(TrainingMode):
        name = "no_model"

    with pytest.raises(TypeError, match="build_model"):
        NoModel()


def test_builtin_modes_are_registered_in_order():
    assert list_training_modes()[:3] == ["finetune", "lora", "feature_based"]


def test_registry_refuses_a_second_mode_of_the_same_name_and_a_bad_name():
    with pytest.raises(ValueError, match="training mode 'lora' is already registered"):
        register_training_mode(type("Other", (BiasOnlyMode,), {"name": "lora"})())
    with pytest.raises(ValueError, match="must match"):
        register_training_mode(type("Bad", (BiasOnlyMode,), {"name": "Bad-Name"})())
    assert type(TRAINING_MODES["lora"]).__name__ == "LoraMode"


def test_registry_refuses_item_assignment_and_del():
    with pytest.raises(TypeError, match="read-only .*register_training_mode"):
        TRAINING_MODES["lora"] = BiasOnlyMode()
    with pytest.raises(TypeError, match="read-only .*unregister_training_mode"):
        del TRAINING_MODES["lora"]
    assert type(TRAINING_MODES["lora"]).__name__ == "LoraMode"


def test_unknown_mode_suggests_the_closest_name():
    with pytest.raises(ValueError, match=r"--mode 'lorra' \(did you mean 'lora'\?\): expected one of finetune, lora"):
        get_training_mode("lorra")


def test_a_registered_toy_mode_is_a_choice_of_the_parser(bias_only, tmp_path):
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments
    from hf_bert_tasks.flags.training import parse_args

    _, _, training = parse_args(
        (ModelArguments, DataArguments, FinetuneTrainingArguments),
        ["--task", "mrpc", "--output_dir", str(tmp_path), "--mode", "bias_only"],
    )
    assert training.mode == "bias_only"
    unregister_training_mode("bias_only")
    with pytest.raises(ValueError, match="invalid choice: 'bias_only'"):
        parse_args(
            (ModelArguments, DataArguments, FinetuneTrainingArguments),
            ["--task", "mrpc", "--output_dir", str(tmp_path), "--mode", "bias_only"],
        )


def test_the_toy_mode_is_listed_by_the_fast_help_and_is_a_compare_arm(bias_only):
    from hf_bert_tasks import cli
    from hf_bert_tasks.scripts.compare import build_parser, configurations

    assert "--mode {finetune,lora,feature_based,bias_only}" in cli.fast_help("finetune")
    assert configurations(["finetune", "bias_only"], ["last"]) == [
        {"label": "finetune", "mode": "finetune", "strategy": None},
        {"label": "bias_only", "mode": "bias_only", "strategy": None},
    ]
    args, _ = build_parser().parse_known_args(
        [
            "--task",
            "mrpc",
            "--model_name_or_path",
            "m",
            "--output_dir",
            "o",
            "--bias_only_args",
            "{learning_rate: 1e-2}",
        ]
    )
    assert args.modes == "finetune,lora,feature_based,bias_only" and args.bias_only_args == "{learning_rate: 1e-2}"


def test_the_recipe_trains_the_toy_modes_model_with_its_defaults_and_hooks(bias_only, tmp_path, tiny_bert_dir):
    from safetensors.torch import load_file

    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path / "bias"
    sizes = {"num_train_epochs": 1, "max_train_samples": 16, "per_device_train_batch_size": 4, "max_eval_samples": 8}
    finetune.main(tiny_run_argv("mrpc", tiny_bert_dir, out, "--mode", "bias_only", "--do_train", "--do_eval", **sizes))
    assert bias_only.calls == ["build_model", ("finish_training", str(out))]
    before, after = load_file(os.path.join(tiny_bert_dir, "model.safetensors")), load_file(out / "model.safetensors")
    # the saved model is the one the mode built: weights frozen, biases trained (BertForPreTraining -> task model:
    # the encoder tensors keep their names under "bert.")
    query = "bert.encoder.layer.0.attention.self.query"
    assert after[f"{query}.weight"].equal(before[f"{query}.weight"])
    assert not after[f"{query}.bias"].equal(before[f"{query}.bias"])
    with open(out / "run_info.json") as f:
        info = json.load(f)
    # the card's mode paragraph, recorded while training: the mode's own text
    assert info["training_mode"] == {"mode": "bias_only", "strategy": None, "description": bias_only.card_text}
    assert info["hyperparameters"]["learning_rate"] == 3e-3  # the mode's default, not the task's 2e-5


def test_the_card_prints_the_modes_text(bias_only):
    from hf_bert_tasks.modes import mode_text as _mode_text

    assert _mode_text({"mode": "bias_only", "strategy": None}) == bias_only.card_text


@pytest.mark.parametrize(
    "task, grid",
    [
        ("mrpc", "5e-05,4e-05,3e-05,2e-05"),  # §4.1: "{5e-5, 4e-5, 3e-5, 2e-5}"
        ("conll2003", "5e-05,3e-05,2e-05"),  # Appendix A.3's learning rates
    ],
)
def test_a_bare_lr_grid_is_the_tasks_paper_grid(task, grid, tmp_path):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments, apply_task_defaults
    from hf_bert_tasks.flags.training import parse_args

    _, data, training = parse_args(
        (ModelArguments, DataArguments, FinetuneTrainingArguments),
        ["--task", task, "--output_dir", str(tmp_path), "--lr_grid"],
    )
    apply_task_defaults(get_task(task), data, training)
    assert training.lr_grid == grid


def test_a_bare_lr_grid_in_a_mode_without_a_grid_is_an_error(tmp_path):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import apply_task_defaults, finetune_arguments_class
    from hf_bert_tasks.flags.training import parse_args

    _, data, training = parse_args(
        (ModelArguments, DataArguments, finetune_arguments_class("lora")),
        ["--task", "mrpc", "--output_dir", str(tmp_path), "--lr_grid", "--mode", "lora"],
    )
    with pytest.raises(ValueError, match="--mode lora has no default grid"):
        apply_task_defaults(get_task("mrpc"), data, training)
