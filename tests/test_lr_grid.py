"""The §4.1 protocol: ``--lr_grid`` x ``--seeds``, selection by the mean dev metric (NaN ranks last), mean ± std,
layout, the copied-up checkpoint, resumption and the output-dir guard."""

import json
import math
import os

import pytest

from hf_bert_tasks.finetune.grid import best_run, run_folder, select_learning_rate, summarize
from tests.conftest import tiny_run_argv

NAN = float("nan")
KEY = "eval_spearmanr"


def runs_of(table):
    """``{lr: [value per seed]}`` -> the run dicts the selection reads."""
    return [{"learning_rate": lr, "seed": s + 1, KEY: v} for lr, values in table.items() for s, v in enumerate(values)]


# ----------------------------------------------------------------------------------------------- pure selection
def test_python_max_keeps_a_leading_nan():
    # the bug this module fixes: every comparison with NaN is False, so max() never replaces a leading NaN
    assert math.isnan(max([NAN, 0.80, 0.85, 0.83]))


def test_a_nan_run_at_the_first_learning_rate_does_not_win():
    # the case: 5e-5 ends with constant predictions (Spearman NaN), the others score 0.80 / 0.85 / 0.83
    selected, per_lr = select_learning_rate(runs_of({5e-5: [NAN], 4e-5: [0.80], 3e-5: [0.85], 2e-5: [0.83]}), KEY)
    assert selected == 3e-5
    assert [s["learning_rate"] for s in per_lr] == [5e-5, 4e-5, 3e-5, 2e-5]
    assert per_lr[0]["mean"] is None and per_lr[0]["degenerate_runs"] == 1


def test_missing_and_infinite_metrics_count_as_worst_too():
    runs = runs_of({5e-5: [None], 4e-5: [float("inf")], 3e-5: [0.10]})
    assert select_learning_rate(runs, KEY)[0] == 3e-5


def test_one_nan_seed_ranks_its_learning_rate_below_every_finite_mean():
    # 5e-5 has the best single runs (0.9) but one degenerate restart: it is not ignored, the lr ranks last
    selected, per_lr = select_learning_rate(runs_of({5e-5: [0.90, NAN, 0.90], 2e-5: [0.50, 0.50, 0.50]}), KEY)
    assert selected == 2e-5
    assert per_lr[0] == {"learning_rate": 5e-5, "mean": None, "std": None, "num_runs": 3, "degenerate_runs": 1}


def test_the_mean_over_seeds_decides_not_the_best_single_run():
    table = {4e-5: [0.90, 0.60, 0.60], 3e-5: [0.75, 0.76, 0.77]}
    selected, per_lr = select_learning_rate(runs_of(table), KEY)
    assert selected == 3e-5
    # by hand: 4e-5 mean (0.9+0.6+0.6)/3 = 0.7; sample std sqrt((0.2^2 + 0.1^2 + 0.1^2) / (3-1)) = sqrt(0.03)
    # 3e-5 mean 0.76; sample std sqrt((0.01^2 + 0 + 0.01^2) / 2) = 0.01
    assert per_lr[0]["mean"] == pytest.approx(0.7, abs=1e-12)  # float sums of 3 values: a few ulps
    assert per_lr[0]["std"] == pytest.approx(math.sqrt(0.03), abs=1e-12)
    assert per_lr[1]["mean"] == pytest.approx(0.76, abs=1e-12)
    assert per_lr[1]["std"] == pytest.approx(0.01, abs=1e-12)


def test_equal_means_keep_the_first_learning_rate_of_the_grid():
    assert select_learning_rate(runs_of({5e-5: [0.5], 2e-5: [0.5]}), KEY)[0] == 5e-5


def test_when_every_learning_rate_is_degenerate_the_first_is_kept():
    assert select_learning_rate(runs_of({5e-5: [NAN], 2e-5: [NAN]}), KEY)[0] == 5e-5


def test_one_seed_has_no_standard_deviation():
    assert summarize([0.8]) == {"mean": 0.8, "std": None, "num_runs": 1, "degenerate_runs": 0}


