"""Every ``transformers.TrainingArguments`` field, classified for ``hf-bert-tasks finetune``: it **works** (passed to
``Trainer`` and exercised end to end by ``tests/test_trainer_flags.py`` with the non-default value given here), it is
**refused** (one line on stderr, exit status 2, while the flags are parsed: before any model or data is loaded), or
it is **not applicable** here (hardware, launchers or integrations this machine and package do not have; passed to
``Trainer`` unchanged). A field of the installed transformers missing from :data:`TABLE` fails the test, so the table
cannot go stale. Why: docs/design.md, 'Trainer hooks and the overrides left'."""

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
_HUB = "the recipe's own --push_to_hub (hf_bert_tasks.run.hub: one commit of the finished folder; tests/test_hub.py)"

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
        "--label_smoothing_factor", "0.1", group="epochs", note="refused for regression (STS-B): TASK_REFUSALS"
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


#: ``(problem type, field) -> the line a user sees`` when a task of that type is given the flag (a truthy value),
#: checked by ``run_finetune`` once the task is known and before its data is loaded. Label smoothing on regression
#: (STS-B) is refused rather than ignored: a smoothed one-hot over one real output means nothing and Trainer's label
#: smoother would index the float scores; a user must not believe it was applied. ``--prediction_loss_only`` on
#: SQuAD: its evaluation windows carry no answer positions, so there is no loss, and its scores need predictions.
TASK_REFUSALS: dict[tuple[str, str], str] = {
    ("regression", "label_smoothing_factor"): (
        "--label_smoothing_factor {value}: task {task!r} is a regression (one real-valued output, mean squared "
        "error); label smoothing applies to class labels; expected 0"
    ),
    ("question_answering", "prediction_loss_only"): (
        "--prediction_loss_only: task {task!r} evaluates post-processed answers; its evaluation windows carry no "
        "answer positions, so there is no loss to report; expected the flag left out"
    ),
}


# ------------------------------------------------------------------------------------ every value of every choice
#: The precision switches: ``bool`` fields whose ``True`` needs hardware (``False`` is the default and always works).
PRECISION_FIELDS = ("bf16", "fp16", "bf16_full_eval", "fp16_full_eval", "tf32")

#: The task families (``Task.problem_type``) every value is classified for.
FAMILIES = (
    "single_label_classification",
    "regression",
    "question_answering",
    "multiple_choice",
    "token_classification",
)


def choice_values(training_arguments_cls) -> dict[str, list]:
    """Every *choice field* of ``training_arguments_cls`` (the installed ``TrainingArguments``) with its values:
    fields typed as an ``Enum`` (``optim``, ``lr_scheduler_type``, ``save_strategy`` ...) or with ``choices`` metadata
    (``log_level``, ``ddp_backend`` ...), plus the :data:`PRECISION_FIELDS` (``[True, False]``). A field of a
    ``list`` of an Enum (``debug``) is its Enum's values. Generated from the class, so a value a new transformers
    adds appears here, and :func:`classify_value` must know it."""
    import dataclasses
    import enum
    import typing

    hints = typing.get_type_hints(training_arguments_cls)
    out: dict[str, list] = {}
    for f in dataclasses.fields(training_arguments_cls):
        if f.name in PRECISION_FIELDS:
            out[f.name] = [True, False]
            continue
        enums = [a for a in _type_parts(hints[f.name]) if isinstance(a, type) and issubclass(a, enum.Enum)]
        if enums:
            out[f.name] = [m.value for m in enums[0]]
        elif f.metadata.get("choices"):
            out[f.name] = list(f.metadata["choices"])
    return out


def _type_parts(tp) -> list:
    import typing

    parts, stack = [], [tp]
    while stack:
        t = stack.pop()
        args = typing.get_args(t)
        parts.append(t)
        stack.extend(args)
    return parts


