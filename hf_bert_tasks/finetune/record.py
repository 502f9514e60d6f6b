"""What a fine-tuning run records beside its model, from Trainer's log: the run record ``run_info.json``, written by
a ``TrainerCallback`` while it trains (:class:`RunRecordCallback`; :mod:`hf_bert_tasks.finetune.card` renders the
card from it; no pickle is read and every ``*token*`` argument is dropped; why: docs/design.md, 'Record written while
training'), and at its end ``training_curves.png`` (:func:`finish_training_curves`: losses and the dev metric
against step, the trivial baseline dashed). :func:`new_figure`, :func:`plot_lines` and :func:`plot_panels` are the
package's matplotlib helpers (a bare Agg ``Figure``: no pyplot state, no backend switch)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import MISSING, fields
from types import SimpleNamespace
from typing import Any

from transformers import TrainerCallback

from ..hub.cards import RUN_INFO_FILE, framework_versions, model_origin

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


def non_default_arguments(training_args) -> dict[str, Any]:
    """Training arguments whose plain value (number, string, bool, ``None``; enums as their value) differs from
    ``transformers.TrainingArguments``' default (a subclass's own field: from its default); :data:`HIDDEN_ARGUMENTS`,
    ``*token*``, private and ``init=False`` (derived, not flags) fields left out."""
    from transformers import TrainingArguments

    def field_default(f):
        if f.default is not MISSING:
            return f.default
        return f.default_factory() if f.default_factory is not MISSING else None  # type: ignore[misc]

    defaults = {f.name: field_default(f) for f in fields(TrainingArguments)}
    out = {}
    for f in fields(training_args):
        name = f.name
        if not f.init or name.startswith("_") or name in HIDDEN_ARGUMENTS or "token" in name:  # init=False: derived
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


# ------------------------------------------------------------------- training_curves.png, from the same log
#: the fine-tune curves (:func:`finish_training_curves`), drawn from Trainer's state file in the output dir
CURVES_FILE = "training_curves.png"
STATE_FILE = "trainer_state.json"


def plot_training_curves(
    log_history: list[dict[str, Any]],
    path: str,
    metric: str | None = None,
    title: str | None = None,
    baseline: float | None = None,
) -> dict[str, Any]:
    """Draw the losses (nats, left) and ``eval_<metric>`` (as logged, right) against step (from 0) into the PNG
    ``path``, the metric's trivial ``baseline`` (:mod:`hf_bert_tasks.tasks.metrics`; default: the log's
    ``baseline_<metric>``) as a dashed line; returns the series."""
    series = curve_series(log_history, metric)
    name = (series["metric"] or "").removeprefix("eval_")
    if baseline is None:
        baseline = next(
            (
                finite_number(e[f"baseline_{name}"])
                for e in reversed(log_history)
                if finite_number(e.get(f"baseline_{name}")) is not None
            ),
            None,
        )
    from ..utils.plots import new_figure, plot_lines  # matplotlib: only once a run draws its curves

    fig, (left, right) = new_figure(1, 2)
    if baseline is not None and series["eval_metric"][0]:
        right.axhline(
            baseline,
            color="grey",
            linestyle="--",
            linewidth=1,
            label=f"trivial baseline (best constant) {baseline:.3g}",
        )
    plot_lines(
        left,
        [(series["train_loss_label"], series["train_loss"], "-"), ("eval loss", series["eval_loss"], "o--")],
        ylabel="loss",
        empty="no loss logged",
    )
    plot_lines(
        right, [(f"dev {name}", series["eval_metric"], "o-")], ylabel=series["metric"], empty="no evaluation logged"
    )
    last = max([*series["train_loss"][0], *series["eval_loss"][0], *series["eval_metric"][0], 1])
    for ax in (left, right):  # one eval point is not drawn on a 190-210 axis
        ax.set_xlim(0, last * 1.05)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=100)
    return series


def write_training_curves(
    output_dir: str, metric: str | None = None, title: str | None = None, baseline: float | None = None
) -> str:
    """Read ``output_dir/trainer_state.json`` (``FileNotFoundError`` without it) and write
    ``output_dir/training_curves.png`` (:func:`plot_training_curves`); returns the PNG's path."""
    with open(os.path.join(output_dir, STATE_FILE), encoding="utf-8") as f:
        history = json.load(f).get("log_history", [])
    plot_training_curves(history, os.path.join(output_dir, CURVES_FILE), metric, title, baseline)
    return os.path.join(output_dir, CURVES_FILE)


