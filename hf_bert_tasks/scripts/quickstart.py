"""The README's main job, offline on 2 CPU cores: every step of the package on its own samples, with a verdict each.

    hf-bert-tasks quickstart            (= make quickstart; a new runs/quickstart-<UTC time> each run)

Steps (sizes in :data:`FULL`; samples: ``tools/make_samples.py``; measured runs: docs/results.md#quickstart):

1. a WordPiece vocabulary and a ``tiny`` BERT (L=2, H=128) pretrained with MLM + NSP and whole-word masking on
   ``samples/pretraining/corpus.txt``: held-out MLM accuracy vs the most frequent WordPiece's share, NSP vs chance;
2. that checkpoint fine-tuned on each sample task, dev metric vs the best constant prediction (``--reinit_pooler``,
   Zhang et al. 2021 §5; random batches);
3. label efficiency: the checkpoint vs a randomly initialised copy, both on 10 % of the SST-2 sample's labels;
4. fine-tuning vs LoRA vs a head on frozen features (paper §5.3) on the SST-2 sample, as the compare report.
It ends with one table (a row "works" when its value beats its baseline by :data:`MARGIN`),
``quickstart_summary.json`` and ``quickstart_summary.png`` in ``--output_dir``.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import resource
import sys
import time
from dataclasses import dataclass

from .. import get_task
from ..cli import ArgumentParser, run_subcommand
from ..modes import DEFAULT_TRAINING_MODE
from .quickstart_report import MARGIN, Row, dev_showcase, held_out_rows, plot_summary, print_table
from .quickstart_steps import comparison_step, finetune_step, label_efficiency_step, pretrain_step, quiet_load_report

#: documented names (docs/design.md, the quickstart) kept importable here; they live in quickstart_report/_steps
__all__ = [
    "FULL",
    "MARGIN",
    "QuickstartPlan",
    "Row",
    "TaskRun",
    "build_parser",
    "dev_showcase",
    "held_out_rows",
    "main",
    "new_run_dir",
    "quiet_load_report",
    "run_quickstart",
]


@dataclass(frozen=True)
class TaskRun:
    """One sample task of step 2: registered task name, sample folder, epochs and peak learning rate."""

    task: str
    folder: str
    epochs: float
    learning_rate: float


@dataclass(frozen=True)
class QuickstartPlan:
    """Sizes of every step. :data:`FULL` is the quickstart. ``comparison_task`` (one of ``tasks``) is the task of
    steps 3 and 4; step 3 fine-tunes both encoders on the first ``gain_train_samples`` examples for ``gain_epochs``.
    Why each value: docs/design.md, "where each plan value came from" (runs: docs/results.md#quickstart)."""

    vocab_size: int = 2000
    pretrain_steps: int = 2000
    pretrain_batch_size: int = 8
    pretrain_learning_rate: float = 1e-3
    pretrain_max_seq_length: int = 64
    dropout: float | None = None
    tasks: tuple[TaskRun, ...] = (
        TaskRun("sst2", "SST-2", 6, 5e-4),
        TaskRun("mrpc", "MRPC", 15, 5e-4),
        TaskRun("mnli", "MNLI", 4, 5e-4),
    )
    comparison_task: str = "sst2"
    gain_train_samples: int = 160
    gain_epochs: float = 20
    lora_epochs: float = 10
    lora_learning_rate: float = 2e-3
    frozen_epochs: float = 30
    frozen_learning_rate: float = 3e-3
    frozen_strategies: tuple[str, ...] = ("last", "concat_last_four")
    frozen_pooling: str = "mean"
    frozen_head: str = "mlp"
    batch_size: int = 16
    reinit_pooler: bool = True
    train_sampling_strategy: str = "random"
    max_train_samples: int | None = None
    max_eval_samples: int | None = None
    max_position_embeddings: int = 128

    @property
    def few_labels(self) -> int:
        """Training examples of step 3: ``gain_train_samples``, or ``max_train_samples`` when that is smaller."""
        return min(n for n in (self.gain_train_samples, self.max_train_samples) if n)


FULL = QuickstartPlan()


def run_quickstart(output_dir: str, seed: int = 42, plan: QuickstartPlan = FULL) -> dict:
    """Run every step into ``output_dir``; returns the summary (also written as ``quickstart_summary.json``).
    ``ValueError`` when ``plan.comparison_task`` is not one of ``plan.tasks``."""
    runs = {run.task: run for run in plan.tasks}
    if plan.comparison_task not in runs:
        raise ValueError(f"comparison_task {plan.comparison_task!r} is not among the plan's tasks {list(runs)}")
    os.makedirs(output_dir, exist_ok=True)
    started = time.time()

    print("== 1. WordPiece vocabulary + pretraining a mini BERT (MLM + NSP, whole-word masking) on the sample corpus")
    model_dir, rows, pretraining = pretrain_step(plan, output_dir, seed)
    walls = {"pretraining": time.time() - started}
    results, task_rows = finetune_step(plan, model_dir, output_dir, seed)
    rows += task_rows
    walls.update({f"fine-tune {name}": metrics["wall_seconds"] for name, metrics in results.items()})

    run = runs[plan.comparison_task]
    few_labels, few_dirs, gain_row = label_efficiency_step(plan, run, model_dir, output_dir, seed)
    rows.append(gain_row)
    walls["label efficiency"] = sum(r["wall_seconds"] for r in few_labels.values())
    baseline = next(r for r in rows if r.step == f"fine-tune {run.task}")
    arms, arm_rows, compare_paths = comparison_step(
        plan, run, model_dir, output_dir, seed, results[run.task], baseline
    )
    rows += arm_rows
    walls["lora + frozen"] = sum(m["wall_seconds"] for label, m in arms.items() if label != DEFAULT_TRAINING_MODE)

    print("== 5. pipeline() on dev sentences: the sample's label vs the model's answer")
    task = get_task(run.task)
    showcase_models = {"pretrained": os.path.join(output_dir, run.task)}
    showcase_models.update({f"{name}, {plan.few_labels} labels": path for name, path in few_dirs.items()})
    showcase = dev_showcase(task, run.folder, showcase_models)
    print("\n".join(showcase.pop("lines")))

    usage = resource.getrusage(resource.RUSAGE_SELF)
    summary = {
        "rows": [vars(r) for r in rows],
        "all_work": all(r.works for r in rows),
        "margins": MARGIN,
        "pretraining": {k: pretraining[k] for k in ("steps", "final_mlm_accuracy", "final_nsp_accuracy")},
        "fine-tuning": results,
        "few_labels": few_labels,
        "comparison": {k: v[f"eval_{task.primary_metric}"] for k, v in arms.items()},
        "comparison_report": compare_paths,
        "showcase": showcase,
        "wall_seconds": walls,
        "total_wall_seconds": time.time() - started,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "plan": json.loads(json.dumps(vars(plan), default=lambda o: vars(o))),
    }
    summary["png"] = plot_summary(rows, os.path.join(output_dir, "quickstart_summary.png"))
    with open(os.path.join(output_dir, "quickstart_summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2, default=str)
    print_table(rows, summary, output_dir)
    return summary


def new_run_dir(parent: str = "runs", prefix: str = "quickstart", now: float | None = None) -> tuple[str, str | None]:
    """A new folder name ``parent/prefix-YYYYmmdd-HHMMSS`` (UTC at ``now``, ``-2``, ``-3`` ... when taken) and the newest
    earlier ``prefix-*`` folder of ``parent`` holding a finished quickstart (``None`` when there is none)."""
    base = os.path.join(parent, f"{prefix}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime(now))}")
    candidates = itertools.chain([base], (f"{base}-{n}" for n in itertools.count(2)))
    path = next(p for p in candidates if not os.path.exists(p))
    earlier = sorted(
        os.path.join(parent, d)
        for d in (os.listdir(parent) if os.path.isdir(parent) else [])
        if d.startswith(prefix + "-") and os.path.isfile(os.path.join(parent, d, "quickstart_summary.json"))
    )
    return path, max(earlier, key=os.path.getmtime) if earlier else None


def build_parser() -> argparse.ArgumentParser:
    """The ``quickstart`` flags (errors raise :class:`hf_bert_tasks.cli.UsageError`)."""
    parser = ArgumentParser(prog="hf-bert-tasks quickstart", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--output_dir",
        default=None,
        help="where every step writes its outputs (default: a new runs/quickstart-<UTC time>, "
        "linked as runs/quickstart)",
    )
    parser.add_argument("--seed", type=int, default=42, help="seed of every step")
    parser.add_argument("--overwrite_output_dir", action="store_true", help="run again over a finished quickstart")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print quickstart_summary.json at the end instead of the table (every step's output goes to stderr)",
    )
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: OMP_NUM_THREADS if set, else 1: these models are too "
        "small to gain from more, and lose much when another process holds a core)",
    )
    return parser


def main(argv: list[str] | None = None) -> dict:
    """``hf-bert-tasks quickstart``: parse ``argv``, pick the run folder (a new ``runs/quickstart-<UTC time>`` unless
    ``--output_dir``) and :func:`run_quickstart`; with ``--json`` every step prints to stderr and stdout gets the
    summary as JSON. ``FileExistsError``: ``--output_dir`` holds a finished quickstart (without
    ``--overwrite_output_dir``)."""
    args = build_parser().parse_args(argv)  # before the heavy imports: --help answers at once
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        summary = _run(args)
    if args.json:  # stdout holds the JSON only
        print(json.dumps(summary, indent=2, default=str))
    return summary


def _run(args) -> dict:
    """:func:`main` after parsing: the run folder (its link ``runs/quickstart``), the threads, the run."""
    from ..utils.threads import use_threads  # looked up at call time (tests replace it)

    output_dir = args.output_dir
    if output_dir is None:
        output_dir, previous = new_run_dir()
        print(
            f"quickstart run folder: {output_dir} (a new one each run; "
            + (f"the previous run is kept in {previous})" if previous else "no earlier run)")
        )
        os.makedirs(output_dir)
        link = "runs/quickstart"  # the latest run; a real folder there is left alone
        if os.path.islink(link):
            os.remove(link)
        if not os.path.exists(link):
            os.symlink(os.path.relpath(output_dir, "runs"), link)
            print(f"runs/quickstart -> {output_dir}")
    elif os.path.isfile(os.path.join(output_dir, "quickstart_summary.json")) and not args.overwrite_output_dir:
        raise FileExistsError(
            f"--output_dir {output_dir} holds a finished quickstart; pass "
            "--overwrite_output_dir to replace it or choose another folder"
        )
    print(use_threads(args.threads))
    return run_quickstart(output_dir, args.seed, FULL)


if __name__ == "__main__":
    sys.exit(run_subcommand("quickstart"))
