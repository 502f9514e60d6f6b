"""Every ``transformers.TrainingArguments`` field, classified for ``hf-bert-tasks finetune``: it **works** (passed to
``Trainer`` and exercised end to end by ``tests/test_trainer_flags.py`` with the non-default value given here), it is
**refused** (one line on stderr, exit status 2, while the flags are parsed: before any model or data is loaded), or
it is **not applicable** here (hardware, launchers or integrations this machine and package do not have; passed to
``Trainer`` unchanged). A field of the installed transformers missing from :data:`TABLE` fails the test, so the table
cannot go stale. :data:`VALUES` classifies the *values* of the choice fields whose status is the same on every
machine and task family (``hf_bert_tasks.flags.values`` classifies the others and enforces the refusals). Why:
docs/design.md, 'Trainer hooks and the overrides left'."""

from __future__ import annotations

from dataclasses import dataclass

WORKS, REFUSED, NOT_APPLICABLE = "works", "refused", "not applicable"
STATUSES = (WORKS, REFUSED, NOT_APPLICABLE)


@dataclass(frozen=True)
class Flag:
    """One ``TrainingArguments`` field: ``status`` (:data:`STATUSES`); ``argv``: command-line words setting a
    non-default value (``works``; ``()``: exercised by every run, e.g. ``--output_dir``, or by the test named in
    ``note``); ``group``: the test run it joins (flags of one group run together; ``slow`` groups only in the slow
    suite); ``note``: the refusal line a user sees (``refused``), why it does not apply (``not applicable``), or
    where it is tested."""

    status: str
    argv: tuple[str, ...] = ()
    group: str = "core"
    note: str = ""


def works(*argv: str, group: str = "core", note: str = "") -> Flag:
    return Flag(WORKS, tuple(argv), group, note)


def refused(reason: str) -> Flag:
    return Flag(REFUSED, note=reason)


def not_applicable(reason: str) -> Flag:
    return Flag(NOT_APPLICABLE, note=reason)


_GPU = "needs a CUDA GPU (the GPU checks: tests/test_gpu_*.py)"
_LAUNCHER = "set by a multi-process launcher (accelerate / torchrun; tests/test_distributed.py)"
_HUB = "the recipe's own --push_to_hub (hf_bert_tasks.hub.push: one commit of the finished folder; tests/test_hub.py)"

#: Fields that only some of the supported transformers versions (pyproject.toml: >= 5.13) have -> which ones. A
#: :data:`TABLE` row for a field the installed version lacks must be listed here; the end-to-end test runs a row only
#: where the installed ``TrainingArguments`` has its field (``make test-lowest`` runs the table at the lowest version).
VERSION_DEPENDENT: dict[str, str] = {
    "logging_dir": "transformers 5.13 (the lowest supported) has it, 5.25 not",
    "warmup_ratio": "5.13 has it, 5.25 not (there a float --warmup_steps < 1 is the ratio)",
    "activation_checkpointing": "5.25 has it, 5.13 not (there --gradient_checkpointing only)",
    "activation_checkpointing_kwargs": "5.25 has it, 5.13 not",
    "dataloader_multiprocessing_context": "5.25 has it, 5.13 not",
    "dataloader_in_order": "5.25 has it, 5.13 not",
}

