"""``benchmarks/bench_squad_memory.py``'s argument handling and data split, and ``timed_main.py --memory``'s per-phase
peak (the benchmark itself needs ../shared and minutes: ``python benchmarks/run.py squad_memory``)."""

import json
import os
import sys
from pathlib import Path

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "benchmarks"))

import bench_squad_memory as bench
import timed_main


def test_defaults_are_the_issues_batch_and_length():
    args = bench.parse_args([])
    assert (args.batch_size, args.max_seq_length, args.doc_stride) == (48, 256, 128)


def test_zero_steps_is_refused_with_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(["--max_steps", "0"])
    assert exc.value.code == 2
    assert "--max_steps must be at least 1, got 0" in capsys.readouterr().err


def test_unknown_side_is_refused_with_exit_2(capsys):
    with pytest.raises(SystemExit) as exc:
        bench.parse_args(["--sides", "ours,run_glue"])
    assert exc.value.code == 2
    assert "unknown side(s) ['run_glue']" in capsys.readouterr().err


def test_split_writes_first_articles_as_train_and_next_as_dev(tmp_path):
    source = tmp_path / "dev-v2.0.json"
    source.write_text(json.dumps({"version": "v2.0", "data": [{"title": t, "paragraphs": []} for t in "ABCD"]}))
    train, dev = bench.write_split(str(source), str(tmp_path), 2, 1)
    titles = [[a["title"] for a in json.loads(Path(p).read_text())["data"]] for p in (train, dev)]
    assert titles == [["A", "B"], ["C"]]


def test_split_refuses_a_file_with_too_few_articles(tmp_path):
    source = tmp_path / "dev-v2.0.json"
    source.write_text(json.dumps({"version": "v2.0", "data": [{"title": "A", "paragraphs": []}]}))
    with pytest.raises(ValueError, match="1 articles, expected at least 2"):
        bench.write_split(str(source), str(tmp_path), 1, 1)


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="per-phase peaks read Linux's /proc")
def test_memory_mark_resets_the_peak_between_phases():
    memory = {"_since": 0.0}
    block = b"x" * (200 * 2**20)  # 200 MiB, every page written: resident
    del block
    timed_main.memory_mark(memory, "first")  # its peak holds the 200 MiB block
    timed_main.memory_mark(memory, "second")  # the block was freed before this phase began
    assert memory["first_peak_mib"] - memory["second_peak_mib"] > 150