@dataclass(frozen=True)
class Machine:
    """What this machine can run, from torch's own checks: ``cuda`` (``torch.cuda.is_available()``), ``gpu_bf16``
    (``torch.cuda.is_bf16_supported(including_emulation=False)``), ``gpu_tf32`` (CUDA compute capability >= 8,
    Ampere), ``cpu_bf16`` (native bf16 on the CPU: ``torch.cpu._is_avx512_bf16_supported()`` or AMX tiles), and
    ``packages``: the optimizer packages of :data:`OPTIMIZER_PACKAGES` that are importable."""

    cuda: bool = False
    gpu_bf16: bool = False
    gpu_tf32: bool = False
    cpu_bf16: bool = False
    packages: frozenset[str] = frozenset()

    @classmethod
    def current(cls) -> Machine:
        """This machine (imports torch)."""
        import importlib.util

        import torch

        cuda = torch.cuda.is_available()
        cpu_bf16 = bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())
        packages = frozenset(p for p in set(OPTIMIZER_PACKAGES.values()) if importlib.util.find_spec(p) is not None)
        return cls(
            cuda=cuda,
            gpu_bf16=cuda and torch.cuda.is_bf16_supported(including_emulation=False),
            gpu_tf32=cuda and torch.cuda.get_device_capability()[0] >= 8,
            cpu_bf16=cpu_bf16,
            packages=packages,
        )


#: ``optim`` values that work with torch alone (each builds and steps: tests/test_trainer_flags.py)
TORCH_OPTIMIZERS = ("adamw_torch", "adamw_torch_fused", "adafactor", "sgd", "adagrad", "rmsprop")
_BNB = "bitsandbytes"
#: ``optim`` value -> the module it imports (transformers ``Trainer.get_optimizer_cls_and_kwargs``); refused while
#: the flags are parsed where the module is not installed (transformers would fail after the model is built)
OPTIMIZER_PACKAGES: dict[str, str] = {
    "adamw_anyprecision": "torchdistx",
    "adamw_torch_4bit": "torchao",
    "adamw_torch_8bit": "torchao",
    **{
        name: _BNB
        for name in (
            "ademamix",
            "adamw_bnb_8bit",
            "adamw_8bit",
            "ademamix_8bit",
            "lion_8bit",
            "lion_32bit",
            "paged_adamw_32bit",
            "paged_adamw_8bit",
            "paged_ademamix_32bit",
            "paged_ademamix_8bit",
            "paged_lion_32bit",
            "paged_lion_8bit",
            "rmsprop_bnb",
            "rmsprop_bnb_8bit",
            "rmsprop_bnb_32bit",
        )
    },
    **{
        name: "galore_torch"
        for name in (
            "galore_adamw",
            "galore_adamw_8bit",
            "galore_adafactor",
            "galore_adamw_layerwise",
            "galore_adamw_8bit_layerwise",
            "galore_adafactor_layerwise",
        )
    },
    "lomo": "lomo_optim",
    "adalomo": "lomo_optim",
    "grokadamw": "grokadamw",
    "schedule_free_radam": "schedulefree",
    "schedule_free_adamw": "schedulefree",
    "schedule_free_sgd": "schedulefree",
    "apollo_adamw": "apollo_torch",
    "apollo_adamw_layerwise": "apollo_torch",
    "stable_adamw": "optimi",
}
#: ``optim`` values of other hardware (TPU, Ascend NPU)
OPTIMIZER_HARDWARE = {"adamw_torch_xla": "TPUs (torch_xla)", "adamw_torch_npu_fused": "Ascend NPUs (torch_npu)"}

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

_NO_GPU = "torch.cuda.is_available() is False here"
#: one-line refusals and notes of the precision switches (``{why}``: the machine fact)
PRECISION_LINES = {
    "fp16": (
        "--{name}: fp16 mixed precision needs a CUDA GPU ({why}); expected the flag left out, or --bf16 True on a "
        "CPU with native bf16"
    ),
    "bf16": (
        "--{name}: no CUDA GPU ({why}) and this CPU has no native bf16 (torch.cpu._is_avx512_bf16_supported() and "
        "_is_amx_tile_supported() are False: emulated bf16 is slower than fp32); expected the flag left out, or "
        "--use_cpu True to run bf16 autocast on this CPU anyway"
    ),
    "bf16_note": "--{name}: no CUDA GPU ({why}): bf16 autocast on the CPU (native bf16 here); --use_cpu set",
    "tf32": (
        "--tf32 True: TensorFloat-32 needs an Ampere or newer NVIDIA GPU ({why}); expected the flag left out or "
        "--tf32 False"
    ),
}


