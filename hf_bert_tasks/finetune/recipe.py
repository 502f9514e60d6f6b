"""Fine-tune a BERT checkpoint on one of the paper's tasks (``hf-bert-tasks finetune`` = ``recipes/finetune.py``).

Connected machine (Hub model and data), the paper's GLUE recipe (§4.1: batch 32, 3 epochs, lr from the grid):

    hf-bert-tasks finetune --task mrpc --model_name_or_path bert-base-uncased --output_dir runs/mrpc \\
        --lr_grid 5e-5,4e-5,3e-5,2e-5

Original GLUE files on disk, offline:

    HF_HUB_OFFLINE=1 hf-bert-tasks finetune --task mrpc --data_dir glue_data/MRPC \\
        --model_name_or_path path/to/bert --output_dir runs/mrpc

From a YAML config (command-line flags override it): ``hf-bert-tasks finetune --config recipes/configs/mrpc.yaml``.
Without ``--do_train/--do_eval/--do_predict`` every available split is used. Under ``torchrun`` only the main
process logs INFO and prints the metrics.

The recipe, top to bottom (:func:`main`): the one parse (``finetune/args.py``) -> the arguments finished with the
task and the mode (``finetune/config.py``: defaults, refused flags, secrets) -> :func:`run_finetune`: output-dir guard
-> data (``finetune/data.py``: tokenized once, cached) -> one run (:func:`train_evaluate_predict`: the model the mode
builds, ``finetune/trainer.py``'s Trainer, ``finetune/record.py``'s record while training, the task's evaluation, then
``finetune/card.py``'s card) or the lr grid x seeds (``finetune/grid.py``) -> ``--push_to_hub`` (``hub/push.py``).
Outputs in ``output_dir``: docs/design.md, "Outputs of a run"."""

from __future__ import annotations

import json
import logging
import os
from typing import TYPE_CHECKING, Any

from ..modes import TRAINING_MODES, declare_batch_mean_loss, mode_of
from ..tasks import Task, get_task

if TYPE_CHECKING:  # imported inside the functions, each where its step runs (the CLI imports this module)
    from .args import DataArguments, ModelArguments
    from .config import FinetuneTrainingArguments
    from .data import PreparedData

logger = logging.getLogger(__name__)
PROG = "hf-bert-tasks finetune"
#: ``train_evaluate_predict``'s ``resume`` when the caller gives none: read ``--resume_from_checkpoint`` itself.
_FROM_ARGS = object()


def main(argv=None) -> dict[str, float]:
    """``hf-bert-tasks finetune``: parse ``argv`` (strings, default ``sys.argv[1:]``; or a command line parsed
    already, :func:`hf_bert_tasks.finetune.args.parse_finetune_argv`), run the recipe (its final evaluation logs the
    eval metrics once), end with the line ``outputs in <output_dir>`` on the main process; returns every metric.
    Raises ``ValueError`` for bad flags or data (``docs/bad_inputs.md``)."""
    import sys

    from .args import FinetuneCommandLine, parse_finetune_argv

    command_line, prog = argv, "hf-bert-tasks finetune"
    if not isinstance(argv, FinetuneCommandLine):
        argv = list(sys.argv[1:] if argv is None else argv)
        if any(a in ("-h", "--help", "--help_all") for a in argv):  # every flag: HfArgumentParser's help
            from ..flags.training import parse_args
            from .args import DataArguments, ModelArguments
            from .config import finetune_arguments_class

            return parse_args((ModelArguments, DataArguments, finetune_arguments_class()), argv, prog=prog)
        command_line = parse_finetune_argv(argv, prog)  # the one parse, before transformers is imported
    from ..flags.training import setup_process_logging
    from .config import finetune_arguments

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    model_args, data_args, training_args = finetune_arguments(command_line)  # built once, final
    setup_process_logging(training_args)
    metrics = run_finetune(model_args, data_args, training_args, final=True, task=command_line.task)
    if training_args.should_log:  # the eval metrics were logged once, by the final evaluation (Task.evaluate)
        print(f"outputs in {training_args.output_dir}")
    return metrics


