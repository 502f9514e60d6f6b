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

Batches: length-grouped in training and longest-first in evaluation by default (:mod:`hf_bert_tasks.batching`);
tokenized features are cached on disk by fingerprint (:mod:`hf_bert_tasks.tokenized_cache`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .arguments import DataArguments, FinetuneTrainingArguments, ModelArguments, apply_task_defaults
from .checkpoints import AUTO_RESUME, check_output_dir  # noqa: F401 - the recipe's public names (lr_grid imports them there)
from .tasks import Task, get_task

logger = logging.getLogger(__name__)


def build_model(task: Task, model_args: ModelArguments, training_args: FinetuneTrainingArguments | None = None):
    """Load ``model_args.model_name_or_path`` with the task's head and label names in its config.

    Attention runs through ``torch.nn.functional.scaled_dot_product_attention`` (``--attn_implementation sdpa``, the
    default: fused/flash kernels on GPU, same numbers as ``eager`` up to float rounding); a model class without SDPA
    support falls back to its default implementation with a warning.

    Raises:
        ValueError: when the checkpoint's head does not fit the task (e.g. a 3-label MNLI model for 2-label MRPC);
            the message says which sizes differ and how to start from the encoder instead.

    ``--mode feature_based`` returns a frozen-encoder model with a trained head
    (:func:`hf_bert_tasks.feature_based.build_feature_based_model`); ``--mode lora`` wraps the task model in peft
    LoRA adapters (:func:`hf_bert_tasks.lora.build_lora_model`).
    """
    from transformers import AutoConfig

    mode = getattr(training_args, "mode", "finetune")
    reinit = getattr(model_args, "reinit_layers", 0)
    reinit_pooler = getattr(model_args, "reinit_pooler", False)
    if (reinit or reinit_pooler) and mode != "finetune":
        raise ValueError(f"--reinit_layers/--reinit_pooler re-initialise weights that --mode {mode} keeps frozen; "
                         "expected neither with --mode lora or feature_based")
    if mode == "feature_based":
        from .feature_based import build_feature_based_model

        return build_feature_based_model(task, model_args, training_args)
    if mode == "lora":
        from .lora import build_lora_model

        return build_lora_model(build_model(task, model_args, None), task, training_args)
    config = AutoConfig.from_pretrained(
        model_args.model_name_or_path, revision=model_args.model_revision, cache_dir=model_args.cache_dir,
        **task.model_config_kwargs(),
    )
    return declare_batch_mean_loss(reinit_top_layers(_load_model(task, model_args, config), reinit, reinit_pooler))


def reinit_top_layers(model, n: int, pooler: bool = False):
    """Re-initialise the top ``n`` encoder layers (and the pooler when ``pooler``) of ``model`` as BERT initialises
    them (every ``nn.Linear`` weight ~ normal(0, ``config.initializer_range``), biases 0, LayerNorm 1/0); returns
    ``model``.

    Source: Zhang et al. 2021, "Revisiting Few-sample BERT Fine-tuning" (ICLR), §5: the pooler and the top layers
    are specialised to the pretraining objectives (NSP, MLM); re-initialising them speeds up and stabilises
    fine-tuning on small data. Done by hand: transformers 5's ``_init_weights`` skips loaded tensors.

    Raises:
        ValueError: ``n`` < 0 or more than the model's ``num_hidden_layers``.
    """
    import torch

    layers = model.config.num_hidden_layers
    if not 0 <= n <= layers:
        raise ValueError(f"--reinit_layers {n}: expected 0 <= N <= {layers} (the model's num_hidden_layers)")
    base = model.base_model
    modules = list(base.encoder.layer[layers - n:]) if n else []
    if pooler and getattr(base, "pooler", None) is not None:
        modules.append(base.pooler)
    with torch.no_grad():
        for module in (m for top in modules for m in top.modules()):
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, model.config.initializer_range)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, torch.nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model


