"""``hf-bert-tasks compare``: configurations, the paper's numbers, mean ± std, and a tiny run on the MRPC sample."""

import json
import os

import pytest

from hf_bert_tasks import get_task
from hf_bert_tasks.scripts.compare import configurations, main, paper_number, summarize


def test_configurations_expand_feature_based_per_strategy():
    got = [c["label"] for c in configurations(["finetune", "lora", "feature_based"], ["last", "scalar_mix"])]
    assert got == ["finetune", "lora", "feature_based:last", "feature_based:scalar_mix"]


def test_unknown_mode_and_strategy_are_value_errors():
    with pytest.raises(ValueError, match="unknown mode 'frozen'"):
        configurations(["frozen"], ["last"])
    with pytest.raises(ValueError, match="unknown feature strategy 'top4'"):
        configurations(["feature_based"], ["top4"])


def test_summarize_is_mean_and_sample_std():
    assert summarize([90.0, 92.0, 94.0]) == (92.0, 2.0)
    assert summarize([91.0]) == (91.0, 0.0)


def test_paper_numbers_for_conll_come_from_table7():
    task = get_task("conll2003")
    assert paper_number(task, {"mode": "finetune", "strategy": None})[0] == 96.4
    assert paper_number(task, {"mode": "feature_based", "strategy": "concat_last_four"})[0] == 96.1
    assert paper_number(task, {"mode": "feature_based", "strategy": "scalar_mix"}) == (None, "")
    assert paper_number(task, {"mode": "lora", "strategy": None}) == (None, "")


def test_paper_number_for_glue_is_the_fine_tuning_row_only():
    task = get_task("mrpc")
    assert paper_number(task, {"mode": "finetune", "strategy": None})[0] == 88.9
    assert paper_number(task, {"mode": "feature_based", "strategy": "last"}) == (None, "")


