"""The quickstart on an idle machine and with one core kept busy by another process (issue 27 item 1).

    python benchmarks/bench_quickstart_busy.py [--repeats 1] [--seed 42] [--reduced]

Both sides run ``hf-bert-tasks quickstart`` exactly as ``make quickstart`` does (a fresh child process through the
CLI's ``main``, ``OMP_NUM_THREADS`` unset, so the quickstart's own thread choice is what is measured: one torch thread
unless the user sets ``OMP_NUM_THREADS`` or ``--threads``, :func:`hf_bert_tasks.utils.threads.use_threads`). The busy side first starts a
second process that spins on the machine's first usable CPU (``while True: pass``, pinned with
``os.sched_setaffinity``) and stops it after the quickstart ends; the quickstart itself is not pinned. Rounds are
interleaved (idle, busy, idle, busy ...). Before the fix, torch's default of one intra-op thread per core made the
busy case 2.5-20x slower (30 tiny-preset steps: 7.7 s and 19.1 s against 0.99 s and 0.72 s with one thread, issue 27).
Goal: busy / idle <= 1.5.

Reported: per side, wall seconds, the child's CPU seconds, peak RSS and console log size (KiB); ``busy_over_idle`` (median busy / median idle)
and every side's verdict rows (``all_work``), since a slower run must still give the same table.
``--reduced`` (the ``--smoke`` size) runs the test suite's reduced plan (seconds) through the same entry point.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness

REPO = os.path.dirname(HERE)
SMOKE_ARGS = ["--reduced"]
#: the quickstart runs in child processes: every package module may be timed
TIMED_PATHS = ["hf_bert_tasks"]

#: the child: ``hf-bert-tasks quickstart`` through the console script's ``cli.main`` (its quiet console and error
#: boundary, as ``make quickstart``); the reduced plan replaces FULL for --reduced
CHILD = """
import sys
from dataclasses import replace
import hf_bert_tasks.scripts.quickstart as Q
from hf_bert_tasks.cli import main
if sys.argv[3] == "reduced":
    Q.FULL = replace(Q.FULL, pretrain_steps=4, pretrain_batch_size=8, max_train_samples=32, max_eval_samples=40,
                     lora_epochs=1, frozen_epochs=1, frozen_strategies=("last",), gain_train_samples=16,
                     gain_epochs=1, tasks=(Q.TaskRun("sst2", "SST-2", 1, 1e-3),))
sys.exit(main(["quickstart", "--output_dir", sys.argv[1], "--seed", sys.argv[2], "--overwrite_output_dir"]))
"""
SPIN = "while True: pass"


def first_cpu() -> int:
    """The lowest CPU this process may run on (the busy process is pinned there)."""
    return min(os.sched_getaffinity(0))


def quickstart_side(
    name: str, workdir: str, seed: int, reduced: bool, busy: bool, keep_logs: str | None = None
) -> harness.Side:
    """One side: the quickstart in a child process (``OMP_NUM_THREADS`` unset), with or without a spinning core; its
    console log (size reported as ``log_kib``) is copied into ``keep_logs`` when given."""
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    env.update(HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", PYTHONPATH=REPO)
    out = os.path.join(workdir, name.split(",")[-1].strip().replace(" ", "_"))
    cmd = [sys.executable, "-c", CHILD, out, str(seed), "reduced" if reduced else "full"]
    spinner: list[subprocess.Popen] = []

    def prepare(_round: int) -> None:
        shutil.rmtree(out, ignore_errors=True)
        if busy:
            cpu = first_cpu()
            spinner.append(
                subprocess.Popen([sys.executable, "-c", SPIN], preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))  # noqa: PLW1509 (no threads run in the parent here)
            )

    def run(round_index: int) -> dict:
        return harness.run_subprocess(cmd, cwd=REPO, env=env, log_path=f"{out}.round{round_index}.log")

    def after(round_index: int, _extra: dict) -> dict:
        while spinner:
            proc = spinner.pop()
            proc.kill()
            proc.wait()
        with open(os.path.join(out, "quickstart_summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        log = f"{out}.round{round_index}.log"
        if keep_logs:
            os.makedirs(keep_logs, exist_ok=True)
            shutil.copy(log, os.path.join(keep_logs, os.path.basename(log)))
        return {
            "all_work": int(summary["all_work"]),
            "quickstart_wall_s": summary["total_wall_seconds"],
            "log_kib": os.path.getsize(log) / 1024,
        }

    what = "another process spinning on CPU 0 (pinned) for the whole run" if busy else "nothing else running"
    return harness.Side(
        name=name,
        role="ours",
        run=run,
        prepare=prepare,
        after=after,
        command=cmd,
        description=f"hf-bert-tasks quickstart (seed {seed}, OMP_NUM_THREADS unset), {what}",
    )


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=1, help="timed rounds per side (interleaved)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--reduced", action="store_true", help="the test suite's reduced plan (plumbing check)")
    parser.add_argument("--keep_logs", default=None, help="folder to copy each run's console log into")
    args = parser.parse_args(argv)
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("bench_quickstart_busy needs at least 2 usable CPUs (one is kept busy)")
    workdir = tempfile.mkdtemp(prefix="bench_quickstart_busy_")
    try:
        idle = quickstart_side(
            "quickstart, idle", workdir, args.seed, args.reduced, busy=False, keep_logs=args.keep_logs
        )
        busy = quickstart_side(
            "quickstart, one core busy", workdir, args.seed, args.reduced, busy=True, keep_logs=args.keep_logs
        )
        measured = harness.measure([idle, busy], repeats=args.repeats, warmup=0)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    sides = measured["sides"]
    ratio = sides[busy.name]["median_s"] / sides[idle.name]["median_s"]
    record = harness.result(
        "quickstart_busy",
        "quickstart wall time: one core busy vs idle (goal: busy / idle <= 1.5)",
        measured,
        [harness.Comparison(ours=busy.name, baseline=idle.name, kind="variant")],
        config={
            "seed": args.seed,
            "repeats": args.repeats,
            "plan": "reduced" if args.reduced else "full",
            "usable_cpus": len(os.sched_getaffinity(0)),
        },
        figures={
            "busy_over_idle": round(ratio, 3),
            "goal_busy_over_idle": 1.5,
            "every_row_works": {name: [e["all_work"] for e in s["extra"]] for name, s in sides.items()},
        },
        notes=[
            (
                "ratio = idle median / busy median (> 1 would mean the busy run was faster); busy_over_idle is its "
                "inverse, the slowdown"
            )
        ],
    )
    print(harness.format_result(record))
    return [record]


if __name__ == "__main__":
    main()