def declare_batch_mean_loss(model):
    """Mark ``model`` (or the base model inside a peft wrapper) as returning a batch-mean loss; returns ``model``.

    BERT's heads (sequence/token classification, QA, multiple choice, pretraining) average their loss over the batch
    and ignore ``num_items_in_batch``, but their ``forward`` takes ``**kwargs``; ``Trainer`` (transformers 5.24)
    then passes ``num_items_in_batch`` and multiplies the loss by the number of processes under DDP — 2x gradients
    and a 2x logged/eval loss on 2 processes. With ``accepts_loss_kwargs = False`` Trainer treats the loss as a
    per-batch mean (and divides by gradient accumulation steps itself), which is what it is.
    ``tests/test_distributed.py`` compares a 2-process run with the 1-process one.
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.accepts_loss_kwargs = False
    return model


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


def _load_model(task: Task, model_args: ModelArguments, config):
    model_class = task.model_class()
    attn = getattr(model_args, "attn_implementation", None)
    try:
        try:
            return model_class.from_pretrained(
                model_args.model_name_or_path, config=config, revision=model_args.model_revision,
                cache_dir=model_args.cache_dir, **({"attn_implementation": attn} if attn else {}),
            )
        except ValueError as err:
            # An architecture without an SDPA kernel refuses attn_implementation="sdpa": use its default instead.
            if attn != "sdpa" or "sdpa" not in str(err).lower():
                raise
            logger.warning("%s does not support SDPA attention; using its default", model_args.model_name_or_path)
            return model_class.from_pretrained(
                model_args.model_name_or_path, config=config, revision=model_args.model_revision,
                cache_dir=model_args.cache_dir,
            )
    except RuntimeError as err:
        # transformers 4 said "size mismatch for classifier.weight ..."; 5.x logs a report and raises
        # "You set `ignore_mismatched_sizes` to `False` ...": name the sizes ourselves.
        if "size mismatch" not in str(err) and "ignore_mismatched_sizes" not in str(err):
            raise
        from transformers import AutoConfig

        saved = AutoConfig.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision,
                                           cache_dir=model_args.cache_dir)
        raise ValueError(
            f"{model_args.model_name_or_path}: its classification head does not fit task {task.name!r} "
            f"({task.num_labels} label(s)); the checkpoint's head has {saved.num_labels} output(s) "
            f"({list(saved.id2label.values())}) — fine-tune from the base encoder checkpoint instead"
        ) from None


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

    from .batching import LengthSortedTrainer

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
    cache_metrics = {}
    if getattr(training_args, "mode", "finetune") == "feature_based" and training_args.feature_cache and train_split:
        # the frozen encoder runs once per split; Trainer trains the head on the cached features
        from .feature_based import prepare_feature_cache

        train_dataset, eval_dataset, data_collator, cache_metrics = prepare_feature_cache(
            model, train_dataset, eval_dataset, data_collator, data_args, training_args)
    trainer = LengthSortedTrainer(
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
        mode = getattr(training_args, "mode", "finetune")
        train_result = trainer.train(resume_from_checkpoint=resolve_resume_checkpoint(training_args))
        if mode == "lora":
            from .lora import finalize_lora  # saves the adapter, then merges it so the saved model is plain

            finalize_lora(trainer, training_args.output_dir)
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

        finish_training_curves(trainer, eval_metrics, task.primary_metric, f"{task.name} ({getattr(training_args, 'mode', 'finetune')})")
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
            not say to overwrite or resume it (see :func:`check_output_dir`; nothing is overwritten silently).
    """
    from transformers import AutoTokenizer

    task = get_task(data_args.task).configure(data_args)
    apply_task_defaults(task, data_args, training_args)
    from .feature_based import apply_mode_defaults

    apply_mode_defaults(training_args)  # feature_based / lora: larger default learning rate
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
    if not training_args.lr_grid and not training_args.seeds:
        results = train_evaluate_predict(task, raw, tokenizer, model_args, data_args, training_args)
    else:
        from .lr_grid import run_grid

        prepared = prepare_data(task, raw, tokenizer, data_args, training_args)  # tokenized once for every run
        results = run_grid(task, model_args, data_args, training_args,
                           lambda args: train_evaluate_predict(task, raw, tokenizer, model_args, data_args, args,
                                                               prepared))
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