def test_tiny_comparison_on_the_mrpc_sample_writes_md_json_png(tmp_path, tiny_bert_dir):
    from tests.conftest import SAMPLES

    out = tmp_path / "cmp"
    summary = main(
        [
            "--task",
            "mrpc",
            "--data_dir",
            os.path.join(SAMPLES, "MRPC"),
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--modes",
            "finetune,lora,feature_based",
            "--strategies",
            "last,scalar_mix",
            "--seeds",
            "1",
            "--max_train_samples",
            "32",
            "--max_eval_samples",
            "16",
            "--num_train_epochs",
            "1",
            "--eval_strategy",
            "no",
            "--feature_based_args",
            "{num_train_epochs: 3}",
        ]
    )
    names = [r["name"] for r in summary["rows"]]
    assert names == ["finetune", "lora", "last", "scalar_mix"]
    data = json.loads((out / "comparison.json").read_text())
    assert data["metric"] == "f1" and [r["n"] for r in data["rows"]] == [1, 1, 1, 1]
    # each row's mean is 100 x the dev F1 its one run wrote (one seed: std 0)
    for row, folder in zip(data["rows"], ["finetune", "lora", "feature_based-last", "feature_based-scalar_mix"]):
        run_results = json.loads((out / folder / "seed1" / "all_results.json").read_text())
        assert (row["mean"], row["std"]) == (pytest.approx(100 * run_results["eval_f1"]), 0.0), folder
    md = (out / "comparison.md").read_text()
    assert "| finetune | 88.9 (test) | " in md and "**Feature-based approach (frozen encoder)**" in md
    assert "(n=1) |" in md and "±" not in md.split("\n", 4)[-1]  # one seed: n=1 and no spread in the table
    assert [r["epochs"] for r in data["rows"]] == ["1", "1", "3", "3"]  # feature_based_args gives 3 epochs
    assert (out / "comparison.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the feature-based runs shared one cache holding every layer
    assert len(os.listdir(out / "feature_cache")) == 1


def test_reuse_takes_a_finished_runs_results(tmp_path, tiny_bert_dir):
    done = tmp_path / "done"
    done.mkdir()
    (done / "all_results.json").write_text(json.dumps({"eval_f1": 0.5, "train_runtime": 12.0}))
    summary = main(
        [
            "--task",
            "mrpc",
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(tmp_path / "c"),
            "--modes",
            "finetune",
            "--reuse",
            f"finetune={done}",
        ]
    )
    row = summary["rows"][0]
    assert row["reused"] and row["mean"] == 50.0 and row["wall_seconds"] == 12.0


def test_reuse_of_a_missing_run_is_an_error(tmp_path, tiny_bert_dir):
    with pytest.raises(FileNotFoundError, match="all_results.json not found"):
        main(
            [
                "--task",
                "mrpc",
                "--model_name_or_path",
                tiny_bert_dir,
                "--output_dir",
                str(tmp_path),
                "--reuse",
                f"finetune={tmp_path / 'nope'}",
            ]
        )


def test_reuse_of_a_configuration_not_compared_is_an_error(tmp_path, tiny_bert_dir):
    done = tmp_path / "done"
    done.mkdir()
    (done / "all_results.json").write_text(json.dumps({"eval_f1": 0.5}))
    with pytest.raises(
        ValueError,
        match=r"--reuse fintune=.*: no configuration 'fintune' in this comparison \(did you mean 'finetune'\?\); "
        r"expected one of \['finetune'\]",
    ):
        main(
            [
                "--task",
                "mrpc",
                "--model_name_or_path",
                tiny_bert_dir,
                "--output_dir",
                str(tmp_path / "c"),
                "--modes",
                "finetune",
                "--reuse",
                f"fintune={done}",
            ]
        )


@pytest.mark.parametrize(
    "source, split",
    [
        ("BERT paper Table 1 (GLUE test server; x100)", "test"),
        ("Table 7 (dev F1, BERT-BASE)", "dev"),
        ("BERT paper Table 4 (SWAG dev and test accuracy, x100)", ""),
        ("", ""),
    ],
)
def test_paper_split_is_named_when_the_source_names_one_split(source, split):
    from hf_bert_tasks.scripts.compare_report import paper_split

    assert paper_split(source) == split


def test_report_rows_state_n_budget_and_paper_split(tmp_path):
    from hf_bert_tasks.scripts.compare_report import write_report

    finetune = {
        "label": "finetune",
        "mode": "finetune",
        "strategy": None,
        "name": "finetune",
        "mean": 84.0,
        "std": 0.0,
        "n": 1,
        "paper": 88.9,
        "paper_source": "BERT paper Table 1 (GLUE test server; x100)",
        "wall_seconds": 12.4,
        "reused": False,
        "epochs": "3",
        "learning_rate": "2e-05",
        "trainable_parameters": 109483778,
    }
    lora = {
        "label": "lora",
        "mode": "lora",
        "strategy": None,
        "name": "lora",
        "mean": 80.0,
        "std": 1.5,
        "n": 3,
        "paper": None,
        "paper_source": "",
        "wall_seconds": None,
        "reused": False,
    }  # a row without a budget
    paths = write_report(get_task("mrpc"), [finetune, lora], str(tmp_path), "t")
    lines = (tmp_path / "comparison.md").read_text().splitlines()
    assert "| System | Paper | Ours (dev f1) | epochs | lr | trainable params | wall s |" in lines
    assert "| finetune | 88.9 (test) | 84.0 (n=1) | 3 | 2e-05 | 109,483,778 | 12 |" in lines
    assert "| lora | — | 80.0 ± 1.5 (n=3) | — | — | — | — |" in lines
    assert set(paths) == {"md", "json", "png"}


def test_tiny_comparison_counts_each_arms_trainable_parameters(tmp_path, tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    from tests.conftest import SAMPLES

    summary = main(
        [
            "--task",
            "mrpc",
            "--data_dir",
            os.path.join(SAMPLES, "MRPC"),
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(tmp_path),
            "--modes",
            "finetune,lora",
            "--seeds",
            "1",
            "--max_train_samples",
            "8",
            "--max_eval_samples",
            "8",
            "--num_train_epochs",
            "1",
            "--learning_rate",
            "1e-4",
            "--eval_strategy",
            "no",
        ]
    )
    full = sum(p.numel() for p in AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir).parameters())
    finetune, lora = summary["rows"]
    assert (finetune["trainable_parameters"], finetune["learning_rate"], finetune["epochs"]) == (full, "0.0001", "1")
    assert 0 < lora["trainable_parameters"] < full / 4  # adapters and the classifier head only


def test_report_and_chart_carry_the_trivial_baseline(tmp_path, monkeypatch):
    """Issue 44 item 2: the baseline line in comparison.md, the chart's axis from 0 with the baseline marked and one
    legend entry per bar colour (named as the mode), a title that says what is compared."""
    import matplotlib.axes

    from hf_bert_tasks.scripts.compare_report import write_report

    rows = [
        {
            "name": n,
            "mode": m,
            "mean": v,
            "std": 0.0,
            "n": 1,
            "baseline": 50.9,
            "paper": None,
            "paper_source": "",
            "reused": False,
            "wall_seconds": 1.0,
        }
        for n, m, v in (("finetune", "finetune", 51.0), ("lora", "lora", 50.9), ("last", "feature_based", 72.6))
    ]
    seen = {}
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "legend",
        lambda ax, *a, **k: seen.update(
            labels=[h.get_label() for h in k["handles"]], xlim=ax.get_xlim(), title=ax.get_title()
        ),
    )
    paths = write_report(get_task("sst2"), rows, str(tmp_path), "sst2: dev Accuracy of finetune, lora, feature_based")
    with open(paths["md"], encoding="utf-8") as f:
        md = f.read()
    assert "Trivial baseline" in md and "**50.9**" in md and "learnt next to nothing): finetune, lora." in md
    assert seen["xlim"][0] == 0.0
    assert seen["labels"] == [
        "ours: finetune (mean ± std)",
        "ours: lora (mean ± std)",
        "ours: feature_based (mean ± std)",
        "trivial baseline (best constant) 50.9",
    ]
    assert seen["title"].startswith("sst2: dev Accuracy")