def test_best_seed_skips_a_nan_run():
    runs = [{"seed": 1, KEY: NAN}, {"seed": 2, KEY: 0.4}, {"seed": 3, KEY: 0.6}]
    assert best_run(runs, KEY)["seed"] == 3


def test_run_folders():
    assert run_folder(5e-5, 1, True, True) == os.path.join("lr_5e-05", "seed_1")
    assert run_folder(2e-5, 3, True, False) == "lr_2e-05"
    assert run_folder(2e-5, 3, False, True) == "seed_3"


def test_malformed_seeds_fail_before_any_data_is_read():
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    with pytest.raises(ValueError, match="--seeds"):
        FinetuneTrainingArguments(output_dir="x", seeds="1,one")
    with pytest.raises(ValueError, match="--seeds"):
        FinetuneTrainingArguments(output_dir="x", seeds="1,1")


# --------------------------------------------------------------------------------------------------- end to end
FAST = [
    "--max_train_samples",
    "48",
    "--max_eval_samples",
    "32",
    "--num_train_epochs",
    "1",
    "--per_device_train_batch_size",
    "16",
    "--disable_tqdm",
    "true",
    "--do_train",
    "--do_eval",
]


def stsb(model_dir, out, cache, *extra):
    from hf_bert_tasks.finetune import recipe as finetune

    return finetune.main(tiny_run_argv("stsb", model_dir, out, "--tokenized_cache_dir", str(cache), *FAST, *extra))


