"""training_curves.png: the plotted series equal trainer_state.json's log_history; every recipe mode writes the PNG."""

import json

import numpy as np
import pytest

from hf_bert_tasks.finetune.record import CURVES_FILE, curve_series, plot_training_curves, write_training_curves
from tests.conftest import tiny_run_argv

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

#: the shape of a Trainer log_history (transformers 5.24): train logs, an eval per epoch, the final summary.
LOG_HISTORY = [
    {"loss": 0.7, "grad_norm": 1.5, "learning_rate": 0.001, "epoch": 0.5, "step": 10},
    {"loss": 0.6, "grad_norm": 1.2, "learning_rate": 0.0008, "epoch": 1.0, "step": 20},
    {"eval_loss": 0.65, "eval_accuracy": 0.55, "eval_f1": 0.5, "eval_runtime": 0.3, "epoch": 1.0, "step": 20},
    {"loss": 0.4, "grad_norm": 0.9, "learning_rate": 0.0002, "epoch": 1.5, "step": 30},
    {"eval_loss": 0.45, "eval_accuracy": 0.8, "eval_f1": 0.75, "eval_runtime": 0.3, "epoch": 2.0, "step": 40},
    {"train_runtime": 5.0, "train_loss": 0.55, "total_flos": 1.0, "epoch": 2.0, "step": 40},
]


def test_series_are_the_log_history_values():
    series = curve_series(LOG_HISTORY, "f1")
    assert series["train_loss"] == ([10, 20, 30], [0.7, 0.6, 0.4])
    assert series["eval_loss"] == ([20, 40], [0.65, 0.45])
    assert series["eval_metric"] == ([20, 40], [0.5, 0.75])
    assert series["metric"] == "eval_f1"


def test_without_a_metric_the_first_eval_score_is_plotted():
    # eval_loss and eval_runtime are not scores; eval_accuracy is the first key that is.
    series = curve_series(LOG_HISTORY)
    assert series["metric"] == "eval_accuracy"
    assert series["eval_metric"] == ([20, 40], [0.55, 0.8])


def test_nan_values_are_left_out():
    history = [{"loss": float("nan"), "step": 1}, {"loss": 0.3, "step": 2}, {"eval_loss": float("inf"), "step": 2}]
    series = curve_series(history)
    assert series["train_loss"] == ([2], [0.3])
    assert series["eval_loss"] == ([], [])


def test_an_entry_without_step_is_a_value_error():
    with pytest.raises(ValueError, match=r"log_history\[1\].*step"):
        curve_series([{"loss": 0.3, "step": 1}, {"loss": 0.2}])


def test_png_file_is_written_from_trainer_state(tmp_path):
    (tmp_path / "trainer_state.json").write_text(json.dumps({"log_history": LOG_HISTORY}), encoding="utf-8")
    path = write_training_curves(str(tmp_path), "accuracy", "sst2")
    assert path == str(tmp_path / CURVES_FILE)
    data = (tmp_path / CURVES_FILE).read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 1000


def test_empty_history_still_gives_a_png(tmp_path):
    plot_training_curves([], str(tmp_path / "x.png"))
    assert (tmp_path / "x.png").read_bytes()[:8] == PNG_SIGNATURE


@pytest.mark.parametrize("mode", ["finetune", "lora", "feature_based"])
def test_every_recipe_mode_writes_curves_of_its_own_log_history(tmp_path, tiny_bert_dir, mode):
    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path / mode
    finetune.main(
        tiny_run_argv(
            "sst2",
            tiny_bert_dir,
            out,
            "--mode",
            mode,
            "--do_train",
            "--do_eval",
            max_train_samples=32,
            max_eval_samples=16,
            num_train_epochs=2,
            per_device_train_batch_size=16,
            logging_steps=1,
            disable_tqdm="true",
        )
    )
    assert (out / CURVES_FILE).read_bytes()[:8] == PNG_SIGNATURE
    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    series = curve_series(history, "accuracy")
    results = json.loads((out / "all_results.json").read_text())
    # 32 examples, batch 16, 2 epochs = 4 optimizer steps; feature-based logs one loss per epoch.
    assert series["train_loss"][0] == [1, 2, 3, 4]  # every mode trains through Trainer, logging every step
    # the last plotted eval point is the run's final dev accuracy, at the last step
    assert series["eval_metric"][0][-1] == 4
    assert series["eval_metric"][1][-1] == results["eval_accuracy"]


def test_report_to_tensorboard_writes_the_logged_losses(tmp_path, tiny_bert_dir):
    pytest.importorskip("tensorboard", reason="the `tensorboard` extra is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path / "tb"
    finetune.main(
        tiny_run_argv(
            "sst2",
            tiny_bert_dir,
            out,
            "--do_train",
            "--do_eval",
            max_train_samples=32,
            max_eval_samples=16,
            num_train_epochs=1,
            per_device_train_batch_size=16,
            logging_steps=1,
            report_to="tensorboard",
            disable_tqdm="true",
        )
    )
    runs = list((out / "runs").iterdir())  # Trainer's default: <output_dir>/runs/<date>_<host>
    assert len(runs) == 1
    events = EventAccumulator(str(runs[0]))
    events.Reload()
    logged = [(e.step, e.value) for e in events.Scalars("train/loss")]
    history = json.loads((out / "trainer_state.json").read_text())["log_history"]
    expected = curve_series(history)["train_loss"]
    assert [s for s, _ in logged] == expected[0]
    # TensorBoard stores float32 scalars: equal to the logged float64 values up to float32 rounding
    np.testing.assert_allclose([v for _, v in logged], expected[1], rtol=1e-6)


def test_training_curves_mark_the_baseline_and_start_at_step_zero(tmp_path, monkeypatch):
    """Issue 44 item 2: one eval point at step 200 is drawn on an axis from 0, beside the trivial baseline."""
    import matplotlib.figure

    from hf_bert_tasks.finetune.record import plot_training_curves

    saved = {}
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: saved.update(axes=fig.axes))
    history = [
        {"loss": 0.7, "step": 100},
        {"loss": 0.69, "step": 200},
        {"eval_accuracy": 0.51, "step": 200},
        {"baseline_accuracy": 0.509, "step": 200},
    ]
    plot_training_curves(history, str(tmp_path / "c.png"), "accuracy")
    left, right = saved["axes"]
    assert left.get_xlim()[0] == 0 and right.get_xlim()[0] == 0
    lines = {line.get_label(): list(line.get_ydata()) for line in right.lines}
    assert lines["trivial baseline (best constant) 0.509"] == [0.509, 0.509]
    assert lines["dev accuracy"] == [0.51]