def run_finetune(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: FinetuneTrainingArguments,
    final: bool = False,
    report: bool = True,
    task: Task | None = None,
):
    """Fine-tune ``model_args.model_name_or_path`` on ``data_args.task`` (over ``--lr_grid``/``--seeds`` if given);
    returns every metric and, on the main process with ``report``, ends with ``tasks.metrics.report``'s warning when
    the dev metric is at the best constant answer's level (the quickstart, which judges its rows itself: off). ``final``: the arguments come from
    :func:`hf_bert_tasks.finetune.config.finetune_arguments`; otherwise (a script's own dataclasses) they are made final
    here (:func:`hf_bert_tasks.finetune.config.finalize_arguments`: secrets, the task's and the mode's defaults,
    refused flags). ``task``: the registered task the parse looked up (``CommandLine.task``; default: looked up
    from ``data_args.task``). Raises ``FileExistsError`` for an occupied ``output_dir``
    (:func:`hf_bert_tasks.utils.checkpoints.start_run`, :func:`hf_bert_tasks.finetune.grid.check_grid_output_dir`)."""
    from transformers import AutoConfig, AutoTokenizer

    from ..utils.tokenizers import fit_tokenizer_to_model
    from .data import check_model_fits, prepare_data

    if task is None:  # a script's call: the registry's lookup (UnknownTaskError, a ValueError, for an unknown name)
        task = get_task(data_args.task)
    if not final:
        from .config import finalize_arguments

        finalize_arguments(task, data_args, training_args)
    # Trainer must not push its own card: with --push_to_hub ours pushes the finished folder at the end
    push = None
    if training_args.push_to_hub:
        from ..hub.push import pop_push_settings

        push = pop_push_settings(training_args)  # the Hub settings and token, taken out of the arguments
    grid = bool(training_args.lr_grid or training_args.seeds)
    if grid:
        from .grid import check_grid_output_dir, run_grid

        extends = check_grid_output_dir(training_args)  # a finished grid may be extended
    elif os.path.isdir(training_args.output_dir) or training_args.resume_from_checkpoint:
        from ..utils.checkpoints import start_run

        resume = start_run(training_args)  # the output-dir guard and the checkpoint to resume from, before any data
    else:
        resume = None  # a new folder: nothing to guard, nothing to resume
    task = task.configure(data_args)  # a copy holding the data options (doc_stride, label_all_tokens ...)
    raw = task.load(
        data_args.data_dir,
        data_args.dataset_name,
        data_args.dataset_config_name,
        data_args.dataset_revision,
        model_args.cache_dir,
    )
    hub = {"revision": model_args.model_revision, "cache_dir": model_args.cache_dir}
    tokenizer = AutoTokenizer.from_pretrained(model_args.tokenizer_name or model_args.model_name_or_path, **hub)
    config = AutoConfig.from_pretrained(model_args.model_name_or_path, **hub)
    fit_tokenizer_to_model(tokenizer, config, name=model_args.tokenizer_name or model_args.model_name_or_path)
    check_model_fits(config, tokenizer, data_args.max_seq_length, model_args.model_name_or_path)  # before tokenizing
    prepared = prepare_data(task, raw, tokenizer, data_args, training_args)  # tokenized once for every run
    if not grid:
        results = train_evaluate_predict(task, raw, tokenizer, model_args, data_args, training_args, prepared, resume)
    else:
        results = run_grid(
            task,
            model_args,
            data_args,
            training_args,
            extends=extends,
            run_one=lambda args, resume: train_evaluate_predict(
                task, raw, tokenizer, model_args, data_args, args, prepared, resume
            ),
        )
        # the card and run_info.json describe the checkpoint copied up: the selected lr and its best seed
        training_args.learning_rate = results["selected_learning_rate"]
        training_args.seed = results["selected_seed"]
    if push is not None:  # --push_to_hub: the finished output_dir, in one commit
        from ..hub.push import finish_run

        finish_run(task, training_args, push)
    if report and training_args.should_log:  # a run at chance level ends saying so (the best constant answer's score)
        from ..tasks.metrics import report as report_chance_level

        report_chance_level(task, results, **_model_at_hand(training_args))
    return results


def _model_at_hand(training_args) -> dict:
    """``tasks.metrics.chance_advice``'s arguments for the finished run: the saved model's ``hidden_size``
    (``config.json``; ``None`` without one), the learning rates it ran and its optimizer steps."""

    def read(name: str, key: str):
        path = os.path.join(training_args.output_dir, name)
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8") as f:
            return json.load(f).get(key)

    hidden, steps = read("config.json", "hidden_size"), read("trainer_state.json", "global_step")
    lrs = (
        [training_args.learning_rate] if not getattr(training_args, "lr_grid", None) else training_args.learning_rates
    )
    return {"hidden_size": hidden, "learning_rates": lrs, "steps": steps}