def read(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture(scope="module")
def grid(tiny_bert_dir, tmp_path_factory):
    """STS-B, lr 1000 (diverges to constant predictions: Spearman NaN) and 1e-3, seeds 1 and 2."""
    root = tmp_path_factory.mktemp("grid")
    out = root / "out"
    stsb(tiny_bert_dir, out, root / "cache", "--lr_grid", "1000,1e-3", "--seeds", "1,2")
    return out


def test_every_lr_and_seed_has_its_folder(grid):
    for rel in ("lr_1000/seed_1", "lr_1000/seed_2", "lr_0.001/seed_1", "lr_0.001/seed_2"):
        assert (grid / rel / "all_results.json").is_file(), rel
        assert (grid / rel / "model.safetensors").is_file(), rel
    runs = read(grid / "lr_grid_results.json")["runs"]
    assert [(r["learning_rate"], r["seed"], r["path"]) for r in runs] == [
        (1000.0, 1, os.path.join("lr_1000", "seed_1")),
        (1000.0, 2, os.path.join("lr_1000", "seed_2")),
        (0.001, 1, os.path.join("lr_0.001", "seed_1")),
        (0.001, 2, os.path.join("lr_0.001", "seed_2")),
    ]


def test_the_diverged_first_lr_is_not_selected(grid):
    summary = read(grid / "lr_grid_results.json")
    diverged = [r for r in summary["runs"] if r["learning_rate"] == 1000.0]
    assert all(r[KEY] is None for r in diverged)  # NaN written as null
    assert summary["selected_learning_rate"] == 0.001 == read(grid / "all_results.json")["selected_learning_rate"]
    assert summary["per_learning_rate"][0]["degenerate_runs"] == 2


def test_mean_and_sample_std_over_seeds_are_reported(grid):
    values = [read(grid / f"lr_0.001/seed_{s}" / "all_results.json")[KEY] for s in (1, 2)]
    mean = (values[0] + values[1]) / 2
    std = abs(values[0] - values[1]) / math.sqrt(2)  # ddof=1 with two values: |a - b| / sqrt(2)
    results = read(grid / "all_results.json")
    # statistics.mean/stdev vs this closed form: a few ulps apart
    assert results[f"{KEY}_mean"] == pytest.approx(mean, abs=1e-12)
    assert results[f"{KEY}_std"] == pytest.approx(std, abs=1e-12)
    assert results["num_seeds"] == 2
    per_lr = read(grid / "lr_grid_results.json")["per_learning_rate"][1]
    assert per_lr["mean"] == pytest.approx(mean, abs=1e-12) and per_lr["std"] == pytest.approx(std, abs=1e-12)


def test_the_best_seed_of_the_selected_lr_is_copied_up(grid):
    values = {s: read(grid / f"lr_0.001/seed_{s}" / "all_results.json")[KEY] for s in (1, 2)}
    best = max(values, key=values.get)
    results = read(grid / "all_results.json")
    assert results["selected_seed"] == best and results[KEY] == values[best]
    assert (grid / "model.safetensors").read_bytes() == (
        grid / f"lr_0.001/seed_{best}" / "model.safetensors"
    ).read_bytes()
    info = read(grid / "run_info.json")
    assert info["seed"] == best and info["hyperparameters"]["learning_rate"] == 0.001


def test_the_model_card_shows_the_grid(grid):
    from hf_bert_tasks.finetune.card import build_finetune_card

    text = str(build_finetune_card(str(grid)))
    assert "Learning rate x seeds" in text and "0.001 (selected)" in text
    assert "NaN (a degenerate run)" in text and "sample standard deviation (ddof=1)" in text


@pytest.mark.parametrize("rel", [".", "lr_1000/seed_1", "lr_0.001/seed_1", "lr_0.001/seed_2"])
def test_every_saved_model_has_the_card_of_its_own_results(grid, rel):
    from huggingface_hub import ModelCard

    results = read(grid / rel / "all_results.json")
    card = ModelCard.load(grid / rel / "README.md")
    got = {r.metric_type: (r.dataset_split, r.metric_value) for r in card.data.eval_results or []}
    expected = {
        hub_id: ("validation[:32]", round(results[f"eval_{name}"], 6))
        for name, hub_id in (("pearson", "pearsonr"), ("spearmanr", "spearmanr"))
        if not math.isnan(results[f"eval_{name}"])  # a diverged run's NaN is left out of model-index
    }
    assert got == expected
    assert ("0.001 (selected)" in card.text) == (rel == ".")  # the grid's table: on the selected model's card


def test_a_finished_grid_is_not_overwritten_silently(grid, tiny_bert_dir, tmp_path):
    before = (grid / "all_results.json").read_text()
    with pytest.raises(FileExistsError, match="overwrite_output_dir"):
        stsb(tiny_bert_dir, grid, tmp_path / "cache", "--lr_grid", "1000,1e-3", "--seeds", "1,2")
    assert (grid / "all_results.json").read_text() == before


def record_trained_runs(monkeypatch) -> list[str]:
    """From now on, append the output_dir of every sub-run the recipe trains (and still train it)."""
    from hf_bert_tasks.finetune import recipe as finetuning

    trained = []
    real = finetuning.train_evaluate_predict
    monkeypatch.setattr(
        finetuning, "train_evaluate_predict", lambda *a, **k: trained.append(a[5].output_dir) or real(*a, **k)
    )
    return trained


def test_an_interrupted_grid_resumes_without_redoing_finished_runs(tiny_bert_dir, tmp_path, monkeypatch):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    first = read(out / "seed_1" / "all_results.json")
    # simulate a grid killed during the run of seed 2: its results and the top-level ones were never written
    os.remove(out / "seed_2" / "all_results.json")
    os.remove(out / "all_results.json")
    trained = record_trained_runs(monkeypatch)
    stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    assert trained == [str(out / "seed_2")]
    assert read(out / "seed_1" / "all_results.json") == first
    assert read(out / "all_results.json")["num_seeds"] == 2


def test_a_sub_run_stopped_before_its_evaluation_is_trained_again(tiny_bert_dir, tmp_path, monkeypatch, caplog):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    finished = read(out / "seed_2" / "all_results.json")
    # simulate a kill between training and evaluation of seed 2: all_results.json holds the training metrics only
    (out / "seed_2" / "all_results.json").write_text((out / "seed_2" / "train_results.json").read_text())
    os.remove(out / "seed_2" / "eval_results.json")
    os.remove(out / "all_results.json")
    trained = record_trained_runs(monkeypatch)
    with caplog.at_level("WARNING", logger="hf_bert_tasks.finetune.grid"):
        stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    assert trained == [str(out / "seed_2")]  # before the fix: reused as finished, then "need an evaluation split"
    assert "seed_2 has training results but no eval_spearmanr" in caplog.text
    again = read(out / "seed_2" / "all_results.json")
    # the same seed and settings on CPU: the same model, so the same dev metric (float kernels: a stated tolerance)
    assert again[KEY] == pytest.approx(finished[KEY], abs=1e-6)
    assert read(out / "all_results.json")["num_seeds"] == 2


def test_a_finished_grid_is_extended_with_new_seeds_without_redoing_the_old_ones(tiny_bert_dir, tmp_path, monkeypatch):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1")
    first = read(out / "seed_1" / "all_results.json")
    trained = record_trained_runs(monkeypatch)
    stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    assert trained == [str(out / "seed_2")]
    assert read(out / "seed_1" / "all_results.json") == first
    summary = read(out / "lr_grid_results.json")
    assert summary["seeds"] == [1, 2] and [r["seed"] for r in summary["runs"]] == [1, 2]
    assert summary["extended_from"]["seeds"] == [1] and summary["extended_from"]["selected_seed"] == 1
    assert read(out / "all_results.json")["num_seeds"] == 2


def test_a_finished_grid_is_not_extended_by_a_list_that_drops_its_runs(tiny_bert_dir, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1")
    before = (out / "all_results.json").read_text()
    with pytest.raises(FileExistsError, match="leaves out 1 of its runs"):
        stsb(tiny_bert_dir, out, cache, "--seeds", "2,3")
    # a superset of runs (STS-B's paper lr 2e-5 is the default), but seed_1/ would have to become lr_2e-05/seed_1/
    with pytest.raises(FileExistsError, match="would put that run in lr_2e-05"):
        stsb(tiny_bert_dir, out, cache, "--lr_grid", "2e-5,1e-3", "--seeds", "1")
    assert (out / "all_results.json").read_text() == before
    assert not (out / "seed_2").exists() and not (out / "lr_0.001").exists()


def test_resuming_with_other_settings_is_refused(tiny_bert_dir, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1")
    os.remove(out / "all_results.json")
    with pytest.raises(FileExistsError, match="num_train_epochs"):
        stsb(tiny_bert_dir, out, cache, "--seeds", "1", "--num_train_epochs", "2")


def test_an_interrupted_sub_run_with_checkpoints_is_not_restarted_silently(tiny_bert_dir, tmp_path):
    out, cache = tmp_path / "out", tmp_path / "cache"
    stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    os.remove(out / "seed_2" / "all_results.json")  # seed 2 was killed after writing a checkpoint
    os.remove(out / "all_results.json")
    (out / "seed_2" / "checkpoint-2").mkdir()
    with pytest.raises(FileExistsError, match="seed_2 holds checkpoints"):
        stsb(tiny_bert_dir, out, cache, "--seeds", "1,2")
    assert (out / "seed_2" / "checkpoint-2").is_dir()


def test_the_grid_summary_fits_80_columns_and_marks_the_selected_rate():
    from hf_bert_tasks.finetune.grid import grid_table_lines

    per_lr = [
        {"learning_rate": 1000.0, "mean": None, "std": None, "num_runs": 2, "degenerate_runs": 1, "best_seed": 2},
        {"learning_rate": 1e-3, "mean": 0.8123, "std": 0.0101, "num_runs": 2, "degenerate_runs": 0, "best_seed": 1},
    ]
    keys = {"selected_learning_rate": 1e-3, "selected_seed": 1}
    lines = grid_table_lines(per_lr, "eval_spearmanr", keys, "runs/stsb/lr_0.001/seed_1", width=80)
    assert max(map(len, lines)) <= 80
    assert lines[1].split() == [
        "learning",
        "rate",
        "mean",
        "eval_spearmanr",
        "std",
        "runs",
        "NaN",
        "runs",
        "best",
        "seed",
    ]
    assert lines[3].split() == ["1000", "—", "—", "2", "1", "2"]
    assert lines[4].split() == ["0.001", "(selected)", "0.8123", "0.0101", "2", "0", "1"]
    assert "runs/stsb/lr_0.001/seed_1" in " ".join(lines)
