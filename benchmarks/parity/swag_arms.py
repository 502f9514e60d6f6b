"""SWAG parity against transformers' ``run_swag.py`` (issue 59 item 2), on the 999 SWAG rows that are here.

    python benchmarks/parity/swag_arms.py --model DIR --script PATH/run_swag.py --work DIR --results FILE.jsonl \
        [--sides reference,ours] [--seeds 42,43,44] [--dev_rows 199] [--epochs 2] [--lr 5e-5] [--batch 16] \
        [--max_seq_length 128] [--warmup 0.1] [--weight_decay 0.01]

Data: ``../shared/data/swag/train.head999.csv`` (the first 999 rows of SWAG's regular ``train.csv``, the only rows
here; MANIFEST.md) split once into ``WORK/data/train.csv`` (the first 999 − ``--dev_rows`` rows) and
``WORK/data/val.csv`` (the last ``--dev_rows``), both swagaf CSVs with the original header, read by both sides.

Sides, with the same model, data, max_seq_length, batch, lr, epochs, warmup, weight decay and seed:

- ``reference``: ``--script``, transformers' ``examples/pytorch/multiple-choice/run_swag.py`` adapted only to run
  offline (docs/parity.md lists the changes; it is not kept in this repository), ``--train_file``/
  ``--validation_file`` on the two CSVs, dynamic padding (its default), ``--save_strategy no``;
- ``ours``: ``hf-bert-tasks finetune --task swag --data_dir WORK/data`` with the package's defaults otherwise.

One run at a time as ``glue_arms.py`` (fresh process and datasets cache, seed-major order, finished rows skipped,
one JSON line per run with wall time and peak RSS; ``family`` ``swag``); ``report.py`` renders them.
"""

from __future__ import annotations

import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glue_arms  # the shared runner: one process, wall time, peak RSS, the row

SWAG_ROWS = os.path.join(glue_arms.SHARED, "data", "swag", "train.head999.csv")
#: the diagnostic arms' sampler flag (glue_arms.SIDES); ``ours`` takes the package's default
SAMPLER = {"ours_random": ["--train_sampling_strategy", "random"],
           "ours_grouped": ["--train_sampling_strategy", "group_by_length"]}  # fmt: skip


def split(source: str, out_dir: str, dev_rows: int) -> tuple[int, int]:
    """Write ``out_dir/train.csv`` (all but the last ``dev_rows`` data rows of ``source``) and ``out_dir/val.csv``
    (the last ``dev_rows``), each with ``source``'s header; returns the two row counts. Raises ``ValueError`` when
    ``dev_rows`` leaves no training row."""
    with open(source, encoding="utf-8-sig", newline="") as f:
        header, *rows = list(csv.reader(f))
    if not 0 < dev_rows < len(rows):
        raise ValueError(f"--dev_rows {dev_rows}: expected 1..{len(rows) - 1} ({source} has {len(rows)} rows)")
    os.makedirs(out_dir, exist_ok=True)
    for name, part in (("train.csv", rows[:-dev_rows]), ("val.csv", rows[-dev_rows:])):
        with open(os.path.join(out_dir, name), "w", encoding="utf-8", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(part)
    return len(rows) - dev_rows, dev_rows


def command(side: str, task: str, seed: int, args, out: str) -> list[str]:
    """The command line of one SWAG run of ``side`` with ``seed``, writing into ``out`` (``task`` is ``swag``)."""
    data = os.path.join(args.work, "data")
    common = glue_arms.common_flags(args, seed, out)
    if side == "reference":
        return [
            sys.executable, args.script, "--train_file", os.path.join(data, "train.csv"),
            "--validation_file", os.path.join(data, "val.csv"), "--do_train", "--do_eval", "--report_to", "none",
            *common,
        ]  # fmt: skip
    return [sys.executable, "-m", "hf_bert_tasks.cli", "finetune", "--task", "swag", "--data_dir", data,
            "--disable_tqdm", "true", *common, *SAMPLER.get(side, [])]  # fmt: skip


def main(argv=None):
    parser = glue_arms.runner_parser(__doc__, epochs=2.0, lr=5e-5, batch=16, script="run_swag.py")
    parser.add_argument("--dev_rows", type=int, default=199)
    args, sides = glue_arms.parse_runner_args(parser, argv, glue_arms.SIDES)
    args.max_train_samples = 0
    args.portable_names = {args.script: "$RUN_SWAG"}  # recorded commands: no path of this machine
    n_train, n_dev = split(SWAG_ROWS, os.path.join(args.work, "data"), args.dev_rows)
    budget = dict(glue_arms.budget(args), max_train_samples=n_train, dev_rows=n_dev)
    done = {(r["side"], r["seed"]) for r in glue_arms.load(args.results) if r.get("budget") == budget}
    env = glue_arms.offline_env()
    for seed in (int(s) for s in args.seeds.split(",")):
        for side in sides:
            if (side, seed) in done:
                continue
            row = glue_arms.run_one(side, "swag", seed, args, env, command=command, family="swag")
            if row is None:
                continue
            row["budget"] = budget
            glue_arms.append(args.results, row)


if __name__ == "__main__":
    main()
