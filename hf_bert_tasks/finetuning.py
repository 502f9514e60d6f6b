"""The pieces of the fine-tune recipe: load data, build the model, train / evaluate / predict with ``Trainer``.

:func:`run_finetune` is what ``hf-bert-tasks finetune`` and ``recipes/finetune.py`` call. Outputs in ``output_dir``
(the conventions of transformers' ``run_glue.py``):

* ``all_results.json`` (+ ``train_results.json``, ``eval_results.json``): Trainer's ``train_*`` and ``eval_<metric>``
  keys; extra eval splits get a suffix (MNLI mismatched: ``eval_accuracy_mm``).
* ``training_curves.png``: loss and eval metric against step, from ``trainer_state.json`` (:mod:`hf_bert_tasks.plots`).
* the model (safetensors), tokenizer and config with ``id2label``/``label2id``, loadable by ``pipeline()``.
* test-split predictions (GLUE: the server's submission files ``MRPC.tsv``, ``MNLI-m.tsv`` …).
* with ``--lr_grid`` / ``--seeds``: one sub-folder per run (``lr_5e-05/seed_1``), ``lr_grid_results.json``, mean ±
  std over seeds in ``all_results.json``, and the best seed of the selected learning rate copied up
  (:mod:`hf_bert_tasks.lr_grid`).

Loss: normalised over the global batch of each optimizer step (gradient accumulation x processes), per labelled
token for NER and per example otherwise (:mod:`hf_bert_tasks.loss_normalisation`).

Loss: normalised over the global batch of each optimizer step (gradient accumulation x processes), per labelled
token for NER and per example otherwise (:mod:`hf_bert_tasks.loss_normalisation`).

Batches: length-grouped in training and longest-first in evaluation by default (:mod:`hf_bert_tasks.batching`);
tokenized features are cached on disk by fingerprint (:mod:`hf_bert_tasks.tokenized_cache`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .arguments import (
    DataArguments,
    FinetuneTrainingArguments,
    ModelArguments,
    apply_task_defaults,
)
from .checkpoints import AUTO_RESUME, check_output_dir  # noqa: F401 - the recipe's public names (lr_grid imports them there)
from .modes import TRAINING_MODES, mode_of
from .task_model import declare_batch_mean_loss, load_task_model, reinit_top_layers  # noqa: F401 - re-exported
from .tasks import Task, get_task

logger = logging.getLogger(__name__)


def build_model(task: Task, model_args: ModelArguments, training_args: FinetuneTrainingArguments | None = None):
    """The model ``Trainer`` trains for ``task`` in the selected ``--mode`` (``training_args.mode``; full fine-tuning
    when ``training_args`` is ``None``): the registered mode's
    :meth:`~hf_bert_tasks.modes.base.TrainingMode.build_model` (:mod:`hf_bert_tasks.modes`).

    Fine-tuning loads ``model_args.model_name_or_path`` with the task's head and label names
    (:func:`hf_bert_tasks.task_model.load_task_model`); LoRA wraps that model in peft adapters; the feature-based
    mode builds a frozen-encoder model with a trained head.

    Raises:
        ValueError: ``--reinit_layers`` / ``--reinit_pooler`` with a mode that keeps those weights frozen; a
            checkpoint whose head does not fit the task (the message says which sizes differ).
    """
    mode = mode_of(training_args)
    reinit = getattr(model_args, "reinit_layers", 0) or getattr(model_args, "reinit_pooler", False)
    if reinit and not mode.allows_reinit:
        frozen = [m.name for m in TRAINING_MODES.values() if not m.allows_reinit]
        raise ValueError(f"--reinit_layers/--reinit_pooler re-initialise weights that --mode {mode.name} keeps "
                         f"frozen; expected neither with --mode {' or '.join(frozen)}")
    return mode.build_model(task, model_args, training_args)


def check_model_fits(model, tokenizer, max_seq_length: int, name: str) -> None:
    """Check that the tokenizer's ids and ``max_seq_length`` fit the model's embedding tables.

    Without this check both mistakes surface as an index or shape error deep inside torch at the first batch.

    Raises:
        ValueError: ``max_seq_length`` > ``config.max_position_embeddings``, or a tokenizer with more ids than
            ``config.vocab_size`` (e.g. ``--tokenizer_name`` of another model); the message names both numbers.
    """
    config = getattr(model, "config", None)
    positions = getattr(config, "max_position_embeddings", None)
    vocab = getattr(config, "vocab_size", None)
    if positions is not None and max_seq_length > positions:
        raise ValueError(
            f"--max_seq_length {max_seq_length} is longer than the {positions} position embeddings of {name}; "
            f"expected --max_seq_length <= {positions}"
        )
    if vocab is not None and len(tokenizer) > vocab:
        raise ValueError(
            f"the tokenizer has {len(tokenizer)} ids but {name} has only {vocab} token embeddings; expected the "
            "model's own tokenizer (check --tokenizer_name)"
        )


def select_splits(task: Task, raw, training_args: FinetuneTrainingArguments) -> tuple[str | None, list[str], list[str]]:
    """Which splits to train / evaluate / predict on.

    Without any ``--do_train/--do_eval/--do_predict`` flag, every available split is used. With flags, a requested
    split that the data lacks is an error naming the splits found.

    Raises:
        ValueError: a requested split is missing.
    """
    available = list(raw.keys())
    explicit = getattr(training_args, "_explicit_do", None)
    do_train, do_eval, do_predict = explicit if explicit else (True, True, True)
    train = task.train_split if do_train and task.train_split in raw else None
    evals = [s for s in task.eval_splits if s in raw] if do_eval else []
    tests = [s for s in task.test_splits if s in raw] if do_predict else []
    if explicit:
        for flag, wanted, got in (("--do_train", do_train, train), ("--do_eval", do_eval, evals), ("--do_predict", do_predict, tests)):
            if wanted and not got:
                names = (task.train_split,) if flag == "--do_train" else task.eval_splits if flag == "--do_eval" else task.test_splits
                raise ValueError(f"{flag}: task {task.name!r} needs split(s) {list(names)}; the data has {available}")
    if train is None and not evals and not tests:
        raise ValueError(f"task {task.name!r}: no usable split in the data (found {available})")
    return train, evals, tests


def _limit(dataset, n: int | None):
    return dataset if n is None else dataset.select(range(min(n, len(dataset))))


@dataclass
class PreparedData:
    """The splits of one recipe invocation and their tokenized features (shared by every run of a grid)."""

    train_split: str | None
    eval_splits: list[str]
    test_splits: list[str]
    raw: dict
    features: dict


def prepare_data(task: Task, raw, tokenizer, data_args, training_args) -> PreparedData:
    """Select the splits, apply ``--max_*_samples`` and tokenize (through the on-disk cache unless
    ``--no_cache_tokenized``; :func:`hf_bert_tasks.tokenized_cache.preprocess_cached`)."""
    from .tokenized_cache import preprocess_cached

    train_split, eval_splits, test_splits = select_splits(task, raw, training_args)
    max_len = data_args.max_seq_length
    limits = {train_split: data_args.max_train_samples}
    limits.update({s: data_args.max_eval_samples for s in eval_splits})
    limits.update({s: data_args.max_predict_samples for s in test_splits})
    with training_args.main_process_first(desc="dataset map pre-processing"):
        raw = {s: _limit(raw[s], limits[s]) for s in limits if s is not None}
        if getattr(data_args, "cache_tokenized", False):
            features = {s: preprocess_cached(task, raw[s], tokenizer, max_len, s, data_args.tokenized_cache_dir,
                                             data_args.overwrite_cache) for s in raw}
        else:
            features = {s: task.preprocess(raw[s], tokenizer, max_len, s) for s in raw}
    return PreparedData(train_split, eval_splits, test_splits, raw, features)


def train_evaluate_predict(task: Task, raw, tokenizer, model_args, data_args, training_args,
                           prepared: PreparedData | None = None) -> dict[str, float]:
    """One fine-tuning run into ``training_args.output_dir``; returns the merged train/eval metrics.

    ``prepared``: splits and features from :func:`prepare_data` (computed here when ``None``).
    """
    from transformers import set_seed

    from .loss_normalisation import GlobalLossTrainer, loss_unit

    set_seed(training_args.seed)
    prepared = prepared or prepare_data(task, raw, tokenizer, data_args, training_args)
    train_split, eval_splits, test_splits = prepared.train_split, prepared.eval_splits, prepared.test_splits
    raw, features = prepared.raw, prepared.features
    max_len = data_args.max_seq_length
    if not eval_splits:
        training_args.eval_strategy = "no"
    model = declare_batch_mean_loss(build_model(task, model_args, training_args))
    check_model_fits(model, tokenizer, max_len, model_args.model_name_or_path)
    train_dataset = features.get(train_split)
    eval_dataset = features[eval_splits[0]] if eval_splits else None
    data_collator = task.data_collator(
        tokenizer,
        pad_to_multiple_of=8 if (training_args.fp16 or training_args.bf16) else None,
        max_length=max_len if data_args.pad_to_max_length else None,
    )
    mode = mode_of(training_args)
    # e.g. feature-based: the frozen encoder runs once per split and Trainer trains the head on the cached features
    train_dataset, eval_dataset, data_collator, cache_metrics = mode.prepare_training(
        model, train_dataset, eval_dataset, data_collator, data_args, training_args)
    from .run_record import RunRecordCallback  # run_info.json, written while training (the card's record)

    trainer = GlobalLossTrainer(
        callbacks=[RunRecordCallback(task, model_args, data_args)],
        loss_unit=loss_unit(task.problem_type),
        model=model,
        args=training_args,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        processing_class=tokenizer,
        data_collator=data_collator,
        compute_metrics=task.trainer_compute_metrics(),
    )
    results: dict[str, float] = {}
    if train_split is not None:
        train_result = trainer.train(resume_from_checkpoint=resolve_resume_checkpoint(training_args))
        mode.finish_training(trainer, training_args.output_dir)  # e.g. LoRA: save the adapter, then merge it
        trainer.save_model()
        metrics = dict(train_result.metrics, **cache_metrics, train_samples=len(features[train_split]))
        trainer.save_metrics("train", metrics)
        trainer.save_state()
        results.update(metrics)
    else:
        trainer.save_model()
    eval_metrics: dict[str, float] = {}
    for split in eval_splits:
        metrics = task.evaluate(trainer, raw[split], features[split], split, training_args.output_dir)
        metrics[f"eval_samples{task.split_metric_suffix(split)}"] = len(features[split])
        eval_metrics.update(metrics)
    if eval_metrics:
        trainer.save_metrics("eval", eval_metrics)
        results.update(eval_metrics)
    if train_split is not None:  # training_curves.png from trainer_state.json (loss and eval metric vs step)
        from .plots import finish_training_curves

        finish_training_curves(trainer, eval_metrics, task.primary_metric, f"{task.name} ({mode.name})")
    for split in test_splits:
        for path in task.predict(trainer, raw[split], features[split], split, training_args.output_dir):
            logger.info("wrote %s", path)
    if not eval_metrics and train_split is None:
        trainer.save_metrics("all", {})
    return results


def resolve_resume_checkpoint(training_args) -> str | None:
    """The checkpoint ``Trainer.train`` resumes from: ``--resume_from_checkpoint PATH`` (checked), or with ``auto``
    the newest *complete* ``checkpoint-<step>`` folder in ``output_dir`` (``None``, i.e. a fresh start, when there is
    none); incomplete ones (a kill during a save) are skipped with a warning. See :mod:`hf_bert_tasks.checkpoints`.

    Resuming restores the model, optimizer, scheduler, RNG states and the position in the data order from the
    checkpoint (``Trainer``'s own resume), so a run killed after a checkpoint ends with the metrics of an
    uninterrupted run with the same seed (``tests/test_resume.py``, ``tests/test_checkpoint_resume.py``).

    Raises:
        FileNotFoundError / ValueError: an explicit path that does not exist / is not a resumable checkpoint.
    """
    from .checkpoints import resolve_resume

    return resolve_resume(training_args.resume_from_checkpoint, training_args.output_dir)


def run_finetune(model_args: ModelArguments, data_args: DataArguments, training_args: FinetuneTrainingArguments):
    """Fine-tune ``model_args.model_name_or_path`` on ``data_args.task`` (over ``--lr_grid`` if given).

    Raises:
        FileExistsError: ``output_dir`` holds a finished run or an unfinished run's checkpoints and the flags do
            not say to overwrite or resume it (see :func:`check_output_dir`; nothing is overwritten silently); with
            ``--lr_grid``/``--seeds``, a finished grid that this command does not extend
            (:func:`hf_bert_tasks.lr_grid.check_grid_output_dir`).
    """
    from transformers import AutoTokenizer

    task = get_task(data_args.task).configure(data_args)
    apply_task_defaults(task, data_args, training_args)  # the paper's, or the training mode's own defaults
    grid = bool(training_args.lr_grid or training_args.seeds)
    if grid:
        from .lr_grid import check_grid_output_dir

        extends = check_grid_output_dir(training_args)  # a finished grid may be extended with new lrs/seeds
    else:
        check_output_dir(training_args)
    from .hub import finish_run, pop_push_settings

    push = pop_push_settings(training_args)  # Trainer must neither push its own card nor pickle the token
    raw = task.load(data_args.data_dir, data_args.dataset_name, data_args.dataset_config_name, data_args.dataset_revision,
                    model_args.cache_dir)
    tokenizer = AutoTokenizer.from_pretrained(
        model_args.tokenizer_name or model_args.model_name_or_path, revision=model_args.model_revision,
        cache_dir=model_args.cache_dir,
    )
    _fit_tokenizer(tokenizer, model_args)
    if not grid:
        results = train_evaluate_predict(task, raw, tokenizer, model_args, data_args, training_args)
    else:
        from .lr_grid import run_grid

        prepared = prepare_data(task, raw, tokenizer, data_args, training_args)  # tokenized once for every run
        results = run_grid(task, model_args, data_args, training_args,
                           lambda args: train_evaluate_predict(task, raw, tokenizer, model_args, data_args, args,
                                                               prepared), extends=extends)
        # the card and run_info.json describe the checkpoint copied up: the selected lr and its best seed
        training_args.learning_rate = results["selected_learning_rate"]
        training_args.seed = results["selected_seed"]
    finish_run(task, model_args, data_args, training_args, push)  # run_info.json (for the card); --push_to_hub
    return results


def _fit_tokenizer(tokenizer, model_args) -> None:
    """Give ``tokenizer`` the model's input limit (``model_max_length`` = ``max_position_embeddings``) when it has
    none or a larger one (e.g. a checkpoint saved with ``1e30``), so the fine-tuned folder truncates long inputs
    instead of crashing ``pipeline()`` (:func:`hf_bert_tasks.tokenization.fit_tokenizer_to_model`)."""
    from transformers import AutoConfig

    from .tokenization import fit_tokenizer_to_model

    config = AutoConfig.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision,
                                        cache_dir=model_args.cache_dir)
    fit_tokenizer_to_model(tokenizer, config, name=model_args.tokenizer_name or model_args.model_name_or_path)

