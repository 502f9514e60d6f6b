"""Every value of every choice field of the installed ``TrainingArguments`` (hf_bert_tasks.flags.trainer_flags:
``choice_values``, ``classify_value``): each value x task family is classified (works / refused with its line / not
applicable) on this machine and on a GPU machine, so a value a new transformers adds fails here; the refusals come
while the flags are parsed (one line, exit 2, before any model or data is loaded); a few values run end to end on a
tiny model (--save_strategy best, reduce_lr_on_plateau on SQuAD and GLUE, --bf16 on this CPU)."""

import json
import logging

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.flags.trainer_flags import NOT_APPLICABLE, REFUSED, STATUSES, WORKS
from hf_bert_tasks.flags.values import FAMILIES, TORCH_OPTIMIZERS, Machine, choice_values, classify_value
from tests.conftest import tiny_run_argv

CPU = Machine(cuda=False, cpu_bf16=True)
CPU_NO_BF16 = Machine(cuda=False, cpu_bf16=False)
GPU = Machine(cuda=True, gpu_bf16=True, gpu_tf32=True, cpu_bf16=True)


@pytest.fixture(scope="module")
def values():
    from transformers import TrainingArguments

    return choice_values(TrainingArguments)


def test_choice_fields_are_generated_from_the_installed_class(values):
    from transformers.trainer_utils import SchedulerType
    from transformers.training_args import OptimizerNames

    assert values["lr_scheduler_type"] == [s.value for s in SchedulerType]
    assert values["optim"] == [o.value for o in OptimizerNames]
    assert values["save_strategy"] == ["no", "steps", "epoch", "best"]
    assert values["bf16"] == [True, False]
    assert "debug" in values and "seed" not in values


@pytest.mark.parametrize("machine", [CPU, CPU_NO_BF16, GPU], ids=["cpu", "cpu-no-bf16", "gpu"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_value_of_every_choice_field_is_classified(values, family, machine):
    unknown = []
    for field, choices in values.items():
        for value in choices:
            flag = classify_value(field, value, family, machine)
            if flag is None:
                unknown.append(f"--{field} {value}")
                continue
            assert flag.status in STATUSES
            if flag.status == REFUSED:
                assert flag.note and "\n" not in flag.note and flag.note.startswith("--"), (field, value)
    assert unknown == [], "values of the installed transformers no rule classifies (flag_values.classify_value)"


def test_the_counts_per_choice_field_on_this_cpu(values):
    """The closing note's counts (kept true by this test): this CPU (native bf16), any family."""
    counts = {}
    for field, choices in values.items():
        statuses = [classify_value(field, v, "question_answering", CPU).status for v in choices]
        counts[field] = tuple(statuses.count(s) for s in (WORKS, REFUSED, NOT_APPLICABLE))
    assert counts["optim"] == (6, 33, 2)
    assert counts["lr_scheduler_type"] == (12, 0, 0)
    assert counts["save_strategy"] == (4, 0, 0)
    assert counts["fp16"] == (1, 1, 0)
    assert counts["tf32"] == (1, 1, 0)
    assert counts["bf16"] == (2, 0, 0)


def test_each_optimizer_said_to_work_builds_and_steps():
    import torch
    from transformers import Trainer, TrainingArguments

    model = torch.nn.Linear(3, 2)
    for name in TORCH_OPTIMIZERS:
        args = TrainingArguments(output_dir="unused", optim=name, use_cpu=True)
        cls, kwargs = Trainer.get_optimizer_cls_and_kwargs(args, model)
        optimizer = cls(model.parameters(), **kwargs)
        before = model.weight.detach().clone()
        model(torch.ones(2, 3)).pow(2).sum().backward()
        optimizer.step()
        assert not torch.equal(before, model.weight), name


def test_each_optimizer_refused_here_fails_in_transformers_too(values):
    """What the refusal spares the user: transformers' own failure (after the model is built)."""
    import torch
    from transformers import Trainer, TrainingArguments

    machine = Machine.current()
    refused = [v for v in values["optim"] if classify_value("optim", v, "", machine).status == REFUSED]
    assert "adamw_bnb_8bit" in refused
    for name in refused:
        args = TrainingArguments(output_dir="unused", optim=name, use_cpu=True)
        with pytest.raises((ImportError, ValueError)):
            Trainer.get_optimizer_cls_and_kwargs(args, torch.nn.Linear(3, 2))


def test_each_scheduler_builds_with_the_kwargs_the_table_asks_for(values):
    import torch
    from transformers import get_scheduler

    from hf_bert_tasks.flags.values import SCHEDULER_KWARGS

    example = {"min_lr": 1e-6, "min_lr_rate": 0.1, "num_decay_steps": 3}
    optimizer = torch.optim.SGD(torch.nn.Linear(3, 2).parameters(), lr=0.1)
    for name in values["lr_scheduler_type"]:
        kwargs = {SCHEDULER_KWARGS[name][0]: example[SCHEDULER_KWARGS[name][0]]} if name in SCHEDULER_KWARGS else {}
        get_scheduler(name, optimizer, num_warmup_steps=1, num_training_steps=10, scheduler_specific_kwargs=kwargs)
        if name in SCHEDULER_KWARGS:
            with pytest.raises((ValueError, TypeError)):
                get_scheduler(name, optimizer, num_warmup_steps=1, num_training_steps=10)


# ------------------------------------------------------------------------------- refused: one line, before loading
@pytest.fixture
def no_loading(monkeypatch):
    import transformers

    def forbidden(*args, **kwargs):
        raise AssertionError("a model or tokenizer was loaded before the refusal")

    for name in ("AutoTokenizer", "AutoConfig", "AutoModelForSequenceClassification"):
        monkeypatch.setattr(getattr(transformers, name), "from_pretrained", forbidden)


def _refusal(capsys, tmp_path, model, task, *argv):
    status = cli.main(["finetune", *tiny_run_argv(task, model, tmp_path / "out", *argv, data_dir=tmp_path)])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert not (tmp_path / "out").exists()
    return err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("--fp16", "True"), "--fp16: fp16 mixed precision needs a CUDA GPU"),
        (("--tf32", "True"), "--tf32 True: TensorFloat-32 needs an Ampere"),
        (("--optim", "adamw_bnb_8bit"), "--optim adamw_bnb_8bit: needs the package bitsandbytes"),
        (("--lr_scheduler_type", "cosine_with_min_lr"), "needs min_lr or min_lr_rate in --lr_scheduler_kwargs"),
        (("--lr_scheduler_type", "warmup_stable_decay"), "needs num_decay_steps"),
        (("--save_strategy", "best", "--eval_strategy", "no"), "--save_strategy best: follows the dev metric"),
        (("--lr_scheduler_type", "reduce_lr_on_plateau", "--eval_strategy", "no"), "reduce_lr_on_plateau: follows"),
    ],
)
def test_a_value_this_machine_cannot_run_is_one_line_before_loading(
    capsys, tmp_path, tiny_bert_dir, no_loading, argv, expected
):
    import torch

    if torch.cuda.is_available() and argv[0] in ("--fp16", "--tf32"):
        pytest.skip("a CUDA GPU runs it")
    assert expected in _refusal(capsys, tmp_path, tiny_bert_dir, "mrpc", *argv)


