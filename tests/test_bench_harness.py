"""benchmarks/harness.py: interleaving order, per-side statistics and ratios, with a fake clock (no real timing)."""

import importlib.util
import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

spec = importlib.util.spec_from_file_location("bench_harness", os.path.join(REPO, "benchmarks", "harness.py"))
harness = importlib.util.module_from_spec(spec)
sys.modules["bench_harness"] = harness  # dataclasses look their module up there
spec.loader.exec_module(harness)


class FakeClock:
    """A clock that only moves when a side 'works': ``advance(seconds)``."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def make_sides(clock, durations, calls):
    """Sides A (reference) and B (ours); ``durations[name]`` lists the seconds of each call, warm-up first."""

    def side(name, role):
        def run(r):
            calls.append((name, r))
            clock.advance(durations[name][len([c for c in calls if c[0] == name]) - 1])

        return harness.Side(name, role, run)

    return [side("A", "reference"), side("B", "ours")]


def test_rounds_are_interleaved_with_warmup_first():
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [9, 1, 2, 3], "B": [9, 1, 1, 1]}, calls)
    out = harness.measure(sides, repeats=3, warmup=1, clock=clock, log=None)
    assert calls == [("A", -1), ("B", -1), ("A", 0), ("B", 0), ("A", 1), ("B", 1), ("A", 2), ("B", 2)]
    assert out["order"] == ["A", "B", "A", "B", "A", "B"]


def test_warmup_runs_are_not_recorded_and_statistics_are_median_min_max():
    clock, calls = FakeClock(), []
    # A's timed runs 4, 1, 10 s (median 4); the 50 s warm-up must not count
    sides = make_sides(clock, {"A": [50, 4, 1, 10], "B": [50, 2, 2, 3]}, calls)
    out = harness.measure(sides, repeats=3, warmup=1, clock=clock, log=None)
    a = out["sides"]["A"]
    assert a["seconds"] == [4, 1, 10]
    assert (a["median_s"], a["min_s"], a["max_s"]) == (4, 1, 10)
    b = out["sides"]["B"]
    assert (b["median_s"], b["min_s"], b["max_s"]) == (2, 2, 3)


def test_ratio_of_medians_and_paired_spread():
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [4, 1, 10], "B": [2, 2, 3]}, calls)
    measured = harness.measure(sides, repeats=3, warmup=0, clock=clock, log=None)
    [row] = harness.compare(measured, [harness.Comparison("B", "A")])
    assert row["ratio_of_medians"] == 4 / 2  # A median 4, B median 2
    # per round A/B: 4/2 = 2.0, 1/2 = 0.5, 10/3
    assert row["paired_min"] == 0.5
    assert row["paired_max"] == 10 / 3
    assert row["rounds"] == 3


def test_rates_from_work_amount():
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [4, 1, 10], "B": [2, 2, 3]}, calls)
    measured = harness.measure(sides, repeats=3, warmup=0, clock=clock, log=None)
    res = harness.result("x", "x", measured, [harness.Comparison("B", "A")], config={}, work=(100, "questions"))
    assert res["sides"]["A"]["rate"] == {"unit": "questions/s", "median": 25.0, "min": 10.0, "max": 100.0}


def test_prepare_and_after_are_outside_the_timer():
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [1, 1], "B": [1, 1]}, calls)
    sides[0].prepare = lambda r: clock.advance(1000)
    sides[0].after = lambda r, extra: (clock.advance(1000), {"round": r})[1]
    out = harness.measure(sides, repeats=2, warmup=0, clock=clock, log=None)
    assert out["sides"]["A"]["seconds"] == [1, 1]
    assert out["sides"]["A"]["extra"] == [{"round": 0}, {"round": 1}]


def test_a_row_says_ours_only_for_our_code():
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [1], "B": [1]}, calls)
    measured = harness.measure(sides, repeats=1, warmup=0, clock=clock, log=None)
    with pytest.raises(ValueError, match="not our code"):
        harness.compare(measured, [harness.Comparison("A", "B")])
    with pytest.raises(ValueError, match="variant baseline must be our code"):
        harness.compare(measured, [harness.Comparison("B", "A", kind="variant")])


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="role"):
        harness.Side("x", "baseline", lambda r: None)
    with pytest.raises(ValueError, match="unique"):
        harness.measure([harness.Side("x", "ours", lambda r: None)] * 2, repeats=1, log=None)
    with pytest.raises(ValueError, match="repeats"):
        harness.measure([harness.Side("x", "ours", lambda r: None)], repeats=0, log=None)


def test_report_table_row_comes_from_the_results():
    """benchmarks/report.py renders the ratio and paired range recorded by the harness (no number typed by hand)."""
    spec_r = importlib.util.spec_from_file_location("bench_report", os.path.join(REPO, "benchmarks", "report.py"))
    report = importlib.util.module_from_spec(spec_r)
    spec_r.loader.exec_module(report)
    clock, calls = FakeClock(), []
    sides = make_sides(clock, {"A": [4, 1, 10], "B": [2, 2, 3]}, calls)
    measured = harness.measure(sides, repeats=3, warmup=0, clock=clock, log=None)
    rec = harness.result("demo", "Demo", measured, [harness.Comparison("B", "A")], config={"size": 3})
    entry = {
        "date": "2026-01-01T00:00:00+00:00",
        "commit": "0123456789abcdef",
        "dirty": False,
        "profile": "default",
        "args": [],
        "wall_s": 12.0,
        "load_average_before": [0.1, 0, 0],
        "load_average_after": [0.2, 0, 0],
        "usable_cpus": 2,
        "results": [rec],
    }
    block = report.render({"benchmarks": {"demo": entry}})
    assert block.startswith(report.BEGIN) and block.endswith(report.END)
    # commit 0123456789abcdef is not in this repository: the row cannot be current
    assert "| demo | B | A | reference | **2.00x** (0.50-3.33) | 3 | **STALE** |" in block


def load_report():
    spec_r = importlib.util.spec_from_file_location("bench_report", os.path.join(REPO, "benchmarks", "report.py"))
    report = importlib.util.module_from_spec(spec_r)
    spec_r.loader.exec_module(report)
    return report


@pytest.fixture
def git_repo(tmp_path, monkeypatch):
    """A throw-away git repository with two package files and a benchmark; report.py looks at it instead."""
    import subprocess

    def git(*args):
        return subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    (tmp_path / "hf_bert_tasks").mkdir()
    (tmp_path / "hf_bert_tasks" / "timed.py").write_text("x = 1\n")
    (tmp_path / "hf_bert_tasks" / "other.py").write_text("y = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    report = load_report()
    monkeypatch.setattr(report, "REPO", str(tmp_path))
    return report, git, tmp_path


def entry_at(commit, dirty=False):
    return {"benchmark": "demo", "commit": commit, "dirty": dirty, "timed_files": ["hf_bert_tasks/timed.py"]}


def test_a_row_is_current_when_no_timed_file_changed(git_repo):
    report, git, root = git_repo
    measured = git("rev-parse", "HEAD")
    (root / "hf_bert_tasks" / "other.py").write_text("y = 2\n")  # not timed by the row
    git("commit", "-qam", "two")
    assert report.staleness("demo", entry_at(measured)) is None


def test_a_row_is_stale_when_a_timed_file_changed_after_its_commit(git_repo):
    report, git, root = git_repo
    measured = git("rev-parse", "HEAD")
    (root / "hf_bert_tasks" / "timed.py").write_text("x = 2\n")
    git("commit", "-qam", "two")
    why = report.staleness("demo", entry_at(measured))
    assert "hf_bert_tasks/timed.py" in why and measured[:10] in why
    assert report.stale_rows({"benchmarks": {"demo": entry_at(measured)}}) == {"demo": why}


def test_a_row_measured_on_a_dirty_tree_or_an_unknown_commit_is_stale(git_repo):
    report, git, _ = git_repo
    assert "uncommitted" in report.staleness("demo", entry_at(git("rev-parse", "HEAD"), dirty=True))
    assert "does not have" in report.staleness("demo", entry_at("f" * 40))


def test_report_check_exits_1_on_a_stale_row(git_repo, tmp_path, capsys):
    import json

    report, git, _ = git_repo
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"benchmarks": {"demo": entry_at(git("rev-parse", "HEAD"), dirty=True)}}))
    assert report.main(["--results", str(results), "--check"]) == 1
    assert "STALE demo" in capsys.readouterr().out
    results.write_text(json.dumps({"benchmarks": {"demo": entry_at(git("rev-parse", "HEAD"))}}))
    assert report.main(["--results", str(results), "--check"]) == 0
