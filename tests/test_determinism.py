"""Same seed -> same metrics (CPU): two fine-tunes with ``--seed 5`` agree exactly; another seed does not.

Dropout is on (the tiny model keeps BERT's 0.1), so the seed must reach model init of the head, data order and
dropout masks (``transformers.set_seed`` in the recipe).
"""

import json
import os

import pytest

from tests.conftest import SAMPLES, tiny_run_argv


@pytest.fixture(scope="module")
def sst2_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("sst2")
    for name, rows in (("train.tsv", 40), ("dev.tsv", 24)):
        with open(os.path.join(SAMPLES, "SST-2", name), encoding="utf-8") as f:
            lines = f.read().splitlines()[: rows + 1]
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(out)


def _run(model, data, out, seed) -> dict:
    from hf_bert_tasks.finetune import recipe as finetune

    finetune.main(
        tiny_run_argv(
            "sst2",
            model,
            out,
            "--do_train",
            "--do_eval",
            data_dir=data,
            num_train_epochs=2,
            per_device_train_batch_size=8,
            learning_rate="1e-3",
            seed=seed,
            eval_strategy="no",
        )
    )
    with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
        return {k: v for k, v in json.load(f).items() if k in ("train_loss", "eval_loss", "eval_accuracy")}


@pytest.fixture(scope="module")
def three_runs(tiny_bert_dir, sst2_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("det")
    return (
        _run(tiny_bert_dir, sst2_dir, root / "a", 5),
        _run(tiny_bert_dir, sst2_dir, root / "b", 5),
        _run(tiny_bert_dir, sst2_dir, root / "c", 6),
    )


#: Same seed, same process, same data: the same computation, but the second run's tensors live at other addresses
#: and BLAS may pick alignment-dependent kernels, so losses agree to float32 rounding (1e-6 relative), not bit for bit.
#: Another seed moves them by far more: measured 6.1e-5 relative on train_loss and 8.7e-4 on eval_loss with random
#: batches (SST-2's default since c2bf489; 6e-4 on train_loss with length-grouped ones); the next test asks for 10x the
#: tolerance.
SAME_SEED_RTOL = 1e-6


def test_same_seed_gives_identical_metrics(three_runs):
    first, second, _ = three_runs
    assert set(first) == set(second) == {"train_loss", "eval_loss", "eval_accuracy"}
    assert second["eval_accuracy"] == first["eval_accuracy"]  # 24 argmax predictions: the same answers
    for key in ("train_loss", "eval_loss"):
        assert second[key] == pytest.approx(first[key], rel=SAME_SEED_RTOL, abs=0.0), key


def test_another_seed_gives_different_losses(three_runs):
    first, _, other = three_runs
    for key in ("train_loss", "eval_loss"):  # far outside the same-seed tolerance: the seed reached the run
        assert other[key] != pytest.approx(first[key], rel=10 * SAME_SEED_RTOL), key