def finish_training_curves(trainer, eval_metrics: dict[str, Any], metric: str, title: str | None = None) -> str | None:
    """After a run's last evaluation: log the final eval metrics if no ``Trainer`` log has them (SQuAD and NER score
    outside ``trainer.evaluate``), save ``trainer_state.json`` and write the curves; the PNG's path (main process
    only, else ``None``)."""
    if not trainer.is_world_process_zero():
        return None
    state = trainer.state
    step = max([state.global_step] + [e.get("step", 0) for e in state.log_history])
    key = f"eval_{metric}"
    if key in eval_metrics and not any(e.get("step") == step and key in e for e in state.log_history):
        numbers = {k: v for k, v in eval_metrics.items() if finite_number(v) is not None}
        state.log_history.append({**numbers, "epoch": state.epoch, "step": step})
    trainer.save_state()
    return write_training_curves(
        trainer.args.output_dir, metric, title, finite_number(eval_metrics.get(f"baseline_{metric}"))
    )


def finite_number(value) -> float | None:
    """``value`` as a finite float, else ``None`` (bools, strings, NaN and inf are not plotted)."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if number else None


def curve_series(log_history: list[dict[str, Any]], metric: str | None = None) -> dict[str, Any]:
    """The points to plot from a ``Trainer`` ``log_history``.

    Args:
        log_history: ``trainer_state.json["log_history"]``: dicts with ``step`` and some of ``loss``, ``eval_loss``
            and ``eval_<metric>`` (the final summary entry has no ``loss`` and is skipped).
        metric: the eval metric, with or without ``eval_`` (``"accuracy"``); ``None``: the first logged ``eval_*``
            key that is not a loss, runtime or count.

    Returns:
        ``{"train_loss": (steps, values), "eval_loss": (steps, values), "eval_metric": (steps, values),
        "metric": "eval_<name>" or None, "train_loss_label": str}``, lists in log order; missing or non-finite
        values are left out. A run shorter than ``logging_steps`` logs no ``loss``: its train loss is then the final
        summary's ``train_loss`` (the mean over the run) at its step, labelled so. ``ValueError`` for an entry
        without an integer ``step`` (not a ``Trainer`` log history).
    """
    skip = ("eval_loss", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second", "eval_samples")
    if metric is None:
        metric = next(
            (
                k
                for entry in log_history
                for k in entry
                if k.startswith("eval_") and k not in skip and finite_number(entry[k]) is not None
            ),
            None,
        )
    elif not metric.startswith("eval_"):
        metric = f"eval_{metric}"
    series: dict[str, Any] = {"train_loss": ([], []), "eval_loss": ([], []), "eval_metric": ([], []), "metric": metric}
    series["train_loss_label"] = "train loss"
    for i, entry in enumerate(log_history):
        step = entry.get("step")
        if isinstance(step, bool) or not isinstance(step, int):
            raise ValueError(f"log_history[{i}]: expected an integer 'step', got {step!r}")
        for name, key in (("train_loss", "loss"), ("eval_loss", "eval_loss"), ("eval_metric", metric)):
            value = finite_number(entry.get(key)) if key else None
            if value is not None:
                series[name][0].append(step)
                series[name][1].append(value)
    summary = next((e for e in reversed(log_history) if finite_number(e.get("train_loss")) is not None), None)
    if not series["train_loss"][0] and summary is not None:  # fewer steps than logging_steps: the run's own mean
        series["train_loss"] = ([summary["step"]], [float(summary["train_loss"])])
        series["train_loss_label"] = "train loss (mean over the run: train_loss)"
    return series
