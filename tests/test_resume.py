"""A fine-tune killed with ``kill -9`` after a checkpoint resumes to the metrics of an uninterrupted run.

The killed run is a real child process: a driver adds a callback to the recipe's ``Trainer`` that, after step 6
(checkpoint-4 is on disk; steps 5-6 are lost), writes a marker file and sleeps; the test then sends SIGKILL. The
resume goes through the recipe (``--resume_from_checkpoint auto``: the last ``checkpoint-*`` in ``output_dir``), which
restores weights, optimizer, scheduler, RNG states (dropout stays on in this model) and the data position.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, SAMPLES, tiny_run_argv

KILLABLE = """
import os, sys, time
import transformers

marker, stop_step = sys.argv[1], int(sys.argv[2])


class StopHere(transformers.TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == stop_step:
            open(marker, "w").close()
            time.sleep(600)  # the test kills the process here


_init = transformers.Trainer.__init__


def init(self, *a, **kw):
    _init(self, *a, **kw)
    self.add_callback(StopHere())


transformers.Trainer.__init__ = init
if sys.argv[3] == "pretrain":
    from hf_bert_tasks.pretraining import recipe as pretrain

    pretrain.main(sys.argv[4:])
else:
    from hf_bert_tasks.finetune import recipe as finetune

    finetune.main(sys.argv[3:])
"""


@pytest.fixture(scope="module")
def mrpc_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("mrpc")
    for name, rows in (("train.tsv", 48), ("dev.tsv", 30)):
        with open(os.path.join(SAMPLES, "MRPC", name), encoding="utf-8") as f:
            lines = f.read().splitlines()[: rows + 1]
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(out)


def _flags(model, data, out, *extra):
    return tiny_run_argv(
        "mrpc",
        model,
        out,
        "--do_train",
        "--do_eval",
        *extra,
        data_dir=data,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        learning_rate="1e-3",
        seed=11,
        save_strategy="steps",
        save_steps=4,
        save_total_limit=2,
        eval_strategy="no",
        logging_steps=1,
    )


def _eval_metrics(out) -> dict:
    with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
        return {k: v for k, v in json.load(f).items() if k in ("eval_loss", "eval_accuracy", "eval_f1")}


@pytest.fixture(scope="module")
def uninterrupted(tiny_bert_dir, mrpc_dir, tmp_path_factory):
    """The reference run, started with ``--resume_from_checkpoint auto`` on an empty folder (= a fresh start)."""
    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path_factory.mktemp("runs") / "uninterrupted"
    finetune.main(_flags(tiny_bert_dir, mrpc_dir, out, "--resume_from_checkpoint", "auto"))
    return out


@pytest.fixture(scope="module")
def killed(tiny_bert_dir, mrpc_dir, tmp_path_factory):
    """Output dir of a run killed with SIGKILL after step 6 (last checkpoint: 4)."""
    root = tmp_path_factory.mktemp("killed")
    out, marker, script = root / "run", root / "at-step-6", root / "killable.py"
    script.write_text(KILLABLE, encoding="utf-8")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(marker), "6", *_flags(tiny_bert_dir, mrpc_dir, out)],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before step 6 (rc {proc.returncode}):\n{proc.stderr.read()[-4000:]}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("the run did not reach step 6 within 300 s")
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    return out


def test_killed_run_leaves_a_checkpoint_and_no_results(killed):
    assert sorted(p for p in os.listdir(killed) if p.startswith("checkpoint-")) == ["checkpoint-4"]
    assert not os.path.exists(os.path.join(killed, "all_results.json"))


def test_unfinished_run_is_not_restarted_over_its_checkpoints(killed, tiny_bert_dir, mrpc_dir):
    from hf_bert_tasks.finetune import recipe as finetune

    with pytest.raises(FileExistsError, match="checkpoint-4.*--resume_from_checkpoint auto"):
        finetune.main(_flags(tiny_bert_dir, mrpc_dir, killed))


def test_resume_after_kill_gives_the_uninterrupted_metrics(killed, uninterrupted, tiny_bert_dir, mrpc_dir):
    from hf_bert_tasks.finetune import recipe as finetune

    finetune.main(_flags(tiny_bert_dir, mrpc_dir, killed, "--resume_from_checkpoint", "auto"))
    with open(os.path.join(killed, "trainer_state.json"), encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 12
    resumed, reference = _eval_metrics(killed), _eval_metrics(uninterrupted)
    assert set(resumed) == {"eval_loss", "eval_accuracy", "eval_f1"}
    for key, value in reference.items():
        assert resumed[key] == pytest.approx(value, abs=1e-6), key


def test_explicit_checkpoint_path_resumes_too(tiny_bert_dir, mrpc_dir, uninterrupted, tmp_path):
    """``--resume_from_checkpoint PATH`` (a copy of the reference run's checkpoint-8) ends at the same metrics."""
    import shutil

    from hf_bert_tasks.finetune import recipe as finetune

    src = os.path.join(uninterrupted, "checkpoint-8")
    if not os.path.isdir(src):
        pytest.fail(f"expected {src} (save_steps 4, save_total_limit 2, 12 steps)")
    ckpt = tmp_path / "saved" / "checkpoint-8"
    shutil.copytree(src, ckpt)
    out = tmp_path / "from-path"
    finetune.main(_flags(tiny_bert_dir, mrpc_dir, out, "--resume_from_checkpoint", str(ckpt)))
    for key, value in _eval_metrics(uninterrupted).items():
        assert _eval_metrics(out)[key] == pytest.approx(value, abs=1e-6), key


def test_finished_run_is_not_overwritten_without_a_flag(uninterrupted, tiny_bert_dir, mrpc_dir):
    from hf_bert_tasks.finetune import recipe as finetune

    before = os.path.getmtime(os.path.join(uninterrupted, "all_results.json"))
    with pytest.raises(FileExistsError, match="finished run.*--overwrite_output_dir"):
        finetune.main(_flags(tiny_bert_dir, mrpc_dir, uninterrupted))
    assert os.path.getmtime(os.path.join(uninterrupted, "all_results.json")) == before


def test_auto_resume_does_not_count_as_permission_to_redo_a_finished_run(uninterrupted, tiny_bert_dir, mrpc_dir):
    from hf_bert_tasks.finetune import recipe as finetune

    with pytest.raises(FileExistsError, match="finished run"):
        finetune.main(_flags(tiny_bert_dir, mrpc_dir, uninterrupted, "--resume_from_checkpoint", "auto"))


# ----------------------------------------------------------------------------------------------- pretraining
CORPUS_DOCS = [
    [f"{n} took the {w} to the {p} ." for w in ("cat", "dog", "mat", "rug", "kite")]
    for n in ("anna", "oskar", "rosa", "maria")
    for p in ("mill", "barn", "quay")
]


def _pretrain_flags(model, corpus, out, masking, *extra):
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
        masking,
        "--validation_split_percentage",
        "25",
        "--max_steps",
        "8",
        "--save_steps",
        "4",
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


def _kill_at_step_6(script_args, root) -> None:
    marker, script = root / "at-step-6", root / "killable.py"
    script.write_text(KILLABLE, encoding="utf-8")
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.Popen(
        [sys.executable, str(script), str(marker), "6", *script_args],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.time() + 300
    while not marker.exists():
        if proc.poll() is not None:
            raise AssertionError(f"the run ended before step 6 (rc {proc.returncode}):\n{proc.stderr.read()[-4000:]}")
        if time.time() > deadline:
            proc.kill()
            raise AssertionError("the run did not reach step 6 within 300 s")
        time.sleep(0.2)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()


@pytest.mark.parametrize("masking", ["static", "dynamic"])
def test_pretraining_resumes_after_kill_to_the_uninterrupted_result(masking, tiny_bert_dir, tmp_path):
    """Pretrain 8 steps (checkpoint every 4), kill -9 at step 6, resume with ``--resume_from_checkpoint True``."""
    from hf_bert_tasks.pretraining import recipe as pretrain

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in CORPUS_DOCS) + "\n", encoding="utf-8")
    reference = pretrain.main(_pretrain_flags(tiny_bert_dir, str(corpus), tmp_path / "ref", masking))
    _kill_at_step_6(["pretrain", *_pretrain_flags(tiny_bert_dir, str(corpus), tmp_path / "run", masking)], tmp_path)
    assert "checkpoint-4" in os.listdir(tmp_path / "run")
    resumed = pretrain.main(
        _pretrain_flags(tiny_bert_dir, str(corpus), tmp_path / "run", masking, "--resume_from_checkpoint", "True")
    )
    ref, res = reference["phases"][0], resumed["phases"][0]
    assert res["steps"] == ref["steps"] == 8
    # 8 steps of batch 8 over fewer instances: the run crosses an epoch boundary, so dynamic masks of epochs 0 and 1
    # (keyed by seed, epoch, idx) are both exercised after the resume.
    assert ref["train_instances"] < 64
    logs = {name: {h["step"]: h for h in p["history"] if "loss" in h} for name, p in (("ref", ref), ("res", res))}
    assert sorted(logs["res"]) == list(range(1, 9))
    # Steps 5-8 are recomputed after the resume (the killed run's steps 5-6 were lost). Same process kind, same
    # kernels, same inputs: the losses agree to float32 rounding of the restored optimizer state (1e-6 absolute, for
    # losses near 8); a different mask changes the MLM loss of a step by far more (> 0.01 on this data).
    for step in (5, 6, 7, 8):
        for key in ("loss", "mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"):
            assert logs["res"][step][key] == pytest.approx(logs["ref"][step][key], abs=1e-6), (step, key)
    for key in ("eval_loss", "eval_mlm_accuracy", "eval_nsp_accuracy", "eval_mlm_loss"):
        assert res["final_eval"][key] == pytest.approx(ref["final_eval"][key], abs=1e-6), key