#: TrainingArguments field -> :class:`Flag` (transformers 5.x).
TABLE: dict[str, Flag] = {
    # fields of the older supported versions only (VERSION_DEPENDENT)
    "logging_dir": works("--logging_dir", "tb-logs", group="epochs"),
    "warmup_ratio": works("--warmup_ratio", "0.2", group="epochs"),
    # what and how long
    "output_dir": works(note="every run"),
    "do_train": works("--do_train", "--do_eval", group="core"),
    "do_eval": works(note="with --do_train (core group)"),
    "do_predict": works(
        note="no --do_* flag: every split the data has; the runs with a test file predict it "
        "(tests/test_finetune_recipe.py: --do_predict alone)"
    ),
    "per_device_train_batch_size": works("--per_device_train_batch_size", "4"),
    "per_device_eval_batch_size": works("--per_device_eval_batch_size", "3"),
    "num_train_epochs": works("--num_train_epochs", "2", group="epochs"),
    "max_steps": works("--max_steps", "4"),
    "gradient_accumulation_steps": works("--gradient_accumulation_steps", "2"),
    "auto_find_batch_size": works("--auto_find_batch_size", "True", group="epochs"),
    "resume_from_checkpoint": works(note="tests/test_resume.py, tests/test_checkpoint_resume.py"),
    # optimizer and schedule
    "learning_rate": works("--learning_rate", "1e-4"),
    "lr_scheduler_type": works("--lr_scheduler_type", "cosine_with_min_lr", group="epochs"),
    "lr_scheduler_kwargs": works("--lr_scheduler_kwargs", '{"min_lr": 1e-6}', group="epochs"),
    "warmup_steps": works("--warmup_steps", "1"),
    "optim": works("--optim", "adamw_torch"),
    "optim_args": not_applicable("read only by optimizers not installed here (GaLore, APOLLO, LOMO, AnyPrecision)"),
    "optim_target_modules": not_applicable("GaLore / APOLLO target modules; those optimizers are not installed"),
    "weight_decay": works("--weight_decay", "0.0"),
    "adam_beta1": works("--adam_beta1", "0.85"),
    "adam_beta2": works("--adam_beta2", "0.99"),
    "adam_epsilon": works("--adam_epsilon", "1e-7"),
    "max_grad_norm": works("--max_grad_norm", "0.5"),
    "label_smoothing_factor": works(
        "--label_smoothing_factor",
        "0.1",
        group="epochs",
        note="refused for regression (STS-B): ProblemType.refused_flags",
    ),
    "average_tokens_across_devices": works("--average_tokens_across_devices", "False"),
    "neftune_noise_alpha": works("--neftune_noise_alpha", "5.0", group="epochs"),
    # precision and compilation
    "bf16": works("--bf16", "True", group="bf16", note="CPU autocast here; the GPU default (gpu_fast_path)"),
    "bf16_full_eval": works("--bf16_full_eval", "True", group="bf16"),
    "fp16": not_applicable(_GPU),
    "fp16_full_eval": not_applicable(_GPU),
    "tf32": not_applicable("TensorFloat-32 matmuls of Ampere or newer NVIDIA GPUs"),
    "torch_compile": works("--torch_compile", "True", group="slow_compile"),
    "torch_compile_backend": works("--torch_compile_backend", "inductor", group="slow_compile"),
    "torch_compile_mode": works("--torch_compile_mode", "default", group="slow_compile"),
    "use_liger_kernel": not_applicable("Liger Triton kernels for decoder LLMs (GPU, package liger-kernel)"),
    "liger_kernel_config": not_applicable("configures use_liger_kernel"),
    "activation_checkpointing": works("--activation_checkpointing", "True", group="checkpointing"),
    "activation_checkpointing_kwargs": not_applicable(
        "decoder-layer options (every_n_layers) of activation_checkpointing; BERT takes none"
    ),
    "gradient_checkpointing": works("--gradient_checkpointing", "True", group="checkpointing"),
    "gradient_checkpointing_kwargs": works(
        "--gradient_checkpointing_kwargs", '{"use_reentrant": false}', group="checkpointing"
    ),
    "use_cache": not_applicable("the key/value cache of decoder models; a BERT encoder has none"),
    "torch_empty_cache_steps": works("--torch_empty_cache_steps", "2"),
    # logging
    "logging_strategy": works("--logging_strategy", "epoch", group="epochs"),
    "logging_steps": works("--logging_steps", "1"),
    "logging_first_step": works("--logging_first_step", "True"),
    "log_on_each_node": works("--log_on_each_node", "False"),
    "logging_nan_inf_filter": works("--logging_nan_inf_filter", "False"),
    "include_num_input_tokens_seen": works("--include_num_input_tokens_seen", "True"),
    "log_level": works("--log_level", "warning"),
    "log_level_replica": works("--log_level_replica", "error"),
    "disable_tqdm": works("--disable_tqdm", "True"),
    "report_to": not_applicable(
        "experiment trackers (tensorboard, wandb, trackio ...) are not installed here; 'none' is the default"
    ),
    "run_name": works("--run_name", "flag-table"),
    "project": not_applicable("read only by the Trackio integration (not installed)"),
    "trackio_space_id": not_applicable("Trackio integration (not installed)"),
    "trackio_bucket_id": not_applicable("Trackio integration (not installed)"),
    "trackio_static_space_id": not_applicable("Trackio integration (not installed)"),
    "skip_memory_metrics": works("--skip_memory_metrics", "False"),
    "debug": refused(
        "--debug: transformers 5.25's underflow/overflow detector calls abs() on BERT's boolean "
        "attention mask and fails (NotImplementedError); expected the flag left out"
    ),
    # evaluation
    "eval_strategy": works("--eval_strategy", "steps"),
    "eval_steps": works("--eval_steps", "2"),
    "eval_delay": works("--eval_delay", "1"),
    "eval_on_start": works("--eval_on_start", "True"),
    "prediction_loss_only": works(
        "--prediction_loss_only",
        "True",
        group="loss_only",
        note="loss only, no metric or prediction file (warned); refused for SQuAD",
    ),
    "eval_do_concat_batches": works("--eval_do_concat_batches", "False", group="epochs"),
    "eval_use_gather_object": works("--eval_use_gather_object", "True"),
    "eval_accumulation_steps": works("--eval_accumulation_steps", "1"),
    "include_for_metrics": works("--include_for_metrics", "loss"),
    "batch_eval_metrics": works("--batch_eval_metrics", "True", group="batch_metrics"),
    "load_best_model_at_end": works("--load_best_model_at_end", "True", group="epochs"),
    "metric_for_best_model": works(
        note="the task's primary metric with --load_best_model_at_end (tests/test_trainer_flags.py: SQuAD by f1)"
    ),
    "greater_is_better": works(note="from the metric's declaration (MetricSpec.higher_is_better)"),
    # checkpoints
    "save_strategy": works("--save_strategy", "steps"),
    "save_steps": works("--save_steps", "2"),
    "save_total_limit": works("--save_total_limit", "2"),
    "save_only_model": works("--save_only_model", "True"),
    "save_on_each_node": works("--save_on_each_node", "True"),
    "enable_jit_checkpoint": works("--enable_jit_checkpoint", "True"),
    "ignore_data_skip": works("--ignore_data_skip", "True"),
    "restore_callback_states_from_checkpoint": works("--restore_callback_states_from_checkpoint", "True"),
    # hub
    "push_to_hub": not_applicable(_HUB),
    "hub_token": not_applicable(_HUB),
    "hub_private_repo": not_applicable(_HUB),
    "hub_model_id": not_applicable(_HUB),
    "hub_strategy": not_applicable(_HUB),
    "hub_always_push": not_applicable(_HUB),
    "hub_revision": not_applicable(_HUB),
    # data
    "seed": works("--seed", "7"),
    "data_seed": works("--data_seed", "11"),
    "full_determinism": works("--full_determinism", "True", group="epochs"),
    "dataloader_drop_last": works(
        "--dataloader_drop_last", "True", group="epochs", note="training batches only: evaluation scores every row"
    ),
    "dataloader_num_workers": works("--dataloader_num_workers", "1", group="workers"),
    "dataloader_pin_memory": not_applicable("pinned host memory for a GPU copy; off without CUDA"),
    "dataloader_persistent_workers": works("--dataloader_persistent_workers", "True", group="workers"),
    "dataloader_prefetch_factor": works("--dataloader_prefetch_factor", "3", group="workers"),
    "dataloader_multiprocessing_context": works("--dataloader_multiprocessing_context", "fork", group="workers"),
    "dataloader_in_order": works("--dataloader_in_order", "False", group="workers"),
    "train_sampling_strategy": works("--train_sampling_strategy", "sequential"),
    "length_column_name": works("--length_column_name", "n_tokens"),
    "remove_unused_columns": refused(
        "--remove_unused_columns False: the recipe's features carry bookkeeping "
        "columns the model does not take (SQuAD offsets, NER word indexes); expected "
        "the default True"
    ),
    "label_names": refused(
        "--label_names: each task names its own targets (labels, or start_positions and "
        "end_positions for SQuAD); expected the flag left out"
    ),
    # devices and launchers
    "use_cpu": works("--use_cpu", "True", group="bf16"),
    "accelerator_config": works("--accelerator_config", '{"even_batches": false}', group="epochs"),
    "parallelism_config": not_applicable("N-D parallelism across several GPUs (accelerate ParallelismConfig)"),
    "local_rank": not_applicable(_LAUNCHER),
    "ddp_find_unused_parameters": not_applicable(_LAUNCHER),
    "ddp_bucket_cap_mb": not_applicable(_LAUNCHER),
    "ddp_broadcast_buffers": not_applicable(_LAUNCHER),
    "ddp_static_graph": not_applicable(_LAUNCHER),
    "ddp_backend": not_applicable(_LAUNCHER),
    "ddp_timeout": not_applicable(_LAUNCHER),
    "fsdp": not_applicable("FSDP shards over several GPUs (tests/test_fsdp2.py)"),
    "fsdp_config": not_applicable("configures fsdp"),
    "deepspeed": not_applicable("DeepSpeed is not installed here; it needs GPUs"),
}


