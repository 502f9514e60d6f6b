"""Issue 58 items 4-5: every run's curves drawn, checked as a person sees them — each chart rendered with
matplotlib's Agg canvas and the Axes asserted on (what lines are drawn, their markers, the legend's entries, the
baseline, chance and most-frequent-token lines, the phase boundary)."""

import pytest

from hf_bert_tasks.finetune.record import curve_series, plot_training_curves
from hf_bert_tasks.pretraining.card import plot_pretraining_curves, pretraining_curves
from hf_bert_tasks.pretraining.chance import chance_levels


@pytest.fixture
def saved_figures(monkeypatch):
    """The figures the code saves (``Figure.savefig`` replaced: nothing written), in order."""
    import matplotlib.figure

    figures = []
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **k: figures.append(fig))
    return figures


def legend_labels(ax) -> list[str]:
    """The texts of ``ax``'s legend, ``[]`` without one."""
    legend = ax.get_legend()
    return [t.get_text() for t in legend.get_texts()] if legend else []


#: a run of 3 steps with --logging_steps 500: Trainer logs the final summary only, then the final evaluation
SHORT_RUN = [
    {"train_runtime": 1.2, "train_loss": 0.6931, "epoch": 1.0, "step": 3},
    {"eval_loss": 0.69, "eval_accuracy": 0.52, "epoch": 1.0, "step": 3},
    {"baseline_accuracy": 0.509, "step": 3},
]


def test_a_run_shorter_than_logging_steps_shows_its_train_loss():
    series = curve_series(SHORT_RUN, "accuracy")
    assert series["train_loss"] == ([3], [0.6931])
    assert series["train_loss_label"] == "train loss (mean over the run: train_loss)"


def test_a_logged_loss_is_not_replaced_by_the_summary():
    history = [{"loss": 0.7, "step": 1}, {"train_loss": 0.65, "step": 2}]
    assert curve_series(history)["train_loss"] == ([1], [0.7])


def test_single_points_are_drawn_with_markers_and_named_once_in_the_legend(tmp_path, saved_figures):
    plot_training_curves(SHORT_RUN, str(tmp_path / "c.png"), "accuracy")
    left, right = saved_figures[0].axes
    assert [(line.get_label(), line.get_marker()) for line in left.lines] == [
        ("train loss (mean over the run: train_loss)", "o"),
        ("eval loss", "o"),
    ]
    assert legend_labels(left) == ["train loss (mean over the run: train_loss)", "eval loss"]
    assert [line.get_marker() for line in right.lines if line.get_label() == "dev accuracy"] == ["o"]


def test_the_metric_panel_shows_its_baseline_and_one_legend_entry_per_drawn_series(tmp_path, saved_figures):
    plot_training_curves(SHORT_RUN, str(tmp_path / "c.png"), "accuracy")
    right = saved_figures[0].axes[1]
    drawn = [line.get_label() for line in right.lines]
    assert drawn == ["trivial baseline (best constant) 0.509", "dev accuracy"]
    assert legend_labels(right) == drawn
    low, high = right.get_ylim()
    assert low <= 0.509 <= high


def test_no_legend_without_a_drawn_series(tmp_path, saved_figures):
    plot_training_curves([{"train_runtime": 1.0, "step": 0}], str(tmp_path / "c.png"))
    for ax in saved_figures[0].axes:
        assert len(ax.lines) == 0 and ax.get_legend() is None
        assert [t.get_text() for t in ax.texts] in (["no loss logged"], ["no evaluation logged"])


def test_the_mlm_baseline_drawn_is_the_most_frequent_tokens_share_of_the_masked_positions():
    from datasets import Dataset

    class Vocabulary:
        def convert_ids_to_tokens(self, i):
            return f"tok{i}"

    # targets 7, 7, 9 (the -100 positions are not masked): 7 is right 2 times in 3
    chance = chance_levels(Dataset.from_dict({"labels": [[-100, 7, -100], [7, 9, -100]]}), Vocabulary())
    assert chance["mlm_accuracy"] == pytest.approx(2 / 3) and chance["mlm_most_frequent_token"] == "tok7"
    assert chance_levels(Dataset.from_dict({"labels": [[-100]]}), Vocabulary()) == {}


