"""``--resume_from_checkpoint auto`` resumes from the newest *complete* checkpoint (``hf_bert_tasks.utils.checkpoints``).

The reported fault: a run with ``--save_steps 2 --max_steps 2``, its results removed, plus a ``checkpoint-4`` holding
only ``model.safetensors`` and ``config.json`` (a kill during the save), rerun with ``auto --max_steps 4`` died with
``FileNotFoundError`` on ``checkpoint-4/trainer_state.json`` — in fine-tuning and in pretraining. The checkpoints
here are written by this transformers version's ``Trainer`` (a real 2-step run), then damaged one file at a time.
"""

import json
import logging
import os
import shutil

import pytest

from tests.conftest import tiny_run_argv

#: What Trainer (transformers 5.24, one process, no mixed precision) writes into checkpoint-<step>.
RESUME_FILES = {"trainer_state.json", "model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth"}


def _finetune_flags(model, out, steps, *extra):
    return tiny_run_argv(
        "mrpc",
        model,
        out,
        "--do_train",
        *extra,
        max_train_samples=32,
        per_device_train_batch_size=8,
        learning_rate="1e-3",
        seed=3,
        max_steps=steps,
        save_strategy="steps",
        save_steps=2,
        save_total_limit=10,
        eval_strategy="no",
        logging_steps=1,
        disable_tqdm="true",
    )


def _remove_results(out) -> None:
    for name in os.listdir(out):
        if name.endswith("results.json"):
            os.remove(os.path.join(out, name))


def _torn_checkpoint(out, source, step=4) -> str:
    """``checkpoint-<step>`` holding only the first files of a save (weights and config): a kill during the save."""
    torn = os.path.join(out, f"checkpoint-{step}")
    os.makedirs(torn)
    for name in ("model.safetensors", "config.json"):
        shutil.copy(os.path.join(source, name), os.path.join(torn, name))
    return torn


@pytest.fixture(scope="module")
def two_step_run(tiny_bert_dir, tmp_path_factory):
    """A finished 2-step fine-tune with one complete checkpoint (checkpoint-2); copied by the tests, never changed."""
    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path_factory.mktemp("two-step") / "run"
    finetune.main(_finetune_flags(tiny_bert_dir, out, 2))
    return str(out)


def _copy_run(two_step_run, tmp_path) -> str:
    out = str(tmp_path / "run")
    shutil.copytree(two_step_run, out)
    _remove_results(out)
    return out


def _mtimes(folder) -> dict:
    return {n: os.stat(os.path.join(folder, n)).st_mtime_ns for n in sorted(os.listdir(folder))}


# ------------------------------------------------------------------------------------ what "complete" means
def test_trainer_writes_the_files_resuming_reads(two_step_run):
    assert RESUME_FILES <= set(os.listdir(os.path.join(two_step_run, "checkpoint-2")))


def test_a_checkpoint_written_by_trainer_is_complete(two_step_run):
    from hf_bert_tasks.utils.checkpoints import checkpoint_problems

    assert checkpoint_problems(os.path.join(two_step_run, "checkpoint-2")) == []


@pytest.mark.parametrize(
    "rename",
    [
        {"rng_state.pth": "rng_state_0.pth"},  # several processes: one RNG file per rank (Trainer._save_rng_state)
        {"model.safetensors": "adapter_model.safetensors"},  # LoRA: Trainer saves the peft adapter
    ],
)
def test_files_trainer_writes_in_other_setups_count_as_complete(two_step_run, tmp_path, rename):
    from hf_bert_tasks.utils.checkpoints import checkpoint_problems

    folder = tmp_path / "checkpoint-2"
    shutil.copytree(os.path.join(two_step_run, "checkpoint-2"), folder)
    for old, new in rename.items():
        os.rename(folder / old, folder / new)
    assert checkpoint_problems(str(folder)) == []