#: refused field -> the line a user sees (:data:`TABLE`'s refused rows): ``FinetuneTrainingArguments.__post_init__``
#: raises it for any value but transformers' default, while the flags are parsed (before any model or data is loaded)
REFUSED_FLAGS: dict[str, str] = {name: flag.note for name, flag in TABLE.items() if flag.status == REFUSED}


def flags_with(status: str) -> list[str]:
    """Field names of :data:`TABLE` with ``status``, in table order."""
    return [name for name, flag in TABLE.items() if flag.status == status]


# ------------------------------------------------------------------ the values of the choice fields
#: ``lr_scheduler_type`` value -> the ``--lr_scheduler_kwargs`` keys it needs (one of them; transformers'
#: ``get_scheduler`` fails without, after the model is built): refused while the flags are parsed without them
SCHEDULER_KWARGS: dict[str, tuple[str, ...]] = {
    "cosine_with_min_lr": ("min_lr", "min_lr_rate"),
    "cosine_warmup_with_min_lr": ("min_lr", "min_lr_rate"),
    "warmup_stable_decay": ("num_decay_steps",),
}
#: schedulers stepped by an evaluation metric (transformers ``Trainer._evaluate``): the task's primary metric, with
#: the scheduler's ``mode`` set from its direction (``max`` for F1 or accuracy), unless given
METRIC_SCHEDULERS = ("reduce_lr_on_plateau", "greedy")
_SCHEDULERS = (
    "linear",
    "cosine",
    "cosine_with_restarts",
    "polynomial",
    "constant",
    "constant_with_warmup",
    "inverse_sqrt",
    *METRIC_SCHEDULERS,
    *SCHEDULER_KWARGS,
)
_LEVELS = ("detail", "debug", "info", "warning", "error", "critical", "passive")
#: choice field -> value -> :class:`Flag`, for the values whose status is the same on every machine and family
#: (the others: :func:`classify_value`)
VALUES: dict[str, dict] = {
    "lr_scheduler_type": {
        **{v: works(note="any family") for v in _SCHEDULERS if v not in SCHEDULER_KWARGS},
        **{
            v: works(note=f"with --lr_scheduler_kwargs naming {' or '.join(keys)}; refused without")
            for v, keys in SCHEDULER_KWARGS.items()
        },
    },
    "logging_strategy": {v: works() for v in ("no", "steps", "epoch")},
    "eval_strategy": {v: works() for v in ("no", "steps", "epoch")},
    "save_strategy": {
        "no": works(),
        "steps": works(),
        "epoch": works(),
        "best": works(note="the task's primary metric and its direction; needs --eval_strategy steps or epoch"),
    },
    "log_level": {v: works() for v in _LEVELS},
    "log_level_replica": {v: works(note="read by replica processes") for v in _LEVELS},
    "hub_strategy": {v: not_applicable(_HUB) for v in ("end", "every_save", "checkpoint", "all_checkpoints")},
    "dataloader_multiprocessing_context": {
        v: works(note="with --dataloader_num_workers > 0") for v in ("fork", "spawn", "forkserver")
    },
    "train_sampling_strategy": {
        "random": works(),
        "sequential": works(),
        "group_by_length": works(),
        "batch_rebalance": works(note="balances padded tokens across devices; one device here"),
    },
    "ddp_backend": {v: not_applicable(_LAUNCHER) for v in ("nccl", "gloo", "mpi", "xccl", "hccl", "cncl", "mccl")},
    "debug": {
        v: refused(TABLE["debug"].note)
        for v in ("underflow_overflow", "tpu_metrics_debug")  # DebugOption
    },
}