#: two phases as ``pretraining_summary.json`` holds them: 10 steps at seq 128, then 4 at seq 512 with one eval point
TWO_PHASES = {
    "phases": [
        {
            "max_seq_length": 128,
            "steps": 10,
            "mlm_most_frequent_token_accuracy": 0.06,
            "history": [
                {"step": 5, "mlm_loss": 7.0, "mlm_accuracy": 0.05, "nsp_loss": 0.7, "nsp_accuracy": 0.49},
                {"step": 10, "mlm_loss": 6.0, "mlm_accuracy": 0.12, "nsp_loss": 0.69, "nsp_accuracy": 0.52},
                {"step": 10, "eval_mlm_loss": 6.2, "eval_mlm_accuracy": 0.1, "eval_nsp_loss": 0.7},
                {"step": 10, "eval_mlm_accuracy": 0.1, "eval_nsp_accuracy": 0.51},
            ],
        },
        {
            "max_seq_length": 512,
            "steps": 4,
            "mlm_most_frequent_token_accuracy": 0.05,
            "history": [{"step": 4, "eval_mlm_loss": 5.9, "eval_mlm_accuracy": 0.14, "eval_nsp_accuracy": 0.5}],
        },
    ]
}


def test_pretraining_curves_record_each_phase():
    assert pretraining_curves(TWO_PHASES)["phases"] == [
        {"start": 0, "end": 10, "max_seq_length": 128, "mlm_most_frequent_token_accuracy": 0.06},
        {"start": 10, "end": 14, "max_seq_length": 512, "mlm_most_frequent_token_accuracy": 0.05},
    ]


def test_every_pretraining_panel_marks_the_phase_boundary(tmp_path):
    fig = plot_pretraining_curves(pretraining_curves(TWO_PHASES), str(tmp_path / "p.png"))
    for ax in fig.axes:
        boundary = [line for line in ax.lines if line.get_label() == "phase 2: seq 512"]
        assert len(boundary) == 1 and list(boundary[0].get_xdata()) == [10, 10], ax.get_title()


def test_phase_two_is_not_joined_to_phase_one_and_its_single_point_has_a_marker(tmp_path):
    fig = plot_pretraining_curves(pretraining_curves(TWO_PHASES), str(tmp_path / "p.png"))
    mlm_loss = fig.axes[0]
    evals = [line for line in mlm_loss.lines if line.get_marker() == "o"]
    assert [list(line.get_xdata()) for line in evals] == [[10], [14]]  # one line per phase, not one joined line
    assert legend_labels(mlm_loss) == ["phase 2: seq 512", "train", "eval"]  # each series named once


def test_nsp_accuracy_draws_the_chance_line(tmp_path):
    fig = plot_pretraining_curves(pretraining_curves(TWO_PHASES), str(tmp_path / "p.png"))
    nsp = fig.axes[3]
    chance = [line for line in nsp.lines if line.get_label() == "chance 0.5"]
    assert len(chance) == 1 and list(chance[0].get_ydata()) == [0.5, 0.5]
    assert "chance 0.5" in legend_labels(nsp)


def test_mlm_accuracy_draws_each_phases_most_frequent_token_line(tmp_path):
    fig = plot_pretraining_curves(pretraining_curves(TWO_PHASES), str(tmp_path / "p.png"))
    mlm = fig.axes[1]
    segments = [
        seg
        for c in mlm.collections
        if c.get_label() in ("most frequent token", "_nolegend_")
        for seg in c.get_segments()
    ]
    assert [[tuple(p) for p in seg] for seg in segments] == [[(0, 0.06), (10, 0.06)], [(10, 0.05), (14, 0.05)]]
    assert legend_labels(mlm).count("most frequent token") == 1


def test_an_mlm_only_run_leaves_the_nsp_panels_empty_without_reference_lines(tmp_path):
    mlm_only = {"phases": [{"max_seq_length": 128, "steps": 4, "history": [{"step": 4, "mlm_loss": 6.0}]}]}
    fig = plot_pretraining_curves(pretraining_curves(mlm_only), str(tmp_path / "p.png"))
    for ax in fig.axes[2:]:
        assert len(ax.lines) == 0 and ax.get_legend() is None
        assert [t.get_text() for t in ax.texts] == ["not logged (MLM only)"]
