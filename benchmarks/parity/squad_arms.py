"""SQuAD parity, step 2: short training arms, one change at a time against transformers' ``run_qa.py`` (issue 59).

    python benchmarks/parity/squad_arms.py --model DIR --data DIR --out DIR [--task squad_v1] [--seeds 42,43,44]
        [--arms run_qa,ours_grouped,ours_random] [--max_seq_length 128] [--doc_stride 64] [--batch 16]
        [--lr 1e-4] [--epochs 1] [--warmup 0.1] [--weight_decay 0.01]

``--data``: a folder with train-v1.1.json and dev-v1.1.json, or with ``--task squad_v2`` train-v2.0.json and
dev-v2.0.json (``squad_split.py``). Each run is one subprocess, one at a time (pin the CPU from outside: ``taskset -c
1``, ``OMP_NUM_THREADS=1``), seeds interleaved so a cut-short run of the script leaves balanced arms. Each finished run
appends one JSON line to ``OUT/results.jsonl`` (arm, task, seed, ``eval_f1``, ``eval_exact_match``, with v2.0 also
``eval_HasAns_f1`` / ``eval_NoAns_f1`` / ``eval_best_f1``, ``train_loss``, optimizer steps, wall seconds, peak RSS
(the child's ``ru_maxrss``), the command without this machine's paths) and is skipped when the script is run again.
``--summary`` prints the per-seed table and mean ± std per arm from that file.

Arms (every other setting equal on both sides):
- ``run_qa``: ``shared/baselines/qa/run_qa.py`` (random batches, windows padded to ``max_seq_length``,
  ``doc_stride`` = the windows' overlap; ``--version_2_with_negative`` for ``squad_v2``).
- ``ours_grouped``: ``hf-bert-tasks finetune --task squad_v1 --train_sampling_strategy group_by_length`` (the default
  before issue 59; ``--task squad_v2`` for ``squad_v2``).
- ``ours_random``: the same with ``--train_sampling_strategy random`` (the default after issue 59).
- ``ours_default``: no sampler flag (whatever the package's default is at this commit).
Both sides are scored by their own evaluation, which agree (issue 59: the package's scoring of run_qa's predictions
equals run_qa's).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import glue_arms

#: transformers' run_qa.py, adapted to run offline: ../shared/baselines/qa beside the repository
BASELINE = os.path.join(os.path.dirname(ROOT), "shared", "baselines", "qa")
OURS_SAMPLER = {"ours_grouped": ["--train_sampling_strategy", "group_by_length"],
                "ours_random": ["--train_sampling_strategy", "random"], "ours_default": []}  # fmt: skip
#: the file-name version of each task (the official files' names; squad_split.split_names)
VERSION = {"squad_v1": "v1.1", "squad_v2": "v2.0"}
#: read_result's keys: (the row's key, the result keys tried in order: ours' first, then run_qa's (evaluate's names))
KEYS = (
    ("eval_f1", ("eval_f1", "f1")), ("eval_exact_match", ("eval_exact_match", "eval_exact", "exact_match")),
    ("eval_HasAns_f1", ("eval_HasAns_f1",)), ("eval_NoAns_f1", ("eval_NoAns_f1",)),
    ("eval_HasAns_exact_match", ("eval_HasAns_exact_match", "eval_HasAns_exact")),
    ("eval_NoAns_exact_match", ("eval_NoAns_exact_match", "eval_NoAns_exact")), ("eval_best_f1", ("eval_best_f1",)),
)  # fmt: skip


def command(arm: str, seed: int, args, out: str) -> list[str]:
    """The command line of one run of ``arm``."""
    common = [
        "--per_device_train_batch_size", str(args.batch), "--learning_rate", str(args.lr),
        "--num_train_epochs", str(args.epochs), "--max_seq_length", str(args.max_seq_length),
        "--doc_stride", str(args.doc_stride), "--seed", str(seed), "--warmup_steps", str(args.warmup),
        "--weight_decay", str(args.weight_decay), "--save_strategy", "no", "--logging_steps", "10",
        "--output_dir", out,
    ]  # fmt: skip
    if arm == "run_qa":
        if not os.path.isdir(BASELINE):
            raise OSError(f"{BASELINE} not found: the run_qa arm needs run_qa.py (../shared/baselines/qa)")
        version = VERSION[args.task]
        return [
            sys.executable, os.path.join(BASELINE, "run_qa.py"), "--model_name_or_path", args.model,
            "--train_file", os.path.join(args.data, f"train-{version}.json"),
            "--validation_file", os.path.join(args.data, f"dev-{version}.json"), "--do_train", "--do_eval",
            "--report_to", "none", *(["--version_2_with_negative"] if args.task == "squad_v2" else []), *common,
        ]  # fmt: skip
    return [
        sys.executable, "-m", "hf_bert_tasks.cli", "finetune", "--task", args.task, "--model_name_or_path",
        args.model, "--data_dir", args.data, "--eval_strategy", "no", *common, *OURS_SAMPLER[arm],
    ]  # fmt: skip


def pick_scores(res: dict) -> dict:
    """The scores of :data:`KEYS` found in ``res`` (a run's ``all_results.json``: ours' ``eval_exact_match`` or
    run_qa's ``eval_exact``, evaluate's ``squad_v2`` names), under the row's names; keys absent from ``res`` are left
    out (v1.1 has no ``HasAns``/``NoAns``)."""
    found = {}
    for name, keys in KEYS:
        value = next((res[k] for k in keys if k in res), None)
        if value is not None:
            found[name] = value
    return found


def read_result(out: str) -> dict:
    """:func:`pick_scores`, ``train_loss`` and the optimizer steps of a finished run in ``out``."""
    with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
        res = json.load(f)
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        state = json.load(f)
    return {**pick_scores(res), "train_loss": res.get("train_loss"), "steps": state["global_step"]}


def run_arm(arm: str, seed: int, args, env: dict) -> dict | None:
    """One run of ``arm`` with ``seed`` in a fresh process and datasets cache; its row (arm, task, seed, scores,
    wall_s, peak_rss_mb from ``os.wait4``, command), or None (and a message) when it failed."""
    out = os.path.join(args.out, f"{arm}-s{seed}")
    cmd = command(arm, seed, args, out)
    timing = glue_arms.timed_run(cmd, out, env, f"{arm} seed {seed}")
    if timing is None:
        return None
    row = {"arm": arm, "task": args.task, "seed": seed, **read_result(out), **timing}
    names = types.SimpleNamespace(model=args.model, work=args.out, portable_names={args.data: "$DATA"})
    row["command"] = glue_arms.portable(cmd, names)
    return row


def summary(rows: list[dict]) -> str:
    """Markdown: per-seed F1 / EM per arm, then mean ± std (sample std) per arm."""
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["arm"], r["seed"]): r for r in rows}
    lines = ["| seed | " + " | ".join(f"{a} F1 / EM" for a in arms) + " |", "|---" * (len(arms) + 1) + "|"]
    for s in seeds:
        cells = [
            f"{by[a, s]['eval_f1']:.2f} / {by[a, s]['eval_exact_match']:.2f}" if (a, s) in by else "—" for a in arms
        ]
        lines.append(f"| {s} | " + " | ".join(cells) + " |")
    stats = []
    for a in arms:
        f1 = [by[a, s]["eval_f1"] for s in seeds if (a, s) in by]
        em = [by[a, s]["eval_exact_match"] for s in seeds if (a, s) in by]
        sd = lambda x: statistics.stdev(x) if len(x) > 1 else float("nan")
        stats.append(
            f"{statistics.mean(f1):.2f} ± {sd(f1):.2f} / {statistics.mean(em):.2f} ± {sd(em):.2f} (n={len(f1)})"
        )
    lines.append("| mean ± std | " + " | ".join(stats) + " |")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--data", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--task", default="squad_v1", choices=sorted(VERSION))
    parser.add_argument("--seeds", default="42,43,44")
    parser.add_argument("--arms", default="run_qa,ours_grouped,ours_random")
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--doc_stride", type=int, default=64)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--warmup", type=float, default=0.1)
    parser.add_argument("--weight_decay", type=float, default=0.01)
    parser.add_argument("--summary", action="store_true", help="print the table of OUT/results.jsonl and exit")
    args = parser.parse_args(argv)
    args.model, args.data, args.out = (os.path.abspath(p) for p in (args.model, args.data, args.out))
    results = os.path.join(args.out, "results.jsonl")
    if args.summary:
        print(summary(glue_arms.load(results)))
        return
    os.makedirs(args.out, exist_ok=True)
    arms = args.arms.split(",")
    for arm in arms:
        if arm != "run_qa" and arm not in OURS_SAMPLER:
            parser.error(f"--arms: unknown arm {arm!r}; expected run_qa or one of {sorted(OURS_SAMPLER)}")
    done = {(r["arm"], r["seed"]) for r in glue_arms.load(results) if r.get("task", "squad_v1") == args.task}
    env = glue_arms.offline_env()
    for seed in (int(s) for s in args.seeds.split(",")):
        for arm in arms:
            if (arm, seed) in done:
                continue
            row = run_arm(arm, seed, args, env)
            if row is not None:
                glue_arms.append(results, row, shown=row)
    print(summary(glue_arms.load(results)))


if __name__ == "__main__":
    main()