def _loss_over_all_steps(trainer, record, checkpoint: str, results: dict) -> None:
    """A resumed run's ``train_loss`` over all its steps (``checkpoints.loss_over_all_steps``) into ``results``, the
    final training log entry (the card's "final training loss") and the run record."""
    from ..utils.checkpoints import loss_over_all_steps

    # the resumed steps' loss sum, the same in every transformers 5.x (its train_loss divides it differently)
    total = getattr(trainer, "_total_loss_scalar", None)
    whole = loss_over_all_steps(checkpoint, trainer.state.global_step, results["train_loss"], total)
    results.update(whole)
    entry = next((e for e in reversed(trainer.state.log_history) if "train_loss" in e), None)
    if whole and entry is not None:
        entry.update(whole)
        record.record["log_history"] = list(trainer.state.log_history)
        record.write(trainer.args)


def train_evaluate_predict(
    task: Task,
    raw,
    tokenizer,
    model_args,
    data_args,
    training_args,
    prepared: PreparedData | None = None,
    resume: Any = _FROM_ARGS,
) -> dict[str, float]:
    """One fine-tuning run into ``training_args.output_dir``; returns the merged train/eval metrics. ``prepared``:
    :func:`prepare_data`'s result (computed when ``None``); ``resume``: the checkpoint (:func:`.checkpoints.start_run`;
    ``None``: a fresh start; not given: ``--resume_from_checkpoint``). The caller checks the data fits the model."""
    from transformers import set_seed

    set_seed(training_args.seed)
    if prepared is None:
        from .data import prepare_data

        prepared = prepare_data(task, raw, tokenizer, data_args, training_args)
    data = prepared
    features, raw = data.features, data.raw
    if not data.eval_splits:
        training_args.eval_strategy = "no"
    model = build_model(task, model_args, training_args)
    mode = mode_of(training_args)
    train_dataset, eval_dataset, collator, cache_metrics = mode.prepare_training(
        declare_batch_mean_loss(model),
        features.get(data.train_split),
        features[data.eval_splits[0]] if data.eval_splits else None,
        data.collator,
        data_args,
        training_args,
    )
    training_mode = mode.record(training_args)  # the mode and its variant, as the card will describe them
    if getattr(training_args, "padding_free", False):  # flattened batches, re-padded before the heads
        from ..padding_free import apply_padding_free

        collator = apply_padding_free(model, collator)
    if resume is _FROM_ARGS:
        from ..utils.checkpoints import resolve_resume

        resume = resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)

    from .record import RunRecordCallback  # run_info.json, written while training (the card's record)

    # run_info.json, started from the run's arguments (the object Trainer keeps as trainer.args)
    record = RunRecordCallback(task, model_args, data_args, training_mode=training_mode, args=training_args)

    from .trainer import GlobalLossTrainer, SkipLastStepEvaluation  # length-aware batches, the global loss

    first_eval = data.eval_splits[0] if data.eval_splits else None
    trainer = task.build_trainer(
        GlobalLossTrainer,
        eval_raw=raw.get(first_eval),
        eval_features=features.get(first_eval),
        loss_unit=task.problem.loss_unit,
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=collator,
        compute_metrics=data.compute_metrics,
    )
    trainer.add_callback(record)  # written again at every log and evaluation
    trainer.add_callback(SkipLastStepEvaluation())  # the final evaluation below scores the last step's model
    results: dict[str, float] = {}
    if data.train_split is not None:
        train_result = trainer.train(resume_from_checkpoint=resume)
        mode.finish_training(trainer, training_args.output_dir)  # e.g. LoRA: save the adapter, then merge it
        results = dict(train_result.metrics, **cache_metrics, train_samples=len(features[data.train_split]))
        if resume:  # the training loss over every step, the checkpoint's logged ones too (not only the resumed)
            _loss_over_all_steps(trainer, record, resume, results)
        trainer.save_metrics("train", results)
        trainer.save_state()
    trainer.save_model()
    if data.train_split is not None and not getattr(training_args, "keep_checkpoints", True):
        remove_checkpoints(training_args.output_dir, trainer)  # the saved model is the run's one copy
    eval_metrics = _predict_and_evaluate(task, trainer, data, training_args)
    results.update(eval_metrics)
    if data.train_split is not None:  # training_curves.png from trainer_state.json (loss and eval metric vs step)
        from .record import finish_training_curves

        finish_training_curves(trainer, eval_metrics, task.primary_metric, f"{task.name} ({mode.name})")
    if not results:  # predictions only: all_results.json (the finished-run marker) comes last
        trainer.save_metrics("all", {})
    if training_args.should_save:  # README.md: the card of the saved model, from the record and all_results.json
        from .card import write_finetune_card

        write_finetune_card(training_args.output_dir, task=task)
    return results