@pytest.mark.parametrize(
    ("task", "argv", "expected"),
    [
        ("squad_v1", ("--lr_scheduler_type", "reduce_lr_on_plateau", "--metric_for_best_model", "loss"), "no loss"),
        ("mrpc", ("--save_strategy", "best", "--metric_for_best_model", "bleu"), "reports no such dev metric"),
        (
            "mrpc",
            ("--lr_scheduler_type", "reduce_lr_on_plateau", "--lr_scheduler_kwargs", '{"mode": "min"}'),
            "expected mode 'max'",
        ),
    ],
)
def test_a_metric_the_task_cannot_follow_is_one_line_before_loading(
    capsys, tmp_path, tiny_bert_dir, no_loading, task, argv, expected
):
    assert expected in _refusal(capsys, tmp_path, tiny_bert_dir, task, *argv)


def test_bf16_without_native_cpu_bf16_is_refused_with_the_way_to_force_it():
    assert "--use_cpu True" in classify_value("bf16", True, "regression", CPU_NO_BF16).note
    assert classify_value("bf16", True, "regression", CPU_NO_BF16, use_cpu=True).status == WORKS


# ----------------------------------------------------------------------------- the task's metric and direction
def _final_args(task, *argv):
    from hf_bert_tasks.finetune.args import parse_finetune_argv
    from hf_bert_tasks.finetune.config import finetune_arguments

    argv = tiny_run_argv(task, "m", "out-unused", *argv, data_dir=".")
    return finetune_arguments(parse_finetune_argv(argv))[2]


