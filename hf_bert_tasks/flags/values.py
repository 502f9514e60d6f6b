"""Every *value* of every choice field of ``transformers.TrainingArguments`` (:mod:`hf_bert_tasks.flags.trainer_flags`
classifies the *fields*): the values are generated from the installed class (:func:`choice_values`: Enum types and
``choices`` metadata, plus the precision switches), each value x task family classified on a machine
(:func:`classify_value`: works / refused with its one line / not applicable), and the refusals enforced while the
flags are parsed, before any model or data is loaded (:func:`check_values`, the machine's; :func:`check_task_values`,
the task's metric and its direction). The values whose status is the same on every machine and task family are
the table :data:`hf_bert_tasks.flags.trainer_flags.VALUES`, beside the fields' table (one import, no call back at
import). ``tests/test_flag_values.py`` fails on a value no rule knows."""

from __future__ import annotations

from dataclasses import dataclass

from .trainer_flags import (  # the tables: fields (TABLE) and the values of choice fields (VALUES)
    _GPU,
    METRIC_SCHEDULERS,
    REFUSED,
    SCHEDULER_KWARGS,
    VALUES,
    Flag,
    not_applicable,
    refused,
    works,
)

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
    known = list(task.metric_names) + (["loss"] if task.problem.eval_loss else [])
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
