"""Plug-ins from outside the package: an installed distribution declares a task family (entry point group
``hf_bert_tasks.tasks``) and a training mode (``hf_bert_tasks.modes``); both join ``hf-bert-tasks finetune``, its
``--help`` and a run, in a fresh process. The plug-in is installed the way a wheel installs it: its module and its
``*.dist-info`` (``METADATA``, ``entry_points.txt``) in a folder on the path."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO, tiny_run_argv

PLUGIN = textwrap.dedent(
    '''
    """A toy plug-in: one task (the SST-2 reader and metric under a new name) and one mode (bias-only training)."""
    import dataclasses

    from hf_bert_tasks import get_task, register_task
    from hf_bert_tasks.modes import TrainingMode, load_task_model, register_training_mode


    @dataclasses.dataclass
    class BiasOnlyArguments:
        bias_only_head: bool = dataclasses.field(default=True, metadata={"help": "Train the task head too."})


    class BiasOnlyMode(TrainingMode):
        name = "bias_only"
        help = "biases (and the head) only"
        card_text = "Training mode: **bias-only**."
        arguments_class = BiasOnlyArguments

        def build_model(self, task, model_args, training_args):
            model = load_task_model(task, model_args)
            for name, p in model.named_parameters():
                head = training_args.bias_only_head and name.startswith("classifier.")
                p.requires_grad = name.endswith(".bias") or head
            return model


    if __name__ == "toy_bert_plugin.tasks":
        register_task(dataclasses.replace(get_task("sst2"), name="toy_sentiment", paper_results={}, submission_files={}))
    else:
        register_training_mode(BiasOnlyMode())
    '''
)


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    """A folder holding the installed toy plug-in ``toy-bert-plugin`` (package ``toy_bert_plugin``)."""
    root = tmp_path_factory.mktemp("site")
    package = root / "toy_bert_plugin"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "tasks.py").write_text(PLUGIN)
    (package / "modes.py").write_text(PLUGIN)
    info = root / "toy_bert_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-bert-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[hf_bert_tasks.tasks]\ntoy = toy_bert_plugin.tasks\n\n[hf_bert_tasks.modes]\nbias_only = toy_bert_plugin.modes\n"
    )
    return str(root)


def cli(plugin_path, *argv):
    """``hf-bert-tasks ARGV`` in a fresh process with the plug-in installed; the completed process."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([plugin_path, REPO]), OMP_NUM_THREADS="1")
    code = "import sys; from hf_bert_tasks.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, timeout=600, check=False
    )


def test_an_installed_task_and_mode_are_in_finetune_help(plugin_path):
    done = cli(plugin_path, "finetune", "--help")
    assert done.returncode == 0, done.stderr
    assert "toy_sentiment" in done.stdout  # --task's choices
    assert "bias_only" in done.stdout and "--bias_only_head" in done.stdout  # --mode's choices, the mode's flag


def test_an_installed_task_is_listed_by_tasks(plugin_path):
    done = cli(plugin_path, "tasks", "--json")
    assert done.returncode == 0, done.stderr
    assert "toy_sentiment" in done.stdout


def test_an_installed_task_and_mode_run_through_the_cli(plugin_path, tmp_path, tiny_bert_dir):
    from tests.conftest import SAMPLES

    out = tmp_path / "out"
    argv = tiny_run_argv(
        "toy_sentiment", tiny_bert_dir, out, "--do_train", "--do_eval", data_dir=os.path.join(SAMPLES, "SST-2")
    )
    done = cli(plugin_path, "finetune", *argv, "--mode", "bias_only", "--max_steps", "2", "--max_eval_samples", "8")
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / "run_info.json") as f:
        info = json.load(f)
    assert info["task"] == "toy_sentiment" and info["training_mode"]["mode"] == "bias_only"
    assert "eval_accuracy" in json.loads((out / "all_results.json").read_text())


def test_a_plugin_that_fails_to_import_is_skipped_with_a_warning(tmp_path):
    info = tmp_path / "broken_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[hf_bert_tasks.tasks]\nbroken = no_such_module_here\n")
    done = cli(str(tmp_path), "tasks")
    assert done.returncode == 0
    assert "plug-in 'broken' (no_such_module_here" in done.stderr
    assert "mrpc" in done.stdout