def classify_value(field: str, value, family: str, machine: Machine, use_cpu: bool = False) -> Flag | None:
    """How ``--<field> <value>`` is treated by ``finetune`` for a task of ``family`` (:data:`FAMILIES`) on
    ``machine``: a :class:`Flag` (``works``; ``refused``: its ``note`` is the line the user sees, while the flags
    are parsed; ``not applicable``); ``None``: a value no rule knows (a new transformers value: the test over
    :func:`choice_values` fails). ``use_cpu``: ``--use_cpu True`` given (bf16 autocast on any CPU)."""
    if field in PRECISION_FIELDS:
        return _classify_precision(field, value, machine, use_cpu)
    if field == "optim":
        if value in TORCH_OPTIMIZERS:
            return works(note="torch's own optimizer")
        if value in OPTIMIZER_HARDWARE:
            return not_applicable(f"needs {OPTIMIZER_HARDWARE[value]}")
        package = OPTIMIZER_PACKAGES.get(value)
        if package is None:
            return None
        if package in machine.packages:
            return not_applicable(f"package {package} installed; passed to Trainer, not tested by this package")
        return refused(
            f"--optim {value}: needs the package {package}, not installed here; expected an optimizer "
            f"torch has: {', '.join(TORCH_OPTIMIZERS)}"
        )
    return VALUES.get(field, {}).get(value)


def _classify_precision(field: str, value, machine: Machine, use_cpu: bool) -> Flag:
    if not value:
        return works(note="the default (fp32)")
    if field.startswith("fp16"):
        if machine.cuda and not use_cpu:
            return not_applicable(_GPU)
        return refused(PRECISION_LINES["fp16"].format(name=field, why=_NO_GPU if not machine.cuda else "--use_cpu"))
    if field == "tf32":
        if machine.gpu_tf32:
            return not_applicable(_GPU)
        return refused(PRECISION_LINES["tf32"].format(why=_NO_GPU if not machine.cuda else "compute capability < 8"))
    if machine.cuda and not use_cpu:  # bf16 on a GPU
        return (
            not_applicable(_GPU)
            if machine.gpu_bf16
            else refused(
                f"--{field}: this GPU has no native bf16 (torch.cuda.is_bf16_supported(including_emulation=False) is "
                "False); expected the flag left out"
            )
        )
    if use_cpu:
        return works(note="bf16 autocast on the CPU (--use_cpu True)")
    if machine.cpu_bf16:
        return works(note=PRECISION_LINES["bf16_note"].format(name=field, why=_NO_GPU))
    return refused(PRECISION_LINES["bf16"].format(name=field, why=_NO_GPU))


def _value(x):
    return getattr(x, "value", x)  # an Enum member (after TrainingArguments' post-init) as its string


def _kwargs(text) -> dict:
    import json

    if isinstance(text, str):
        try:
            text = json.loads(text)
        except json.JSONDecodeError:
            raise ValueError(f"--lr_scheduler_kwargs {text!r}: expected a JSON object, e.g. '{{\"min_lr\": 1e-6}}'")
    return dict(text or {})


