"""Issue 58 item 3: a compare report that decides — the verdict, the sizes, n per arm, a hint for an arm at its
baseline, the feature cache's build apart, the paper's column only on the paper's data, one print per result —
checked on literal rows and, once, on a tiny run captured at 80 columns."""

import json
import os
import re

import pytest

from hf_bert_tasks import get_task
from hf_bert_tasks.scripts.compare import run_facts
from hf_bert_tasks.scripts.compare_report import (
    arm_notes,
    cache_line,
    console_lines,
    report_lines,
    sizes_line,
    verdict,
)


def row(name, mean, std=0.0, n=3, mode="finetune", **extra):
    """A report row as ``compare_rows`` builds it (0-100 scale), no paper number unless given."""
    return {
        "name": name,
        "mode": mode,
        "strategy": extra.pop("strategy", None),
        "mean": mean,
        "std": std,
        "n": n,
        "baseline": extra.pop("baseline", 50.0),
        "paper": extra.pop("paper", None),
        "paper_source": extra.pop("paper_source", ""),
        "reused": False,
        **extra,
    }


def test_verdict_names_the_best_arm_its_margin_and_that_it_exceeds_the_spread():
    rows = [
        row("finetune", 78.0, 1.0, trainable_parameters=109_483_778, wall_seconds=120.0),
        row("concat_last_four", 60.0, 0.5, mode="feature_based", trainable_parameters=3_778, wall_seconds=30.0),
    ]
    assert verdict(rows) == (
        "Verdict: finetune is best, 78.0, +18.0 points over concat_last_four (60.0); more than the seeds' spread "
        "(std 1.0 + 0.5); cost: 28,979x the trainable parameters (109,483,778 vs 3,778), 4x the time per run "
        "(120.0 s vs 30.0 s)."
    )


def test_verdict_calls_a_gap_within_the_spread_no_real_difference():
    text = verdict([row("lora", 60.2, 0.3), row("finetune", 59.8, 0.4)])
    assert "+0.4 points over finetune (59.8); within the seeds' spread (std 0.3 + 0.4): not a real difference" in text


def test_verdict_with_one_seed_says_the_gap_may_be_noise():
    text = verdict([row("lora", 60.2, n=1), row("finetune", 59.8, n=1)])
    assert "one seed (n = 1), so the seeds' spread is unknown and the gap may be noise" in text


def test_verdict_is_none_yet_when_the_best_arm_is_at_its_baseline():
    assert verdict([row("lora", 51.0), row("finetune", 50.5)]).startswith("Verdict: none yet: the best arm, lora")


def test_an_arm_at_its_baseline_gets_its_steps_and_learning_rate():
    notes = arm_notes(row("lora", 50.9, n=1, steps=64, learning_rate="0.001"))
    hint = (
        "at the trivial baseline (50.0): it trained 64 step(s) at learning rate 0.001; try more steps "
        "(--num_train_epochs / --max_steps) or --lr_grid."
    )
    assert notes == ["n = 1: one seed, no spread; a gap to another arm may be noise.", hint]


def test_sizes_are_stated():
    assert sizes_line([row("a", 60.0, train_examples=673, dev_examples=872)]) == (
        "Trained on 673 examples, scored on 872 dev examples (each run)."
    )


def test_the_cache_build_is_charged_to_no_strategy():
    runs = [
        {"results": {"feature_cache_hit": False, "feature_extraction_runtime": 15.0}, "wall_seconds": 19.0},
        {"results": {"feature_cache_hit": True, "feature_extraction_runtime": 0.5}, "wall_seconds": 4.0},
    ]
    facts = run_facts(runs)
    assert (facts["cache_build_seconds"], facts["wall_seconds"]) == (15.0, 4.0)  # (19 - 15 + 4) / 2
    rows = [row("last", 70.0, mode="feature_based", strategy="last", cache_build_seconds=15.0)]
    assert "built once in 15.00 s, by last; shared by last" in cache_line(rows)


def test_no_paper_column_on_the_users_own_data():
    rows = [row("finetune", 80.0), row("lora", 70.0, mode="lora")]
    md = report_lines(get_task("sst2"), rows, "t", [50.0])
    assert "| System | Ours (dev accuracy) | epochs | lr | trainable params | wall s |" in md
    assert not any("Paper" in line for line in md)
    assert not any(re.search(r"\bpaper\b", line) for line in console_lines(get_task("sst2"), rows, "t", [50.0], 80))


def test_the_paper_column_stays_where_there_is_a_paper_number():
    rows = [row("finetune", 80.0, paper=93.5, paper_source="BERT paper Table 1 (GLUE test server; x100)")]
    lines = console_lines(get_task("sst2"), rows, "t", [50.0], 80)
    assert next(line for line in lines if line.startswith("system")).split()[:3] == ["system", "paper", "dev"]
    assert any("93.5 (test)" in line for line in lines)


def test_console_report_fits_80_columns_and_breaks_no_word():
    rows = [
        row("finetune", 78.0, 1.0, epochs="3", learning_rate="2e-05", trainable_parameters=109_483_778),
        row("concat_last_four", 60.0, n=1, mode="feature_based", strategy="concat_last_four", wall_seconds=4.0),
    ]
    lines = console_lines(get_task("conll2003"), rows, "conll2003: dev F1 of finetune, feature_based", [0.0], 80)
    assert max(map(len, lines)) <= 80
    text = "\n".join(lines)
    for word in ("109,483,778", "concat_last_four", "--seeds 1,2,3", "78.0 ± 1.0", "one seed, no spread;"):
        assert word in text, word


@pytest.fixture(scope="module")
def tiny_compare(tmp_path_factory, tiny_bert_dir):
    """One tiny compare run on the MRPC sample (fine-tuning and one frozen strategy, one seed), its console at 80
    columns captured (stdout and stderr) with ``--json``."""
    from tests.conftest import SAMPLES

    out = tmp_path_factory.mktemp("cmp")
    argv = ["--task", "mrpc", "--data_dir", os.path.join(SAMPLES, "MRPC"), "--model_name_or_path", tiny_bert_dir]
    argv += ["--output_dir", str(out), "--modes", "finetune,feature_based", "--strategies", "last", "--seeds", "1"]
    argv += ["--max_train_samples", "16", "--max_eval_samples", "8", "--num_train_epochs", "1"]
    return argv + ["--eval_strategy", "no"]


def test_each_result_is_printed_once_and_the_report_fits_80_columns(tiny_compare, capfd, monkeypatch):
    from hf_bert_tasks.scripts.compare import main

    argv = tiny_compare
    monkeypatch.setenv("COLUMNS", "80")
    main(argv + ["--rerun"])
    captured = capfd.readouterr()
    printed = captured.out + captured.err
    assert len(re.findall(r"'eval_f1'", printed)) == 2  # two arms x one seed, each evaluation once
    report = captured.out[captured.out.index("mrpc: dev F1") :].splitlines()
    assert max(map(len, report)) <= 80
    assert any(line.startswith("Verdict: ") for line in report)
    assert "Trained on 16 examples, scored on 8 dev examples (each run)." in report


def test_json_prints_only_the_report_on_stdout(tiny_compare, capsys):
    from hf_bert_tasks.scripts.compare import main

    argv = tiny_compare
    main(argv + ["--json"])  # the finished runs are read, not run again
    data = json.loads(capsys.readouterr().out)
    assert data["verdict"].startswith("Verdict: ") and [r["name"] for r in data["rows"]] == ["finetune", "last"]
    assert data["rows"][1]["train_examples"] == 16 and data["rows"][1]["steps"] == 1