@pytest.mark.parametrize(
    "damage, expected",
    [
        ("trainer_state.json", "no trainer_state.json"),
        ("model.safetensors", "no model weights (model.safetensors / pytorch_model.bin / adapter_model.*)"),
        ("optimizer.pt", "no optimizer.pt (saved with --save_only_model, or cut short)"),
        ("scheduler.pt", "no scheduler.pt"),
        ("rng_state.pth", "no rng_state.pth"),
        ("cut:trainer_state.json", "trainer_state.json is not valid JSON (cut short?)"),
        ("empty:optimizer.pt", "no optimizer.pt (saved with --save_only_model, or cut short)"),
        ("step:trainer_state.json", "trainer_state.json says global_step 2, the folder name 6"),
    ],
)
def test_each_missing_or_cut_file_makes_a_checkpoint_incomplete(two_step_run, tmp_path, damage, expected):
    from hf_bert_tasks.utils.checkpoints import checkpoint_problems

    kind, _, name = damage.rpartition(":")
    folder = tmp_path / ("checkpoint-6" if kind == "step" else "checkpoint-2")
    shutil.copytree(os.path.join(two_step_run, "checkpoint-2"), folder)
    path = folder / name
    if kind == "cut":
        path.write_bytes(path.read_bytes()[:40])  # a kill in the middle of writing the JSON
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "":
        path.unlink()
    assert checkpoint_problems(str(folder)) == [expected]