def check_values(args, machine: Machine | None = None) -> list[str]:
    """Refuse, while the flags are parsed (before any model or data is loaded), every value of ``args`` (training
    arguments, before ``TrainingArguments.__post_init__``) that :func:`classify_value` refuses on ``machine``
    (default: :meth:`Machine.current`) whatever the task: a precision switch the machine cannot run, an optimizer
    whose package is missing, a scheduler without the ``--lr_scheduler_kwargs`` it needs, ``--save_strategy best``
    or a metric-driven scheduler without evaluations. ``--bf16`` on a CPU with native bf16 and no GPU is replaced
    (``use_cpu`` set): returns those notes, one line each. ``ValueError``: the refusal line."""
    machine = machine or Machine.current()
    notes = []
    for field in (*PRECISION_FIELDS, "optim"):
        value = _value(getattr(args, field, None))
        if value is None or (field in PRECISION_FIELDS and not value):
            continue
        flag = classify_value(field, value, "", machine, use_cpu=bool(args.use_cpu))
        if flag is not None and flag.status == REFUSED:
            raise ValueError(flag.note)
        if field.startswith("bf16") and not machine.cuda and not args.use_cpu:  # works: CPU autocast
            args.use_cpu = True
            notes.append(flag.note)
    scheduler = _value(args.lr_scheduler_type)
    kwargs = _kwargs(args.lr_scheduler_kwargs)
    needs = SCHEDULER_KWARGS.get(scheduler)
    if needs and not set(needs) & set(kwargs):
        raise ValueError(
            f"--lr_scheduler_type {scheduler}: needs {' or '.join(needs)} in --lr_scheduler_kwargs; expected e.g. "
            f"--lr_scheduler_kwargs '{{\"{needs[0]}\": {1e-6 if needs[0] == 'min_lr' else 100}}}'"
        )
    no_eval = _value(args.eval_strategy) == "no"
    if no_eval and (scheduler in METRIC_SCHEDULERS or _value(args.save_strategy) == "best"):
        which = f"--lr_scheduler_type {scheduler}" if scheduler in METRIC_SCHEDULERS else "--save_strategy best"
        raise ValueError(
            f"{which}: follows the dev metric of each evaluation; expected --eval_strategy steps or epoch"
        )
    return notes


def metric_driven(args) -> bool:
    """Whether ``args`` choose by a dev metric (``metric_for_best_model``): ``--load_best_model_at_end``,
    ``--save_strategy best`` or a :data:`METRIC_SCHEDULERS` scheduler."""
    return bool(
        args.load_best_model_at_end
        or _value(args.save_strategy) == "best"
        or _value(args.lr_scheduler_type) in METRIC_SCHEDULERS
    )


def check_task_values(task, args, metric_unset: bool) -> None:
    """The task-dependent part, in place (``apply_task_defaults``): with :func:`metric_driven` arguments,
    ``metric_for_best_model`` (when ``metric_unset``) is the task's primary metric and ``greater_is_better`` its
    direction (transformers' own default is the loss, which SQuAD's evaluation does not have); a given metric must
    be one the task reports; a metric-driven scheduler's ``mode`` follows the direction (``max`` for F1: else
    ``ReduceLROnPlateau`` cuts the learning rate while F1 improves). ``ValueError``: a metric the task does not
    report, or a ``mode`` against the direction."""
    if not metric_driven(args):
        return
    if metric_unset:
        args.metric_for_best_model = task.primary_metric  # Trainer reads it as eval_<metric>
        args.greater_is_better = task.metric_spec(task.primary_metric).higher_is_better
    metric = args.metric_for_best_model.removeprefix("eval_")
    known = list(task.metric_names) + ([] if task.problem_type == "question_answering" else ["loss"])
    if metric not in known:
        raise ValueError(
            f"--metric_for_best_model {args.metric_for_best_model}: task {task.name!r} reports no such dev metric"
            f"{' (no loss: its evaluation windows carry no answer positions)' if metric == 'loss' else ''}; "
            f"expected one of {known}"
        )
    scheduler = _value(args.lr_scheduler_type)
    if scheduler in METRIC_SCHEDULERS:
        kwargs = _kwargs(args.lr_scheduler_kwargs)
        expected = "max" if args.greater_is_better else "min"
        if kwargs.setdefault("mode", expected) != expected:
            raise ValueError(
                f"--lr_scheduler_kwargs mode {kwargs['mode']!r}: {scheduler} watches {metric} (task "
                f"{task.name!r}, {'higher' if expected == 'max' else 'lower'} is better); expected mode "
                f"{expected!r} or no mode"
            )
        args.lr_scheduler_kwargs = kwargs