def _predict_and_evaluate(task: Task, trainer, data: PreparedData, training_args) -> dict[str, float]:
    """After training: the test splits' prediction files (first: ``all_results.json`` marks a finished run), then
    every dev split scored by the task (``--prediction_loss_only``: Trainer's loss only), each with its sample count
    and the best constant answer's score (:mod:`hf_bert_tasks.tasks.metrics`); saved as ``eval_results.json``. Returns
    the dev metrics (empty without a dev split)."""
    loss_only = training_args.prediction_loss_only
    if loss_only and (data.test_splits or data.eval_splits):
        logger.warning(
            "--prediction_loss_only: evaluation reports the loss only; no metric and no prediction file is written"
        )
    for split in [] if loss_only else data.test_splits:  # before the dev results: all_results.json = finished
        for path in task.predict(trainer, data.raw[split], data.features[split], split, training_args.output_dir):
            logger.info("wrote %s", path)
    eval_metrics: dict[str, float] = {}
    suffixes, raw = {}, {}  # per dev split: its metric-key suffix and raw examples (for the baselines)
    for split in data.eval_splits:
        suffixes[split], raw[split] = task.split_metric_suffix(split), data.raw[split]
        if loss_only:  # Trainer's loss-only evaluation (the task's scoring needs predictions)
            scored = trainer.evaluate(data.features[split])
            eval_metrics.update({f"{k}{suffixes[split]}": v for k, v in scored.items()})
        else:
            eval_metrics.update(
                task.evaluate(trainer, raw[split], data.features[split], split, training_args.output_dir)
            )
        eval_metrics[f"eval_samples{suffixes[split]}"] = len(data.features[split])
    if eval_metrics:  # beside each dev metric, the best constant answer's score (tasks/metrics.py)
        from ..tasks.metrics import baseline_metrics

        eval_metrics.update(baseline_metrics(task, raw, suffixes))
        trainer.save_metrics("eval", eval_metrics)
    return eval_metrics


def remove_checkpoints(output_dir: str, trainer=None) -> list[str]:
    """Delete the ``checkpoint-<step>`` folders of a finished run whose user did not ask for checkpoints (no
    ``--save_strategy`` / ``--save_steps`` / ``--save_total_limit`` / ``--load_best_model_at_end`` given): the model
    saved in ``output_dir`` is the run's one copy (issue 44: an MRPC folder held the final model twice, once with its
    optimizer). They exist while training, so an interrupted run still resumes. Returns the removed paths (main
    process only; others: ``[]``)."""
    import glob
    import re
    import shutil

    if trainer is not None and not trainer.is_world_process_zero():
        return []
    removed = sorted(
        p
        for p in glob.glob(os.path.join(output_dir, "checkpoint-*"))
        if re.fullmatch(r"checkpoint-\d+", os.path.basename(p)) and os.path.isdir(p)
    )
    for path in removed:
        shutil.rmtree(path, ignore_errors=True)
    return removed


def build_model(task: Task, model_args: ModelArguments, training_args: FinetuneTrainingArguments | None = None):
    """The model ``Trainer`` trains for ``task`` in the selected ``--mode`` (full fine-tuning when ``training_args``
    is ``None``): the registered mode's :meth:`~hf_bert_tasks.modes.TrainingMode.build_model`. Raises
    ``ValueError`` for ``--reinit_*`` with a mode that keeps those weights frozen, or a head that does not fit."""
    mode = mode_of(training_args)
    if (
        getattr(model_args, "reinit_layers", 0) or getattr(model_args, "reinit_pooler", False)
    ) and not mode.allows_reinit:
        frozen = [m.name for m in TRAINING_MODES.values() if not m.allows_reinit]
        raise ValueError(
            f"--reinit_layers/--reinit_pooler re-initialise weights that --mode {mode.name} keeps "
            f"frozen; expected neither with --mode {' or '.join(frozen)}"
        )
    return mode.build_model(task, model_args, training_args)


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("finetune"))
