"""The quickstart's training steps (docs/design.md, the quickstart): pretraining a tiny BERT (step 1), fine-tuning it on
each sample task (2), label efficiency against a randomly initialised copy (3) and fine-tuning vs LoRA vs frozen
features (4). Each returns its runs' metrics and its :class:`~hf_bert_tasks.scripts.quickstart_report.Row` s; sizes
come from a :class:`~hf_bert_tasks.scripts.quickstart.QuickstartPlan`."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .. import get_task
from ..cli import interactive, log_filters
from ..modes import DEFAULT_TRAINING_MODE, arm_from_label, get_training_mode
from ..modes.feature_based.arguments import NAME as FEATURE_BASED
from ..modes.lora.arguments import NAME as LORA
from ..utils.resources import sample_path, sample_texts
from .compare import paper_number, trainable_parameters
from .compare_report import write_report
from .quickstart_report import Row, constant_baseline, unigram_baseline

if TYPE_CHECKING:
    from .quickstart import QuickstartPlan, TaskRun

#: :func:`hf_bert_tasks.cli.log_filters`: an expected head swap's LOAD REPORT is one line
quiet_load_report = log_filters


def finetune_sample(plan: QuickstartPlan, run: TaskRun, model_dir: str, output_dir: str, seed: int, **mode) -> dict:
    """Fine-tune ``model_dir`` on ``run``'s sample at the plan's settings into ``output_dir`` (``mode``: flags that
    replace them: ``mode``, ``epochs``, ``learning_rate``, ``max_train_samples``, a mode's own flags). Returns the
    run's metrics, its ``wall_seconds`` and its ``budget`` as :func:`~hf_bert_tasks.scripts.compare.arm_budget`
    gives it."""
    from ..finetune.args import DataArguments, ModelArguments
    from ..finetune.config import finetune_arguments_class
    from ..finetune.recipe import run_finetune

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
    training_args = finetune_arguments_class(mode.get("mode") or DEFAULT_TRAINING_MODE)(
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
        metrics = run_finetune(model_args, data_args, training_args, report=False)  # the row's verdict judges it
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
    from ..pretraining.args import PretrainDataArguments, PretrainModelArguments
    from ..pretraining.config import PretrainTrainingArguments
    from ..pretraining.recipe import run_pretrain
    from ..utils.tokenizers import train_wordpiece_tokenizer

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


def finetune_step(
    plan: QuickstartPlan, model_dir: str, output_dir: str, seed: int
) -> tuple[dict[str, dict], list[Row]]:
    """Step 2: ``model_dir`` fine-tuned on each of ``plan.tasks`` into ``output_dir/<task>``. Returns each task's
    metrics and a row per task: its dev primary metric vs the best constant prediction on the same dev examples."""
    results: dict[str, dict] = {}
    rows = []
    for run in plan.tasks:
        print(
            f"== 2. fine-tune the pretrained checkpoint on the {run.folder} sample ({run.epochs} epochs, lr {run.learning_rate})"
        )
        task = get_task(run.task)
        results[run.task] = metrics = finetune_sample(plan, run, model_dir, os.path.join(output_dir, run.task), seed)
        dev = task.read_local(sample_path(run.folder))[task.eval_splits[0]]
        if plan.max_eval_samples is not None:  # the examples the run was scored on
            dev = dev.select(range(min(plan.max_eval_samples, len(dev))))
        key = task.primary_metric
        rows.append(Row(f"fine-tune {run.task}", f"dev {key}", metrics[f"eval_{key}"], *constant_baseline(task, dev)))
    return results, rows


def label_efficiency_step(
    plan: QuickstartPlan, run: TaskRun, model_dir: str, output_dir: str, seed: int
) -> tuple[dict[str, dict], dict[str, str], Row]:
    """Step 3: the pretrained checkpoint and a randomly initialised copy (same config, seed) fine-tuned on the first
    :attr:`~hf_bert_tasks.scripts.quickstart.QuickstartPlan.few_labels` examples of ``run``'s sample. Returns each
    encoder's metrics and output folder (``"pretrained"``, ``"random-init"``) and the row of the pretrained one's gain.
    """
    task, few = get_task(run.task), plan.few_labels
    print(
        f"== 3. label efficiency: the pretrained and a randomly initialised copy (same config, steps, seed) "
        f"fine-tuned on {few} labelled {run.task} examples ({plan.gain_epochs:g} epochs)"
    )
    encoders = {
        "pretrained": model_dir,
        "random-init": random_init_copy(model_dir, os.path.join(output_dir, "random-init-bert"), seed),
    }
    dirs = {name: os.path.join(output_dir, f"{run.task}-{few}-labels-{name}") for name in encoders}
    metrics = {
        name: finetune_sample(plan, run, path, dirs[name], seed, max_train_samples=few, epochs=plan.gain_epochs)
        for name, path in encoders.items()
    }
    key = f"eval_{task.primary_metric}"
    row = Row(
        f"pretrained vs random init ({run.task}, {few} labels)",
        f"dev {task.primary_metric}",
        metrics["pretrained"][key],
        metrics["random-init"][key],
        "random init",
        kind="gain",
    )
    return metrics, dirs, row


def comparison_arms(plan: QuickstartPlan, compare_dir: str) -> dict[str, dict]:
    """Step 4's arms besides full fine-tuning: arm label (as :func:`~hf_bert_tasks.modes.arm_from_label` reads it) ->
    the flags :func:`finetune_sample` replaces (LoRA; a head on frozen features per strategy, one shared cache)."""
    frozen = {
        "mode": FEATURE_BASED,
        "pooling": plan.frozen_pooling,
        "head": plan.frozen_head,
        "feature_cache_layers": "all",
        "feature_cache_dir": os.path.join(compare_dir, "feature_cache"),
        "epochs": plan.frozen_epochs,
        "learning_rate": plan.frozen_learning_rate,
    }
    return {
        LORA: {"mode": LORA, "epochs": plan.lora_epochs, "learning_rate": plan.lora_learning_rate},
        **{f"{FEATURE_BASED}:{s}": {**frozen, "feature_strategy": s} for s in plan.frozen_strategies},
    }


def report_row(task, label: str, metrics: dict) -> dict:
    """One arm's run as a row of :func:`~hf_bert_tasks.scripts.compare_report.write_report` (one seed, 0-100)."""
    config = arm_from_label(label)
    paper, source = paper_number(task, config)
    score = 100 * metrics[f"eval_{task.primary_metric}"]
    return {
        **config,
        "name": get_training_mode(config["mode"]).row_name(config),
        "mean": score,
        "std": 0.0,
        "n": 1,
        "values": [score],
        "wall_seconds": metrics["wall_seconds"],
        "paper": paper,
        "paper_source": source,
        "reused": False,
        "runs": [],
        **metrics["budget"],
    }


def comparison_step(
    plan: QuickstartPlan, run: TaskRun, model_dir: str, output_dir: str, seed: int, finetuned: dict, baseline: Row
) -> tuple[dict[str, dict], list[Row], dict[str, str]]:
    """Step 4: LoRA and frozen-feature arms (:func:`comparison_arms`) on ``run``'s sample beside step 2's fine-tune
    run (``finetuned``), into ``output_dir/compare``, each a row against step 2's constant ``baseline``; writes the
    compare report there. Returns every arm's metrics by label, the rows and the report's paths."""
    print(f"== 4. fine-tuning vs LoRA vs frozen features (paper §5.3) on the {run.folder} sample")
    task = get_task(run.task)
    compare_dir = os.path.join(output_dir, "compare")
    arms, rows = {DEFAULT_TRAINING_MODE: finetuned}, []
    for label, mode in comparison_arms(plan, compare_dir).items():
        arms[label] = finetune_sample(
            plan, run, model_dir, os.path.join(compare_dir, label.replace(":", "-")), seed, **mode
        )
        rows.append(
            Row(
                f"{label.replace(FEATURE_BASED + ':', 'frozen features: ')} ({run.task})",
                f"dev {task.primary_metric}",
                arms[label][f"eval_{task.primary_metric}"],
                baseline.baseline,
                baseline.baseline_name,
            )
        )
    report = [report_row(task, label, metrics) for label, metrics in arms.items()]
    paths = write_report(task, report, compare_dir, f"Quickstart: {task.name} sample, tiny BERT")
    return arms, rows, paths
