"""A training mode defined here, outside the package, registers its own flag with one call
(``register_training_mode(mode, arguments_class)``): the flag joins the ``finetune`` command line, the recipe reads
its value, and a bad value or an unknown flag is an ``error:`` line, exit status 2 (a value the plug-in's own
``__post_init__`` refuses: plus the line saying outside code raised it)."""

import json
import os
from dataclasses import dataclass, field

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.modes import TrainingMode, mode_arguments_class, register_training_mode, unregister_training_mode
from tests.conftest import SAMPLES, tiny_run_argv


@dataclass
class TopLayersArguments:
    """The toy mode's flag, checked where it is declared (as peft's configs)."""

    train_top_layers: int = field(default=1, metadata={"help": "top_layers: encoder layers trained (from the top)."})

    def __post_init__(self):
        if self.train_top_layers < 1:
            raise ValueError(f"--train_top_layers {self.train_top_layers}: expected a positive integer")
        if hasattr(super(), "__post_init__"):
            super().__post_init__()


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


def test_a_value_the_modes_flags_class_refuses_is_its_error_line(top_layers, tmp_path, capsys, tiny_bert_dir):
    argv = finetune_argv(tmp_path / "o", tiny_bert_dir, "--mode", "top_layers", "--train_top_layers", "0")
    assert cli.main(argv) == 2
    # the check is the plug-in's own (its flags' __post_init__), so the CLI adds that outside code raised it
    assert capsys.readouterr().err.splitlines() == [
        "hf-bert-tasks: error: --train_top_layers 0: expected a positive integer",
        "hf-bert-tasks: (ValueError raised by a library; `hf-bert-tasks --debug ...` shows the traceback)",
    ]


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
        assert cli.main(finetune_argv(tmp_path / "o", SAMPLES, "--mode", "clash")) == 2  # its flags join its runs
        assert cli.main(["finetune", "--help"]) == 2  # and the help, which lists every mode's
    finally:
        unregister_training_mode(mode.name)
    assert capsys.readouterr().err == (
        "hf-bert-tasks: error: training mode 'clash': its flag --seed is a TrainingArguments field\n" * 2
    )


def test_compare_takes_the_modes_flag_in_its_arms(top_layers):
    from hf_bert_tasks.scripts.compare import arm_settings, given_settings

    assert given_settings(["--train_top_layers", "2"]) == {"train_top_layers": 2}
    assert arm_settings("{train_top_layers: 3}", "--top_layers_args") == {"train_top_layers": 3}


def test_a_flag_of_another_mode_is_refused_naming_its_mode(tmp_path, capsys):
    assert cli.main(finetune_argv(tmp_path / "o", SAMPLES, "--lora_r", "4")) == 2
    assert capsys.readouterr().err == (
        "hf-bert-tasks: error: --lora_r: a flag of --mode lora, and this run is --mode finetune; expected --mode lora "
        "or the flag left out\n"
    )


def test_the_mode_of_a_config_file_selects_its_flags(tmp_path):
    from hf_bert_tasks.finetune.args import parse_finetune_argv

    config = tmp_path / "lora.yaml"
    config.write_text("mode: lora\nlora_r: 4\n")
    parsed = parse_finetune_argv(["--task", "mrpc", "--output_dir", "o", "--config", str(config)])
    assert (parsed.training["mode"], parsed.training["lora_r"], parsed.training["lora_alpha"]) == ("lora", 4, 16)


def test_the_lora_flags_check_their_own_values_where_declared():
    from hf_bert_tasks.modes.lora.arguments import LoraArguments

    with pytest.raises(ValueError, match=r"^--lora_dropout 1.0: expected a probability in \[0, 1\)$"):
        LoraArguments(lora_dropout=1.0)


def test_a_lora_run_s_arguments_unpickle_in_a_fresh_process(tmp_path):
    """Trainer pickles the arguments (``training_args.bin``): the generated class of a mode with flags is found by
    name in a process that never built it (``finetune.config.__getattr__``)."""
    import pickle
    import subprocess
    import sys

    from hf_bert_tasks.finetune.config import finetune_arguments_class

    args = finetune_arguments_class("lora")(output_dir=str(tmp_path), mode="lora", lora_r=4, report_to="none")
    (tmp_path / "args.pkl").write_bytes(pickle.dumps(args))
    code = "import pickle, sys; a = pickle.load(open(sys.argv[1], 'rb')); print(type(a).__name__, a.mode, a.lora_r)"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "args.pkl")], check=False, capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["FinetuneTrainingArguments_LoraArguments", "lora", "4"]
