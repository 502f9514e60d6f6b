"""Run the official scorers of ``../shared/oracles`` (test oracles only; the package never imports or ships them).

``../shared`` sits next to the repository in CI; set ``HF_BERT_TASKS_SHARED`` to use another folder (e.g. a git
worktree whose parent has no ``shared``). Every helper skips the calling test, with the reason, when a file it needs
is absent, and runs the scripts unchanged in a subprocess: ``sys.executable`` for the SQuAD scripts (they need
numpy), ``perl`` for conlleval. Command lines and quirks: ``../shared/oracles/README.md``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from tests.conftest import REPO

SHARED = os.environ.get("HF_BERT_TASKS_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))


def shared_file(*parts: str) -> str:
    """Path under the shared folder, or skip the test naming the absent path."""
    path = os.path.join(SHARED, *parts)
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent: the official-scorer tests need ../shared (or HF_BERT_TASKS_SHARED)")
    return path


def _run(cmd: list[str], stdin: str | None = None) -> str:
    env = dict(os.environ, PYTHONUTF8="1")  # the SQuAD scripts open files without an encoding
    proc = subprocess.run(
        cmd, input=stdin, capture_output=True, text=True, encoding="utf-8", env=env, timeout=300, check=False
    )
    if proc.returncode != 0:
        raise AssertionError(
            f"oracle {cmd} failed (rc {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return proc.stdout


def squad_v1(data_file: str, pred_file: str) -> tuple[dict, int]:
    """``evaluate-v1.1.py DATA PRED`` -> (its JSON, the number of unanswered questions it reported).

    This copy prints ``There are N unanswered question(s)`` before the JSON when predictions are missing.
    """
    out = _run([sys.executable, shared_file("oracles", "evaluate-v1.1.py"), data_file, pred_file]).strip().splitlines()
    unanswered = 0
    if len(out) > 1:
        match = re.fullmatch(r"There are (\d+) unanswered question\(s\)", out[-2])
        assert match, out
        unanswered = int(match.group(1))
    return json.loads(out[-1]), unanswered


def squad_v2(
    data_file: str,
    pred_file: str,
    na_prob_file: str | None = None,
    thresh: float | None = None,
    tmp_dir: str | None = None,
) -> dict:
    """``evaluate-v2.0.py DATA PRED [--na-prob-file NA] [--na-prob-thresh T] -o OUT`` -> the JSON of OUT.

    ``thresh`` is passed as ``repr(float)`` so the script reads back the same float.
    """
    out_file = os.path.join(tmp_dir or os.path.dirname(pred_file), "oracle_eval_v2.json")
    cmd = [sys.executable, shared_file("oracles", "evaluate-v2.0.py"), data_file, pred_file, "-o", out_file]
    if na_prob_file is not None:
        cmd += ["--na-prob-file", na_prob_file]
    if thresh is not None:
        cmd += ["--na-prob-thresh", repr(float(thresh))]
    stdout = _run(cmd)
    assert "Missing prediction" not in stdout, stdout[:500]
    with open(out_file, encoding="utf-8") as f:
        return json.load(f)


@dataclass
class Conlleval:
    """What ``conlleval`` prints: counts, then percentages with 2 decimals (overall and per type)."""

    tokens: int
    gold_phrases: int
    found_phrases: int
    correct_phrases: int
    accuracy: float
    precision: float
    recall: float
    f1: float
    per_type: dict[str, dict[str, float]] = field(default_factory=dict)  # type -> precision, recall, f1, found


def conlleval(path: str) -> Conlleval:
    """``perl conlleval < path``, parsed. Skips the test when perl is missing."""
    script = shared_file("oracles", "conlleval")
    perl = shutil.which("perl")
    if perl is None:
        pytest.skip("perl is not installed: conlleval (the official CoNLL scorer) is a Perl script")
    with open(path, encoding="utf-8") as f:
        text = _run([perl, script], stdin=f.read())
    lines = text.splitlines()
    head = re.fullmatch(r"processed (\d+) tokens with (\d+) phrases; found: (\d+) phrases; correct: (\d+)\.", lines[0])
    assert head, lines[:2]
    pct = r"\s*(-?[\d.]+)"
    overall = re.fullmatch(rf"accuracy:{pct}%; precision:{pct}%; recall:{pct}%; FB1:{pct}", lines[1])
    assert overall, lines[1]
    result = Conlleval(*map(int, head.groups()), *map(float, overall.groups()))
    for line in lines[2:]:
        m = re.fullmatch(rf"\s*(\S+): precision:{pct}%; recall:{pct}%; FB1:{pct}\s+(\d+)", line)
        assert m, line
        name, p, r, f1, found = m.groups()
        result.per_type[name] = {"precision": float(p), "recall": float(r), "f1": float(f1), "found": int(found)}
    return result


def assert_two_decimals(ours: float, printed: float, what: str) -> None:
    """``ours`` (a fraction in [0, 1]) equals conlleval's ``printed`` percentage up to its 2-decimal rounding.

    Half a unit of the last printed digit (0.005) plus 1e-9 for the different order of float operations (conlleval
    divides 100*correct by found; we scale the fraction).
    """
    assert abs(100 * ours - printed) <= 0.005 + 1e-9, f"{what}: ours {100 * ours:.6f} vs conlleval {printed:.2f}"
