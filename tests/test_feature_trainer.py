"""Feature-based mode trains with the recipe's ``Trainer`` on the feature cache: every TrainingArguments flag works.

Runs ``hf-bert-tasks finetune --mode feature_based`` (cache on, the default) on the MRPC sample with a tiny random
BERT. Expected step counts and learning rates are computed by hand in each test from the flags.
"""

import json
import os

import pytest
import torch

from tests.conftest import REPO, SAMPLES

BASE = [
    "--task",
    "mrpc",
    "--data_dir",
    os.path.join(SAMPLES, "MRPC"),
    "--mode",
    "feature_based",
    "--feature_strategy",
    "last",
    "--max_train_samples",
    "32",
    "--max_eval_samples",
    "16",
    "--per_device_train_batch_size",
    "8",
    "--report_to",
    "none",
    "--seed",
    "0",
]


def run(tiny_bert_dir, out, cache, *flags, capture=None):
    """``finetune.main`` with :data:`BASE`; ``capture`` (a dict) receives the model Trainer trained."""
    from hf_bert_tasks.finetune import recipe as finetune
    from hf_bert_tasks.modes.feature_based import mode as feature_based

    with pytest.MonkeyPatch.context() as mp:
        if capture is not None:
            real = feature_based.prepare_feature_cache

            def spy(model, *args, **kwargs):
                capture["model"] = model
                return real(model, *args, **kwargs)

            mp.setattr(feature_based, "prepare_feature_cache", spy)
        calls = {"encode": 0}
        real_encode = feature_based.BertFeatureBasedModel.encode

        def counting_encode(self, *args, **kwargs):
            calls["encode"] += 1
            return real_encode(self, *args, **kwargs)

        mp.setattr(feature_based.BertFeatureBasedModel, "encode", counting_encode)
        metrics = finetune.main(
            BASE
            + [
                "--model_name_or_path",
                tiny_bert_dir,
                "--output_dir",
                str(out),
                "--feature_cache_dir",
                str(cache),
                *flags,
            ]
        )
    return metrics, calls["encode"]


def state(out):
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def flags_run(tmp_path_factory, tiny_bert_dir):
    """3 steps, constant lr 1e-3, evaluation and a checkpoint every step, best model (lowest eval_loss) at the end."""
    root = tmp_path_factory.mktemp("fb-trainer")
    capture = {}
    metrics, _ = run(
        tiny_bert_dir,
        root / "out",
        root / "cache",
        "--max_steps",
        "3",
        "--logging_steps",
        "1",
        "--learning_rate",
        "1e-3",
        "--lr_scheduler_type",
        "constant",
        "--warmup_steps",
        "0",
        "--eval_strategy",
        "steps",
        "--eval_steps",
        "1",
        "--save_strategy",
        "steps",
        "--save_steps",
        "1",
        "--save_total_limit",
        "5",
        "--load_best_model_at_end",
        "--metric_for_best_model",
        "loss",
        "--do_train",
        "--do_eval",
        capture=capture,
    )
    return {"out": str(root / "out"), "metrics": metrics, "model": capture["model"]}


def test_max_steps_gives_that_many_optimizer_steps(flags_run):
    assert state(flags_run["out"])["global_step"] == 3


def test_lr_scheduler_type_sets_the_logged_learning_rate(flags_run):
    # constant, no warm-up: 1e-3 at every step (the default linear schedule would log 1e-3, 6.7e-4, 3.3e-4)
    lrs = [e["learning_rate"] for e in state(flags_run["out"])["log_history"] if "learning_rate" in e]
    assert lrs == [1e-3, 1e-3, 1e-3]


def test_evaluation_during_training_is_logged_at_every_eval_step(flags_run):
    # checkpoint-3 holds the state saved during training: one evaluation per eval step
    with open(os.path.join(flags_run["out"], "checkpoint-3", "trainer_state.json"), encoding="utf-8") as f:
        during = [e["step"] for e in json.load(f)["log_history"] if "eval_loss" in e]
    assert during == [1, 2, 3]
    # the run's trainer_state.json adds the recipe's final evaluation (after training, at the last step)
    steps = [e["step"] for e in state(flags_run["out"])["log_history"] if "eval_loss" in e]
    assert steps == [1, 2, 3, 3]


def test_a_checkpoint_is_written_per_save_step(flags_run):
    assert sorted(n for n in os.listdir(flags_run["out"]) if n.startswith("checkpoint-")) == [
        "checkpoint-1",
        "checkpoint-2",
        "checkpoint-3",
    ]


def test_load_best_model_at_end_saves_the_checkpoint_with_the_lowest_eval_loss(flags_run):
    from safetensors.torch import load_file

    st = state(flags_run["out"])
    # the evaluations made during training (the run's own log_history ends with the recipe's final evaluation of
    # the chosen model at the last step, which would shadow step 3's entry here)
    with open(os.path.join(flags_run["out"], "checkpoint-3", "trainer_state.json"), encoding="utf-8") as f:
        evals = {e["step"]: e["eval_loss"] for e in json.load(f)["log_history"] if "eval_loss" in e}
    best = min(evals, key=evals.get)
    assert st["best_model_checkpoint"].endswith(f"checkpoint-{best}")
    saved = load_file(os.path.join(flags_run["out"], "model.safetensors"))
    chosen = load_file(os.path.join(flags_run["out"], f"checkpoint-{best}", "model.safetensors"))
    assert saved.keys() == chosen.keys()
    assert all(torch.equal(saved[k], chosen[k]) for k in saved)  # the same tensors, copied by Trainer