@pytest.mark.parametrize(("task", "metric"), [("mrpc", "f1"), ("squad_v1", "f1"), ("stsb", "spearmanr")])
def test_plateau_watches_the_task_metric_in_its_direction(task, metric):
    args = _final_args(task, "--lr_scheduler_type", "reduce_lr_on_plateau")
    assert (args.metric_for_best_model, args.greater_is_better) == (metric, True)
    assert args.lr_scheduler_kwargs == {"mode": "max"}


def test_save_strategy_best_takes_the_task_metric():
    args = _final_args("squad_v2", "--save_strategy", "best")
    assert (args.metric_for_best_model, args.greater_is_better) == ("f1", True)


def test_a_given_loss_metric_keeps_mode_min():
    args = _final_args("mrpc", "--lr_scheduler_type", "greedy", "--metric_for_best_model", "loss")
    assert args.lr_scheduler_kwargs == {"mode": "min"} and args.greater_is_better is False


# ------------------------------------------------------------------------------------------ a few run end to end
def _run(capsys, tmp_path, model, task, *argv, data_dir=None):
    out = tmp_path / "out"
    extra = ["--max_train_samples", "12", "--max_eval_samples", "8", "--max_seq_length", "48"]
    argv = tiny_run_argv(
        task, model, out, *extra, *argv, data_dir=data_dir, num_train_epochs=2, per_device_train_batch_size=4
    )
    status = cli.main(["finetune", *argv])
    err = capsys.readouterr().err
    assert status == 0, err[-3000:]
    with open(out / "all_results.json") as f:
        return out, json.load(f), err


def test_save_strategy_best_runs_on_glue(capsys, tmp_path, tiny_bert_dir):
    out, results, _ = _run(
        capsys, tmp_path, tiny_bert_dir, "mrpc", "--save_strategy", "best", "--save_total_limit", "1"
    )
    assert "eval_f1" in results
    with open(next(out.glob("checkpoint-*")) / "trainer_state.json") as f:
        assert json.load(f)["best_metric"] is not None


def test_plateau_runs_on_squad_past_its_first_epoch(capsys, tmp_path, tiny_bert_dir):
    from tests.test_squad_recipe import write_folder

    data = write_folder(tmp_path, "1.1")
    argv = ["--lr_scheduler_type", "reduce_lr_on_plateau", "--max_query_length", "16", "--doc_stride", "24"]
    _, results, _ = _run(capsys, tmp_path, tiny_bert_dir, "squad_v1", *argv, "--max_seq_length", "64", data_dir=data)
    assert results["epoch"] == 2.0 and "eval_f1" in results


def test_bf16_on_this_cpu_runs_with_one_note_or_is_refused(capsys, tmp_path, tiny_bert_dir, caplog):
    machine = Machine.current()
    if machine.cuda:
        pytest.skip("a GPU: --bf16 is the GPU default (tests/test_gpu_defaults.py)")
    if not machine.cpu_bf16:
        assert "no native bf16" in _refusal(capsys, tmp_path, tiny_bert_dir, "mrpc", "--bf16", "True")
        return
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.finetune.config"):
        _, results, _ = _run(capsys, tmp_path, tiny_bert_dir, "mrpc", "--bf16", "True")
    notes = [r.getMessage() for r in caplog.records if r.getMessage().startswith("--bf16")]
    expected = (
        "--bf16: no CUDA GPU (torch.cuda.is_available() is False here): bf16 autocast on the CPU "
        "(native bf16 here); --use_cpu set"
    )
    assert notes == [expected]
    assert "eval_f1" in results


@pytest.mark.parametrize("task", ["mrpc", "stsb", "squad_v1", "swag", "conll2003"])
def test_each_familys_collator_pickles_for_spawn_and_forkserver_workers(task, vocab_tokenizer):
    """--dataloader_multiprocessing_context spawn / forkserver pickle the collator into each worker (SWAG's was a
    class defined inside a function: 'Can't pickle local object', after the model was built)."""
    import pickle

    from hf_bert_tasks.tasks import get_task

    collator = get_task(task).data_collator(vocab_tokenizer)
    assert type(pickle.loads(pickle.dumps(collator))) is type(collator)


@pytest.mark.slow  # ~35 s: each spawned worker imports torch again
def test_swag_runs_with_spawned_dataloader_workers(capsys, tmp_path, tiny_bert_dir):
    from tests.test_swag import _swag_dir

    (tmp_path / "swag").mkdir()
    argv = ["--dataloader_multiprocessing_context", "spawn", "--dataloader_num_workers", "1"]
    _, results, _ = _run(capsys, tmp_path, tiny_bert_dir, "swag", *argv, data_dir=_swag_dir(tmp_path / "swag"))
    assert "eval_accuracy" in results