def test_the_newest_complete_checkpoint_wins_and_the_skipped_ones_are_named(two_step_run, tmp_path, caplog):
    from hf_bert_tasks.utils.checkpoints import last_complete_checkpoint, list_checkpoints

    out = _copy_run(two_step_run, tmp_path)
    _torn_checkpoint(out, os.path.join(out, "checkpoint-2"), step=4)
    no_optimizer = os.path.join(out, "checkpoint-6")
    shutil.copytree(os.path.join(out, "checkpoint-2"), no_optimizer)
    state_path = os.path.join(no_optimizer, "trainer_state.json")
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    with open(state_path, "w", encoding="utf-8") as f:
        json.dump(dict(state, global_step=6), f)
    os.remove(os.path.join(no_optimizer, "optimizer.pt"))  # as saved with --save_only_model
    os.makedirs(os.path.join(out, "checkpoint-foo"))  # not a checkpoint name: ignored, as get_last_checkpoint does
    open(os.path.join(out, "checkpoint-8"), "w").close()  # a file, not a folder: ignored
    assert [os.path.basename(p) for _, p in list_checkpoints(out)] == ["checkpoint-6", "checkpoint-4", "checkpoint-2"]
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.utils.checkpoints"):
        assert last_complete_checkpoint(out) == os.path.join(out, "checkpoint-2")
    (record,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "checkpoint-6 (no optimizer.pt (saved with --save_only_model, or cut short))" in record.getMessage()
    assert "checkpoint-4 (no trainer_state.json" in record.getMessage()
    assert "checkpoint-foo" not in record.getMessage()


def test_no_complete_checkpoint_means_a_fresh_start_with_a_warning(two_step_run, tmp_path, caplog):
    from hf_bert_tasks.utils.checkpoints import resolve_resume

    out = str(tmp_path / "run")
    os.makedirs(out)
    _torn_checkpoint(out, os.path.join(two_step_run, "checkpoint-2"), step=4)
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.utils.checkpoints"):
        assert resolve_resume("auto", out) is None
    assert "no complete checkpoint" in caplog.text and "checkpoint-4" in caplog.text


def test_auto_and_true_are_the_same_and_an_empty_folder_is_a_fresh_start(tmp_path):
    from hf_bert_tasks.utils.checkpoints import resolve_resume

    assert resolve_resume("auto", str(tmp_path)) is None
    assert resolve_resume("True", str(tmp_path / "missing")) is None
    assert resolve_resume(None, str(tmp_path)) is None


def test_an_explicit_path_to_a_cut_checkpoint_is_an_error_naming_what_is_missing(two_step_run, tmp_path):
    from hf_bert_tasks.utils.checkpoints import resolve_resume

    torn = _torn_checkpoint(str(tmp_path), os.path.join(two_step_run, "checkpoint-2"), step=4)
    with pytest.raises(ValueError, match=r"checkpoint-4: not a complete checkpoint \(no trainer_state.json"):
        resolve_resume(torn, str(tmp_path))
    with pytest.raises(FileNotFoundError, match="checkpoint-9: no such checkpoint folder"):
        resolve_resume(str(tmp_path / "checkpoint-9"), str(tmp_path))


# ------------------------------------------------------------------------------------ the fine-tune recipe
def test_finetune_auto_skips_a_checkpoint_cut_short_by_a_kill(two_step_run, tiny_bert_dir, tmp_path, caplog):
    """The reported reproduction: resumes from checkpoint-2 (not re-saved), ends at step 4, warns about checkpoint-4."""
    from hf_bert_tasks.finetune import recipe as finetune

    out = _copy_run(two_step_run, tmp_path)
    _torn_checkpoint(out, os.path.join(out, "checkpoint-2"))
    before = _mtimes(os.path.join(out, "checkpoint-2"))
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.utils.checkpoints"):
        finetune.main(_finetune_flags(tiny_bert_dir, out, 4, "--resume_from_checkpoint", "auto"))
    assert "skipping incomplete checkpoint(s) checkpoint-4 (no trainer_state.json" in caplog.text
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 4
    assert _mtimes(os.path.join(out, "checkpoint-2")) == before  # resumed after step 2: checkpoint-2 not re-saved
    assert RESUME_FILES <= set(os.listdir(os.path.join(out, "checkpoint-4")))  # the torn one replaced by the save
    assert os.path.isfile(os.path.join(out, "all_results.json"))


def test_finetune_auto_with_only_a_cut_checkpoint_starts_from_step_0(two_step_run, tiny_bert_dir, tmp_path, caplog):
    from hf_bert_tasks.finetune import recipe as finetune

    out = str(tmp_path / "run")
    os.makedirs(out)
    _torn_checkpoint(out, os.path.join(two_step_run, "checkpoint-2"))
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.utils.checkpoints"):
        finetune.main(_finetune_flags(tiny_bert_dir, out, 4, "--resume_from_checkpoint", "auto"))
    assert "no complete checkpoint" in caplog.text
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        steps = [h["step"] for h in json.load(f)["log_history"] if "loss" in h]
    assert steps == [1, 2, 3, 4]
    assert RESUME_FILES <= set(os.listdir(os.path.join(out, "checkpoint-2")))  # saved by this run at step 2


# ------------------------------------------------------------------------------------ the pretrain recipe
CORPUS_DOCS = [
    [f"{n} took the {w} to the {p} ." for w in ("cat", "dog", "mat", "rug", "kite")]
    for n in ("anna", "oskar", "rosa", "maria")
    for p in ("mill", "barn", "quay")
]


def _pretrain_flags(model, corpus, out, steps, *extra):
    return [
        "--train_files",
        corpus,
        "--model_name_or_path",
        model,
        "--output_dir",
        str(out),
        "--max_seq_length",
        "32",
        "--masking",
        "static",
        "--validation_split_percentage",
        "0",
        "--max_steps",
        str(steps),
        "--save_steps",
        "2",
        "--save_total_limit",
        "10",
        "--eval_strategy",
        "no",
        "--logging_steps",
        "1",
        "--seed",
        "5",
        "--learning_rate",
        "1e-3",
        "--per_device_train_batch_size",
        "8",
        "--report_to",
        "none",
        "--disable_tqdm",
        "True",
        *extra,
    ]


@pytest.mark.parametrize("spelling", ["auto", "True"])
def test_pretrain_resume_skips_a_checkpoint_cut_short_by_a_kill(tiny_bert_dir, tmp_path, caplog, spelling):
    from hf_bert_tasks.pretraining import recipe as pretrain

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in CORPUS_DOCS) + "\n", encoding="utf-8")
    out = str(tmp_path / "run")
    pretrain.main(_pretrain_flags(tiny_bert_dir, str(corpus), out, 2))
    for name in ("pretraining_summary.json", "phase_summary.json"):
        os.remove(os.path.join(out, name))
    _torn_checkpoint(out, os.path.join(out, "checkpoint-2"))
    os.makedirs(os.path.join(out, "checkpoint-foo"))
    before = _mtimes(os.path.join(out, "checkpoint-2"))
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.utils.checkpoints"):
        summary = pretrain.main(
            _pretrain_flags(tiny_bert_dir, str(corpus), out, 4, "--resume_from_checkpoint", spelling)
        )
    assert "skipping incomplete checkpoint(s) checkpoint-4 (no trainer_state.json" in caplog.text
    assert summary["steps"] == 4
    assert _mtimes(os.path.join(out, "checkpoint-2")) == before
    assert RESUME_FILES <= set(os.listdir(os.path.join(out, "checkpoint-4")))
