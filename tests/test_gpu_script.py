"""benchmarks/gpu.sh on CPU: ``--dry-run`` runs every step at toy size, and a failing step fails the script."""

import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(REPO, "benchmarks", "gpu.sh")


def run_gpu_sh(tmp_path, python, *args):
    env = dict(os.environ, PY=python, OUT_DIR=str(tmp_path / "out"), OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p))
    env.pop("CPU_SMOKE", None)
    return subprocess.run(["bash", SCRIPT, *args], check=False, cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=600)


def test_dry_run_runs_every_step_on_cpu(tmp_path):
    proc = run_gpu_sh(tmp_path, sys.executable, "--dry-run")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for heading in ("== 1. synthetic batches", "== 3. pretrain recipe", "== 4. fine-tune recipe", "total "):
        assert heading in proc.stdout
    assert "finetune recipe:" in proc.stdout and "sequences/s" in proc.stdout
    assert (tmp_path / "out" / "eager.json").is_file()


def test_a_failing_recipe_step_fails_the_script(tmp_path):
    """The pretrain step used to end in ``|| true``: a crashing recipe could not fail the script."""
    wrapper = tmp_path / "python"
    wrapper.write_text(f"#!/bin/sh\ncase \"$*\" in *\" pretrain \"*) echo boom >&2; exit 7;; esac\n"
                       f"exec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    proc = run_gpu_sh(tmp_path, str(wrapper), "--dry-run")
    assert proc.returncode == 7, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "step '3. pretrain recipe' FAILED (exit 7)" in proc.stderr
    assert "boom" in proc.stderr
    assert "== 4. fine-tune recipe" not in proc.stdout


def test_an_unknown_argument_is_refused(tmp_path):
    proc = run_gpu_sh(tmp_path, sys.executable, "--dryrun")
    assert proc.returncode == 2 and "unknown argument --dryrun" in proc.stderr
