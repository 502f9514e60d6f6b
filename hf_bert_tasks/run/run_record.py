"""The run record ``run_info.json``: what a fine-tuning run was, written by a ``TrainerCallback`` while it trains
(:class:`RunRecordCallback`; :mod:`hf_bert_tasks.run.model_card` renders the card from it). No pickle is read and every
``*token*`` argument is dropped. Why: docs/design.md, 'Record written while training'."""

from __future__ import annotations

import json
import os
import platform
from contextlib import suppress
from dataclasses import MISSING, fields
from types import SimpleNamespace
from typing import Any

from transformers import TrainerCallback

#: The run record (written by :class:`hf_bert_tasks.run.run_record.RunRecordCallback`), next to the run's outputs.
RUN_INFO_FILE = "run_info.json"


def read_record(output_dir: str, name: str = RUN_INFO_FILE, missing: str | None = None) -> Any:
    """The JSON file ``output_dir/name`` (the run record by default); ``None`` when there is none, or with ``missing``
    ``FileNotFoundError`` (``<path>: not found; <missing>``); ``ValueError`` (naming the file and line) when it is not
    valid JSON."""
    path = os.path.join(output_dir, name)
    if not os.path.isfile(path):
        if missing:
            raise FileNotFoundError(f"{path}: not found; {missing}")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno}: not valid JSON ({err.msg})") from None


#: ``TrainingArguments`` fields never recorded (paths, logging, Hub plumbing; secrets are dropped by name too).
HIDDEN_ARGUMENTS = {
    "output_dir",
    "logging_dir",
    "run_name",
    "report_to",
    "push_to_hub",
    "hub_token",
    "hub_model_id",
    "hub_strategy",
    "hub_private_repo",
    "hub_always_push",
    "hub_revision",
    "overwrite_output_dir",
    "do_train",
    "do_eval",
    "do_predict",
    "resume_from_checkpoint",
    "dataloader_pin_memory",
    "disable_tqdm",
    "logging_steps",
    "logging_strategy",
    "save_strategy",
    "save_steps",
    "save_total_limit",
    "eval_strategy",
    "eval_steps",
    "per_device_eval_batch_size",
    "trackio_space_id",
    "trackio_bucket_id",
    "project",
    "trackio_static_space_id",
}

#: Arguments that ``extract_hyperparameters_from_trainer`` already reports under its own names.
EXTRACTED = {
    "learning_rate",
    "seed",
    "per_device_train_batch_size",
    "num_train_epochs",
    "max_steps",
    "warmup_steps",
    "lr_scheduler_type",
    "optim",
    "optim_args",
    "adam_beta1",
    "adam_beta2",
    "adam_epsilon",
    "fp16",
    "gradient_accumulation_steps",
    "label_smoothing_factor",
}


