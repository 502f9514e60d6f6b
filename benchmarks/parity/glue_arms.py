"""GLUE parity against transformers' ``run_glue.py`` (issue 59 item 2): one run per side, task and seed.

    python benchmarks/parity/glue_arms.py --model DIR --work DIR --results FILE.jsonl \
        [--sides reference,ours] [--tasks mrpc,stsb,cola] [--seeds 42,43,44] \
        [--epochs 1] [--lr 1e-4] [--batch 32] [--max_seq_length 128] [--warmup 0.1] [--weight_decay 0.01] \
        [--max_train_samples N]

Sides, with the same model, data, max_seq_length, batch, lr, epochs, warmup, weight decay and seed:

- ``reference``: ``../shared/baselines/glue/run_glue.py`` (upstream, adapted only to run offline; its README) on
  the GLUE tsv files converted to JSON Lines by that folder's ``convert_glue.py`` (done once into ``WORK/json``),
  ``--pad_to_max_length False`` (dynamic padding, as ours), ``--save_strategy no``, ``--report_to none``;
- ``ours``: ``hf-bert-tasks finetune --task T --data_dir ../shared/data/glue/<T>`` with the package's defaults for
  everything not listed above (the GLUE sampler among them: that is what is compared), ``--save_strategy no``;
- ``ours_random`` / ``ours_grouped`` (diagnostic arms, not in the default ``--sides``): ours with
  ``--train_sampling_strategy random`` (run_glue's sampler) / ``group_by_length`` (the classification default until
  these runs, docs/parity.md), so that the sampler's share of a difference can be read off.

Each run is a fresh subprocess with a fresh datasets cache (so neither side reuses tokenized features), one at a
time; pin the CPU from outside (``taskset -c 1``, ``OMP_NUM_THREADS=1``). Runs are interleaved seed-major (seed,
task, side) so a cut-short invocation leaves paired rows, and a (side, task, seed, budget) already in ``--results``
is skipped. Each finished run appends one JSON line: family, side, task, seed, budget, metrics (the dev ``eval_*``
values in percent), train_loss, steps, wall_s (whole process), peak_rss_mb (the child's ``ru_maxrss`` from
``os.wait4``), command and commit. ``benchmarks/parity/report.py`` renders the table and the check.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
BASELINE = os.path.join(SHARED, "baselines", "glue")
GLUE_DATA = os.path.join(SHARED, "data", "glue")
FOLDER = {"mrpc": "MRPC", "stsb": "STS-B", "cola": "CoLA", "rte": "RTE"}
SIDES = ("reference", "ours", "ours_random", "ours_grouped")


def budget(args) -> dict:
    """The settings both sides share (a row's ``budget``; rows of different budgets are never paired)."""
    return {
        "epochs": args.epochs, "lr": args.lr, "batch": args.batch, "max_seq_length": args.max_seq_length,
        "warmup": args.warmup, "weight_decay": args.weight_decay, "max_train_samples": args.max_train_samples,
    }  # fmt: skip


def common_flags(args, seed: int, out: str) -> list[str]:
    """The flags both sides take alike (model, budget, seed, output folder; no checkpoints)."""
    return [
        "--model_name_or_path", args.model, "--max_seq_length", str(args.max_seq_length),
        "--per_device_train_batch_size", str(args.batch), "--learning_rate", str(args.lr),
        "--num_train_epochs", str(args.epochs), "--warmup_steps", str(args.warmup),
        "--weight_decay", str(args.weight_decay), "--seed", str(seed), "--save_strategy", "no",
        "--logging_steps", "50", "--output_dir", out,
    ]  # fmt: skip


def portable(cmd: list[str], args) -> str:
    """``cmd`` as recorded in a result row: no path of this machine (``python``, ``$MODEL``, ``$WORK``, ``../shared``
    and paths relative to the repository)."""
    text = " ".join("python" if a == sys.executable else a for a in cmd)
    names = {args.model: "$MODEL", args.work: "$WORK", SHARED: "../shared", ROOT + os.sep: ""}
    names.update(getattr(args, "portable_names", {}))  # a runner's own (e.g. swag_arms: --script as $RUN_SWAG)
    for path in sorted(names, key=len, reverse=True):  # the longest first: one path may start another
        text = text.replace(path, names[path])
    return text


def command(side: str, task: str, seed: int, args, out: str) -> list[str]:
    """The command line of one run of ``side`` on ``task`` with ``seed``, writing into ``out``."""
    common = common_flags(args, seed, out)
    if args.max_train_samples:
        common += ["--max_train_samples", str(args.max_train_samples)]
    if side == "reference":
        data = os.path.join(args.work, "json", task)
        return [
            sys.executable, os.path.join(BASELINE, "run_glue.py"), "--task_name", task,
            "--train_file", os.path.join(data, "train.json"), "--validation_file", os.path.join(data, "validation.json"),
            "--do_train", "--do_eval", "--pad_to_max_length", "False", "--report_to", "none", *common,
        ]  # fmt: skip
    return [
        sys.executable, "-m", "hf_bert_tasks.cli", "finetune", "--task", task,
        "--data_dir", os.path.join(GLUE_DATA, FOLDER[task]), "--disable_tqdm", "true", *common,
        *(["--train_sampling_strategy", "random"] if side == "ours_random" else []),
        *(["--train_sampling_strategy", "group_by_length"] if side == "ours_grouped" else []),
    ]  # fmt: skip


def read_result(out: str) -> dict:
    """The dev metrics in percent (``eval_`` prefix dropped), ``train_loss`` and the optimizer steps of a run."""
    with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
        res = json.load(f)
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        steps = json.load(f)["global_step"]
    skip = {"eval_loss", "eval_runtime", "eval_samples", "eval_samples_per_second", "eval_steps_per_second"}
    metrics = {
        k[len("eval_") :]: 100.0 * v
        for k, v in res.items()
        if k.startswith("eval_") and k not in skip and "combined" not in k and isinstance(v, (int, float))
    }
    if not metrics:
        raise ValueError(f"{out}/all_results.json: no eval_ metric (keys: {sorted(res)})")
    return {"metrics": metrics, "train_loss": res.get("train_loss"), "steps": steps}


def run_one(side: str, task: str, seed: int, args, env: dict, command=command, family: str = "glue") -> dict | None:
    """Run ``command(side, task, seed, args, out)`` in a fresh process with a fresh datasets cache; the result row
    (``family``, side, task, seed, budget, metrics, ..., peak_rss_mb), or None (and a message) when it failed."""
    out = os.path.join(args.work, f"{side}-{task}-s{seed}")
    cmd = command(side, task, seed, args, out)
    timing = timed_run(cmd, out, env, f"{side} {task} seed {seed}")
    if timing is None:
        return None
    row = {"family": family, "side": side, "task": task, "seed": seed, "budget": budget(args), **read_result(out)}
    row.update(**timing, command=portable(cmd, args))
    row["commit"] = subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()
    return row


def timed_run(cmd: list[str], out: str, env: dict, name: str) -> dict | None:
    """Run ``cmd`` (which writes into ``out``, emptied first) in a fresh process with a fresh datasets cache, its
    output in ``out.log``; ``{"wall_s", "peak_rss_mb"}`` (seconds, MB: ``ru_maxrss`` from ``os.wait4``), or None (and
    a message naming ``name``) when it exits non-zero. The run's weights are deleted afterwards, its results kept."""
    shutil.rmtree(out, ignore_errors=True)
    run_env = dict(env, HF_DATASETS_CACHE=out + ".datasets-cache")  # fresh per run, as run_one.sh
    start = time.time()
    with open(out + ".log", "w", encoding="utf-8") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=run_env)
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.time() - start
    shutil.rmtree(run_env["HF_DATASETS_CACHE"], ignore_errors=True)
    if os.waitstatus_to_exitcode(status) != 0:
        print(f"{name}: exit status {os.waitstatus_to_exitcode(status)}, see {out}.log", flush=True)
        return None
    for f in os.listdir(out):  # keep the results, not the weights
        if f.endswith((".safetensors", ".bin")):
            os.remove(os.path.join(out, f))
    return {"wall_s": round(wall, 1), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def load(path: str) -> list[dict]:
    """The rows of the JSON Lines file ``path`` (none when it does not exist yet)."""
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def append(path: str, row: dict, shown: dict | None = None) -> None:
    """Append ``row`` to the JSON Lines file ``path`` and print ``shown`` (default: ``row`` without its command)."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
    print(json.dumps(shown if shown is not None else {k: v for k, v in row.items() if k != "command"}), flush=True)


def offline_env() -> dict:
    """The environment of every run: offline (no Hub, no telemetry), no progress bars, this checkout importable."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TQDM_DISABLE="1")
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    return env


def runner_parser(doc: str, epochs: float, lr: float, batch: int, script: str | None = None):
    """The flags a family's runner shares (this one, ``swag_arms.py``, ``ner_arms.py``): ``--model``, ``--work``,
    ``--results``, ``--sides``, ``--seeds`` and the budget (``--epochs``/``--lr``/``--batch`` with the family's
    defaults; ``--max_seq_length`` 128, ``--warmup`` 0.1, ``--weight_decay`` 0.01), plus ``--script`` (the reference
    example, ``script`` naming it) when given. Returns the ``argparse`` parser for the runner's own flags."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    if script:
        parser.add_argument("--script", required=True, help=f"{script} adapted to run offline")
    parser.add_argument("--work", required=True, help="scratch folder: converted data, run folders and logs")
    parser.add_argument("--results", required=True, help="JSON Lines file the rows are appended to")
    parser.add_argument("--sides", default="reference,ours")
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--epochs", type=float, default=epochs)
    parser.add_argument("--lr", type=float, default=lr)
    parser.add_argument("--batch", type=int, default=batch)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--warmup", type=float, default=0.1)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    return parser


def parse_runner_args(parser, argv, sides_allowed) -> tuple[argparse.Namespace, list[str]]:
    """Parse ``argv`` with a :func:`runner_parser`; ``--sides`` checked against ``sides_allowed`` (a usage error
    naming the unknown side), the paths made absolute. Returns the arguments and the sides."""
    args = parser.parse_args(argv)
    sides = args.sides.split(",")
    for s in sides:
        if s not in sides_allowed:
            parser.error(f"--sides: unknown side {s!r}; expected one of {list(sides_allowed)}")
    for name in ("model", "work", "results", "script"):
        if getattr(args, name, None) is not None:
            setattr(args, name, os.path.abspath(getattr(args, name)))
    return args, sides


def main(argv=None):
    parser = runner_parser(__doc__, epochs=1.0, lr=1e-4, batch=32)
    parser.add_argument("--tasks", default="mrpc,stsb,cola")
    parser.add_argument("--max_train_samples", type=int, default=0, help="first N training examples (0: all)")
    args, sides = parse_runner_args(parser, argv, SIDES)
    tasks = args.tasks.split(",")
    for t in tasks:
        if t not in FOLDER:
            parser.error(f"--tasks: unknown task {t!r}; expected one of {sorted(FOLDER)}")
    os.makedirs(args.work, exist_ok=True)
    if "reference" in sides and not os.path.exists(os.path.join(args.work, "json", "COUNTS.tsv")):
        subprocess.run(
            [sys.executable, os.path.join(BASELINE, "convert_glue.py"), GLUE_DATA, os.path.join(args.work, "json")],
            check=True,
        )
    done = {(r["side"], r["task"], r["seed"]) for r in load(args.results) if r.get("budget") == budget(args)}
    env = offline_env()
    for seed in (int(s) for s in args.seeds.split(",")):
        for task in tasks:
            for side in sides:
                if (side, task, seed) in done:
                    continue
                row = run_one(side, task, seed, args, env)
                if row is not None:
                    append(args.results, row)


if __name__ == "__main__":
    main()
