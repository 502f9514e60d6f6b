"""Pretraining on 2 processes (torchrun, gloo on CPU) gives the metrics of 1 process: the same dynamic masks (keyed by
example, not by rank), the same per-token losses per step, and eval metrics without accelerate's padding duplicates.

The eval set (34 instances with the sample tokenizer's vocabulary) does not divide by the global eval batch (2 x 4 = 8): accelerate pads the last batch
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
    # 38 training instances = 3 global batches of 14 per epoch, the third with 10 only: under DDP accelerate fills it
    # with 4 repeated instances (like DistributedSampler), so step 3 differs by construction and is not compared;
    # steps 4-5 are epoch 1's full batches (--dataloader_drop_last is no way out: it drops eval batches too)
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


def test_eval_metrics_on_two_processes_drop_the_padding_duplicates(runs):
    single, ddp = runs["single"], runs["ddp"]
    assert single["eval_instances"] == ddp["eval_instances"] == 34  # 34 % 8 = 2: the last global batch is padded
    for key in ("eval_mlm_accuracy", "eval_nsp_accuracy"):
        # counts of correct predictions over the same instances with the same weights: equal up to float32 argmax
        # ties (none expected), compared to 1e-6
        assert ddp["final_eval"][key] == pytest.approx(single["final_eval"][key], abs=1e-6), key
    for key in ("eval_mlm_loss", "eval_nsp_loss", "eval_loss"):
        # the same sums, added in another order and with another padding width: float32 rounding (1e-5 relative)
        assert ddp["final_eval"][key] == pytest.approx(single["final_eval"][key], rel=1e-5), key


def test_train_losses_on_two_processes_equal_one_process(runs):
    assert runs["single"]["train_instances"] == 38  # 14 + 14 + 10 per epoch
    logs = {m: [h for h in r["history"] if "loss" in h] for m, r in runs.items()}
    assert [h["step"] for h in logs["ddp"]] == [h["step"] for h in logs["single"]] == [1, 2, 3, 4, 5]
    full = [(a, b) for a, b in zip(logs["single"], logs["ddp"]) if a["step"] != 3]  # step 3: DDP-padded batch
    for a, b in full:
        for key in ("loss", "mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"):
            # per-token MLM / per-example NSP sums over the global batch (2 ranks x 7 vs 14), same masks (keyed by
            # example): float32 rounding only (rounded to 4 decimals in the log for the metrics)
            assert b[key] == pytest.approx(a[key], rel=1e-5, abs=1e-4), (a["step"], key)
    # 3 steps per epoch: steps 4-5 are epoch 1, whose dynamic masks also agree across the runs.
    # the masks differ between steps (new batches) but not between the runs: the MLM loss changes from step to step
    assert len({h["mlm_loss"] for h in logs["single"]}) > 1
