"""benchmarks/gpu.sh on CPU: ``--dry-run`` runs every step at toy size and leaves every step's rows in the results
JSON, which gpu_report.py renders; a failing step fails the script; bad arguments are refused."""

import json
import math
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

SCRIPT = os.path.join(REPO, "benchmarks", "gpu.sh")
SHARED = os.environ.get("HF_BERT_TASKS_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))
STEPS = ("pretrain_throughput", "pretrain_compiled", "glue_vs_run_glue", "transfer")
#: units whose values must be > 0 (rates, ratios, MFU of the throughput steps, times, losses)
POSITIVE_UNITS = ("sequences/s", "samples/s", "x", "s", "nats")


def needs_shared():
    if not os.path.isfile(os.path.join(SHARED, "baselines", "glue", "run_glue.py")):
        pytest.skip(f"{SHARED} is absent: gpu.sh needs ../shared (run_glue.py, SST-2, CoNLL-2003)")


def run_gpu_sh(tmp_path, python, *args, **env_extra):
    env = dict(
        os.environ,
        PY=python,
        OUT_DIR=str(tmp_path / "out"),
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
        **env_extra,
    )
    env.pop("CPU_SMOKE", None)
    return subprocess.run(
        ["bash", SCRIPT, *args], check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=900
    )


def test_dry_run_runs_every_step_and_reports_it(tmp_path):
    """Every group but transfer_books (issue 43's script, tested below where present)."""
    needs_shared()
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--group", "mfu,finetune,transfer")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for heading in STEPS + ("report",):
        assert f"== {heading}:" in proc.stdout
    assert "total " in proc.stdout
    rows = json.loads((tmp_path / "out" / "gpu_results.json").read_text())
    by_step = {}
    for r in rows:
        by_step.setdefault(r["step"], []).append(r)
        assert set(r) >= {"step", "metric", "value", "units", "anchor", "device", "commit", "dry_run"}, r
        assert r["dry_run"] is True and r["device"].startswith("cpu (dry run") and r["commit"], r
        assert isinstance(r["value"], float) and math.isfinite(r["value"]), r
        if r["units"] in POSITIVE_UNITS or (r["units"] == "%" and r["step"] != "transfer"):
            assert r["value"] > 0, r
        elif r["units"] == "%":  # dev metrics of a few toy steps: 0 is a real result
            assert 0 <= r["value"] <= 100, r
    assert set(by_step) == set(STEPS) | {"wall_time"}
    metrics = {step: [r["metric"] for r in rs] for step, rs in by_step.items()}
    for seq in (32, 64):  # both sequence lengths, both sides, their ratio
        assert (
            sum(
                f"seq {seq} x" in m and "sequences/s" in m and ("ours" in m or "reference" in m)
                for m in metrics["pretrain_throughput"]
            )
            == 3
        )
        assert sum(f"seq {seq} x" in m and "MFU (6N" in m for m in metrics["pretrain_throughput"]) == 2
    assert sum("torch.compile / eager" in m for m in metrics["pretrain_compiled"]) == 2  # plain and static slots
    for step in ("pretrain_throughput", "pretrain_compiled"):  # the profile rows (--profile 1 in the dry run)
        assert any(m.startswith("profile ") and " busy " in m for m in metrics[step])
    assert any(
        m.startswith("phase forward + backward") and m.endswith("run_glue / ours") for m in metrics["glue_vs_run_glue"]
    )
    assert metrics["glue_vs_run_glue"][-1] == "ours / run_glue train samples/s"
    for task in ("SST-2", "CoNLL-2003"):
        assert sum(m.startswith(task) for m in metrics["transfer"]) == 3  # pretrained, random init, gain
    assert sorted(metrics["wall_time"]) == sorted(STEPS)
    report = (tmp_path / "out" / "gpu_report.md").read_text()
    assert report.startswith("**Dry run**") and report in proc.stdout
    for r in rows:
        assert r["metric"].replace("|", "\\|") in report


def test_a_failing_step_fails_the_script(tmp_path):
    """The pretrain step once ended in ``|| true``: a crashing recipe could not fail the script."""
    needs_shared()
    wrapper = tmp_path / "python"
    wrapper.write_text(
        f'#!/bin/sh\ncase "$*" in *" pretrain "*) echo boom >&2; exit 7;; esac\nexec {sys.executable} "$@"\n'
    )
    wrapper.chmod(0o755)
    proc = run_gpu_sh(tmp_path, str(wrapper), "--dry-run", "--only", "transfer")
    assert proc.returncode == 7, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "step 'transfer: pretrain' FAILED (exit 7)" in proc.stderr
    assert "boom" in proc.stderr
    assert not (tmp_path / "out" / "transfer_finetune.log").exists()
    assert "== report" not in proc.stdout


def test_the_report_step_fails_when_a_step_left_no_rows(tmp_path):
    needs_shared()
    out = tmp_path / "out"
    out.mkdir()
    (out / "gpu_results.json").write_text(
        json.dumps(
            [
                {
                    "step": "transfer",
                    "metric": "m",
                    "value": 1.0,
                    "units": "s",
                    "anchor": "",
                    "device": "cpu",
                    "commit": "c",
                    "dry_run": True,
                    "config": {},
                }
            ]
        )
    )
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--only", "report")
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "step 'report' FAILED" in proc.stderr and "pretrain_throughput" in proc.stderr


def test_bad_arguments_are_refused(tmp_path):
    proc = run_gpu_sh(tmp_path, sys.executable, "--dryrun")
    assert proc.returncode == 2 and "unknown argument --dryrun" in proc.stderr
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--only", "transfr")
    assert proc.returncode == 2 and "unknown step 'transfr'" in proc.stderr
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", HF_BERT_TASKS_SHARED=str(tmp_path / "nowhere"))
    assert proc.returncode == 2 and "HF_BERT_TASKS_SHARED" in proc.stderr


def test_groups_select_their_steps_and_unknown_groups_are_refused(tmp_path):
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--group", "mfu,nope")
    assert proc.returncode == 2 and "unknown group 'nope'" in proc.stderr


def test_transfer_books_step_runs_issue_43s_script(tmp_path):
    needs_shared()
    if not os.path.isfile(os.path.join(REPO, "benchmarks", "gpu_transfer_books.sh")):
        pytest.skip("benchmarks/gpu_transfer_books.sh (issue 43) is not in this checkout")
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run", "--group", "transfer_books")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "out" / "gpu_results.json").read_text())
    assert {r["step"] for r in rows} >= {"transfer_books", "wall_time"}


SESSION = os.path.join(REPO, "benchmarks", "gpu_session.sh")


def run_session(tmp_path, *args, **env_extra):
    env = dict(
        os.environ,
        PY=sys.executable,
        OUT=str(tmp_path / "session"),
        WORK_DIR=str(tmp_path / "work"),  # not the checkout's runs/: suites running side by side share nothing
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
        **env_extra,
    )
    return subprocess.run(
        ["bash", SESSION, *args], check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )


def test_session_dry_run_runs_a_group_and_copies_its_results(tmp_path):
    needs_shared()
    proc = run_session(tmp_path, "--dry-run", "mfu:300", HF_BERT_TASKS_SHARED=SHARED)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "session"
    rows = json.loads((out / "gpu_results.json").read_text())
    assert {r["step"] for r in rows} == {"pretrain_throughput", "pretrain_compiled", "wall_time"}
    assert (out / "gpu_report.md").read_text().startswith("**Dry run**")
    assert "group mfu exit 0" in (out / "session.log").read_text()


def test_session_skips_groups_past_its_budget_and_says_so(tmp_path):
    proc = run_session(tmp_path, "--dry-run", "mfu", "finetune", SESSION_BUDGET_S="30", HF_BERT_TASKS_SHARED=SHARED)
    assert proc.returncode == 124, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "group mfu NOT RUN: " in proc.stdout and "group finetune NOT RUN: " in proc.stdout


def test_session_refuses_unknown_groups(tmp_path):
    proc = run_session(tmp_path, "--dry-run", "mfu", "pretrain")
    assert proc.returncode == 2 and "unknown group 'pretrain'" in proc.stderr
