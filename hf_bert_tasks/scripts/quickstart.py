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
import itertools
import json
import os
import resource
import sys
import time
from collections import Counter
from dataclasses import dataclass, field

from .. import get_task
from ..cli import ArgumentParser, run_subcommand
from ..console import interactive, log_filters
from ..modes import DEFAULT_TRAINING_MODE, arm_from_label, get_training_mode
from ..modes.feature_based import NAME as FEATURE_BASED
from ..modes.lora import NAME as LORA
from ..resources import sample_path, sample_texts
from .compare import paper_number, trainable_parameters
from .compare_report import write_report

#: a row "works" when value >= baseline + MARGIN[kind] (metrics on the 0-1 scale)
MARGIN = {"above": 0.10, "gain": 0.05}
#: what the quickstart says when a row misses its margin (pointers to measured runs)
NOT_SHOWN_GAIN = (
    "Pretraining's gain grows with pretraining compute and shrinks with the number of labels; "
    "docs/results.md#quickstart has the measured runs."
)
NOT_SHOWN = "Runs of this quickstart measured on a 2-core CPU, with every row, are in docs/results.md#quickstart."


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


FULL = QuickstartPlan()


@dataclass
class Row:
    """One line of the final table. ``kind``: "above" (value vs a baseline) or "gain" (value vs another run)."""

    step: str
    metric: str
    value: float
    baseline: float
    baseline_name: str
    kind: str = "above"
    note: str = ""
    verdict: str = field(init=False, default="")
    works: bool = field(init=False, default=False)

    def __post_init__(self):
        margin, diff = MARGIN[self.kind], self.value - self.baseline
        self.works = self.value >= self.baseline + margin
        self.verdict = (
            f"works ({diff:+.3f} vs {self.baseline_name})"
            if self.works
            else f"NOT shown: {diff:+.3f} vs {self.baseline_name}, needs {margin:+.2f}"
        )


def constant_baseline(task, raw_dev) -> tuple[float, str]:
    """Best dev score of a constant prediction for ``task``'s primary metric (every label tried: accuracy's best is
    the majority class, F1's the positive class; regression: 0.0, no correlation), and its name."""
    import numpy as np

    if task.problem_type == "regression":
        return 0.0, "no correlation"
    labels = np.asarray(raw_dev[task.label_column])
    scores = {
        value: task.compute_metrics(np.full_like(labels, value), labels)[task.primary_metric]
        for value in set(labels.tolist())
    }
    best = max(scores, key=scores.get)
    majority = Counter(labels.tolist()).most_common(1)[0][0]
    return float(scores[best]), "majority class" if best == majority else f"always {task.label_names[best]!r}"


def unigram_baseline(tokenizer, path: str) -> float:
    """Share of the most frequent WordPiece among all pieces of the corpus at ``path`` (MLM's guess-one-token chance)."""
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    counts = Counter(i for ids in tokenizer(lines, add_special_tokens=False)["input_ids"] for i in ids)
    return counts.most_common(1)[0][1] / sum(counts.values())


#: :func:`hf_bert_tasks.console.log_filters`: an expected head swap's LOAD REPORT is one line
quiet_load_report = log_filters


def _finetune(plan: QuickstartPlan, run: TaskRun, model_dir: str, output_dir: str, seed: int, **mode) -> dict:
    from ..arguments import DataArguments, FinetuneTrainingArguments, ModelArguments
    from ..finetuning import run_finetune

    model_args = ModelArguments(
        model_name_or_path=model_dir,
        reinit_pooler=plan.reinit_pooler and get_training_mode(mode.get("mode")).allows_reinit,
    )
    data_args = DataArguments(
        task=run.task,
        data_dir=sample_path(run.folder),
        max_eval_samples=plan.max_eval_samples,
        max_train_samples=mode.pop("max_train_samples", plan.max_train_samples),
    )
    training_args = FinetuneTrainingArguments(
        output_dir=output_dir,
        num_train_epochs=mode.pop("epochs", run.epochs),
        learning_rate=mode.pop("learning_rate", run.learning_rate),
        per_device_train_batch_size=plan.batch_size,
        seed=seed,
        do_train=True,
        do_eval=True,
        save_strategy="no",
        logging_steps=100,
        report_to="none",
        train_sampling_strategy=plan.train_sampling_strategy,
        disable_tqdm=not interactive(),
        overwrite_output_dir=True,
        **mode,
    )
    started = time.time()
    with quiet_load_report():
        metrics = run_finetune(model_args, data_args, training_args)
    wall = time.time() - started
    # the compare report's budget of this run (as compare.arm_budget gives it)
    budget = {
        "epochs": f"{training_args.num_train_epochs:g}",
        "learning_rate": f"{training_args.learning_rate:g}",
        "trainable_parameters": trainable_parameters(
            get_task(run.task).configure(data_args), model_args, training_args
        ),
    }
    return {**metrics, "wall_seconds": wall, "budget": budget}


