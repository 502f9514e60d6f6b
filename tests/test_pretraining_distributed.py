"""Pretraining on 2 processes (torchrun, gloo on CPU) gives the metrics of 1 process: the same dynamic masks (keyed by
example, not by rank), the same per-token losses per step, and eval metrics without accelerate's padding duplicates.

The eval set (held-out documents; 25 instances with the sample tokenizer's vocabulary) does not divide by the global
eval batch (2 x 4 = 8): accelerate pads the last batch
with repeated instances, which ``gather_for_metrics`` must drop. Dropout is off and the learning rate 0 (the weights
stay those of the checkpoint; Adam would magnify float rounding between the runs), so both runs compute the same
sums, added in another order: agreement to float32 rounding.
"""

import json
import os
import subprocess
import sys

import pytest

#: torchrun + 3 recipe runs: ~1 min of CPU (3 min wall on the loaded 2-core machine), above the ~30 s default-suite budget
pytestmark = pytest.mark.slow

from tests.conftest import REPO, TORCHRUN_EXIT

DRIVER = (
    """
import sys
from hf_bert_tasks.pretraining import recipe as pretrain
pretrain.main(sys.argv[1:])
"""
    + TORCHRUN_EXIT
)

NAMES, PLACES = ["anna", "oskar", "rosa", "maria"], ["paris", "lima", "oslo"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, sample_tokenizer):
    from hf_bert_tasks.utils.modeling import build_random_bert

    root = tmp_path_factory.mktemp("ddp-pretrain")
    model = build_random_bert(
        str(root / "tiny"),
        sample_tokenizer,
        preset="tiny",
        seed=0,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    docs = [
        [
            f"{NAMES[d % 4]} took the {w} to {PLACES[(d + k) % 3]} ."
            for k, w in enumerate(["cat", "dog", "mat", "rug", "kite", "pear"])
        ]
        for d in range(16)
    ]
    corpus = root / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in docs) + "\n", encoding="utf-8")
    (root / "driver.py").write_text(DRIVER, encoding="utf-8")
    common = [
        "--train_files",
        str(corpus),
        "--model_name_or_path",
        model,
        "--max_seq_length",
        "24",
        "--validation_split_percentage",
        "50",
        "--max_steps",
        "5",
        "--eval_strategy",
        "no",
        "--save_strategy",
        "no",
        "--logging_steps",
        "1",
        "--seed",
        "7",
        "--learning_rate",
        "0",
        "--per_device_eval_batch_size",
        "4",
        "--report_to",
        "none",
        "--disable_tqdm",
        "True",
        "--dataset_cache_dir",
        str(root / "cache"),
        "--mlm_probability",
        "0.3",
    ]
    env = dict(
        os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS="1"
    )
    out = {}
    # global train batch 14 (1 x 14 or 2 x 7): a last batch of an epoch with fewer instances is filled by accelerate
    # with repeated ones under DDP (like DistributedSampler), so that step differs by construction and is not
    # compared (--dataloader_drop_last is no way out: it drops eval batches too); see padded_steps
    for mode, batch in (("single", "14"), ("ddp", "7")):
        argv = common + ["--per_device_train_batch_size", batch, "--output_dir", str(root / mode)]
        if mode == "single":
            cmd = [sys.executable, str(root / "driver.py"), *argv]
        else:
            cmd = [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node",
                "2",
                str(root / "driver.py"),
                *argv,
            ]
        proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
        assert proc.returncode == 0, f"{mode} run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"
        with open(root / mode / "pretraining_summary.json", encoding="utf-8") as f:
            out[mode] = json.load(f)["phases"][0]
    return out


#: global batches: train 1 x 14 or 2 x 7, eval 2 x 4 under DDP
TRAIN_BATCH, EVAL_BATCH = 14, 8


def padded_steps(train_instances: int, steps: int) -> set[int]:
    """The optimizer steps (1-based) that take an epoch's last, short batch: under DDP accelerate fills it with
    repeated instances. E.g. 38 instances: 14 + 14 + 10 per epoch, step 3 (and 6, ...); 28: none."""
    per_epoch = -(-train_instances // TRAIN_BATCH)
    if train_instances % TRAIN_BATCH == 0:
        return set()
    return {step for step in range(1, steps + 1) if step % per_epoch == 0}


def test_padded_steps_of_a_short_last_batch():
    assert padded_steps(38, 5) == {3}
    assert padded_steps(28, 5) == set()
    assert padded_steps(20, 5) == {2, 4}


def test_eval_metrics_on_two_processes_drop_the_padding_duplicates(runs):
    single, ddp = runs["single"], runs["ddp"]
    # the eval set (held-out documents; how many instances depends on the sample vocabulary) does not divide by the
    # global eval batch: the last global batch is padded, and the duplicates must be dropped
    assert single["eval_instances"] == ddp["eval_instances"] and single["eval_instances"] % EVAL_BATCH != 0
    for key in ("eval_mlm_accuracy", "eval_nsp_accuracy"):
        # counts of correct predictions over the same instances with the same weights: equal up to float32 argmax
        # ties (none expected), compared to 1e-6
        assert ddp["final_eval"][key] == pytest.approx(single["final_eval"][key], abs=1e-6), key
    for key in ("eval_mlm_loss", "eval_nsp_loss", "eval_loss"):
        # the same sums, added in another order and with another padding width: float32 rounding (1e-5 relative)
        assert ddp["final_eval"][key] == pytest.approx(single["final_eval"][key], rel=1e-5), key


def test_train_losses_on_two_processes_equal_one_process(runs):
    n = runs["single"]["train_instances"]
    assert runs["ddp"]["train_instances"] == n and n < 5 * TRAIN_BATCH  # 5 steps reach the second epoch
    logs = {m: [h for h in r["history"] if "loss" in h] for m, r in runs.items()}
    assert [h["step"] for h in logs["ddp"]] == [h["step"] for h in logs["single"]] == [1, 2, 3, 4, 5]
    skipped = padded_steps(n, 5)
    full = [(a, b) for a, b in zip(logs["single"], logs["ddp"]) if a["step"] not in skipped]
    assert len(full) >= 3
    for a, b in full:
        for key in ("loss", "mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"):
            # per-token MLM / per-example NSP sums over the global batch (2 ranks x 7 vs 14), same masks (keyed by
            # example): float32 rounding only (rounded to 4 decimals in the log for the metrics)
            assert b[key] == pytest.approx(a[key], rel=1e-5, abs=1e-4), (a["step"], key)
    # the steps past the first epoch compared above: the next epoch's dynamic masks also agree across the runs.
    # the masks differ between steps (new batches) but not between the runs: the MLM loss changes from step to step
    assert len({h["mlm_loss"] for h in logs["single"]}) > 1