def framework_versions() -> dict[str, str]:
    """Versions of the libraries a checkpoint depends on (those installed; read from package metadata, no import)."""
    from importlib import metadata

    from .. import __version__

    versions = {"hf_bert_tasks": __version__, "python": platform.python_version()}
    for name in ("transformers", "torch", "datasets", "tokenizers", "accelerate", "peft", "huggingface_hub"):
        with suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def model_origin(model_name_or_path: str | None, base_model: str | None = None) -> dict[str, Any]:
    """Where the checkpoint a run starts from came from; call it when the model is loaded (same current directory).
    An existing folder is ``"local"`` (as ``from_pretrained`` reads it), else a valid Hub repo id is ``"hub"``
    (``huggingface_hub.utils.validate_repo_id``); a local folder has no Hub id unless ``base_model`` gives it.
    Returns ``{"model_name_or_path", "model_origin" ("hub"/"local"/"random"), "base_model", "base_model_source"}``
    (a local folder's last two path parts only: no home directories in a pushed file)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    name = model_name_or_path
    origin = "random" if not name else "local" if os.path.isdir(name) else "hub"
    if origin == "hub":
        try:
            validate_repo_id(name)
        except HFValidationError:
            origin = "local"  # not a Hub id, so not loaded from the Hub
    if origin == "local":
        name = "/".join(os.path.normpath(os.path.abspath(name)).split(os.sep)[-2:])
    source = {
        "hub": "the Hub id the run started from",
        "random": "random initialisation",
        "local": f"a local folder (`{name}`) with no Hub id recorded",
    }[origin]
    return {
        "model_name_or_path": name,
        "model_origin": origin,
        "base_model": base_model or (name if origin == "hub" else None),
        "base_model_source": "given with --base_model" if base_model else source,
    }


def non_default_arguments(training_args) -> dict[str, Any]:
    """Training arguments whose plain value (number, string, bool, ``None``; enums as their value) differs from
    ``transformers.TrainingArguments``' default (a subclass's own field: from its default); :data:`HIDDEN_ARGUMENTS`,
    ``*token*`` and private fields left out."""
    from transformers import TrainingArguments

    def field_default(f):
        if f.default is not MISSING:
            return f.default
        return f.default_factory() if f.default_factory is not MISSING else None  # type: ignore[misc]

    defaults = {f.name: field_default(f) for f in fields(TrainingArguments)}
    out = {}
    for f in fields(training_args):
        name = f.name
        if name.startswith("_") or name in HIDDEN_ARGUMENTS or "token" in name:
            continue
        default = defaults[name] if name in defaults else field_default(f)
        value, default = (getattr(x, "value", x) for x in (getattr(training_args, name, None), default))
        if not isinstance(value, (int, float, str, bool, type(None))):
            continue  # config objects (accelerator_config ...) filled in by TrainingArguments.__post_init__
        if default is None and value in (False, "", None):
            continue  # a None default normalised to False / "" by __post_init__ (activation_checkpointing ...)
        if value != default:
            out[name] = value
    return out


def hyperparameters(training_args) -> dict[str, Any]:
    """``transformers.modelcard.extract_hyperparameters_from_trainer`` (transformers' own card list), then every
    other argument that differs from the default (:func:`non_default_arguments`)."""
    from transformers.modelcard import extract_hyperparameters_from_trainer

    out = extract_hyperparameters_from_trainer(SimpleNamespace(args=training_args))  # it reads only trainer.args
    if "optimizer" in out:  # its text holds the enum's repr (``OptimizerNames.ADAMW_TORCH``): the plain name instead
        optim, extra = getattr(training_args.optim, "value", training_args.optim), training_args.optim_args
        out["optimizer"] = (
            f"{optim}, betas ({training_args.adam_beta1}, {training_args.adam_beta2}), epsilon "
            f"{training_args.adam_epsilon}"
            if "adam" in str(optim).lower()
            else str(optim)
        ) + (f", {extra}" if extra else "")
    out.update({k: v for k, v in non_default_arguments(training_args).items() if k not in EXTRACTED})
    return out


class RunRecordCallback(TrainerCallback):
    """Writes :data:`RUN_INFO_FILE` into ``args.output_dir`` while the ``Trainer`` runs (docs/design.md); make it
    once the model is loaded (:func:`model_origin` is decided here). ``task``: the registered
    :class:`~hf_bert_tasks.tasks.base.Task`; ``model_args`` (an optional ``base_model`` Hub id too) and ``data_args``
    as parsed; ``training_mode``: ``{"mode", "strategy"}`` (:meth:`hf_bert_tasks.modes.TrainingMode.record`;
    ``None``: the mode ``args`` select); ``args``: an existing ``Trainer``'s arguments, to start and write the record
    now (``trainer.add_callback``; ``None``: at ``on_init_end``)."""

    def __init__(self, task, model_args, data_args, training_mode: dict | None = None, args=None):
        data_defaults = {f.name: f.default for f in fields(type(data_args)) if f.default is not MISSING}
        files = {split: os.path.basename(path) for split, path in (getattr(task, "user_files", None) or {}).items()}
        changed = {
            k: getattr(data_args, k)
            for k in data_defaults
            if getattr(data_args, k) != data_defaults[k]
            and k
            not in (
                "task",
                "data_dir",
                "dataset_name",
                "dataset_config_name",
                "dataset_revision",
                "train_file",
                "validation_file",
                "test_file",
            )
        }  # no local paths: file names below
        changed.setdefault("max_seq_length", data_args.max_seq_length)
        self.record: dict[str, Any] = {
            "task": task.name,
            **model_origin(model_args.model_name_or_path, getattr(model_args, "base_model", None)),
            "model_revision": getattr(model_args, "model_revision", None),
            "dataset": {
                "id": data_args.dataset_name or task.hub_dataset,
                "config": task.hub_config if data_args.dataset_config_name is None else data_args.dataset_config_name,
                "revision": data_args.dataset_revision,
                "local_files": bool(data_args.data_dir),
                **({"user_files": files} if files else {}),
            },
            "data_arguments": changed,
            "framework_versions": framework_versions(),
        }
        self.training_mode = training_mode
        if args is not None:
            self.start(args)

    def write(self, args) -> None:
        """Replace ``args.output_dir/run_info.json`` with the record (main process; written to a temporary file and
        renamed, so never half a file)."""
        if not args.should_save:
            return
        os.makedirs(args.output_dir, exist_ok=True)
        path = os.path.join(args.output_dir, RUN_INFO_FILE)
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(self.record, f, indent=2, ensure_ascii=False, default=str)
        os.replace(path + ".tmp", path)

    def start(self, args) -> None:
        """Add what the ``Trainer``'s arguments say (training mode, seed, hyperparameters) and write the first record."""
        from ..modes import mode_of

        training_mode = mode_of(args).record(args) if self.training_mode is None else self.training_mode
        self.record.update(training_mode=training_mode, seed=args.seed, hyperparameters=hyperparameters(args))
        self.write(args)

    def on_init_end(self, args, state, control, **kwargs):
        self.start(args)

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.record["log_history"] = list(state.log_history)  # Trainer.log appended ``logs`` (with the step) first
        self.write(args)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.record["metrics"] = {**self.record.get("metrics", {}), **(metrics or {})}
        self.write(args)


__all__ = [
    "HIDDEN_ARGUMENTS",
    "RUN_INFO_FILE",
    "RunRecordCallback",
    "framework_versions",
    "hyperparameters",
    "model_origin",
    "non_default_arguments",
    "read_record",
]