def random_init_copy(model_dir: str, output_dir: str, seed: int) -> str:
    """Save a randomly initialised ``BertForPreTraining`` with ``model_dir``'s config and tokenizer to ``output_dir``."""
    import torch
    from transformers import AutoConfig, AutoTokenizer, BertForPreTraining

    torch.manual_seed(seed)
    BertForPreTraining(AutoConfig.from_pretrained(model_dir)).save_pretrained(output_dir)
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(output_dir)
    return output_dir


def pretrain_step(plan: QuickstartPlan, output_dir: str, seed: int) -> tuple[str, list[Row], dict]:
    """Step 1: vocabulary + MLM/NSP pretraining. Returns the checkpoint folder, its rows and its summary."""
    from ..pretraining import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments, run_pretrain
    from ..tokenization import train_wordpiece_tokenizer

    tokenizer_dir = os.path.join(output_dir, "tokenizer")
    tokenizer = train_wordpiece_tokenizer(sample_texts(), vocab_size=plan.vocab_size)
    tokenizer.save_pretrained(tokenizer_dir)
    corpus = sample_path("pretraining", "corpus.txt")
    model_dir = os.path.join(output_dir, "pretrained-bert")
    summary = run_pretrain(
        PretrainModelArguments(
            preset="tiny",
            tokenizer_name=tokenizer_dir,
            dropout=plan.dropout,
            max_position_embeddings=plan.max_position_embeddings,
        ),
        PretrainDataArguments(
            train_files=[corpus],
            max_seq_length=plan.pretrain_max_seq_length,
            whole_word_mask=True,
            validation_split_percentage=5,
        ),
        PretrainTrainingArguments(
            output_dir=model_dir,
            max_steps=plan.pretrain_steps,
            seed=seed,
            per_device_train_batch_size=plan.pretrain_batch_size,
            learning_rate=plan.pretrain_learning_rate,
            warmup_steps=0.05,
            eval_steps=max(plan.pretrain_steps // 2, 1),
            save_strategy="no",
            report_to="none",
            logging_steps=max(plan.pretrain_steps // 10, 1),
            overwrite_output_dir=True,
            disable_tqdm=not interactive(),
        ),
    )
    steps = f"pretraining ({summary['steps']} steps)"
    rows = [
        Row(
            steps,
            "held-out MLM accuracy",
            summary["final_mlm_accuracy"],
            unigram_baseline(tokenizer, corpus),
            "most frequent WordPiece",
        ),
        Row(steps, "held-out NSP accuracy", summary["final_nsp_accuracy"], 0.5, "chance"),
    ]
    return model_dir, rows, summary


def run_quickstart(output_dir: str, seed: int = 42, plan: QuickstartPlan = FULL) -> dict:
    """Run every step into ``output_dir``; returns the summary (also written as ``quickstart_summary.json``).
    ``ValueError`` when ``plan.comparison_task`` is not one of ``plan.tasks``."""
    runs = {run.task: run for run in plan.tasks}
    if plan.comparison_task not in runs:
        raise ValueError(f"comparison_task {plan.comparison_task!r} is not among the plan's tasks {list(runs)}")
    os.makedirs(output_dir, exist_ok=True)
    started = time.time()
    walls: dict[str, float] = {}

    print("== 1. WordPiece vocabulary + pretraining a mini BERT (MLM + NSP, whole-word masking) on the sample corpus")
    model_dir, rows, pretraining = pretrain_step(plan, output_dir, seed)
    walls["pretraining"] = time.time() - started

    results: dict[str, dict] = {}
    for run in plan.tasks:
        print(
            f"== 2. fine-tune the pretrained checkpoint on the {run.folder} sample ({run.epochs} epochs, lr {run.learning_rate})"
        )
        task = get_task(run.task)
        results[run.task] = metrics = _finetune(plan, run, model_dir, os.path.join(output_dir, run.task), seed)
        dev = task.read_local(sample_path(run.folder))[task.eval_splits[0]]
        if plan.max_eval_samples is not None:  # the examples the run was scored on
            dev = dev.select(range(min(plan.max_eval_samples, len(dev))))
        key = task.primary_metric
        rows.append(Row(f"fine-tune {run.task}", f"dev {key}", metrics[f"eval_{key}"], *constant_baseline(task, dev)))
        walls[f"fine-tune {run.task}"] = metrics["wall_seconds"]

    run = runs[plan.comparison_task]
    task = get_task(run.task)
    key = f"eval_{task.primary_metric}"
    few = min(n for n in (plan.gain_train_samples, plan.max_train_samples) if n)
    print(
        f"== 3. label efficiency: the pretrained and a randomly initialised copy (same config, steps, seed) "
        f"fine-tuned on {few} labelled {run.task} examples ({plan.gain_epochs:g} epochs)"
    )
    encoders = {
        "pretrained": model_dir,
        "random-init": random_init_copy(model_dir, os.path.join(output_dir, "random-init-bert"), seed),
    }
    few_dirs = {name: os.path.join(output_dir, f"{run.task}-{few}-labels-{name}") for name in encoders}
    few_labels = {
        name: _finetune(plan, run, path, few_dirs[name], seed, max_train_samples=few, epochs=plan.gain_epochs)
        for name, path in encoders.items()
    }
    walls["label efficiency"] = sum(r["wall_seconds"] for r in few_labels.values())
    rows.append(
        Row(
            f"pretrained vs random init ({run.task}, {few} labels)",
            f"dev {task.primary_metric}",
            few_labels["pretrained"][key],
            few_labels["random-init"][key],
            "random init",
            kind="gain",
        )
    )

    print(f"== 4. fine-tuning vs LoRA vs frozen features (paper §5.3) on the {run.folder} sample")
    compare_dir = os.path.join(output_dir, "compare")
    frozen = {
        "mode": FEATURE_BASED,
        "pooling": plan.frozen_pooling,
        "head": plan.frozen_head,
        "feature_cache_layers": "all",
        "feature_cache_dir": os.path.join(compare_dir, "feature_cache"),
        "epochs": plan.frozen_epochs,
        "learning_rate": plan.frozen_learning_rate,
    }
    arm_modes = {
        LORA: {"mode": LORA, "epochs": plan.lora_epochs, "learning_rate": plan.lora_learning_rate},
        **{f"{FEATURE_BASED}:{s}": {**frozen, "feature_strategy": s} for s in plan.frozen_strategies},
    }
    arms = {DEFAULT_TRAINING_MODE: results[run.task]}
    majority = next(r for r in rows if r.step == f"fine-tune {run.task}")
    for label, mode in arm_modes.items():
        arms[label] = _finetune(plan, run, model_dir, os.path.join(compare_dir, label.replace(":", "-")), seed, **mode)
        rows.append(
            Row(
                f"{label.replace(FEATURE_BASED + ':', 'frozen features: ')} ({run.task})",
                f"dev {task.primary_metric}",
                arms[label][key],
                majority.baseline,
                majority.baseline_name,
            )
        )
    walls["lora + frozen"] = sum(arms[k]["wall_seconds"] for k in arm_modes)
    report = []  # step 4's runs as the compare report (comparison.md/json/png)
    for label, metrics in arms.items():
        config = arm_from_label(label)
        paper, source = paper_number(task, config)
        report.append(
            {
                **config,
                "name": get_training_mode(config["mode"]).row_name(config),
                "mean": 100 * metrics[key],
                "std": 0.0,
                "n": 1,
                "values": [100 * metrics[key]],
                "wall_seconds": metrics["wall_seconds"],
                "paper": paper,
                "paper_source": source,
                "reused": False,
                "runs": [],
                **metrics["budget"],
            }
        )
    compare_paths = write_report(task, report, compare_dir, f"Quickstart: {task.name} sample, tiny BERT")

    print("== 5. pipeline() on dev sentences: the sample's label vs the model's answer")
    showcase = dev_showcase(
        task,
        run.folder,
        {
            "pretrained": os.path.join(output_dir, run.task),
            **{f"{name}, {few} labels": path for name, path in few_dirs.items()},
        },
    )
    print("\n".join(showcase.pop("lines")))

    usage = resource.getrusage(resource.RUSAGE_SELF)
    summary = {
        "rows": [vars(r) for r in rows],
        "all_work": all(r.works for r in rows),
        "margins": MARGIN,
        "pretraining": {k: pretraining[k] for k in ("steps", "final_mlm_accuracy", "final_nsp_accuracy")},
        "fine-tuning": results,
        "few_labels": few_labels,
        "comparison": {k: v[key] for k, v in arms.items()},
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
    print(
        f"\na row works when value >= baseline + {MARGIN['above']:.2f} (vs a baseline) or + {MARGIN['gain']:.2f} "
        "(vs another run)\n\n| step | metric | value | baseline | verdict |\n|---|---|---:|---:|---|"
    )
    for r in rows:
        print(f"| {r.step} | {r.metric} | {r.value:.4f} | {r.baseline:.4f} ({r.baseline_name}) | {r.verdict} |")
    for r in [r for r in rows if not r.works]:
        print(f"NOT shown here: {r.step} ({r.metric}). " + (NOT_SHOWN_GAIN if r.kind == "gain" else NOT_SHOWN))
    print(
        f"\nwall {summary['total_wall_seconds']:.0f} s, CPU {summary['cpu_seconds']:.0f} s (this process); "
        f"{output_dir}/quickstart_summary.png, {output_dir}/quickstart_summary.json"
    )
    return summary


def held_out_rows(train_texts: list[str], dev_texts: list[str]) -> list[int]:
    """Indices of the ``dev_texts`` holding a word (whitespace-separated, lowercased) that no training text holds:
    on the SST-2 sample, a held-out adjective whose polarity only the pretraining corpus shows."""
    seen = {word for text in train_texts for word in text.lower().split()}
    return [i for i, text in enumerate(dev_texts) if not set(text.lower().split()) <= seen]


def dev_showcase(task, folder: str, models: dict[str, str], per_group: int = 3) -> dict:
    """Classify the dev split of sample ``folder`` with each single-sentence classifier of ``models`` (name ->
    folder). Returns each model's accuracy on the sentences with a word never seen in training (:func:`held_out_rows`)
    and on the others, the first ``per_group`` of each group with the first model's answer, and ``lines`` to print."""
    from transformers import pipeline

    raw = task.read_local(sample_path(folder))
    text_column = task.text_columns[0]
    dev = raw[task.eval_splits[0]]
    texts, gold = list(dev[text_column]), [task.label_names[i] for i in dev[task.label_column]]
    held = set(held_out_rows(list(raw[task.train_split][text_column]), texts))
    answers = {
        name: [p["label"] for p in pipeline(task.pipeline_tag, model=path)(texts, batch_size=64)]
        for name, path in models.items()
    }
    groups = {"held-out words": sorted(held), "seen words": [i for i in range(len(texts)) if i not in held]}
    held_acc, seen_acc = (
        {name: sum(answers[name][i] == gold[i] for i in rows) / max(len(rows), 1) for name in models}
        for rows in groups.values()
    )
    first = next(iter(models))
    examples = [
        {"text": texts[i], "label": gold[i], "answer": answers[first][i], "group": group}
        for group, rows in groups.items()
        for i in rows[:per_group]
    ]
    shown = [", ".join(f"{n} {a:.3f}" for n, a in acc.items()) for acc in (held_acc, seen_acc)]
    lines = [
        f"  {e['text']!r}: sample's label {e['label']}, {first} model {e['answer']}"
        f"{'' if e['answer'] == e['label'] else ' (WRONG)'} [{e['group']}]"
        for e in examples
    ]
    lines.append(
        f"  dev accuracy on sentences with a word never seen in training ({len(held)}): {shown[0]}; on the "
        f"others ({len(texts) - len(held)}): {shown[1]}"
    )
    return {
        "n_held_out": len(held),
        "n_seen": len(texts) - len(held),
        "held_out_accuracy": held_acc,
        "seen_accuracy": seen_acc,
        "examples": examples,
        "lines": lines,
    }


def plot_summary(rows: list[Row], path: str) -> str:
    """Bar per row (value), a black tick at its baseline, green when the row works; saved as PNG ``path``."""
    from ..plots import new_figure

    fig, ax = new_figure(figsize=(8, 0.42 * len(rows) + 1.4))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r.value for r in rows], color=["tab:green" if r.works else "tab:red" for r in rows], alpha=0.8)
    ax.scatter([r.baseline for r in rows], ys, marker="|", s=300, color="black", zorder=3, label="baseline")
    ax.set_yticks(ys, [f"{r.step}: {r.metric}" for r in rows], fontsize=8)
    ax.set(xlim=(0, 1), xlabel="value (green: beats its baseline by the margin)")
    ax.set_title("hf-bert-tasks quickstart", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.savefig(path, dpi=110)
    return path


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
        "--threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: OMP_NUM_THREADS if set, else 1: these models are too "
        "small to gain from more, and lose much when another process holds a core)",
    )
    return parser


def main(argv: list[str] | None = None) -> dict:
    from ..threads import use_threads  # looked up at call time (tests replace it)

    args = build_parser().parse_args(argv)  # before the heavy imports: --help answers at once
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
