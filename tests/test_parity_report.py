"""benchmarks/parity/report.py: the paired difference, its 95 % Student-t interval and the parity check.

Expected intervals come from scipy.stats.t, not from the script's own table; no run is started."""

import importlib.util
import json
import math
import os

import pytest
from scipy import stats

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("parity_report", os.path.join(REPO, "benchmarks", "parity", "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def glue_row(side, seed, f1, task="mrpc"):
    return {"family": "glue", "side": side, "task": task, "seed": seed, "budget": {"epochs": 1.0, "lr": 1e-4},
            "metrics": {"f1": f1, "accuracy": 70.0}, "wall_s": 100.0, "peak_rss_mb": 900.0}  # fmt: skip


def write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_paired_interval_matches_scipy_t():
    ours = {42: 80.0, 43: 82.5, 44: 79.0}
    reference = {42: 81.0, 43: 80.0, 44: 78.0}
    diffs = [-1.0, 2.5, 1.0]
    low, high = stats.t.interval(0.95, df=2, loc=sum(diffs) / 3, scale=stats.sem(diffs))
    d = report.paired_difference(ours, reference)
    assert d["n"] == 3
    assert d["mean"] == pytest.approx(0.8333333, abs=1e-6)
    assert d["low"] == pytest.approx(low, abs=1e-3)
    assert d["high"] == pytest.approx(high, abs=1e-3)


def test_pairs_only_seeds_both_sides_ran():
    d = report.paired_difference({42: 10.0, 43: 12.0, 44: 50.0}, {42: 9.0, 43: 10.0})
    assert (d["n"], d["mean"]) == (2, 1.5)


def test_one_pair_gives_no_interval():
    d = report.paired_difference({42: 10.0}, {42: 9.0})
    assert d["low"] is None and d["high"] is None and math.isnan(d["sd"])


@pytest.mark.parametrize("df", [1, 2, 5, 30, 31, 60, 200])
def test_t_critical_matches_scipy(df):
    assert report.t_critical(df) == pytest.approx(stats.t.ppf(0.975, df), abs=1e-3)


def test_check_fails_when_ours_is_significantly_behind(tmp_path, capsys):
    rows = [glue_row("ours", s, f1) for s, f1 in ((42, 70.0), (43, 71.0), (44, 70.5))]
    rows += [glue_row("reference", s, f1) for s, f1 in ((42, 80.0), (43, 80.5), (44, 80.2))]
    assert report.main([write(tmp_path / "r.jsonl", rows), "--check"]) == 1
    assert "significantly behind" in capsys.readouterr().out


def test_check_passes_when_the_interval_spans_zero(tmp_path):
    rows = [glue_row("ours", s, f1) for s, f1 in ((42, 80.0), (43, 82.5), (44, 79.0))]
    rows += [glue_row("reference", s, f1) for s, f1 in ((42, 81.0), (43, 80.0), (44, 78.0))]
    assert report.main([write(tmp_path / "r.jsonl", rows), "--check"]) == 0


def test_squad_arms_rows_map_run_qa_to_reference_and_skip_grouped():
    assert (
        report.normalise({"arm": "ours_grouped", "seed": 42, "eval_f1": 1.0, "eval_exact_match": 0.5}, "b", 1) is None
    )
    row = report.normalise({"arm": "run_qa", "seed": 42, "eval_f1": 11.2, "eval_exact_match": 5.4}, "dir/b.jsonl", 1)
    assert (row["side"], row["task"], row["metrics"], row["budget"]) == (
        "reference", "squad_v1", {"f1": 11.2, "exact_match": 5.4}, "b.jsonl"
    )  # fmt: skip


def test_row_of_neither_format_names_file_and_line():
    with pytest.raises(ValueError, match=r"r\.jsonl:3: a row with neither"):
        report.normalise({"seed": 1}, "r.jsonl", 3)


def test_diagnostic_ours_arm_gets_rows_but_is_not_checked(tmp_path, capsys):
    rows = [glue_row("ours", s, f1) for s, f1 in ((42, 80.0), (43, 82.5), (44, 79.0))]
    rows += [glue_row("ours_random", s, f1) for s, f1 in ((42, 70.0), (43, 71.0), (44, 70.5))]
    rows += [glue_row("reference", s, f1) for s, f1 in ((42, 81.0), (43, 80.0), (44, 78.0))]
    assert report.main([write(tmp_path / "r.jsonl", rows), "--check"]) == 0
    assert "mrpc (f1), ours_random | 3 | 70.50 ± 0.50 | 79.67 ± 1.53 | -9.17" in capsys.readouterr().out