def test_first_run_builds_the_cache_and_reports_it(flags_run):
    assert flags_run["metrics"]["feature_cache_hit"] is False
    assert flags_run["metrics"]["feature_extraction_runtime"] >= 0


def test_saved_model_loads_with_auto_class_and_pipeline_and_predicts_like_the_trained_one(flags_run):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    out = flags_run["out"]
    tok = AutoTokenizer.from_pretrained(out)
    enc = tok("the cat sat on the mat", "a cat sat", return_tensors="pt")
    trained = flags_run["model"].eval()
    loaded = AutoModelForSequenceClassification.from_pretrained(out).eval()
    with torch.no_grad():
        expected = trained(**enc).logits
        got = loaded(**enc).logits
    # same weights (best checkpoint), same process and inputs; loading may re-layout buffers: float rounding only
    torch.testing.assert_close(got, expected, atol=1e-6, rtol=1e-5)
    pred = pipeline("text-classification", model=out, top_k=None)(
        {"text": "the cat sat on the mat", "text_pair": "a cat sat"}
    )
    scores = {p["label"]: p["score"] for p in pred}
    probs = expected.softmax(-1)[0]
    id2label = loaded.config.id2label
    torch.testing.assert_close(
        torch.tensor([scores[id2label[i]] for i in range(len(id2label))]), probs, atol=1e-6, rtol=1e-5
    )


def test_gradient_accumulation_divides_the_optimizer_steps(tmp_path, tiny_bert_dir):
    # 32 examples / batch 8 = 4 batches per epoch; accumulating 2 gives 2 optimizer steps
    run(
        tiny_bert_dir,
        tmp_path / "acc",
        tmp_path / "cache",
        "--num_train_epochs",
        "1",
        "--gradient_accumulation_steps",
        "2",
        "--do_train",
        "--save_strategy",
        "no",
    )
    assert state(tmp_path / "acc")["global_step"] == 2


def test_resume_continues_from_the_checkpoint_and_hits_the_cache(tmp_path, tiny_bert_dir):
    out, cache = tmp_path / "res", tmp_path / "cache"
    common = [
        "--do_train",
        "--save_strategy",
        "steps",
        "--save_steps",
        "1",
        "--save_total_limit",
        "5",
        "--logging_steps",
        "1",
    ]
    first, encoded = run(tiny_bert_dir, out, cache, "--max_steps", "2", *common)
    assert first["feature_cache_hit"] is False and encoded > 0
    os.remove(out / "all_results.json")  # as if the job had been killed after its last checkpoint
    files = sorted(os.listdir(next(cache.iterdir())))
    second, encoded = run(tiny_bert_dir, out, cache, "--max_steps", "4", "--resume_from_checkpoint", "auto", *common)
    st = state(out)
    assert st["global_step"] == 4
    assert [e["step"] for e in st["log_history"] if "loss" in e] == [1, 2, 3, 4]
    assert second["feature_cache_hit"] is True and encoded == 0  # the encoder never ran: the cache file was read
    assert sorted(os.listdir(next(cache.iterdir()))) == files


DRIVER = """
import sys
from hf_bert_tasks.finetune import recipe as finetune
finetune.main(sys.argv[1:])
"""


def test_two_processes_train_one_head_and_write_one_output(tmp_path, tiny_bert_dir):
    """torchrun, 2 CPU processes (gloo): the cache is built once (rank 0 first), one model is saved."""
    import subprocess
    import sys

    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    out, cache = tmp_path / "ddp", tmp_path / "cache"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]), OMP_NUM_THREADS="1")
    argv = BASE + [
        "--model_name_or_path",
        tiny_bert_dir,
        "--output_dir",
        str(out),
        "--feature_cache_dir",
        str(cache),
        "--per_device_train_batch_size",
        "4",
        "--max_steps",
        "3",
        "--do_train",
        "--save_strategy",
        "no",
    ]
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nproc_per_node",
            "2",
            "--master_port",
            str(free_port()),
            str(driver),
            *argv,
        ],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert state(out)["global_step"] == 3
    with open(out / "all_results.json", encoding="utf-8") as f:
        assert json.load(f)["train_samples"] == 32
    entries = os.listdir(next(cache.iterdir()))
    assert [n for n in entries if n.endswith(".arrow")] and not [n for n in entries if n.startswith("tmp")]
    assert len([n for n in entries if n.endswith(".arrow")]) == 1  # one train cache, written once
    assert [n for n in os.listdir(out) if n.endswith(".safetensors")] == ["model.safetensors"]


def free_port() -> int:
    """A TCP port free right now (a fixed port collides when two test runs share a machine)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
