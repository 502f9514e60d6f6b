"""``benchmarks/bench_quickstart_busy.py`` at its smoke size: both sides run the quickstart's entry point in a child
process, the busy side with a spinning process that is gone afterwards, and the record carries the slowdown."""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))


@pytest.mark.slow
@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the benchmark keeps one of at least 2 CPUs busy")
def test_smoke_run_records_both_sides_and_stops_the_spinner():
    import bench_quickstart_busy as bench
    import psutil

    [record] = bench.main(bench.SMOKE_ARGS)
    sides = record["sides"]
    assert list(sides) == ["quickstart, idle", "quickstart, one core busy"]
    for side in sides.values():
        assert side["role"] == "ours" and len(side["seconds"]) == 1 and side["extra"][0]["cpu_s"] > 0
        assert side["extra"][0]["all_work"] in (0, 1)  # read from the run's own quickstart_summary.json
    figures = record["figures"]
    assert figures["busy_over_idle"] == pytest.approx(
        sides["quickstart, one core busy"]["median_s"] / sides["quickstart, idle"]["median_s"], abs=1e-3
    )
    assert record["comparisons"][0]["kind"] == "variant"
    # the spinner is a child of this process (the benchmark runs in it); another run's spinner elsewhere is not ours
    spinning = [
        p
        for p in psutil.Process().children(recursive=True)
        if bench.SPIN in " ".join(p.as_dict(["cmdline"])["cmdline"] or [])
    ]  # as_dict: None if it just ended
    assert spinning == []
