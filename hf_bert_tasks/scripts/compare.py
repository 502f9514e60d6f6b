"""Fine-tuning vs LoRA vs frozen features, on the same task and seeds (``hf-bert-tasks compare`` = ``recipes/compare.py``).

The paper's §5.3 / Table 7 protocol: each configuration (a mode; feature-based: one per layer strategy) runs through
the fine-tune recipe once per seed (feature-based runs share one cache of every layer); every arm's flags are checked
before the first run (docs/design.md, "Command line").

    hf-bert-tasks compare --task conll2003 --model_name_or_path bert-base-cased --output_dir runs/compare/conll2003 \
        --modes finetune,lora,feature_based --seeds 1,2,3 --strategies second_to_last,concat_last_four \
        --feature_based_args "{num_train_epochs: 10, learning_rate: 1e-3}" --finetune_args finetune_arm.yaml

Any other flag goes to every run; ``--<mode>_args`` (a YAML/JSON file or inline YAML mapping) only to that mode's.
``--reuse finetune=runs/real/mrpc`` takes a finished run's ``all_results.json``; finished runs in ``output_dir`` are
reused too (``--rerun`` runs them again). Writes ``comparison.json`` (every run, mean ± sample std, each arm's
budget), ``comparison.md`` (laid out like Table 7) and ``comparison.png`` (bar chart).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import shlex
import statistics
import sys
import time

from .. import get_task
from ..cli import ArgumentParser, UsageError, interactive, run_subcommand, warn_deprecated_flag
from ..console import close_names, fill
from ..flags.config_file import config_argv, read_config, settings_argv, unrecognized
from ..modes import TRAINING_MODES, get_training_mode
from ..tasks.metrics import PREFIX
from .compare_report import console_lines, paper_split, trivial_baselines, write_report


def parse_list(text: str, kind=str) -> list:
    """``"a,b"`` -> ``["a", "b"]`` (converted with ``kind``). Raises ValueError for an empty list."""
    items = [kind(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"expected a comma-separated list, got {text!r}")
    return items


def configurations(modes: list[str], strategies: list[str]) -> list[dict]:
    """One ``{"label", "mode", "strategy"}`` per configuration (``strategy``: feature-based only); ``ValueError`` for
    an unknown mode or strategy (lists the known ones)."""
    configs = []
    for mode in modes:
        if mode not in TRAINING_MODES:
            hint = close_names([mode], list(TRAINING_MODES))
            raise ValueError(f"--modes: unknown mode {mode!r}{hint}; expected some of {list(TRAINING_MODES)}")
        configs += TRAINING_MODES[mode].compare_arms(strategies)  # feature-based: one per strategy
    return configs


def paper_number(task, config: dict) -> tuple[float | None, str]:
    """The paper's number for a configuration (x100) and its source, ``(None, "")`` if none (the mode's rule)."""
    return get_training_mode(config["mode"]).paper_number(task, config)


def summarize(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for a single value)."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def run_settings(config: dict, seed: int, args, out: str) -> dict:
    """What compare itself sets for one configuration and seed (progress bars only on a terminal)."""
    settings = {
        "task": args.task,
        "model_name_or_path": args.model_name_or_path,
        "output_dir": out,
        "seed": seed,
        "mode": config["mode"],
        "do_train": True,
        "do_eval": True,
        "save_strategy": "no",
        "overwrite_output_dir": True,
        "report_to": "none",
        "disable_tqdm": not interactive(),
    }
    if args.data_dir:
        settings["data_dir"] = args.data_dir
    if config["strategy"]:
        settings.update(
            feature_strategy=config["strategy"],
            feature_cache_layers="all",
            feature_cache_dir=os.path.join(args.output_dir, "feature_cache"),
        )
    return settings


def finetune_parser():
    """The fine-tune recipe's one parser (:func:`hf_bert_tasks.finetune.args.finetune_parser`: its dataclasses, the
    registered modes' flags, ``TrainingArguments``' fields; errors raise ``UsageError``)."""
    from ..finetune.args import finetune_parser

    return finetune_parser()


def given_settings(argv: list[str], parser=None) -> dict:
    """The fine-tune flags given in ``argv`` (``--config FILE`` below them) as ``{name: value}``, converted by the
    fine-tune parser, no defaults. ``ValueError``: an unknown flag, a value the parser refuses, a bad config file."""
    parser = parser or finetune_parser()
    for action in parser._actions:  # only what argv gives: no defaults, nothing required
        action.default, action.required = argparse.SUPPRESS, False
    namespace, remaining = parser.parse_known_args(config_argv(argv, parser))
    if remaining:
        raise UsageError(unrecognized([s for a in parser._actions for s in a.option_strings], remaining))
    return vars(namespace)


def run_arguments(config: dict, seed: int, args, common: dict, out: str):
    """The fine-tune ``(ModelArguments, DataArguments, FinetuneTrainingArguments)`` of one configuration and seed from
    :func:`run_settings`, ``common`` (every run's flags; another mode's flags left out) and
    ``args.arm_settings[mode]``, a later one winning: the
    settings as flags, parsed and built as ``hf-bert-tasks finetune`` parses and builds them
    (:func:`~hf_bert_tasks.finetune.args.parse_finetune_argv`, :func:`~hf_bert_tasks.finetune.config.finetune_arguments`).
    ``ValueError`` when a check of the dataclasses fails (e.g. ``--lora_dropout 1.5``)."""
    from ..finetune.args import parse_finetune_argv
    from ..finetune.config import finetune_arguments
    from ..modes import mode_arguments_classes

    # the flags common to every arm reach the arms of their own mode only (a run has its mode's flags alone)
    others = {
        n for m, cls in mode_arguments_classes().items() if m != config["mode"] for n in cls.__dataclass_fields__
    }
    common = {k: v for k, v in common.items() if k not in others}
    settings = {**run_settings(config, seed, args, out), **common, **args.arm_settings.get(config["mode"], {})}
    # the flags given: a GPU's defaults (bf16, fused AdamW) apply where no setting chose otherwise
    return finetune_arguments(parse_finetune_argv(settings_argv(settings, finetune_parser())))


def arm_settings(text: str, option: str) -> dict:
    """``--<mode>_args`` (``option``) value -> fine-tune settings, converted as :func:`given_settings` (``null``
    leaves one out). ``text``: a YAML/JSON file path, an inline YAML mapping or, deprecated, a string of flags.

    Raises:
        ValueError: unreadable file or YAML, not a mapping of flag names to plain values, or a name or value the
            fine-tune recipe does not accept (names ``option``).
    """
    text = (text or "").strip()
    if not text:
        return {}
    parser = finetune_parser()
    if text.startswith("-"):
        warn_deprecated_flag(f"{option} '--flag value ...'", f"{option} '{{flag: value, ...}}' (YAML)")
        return given_settings(shlex.split(text), parser)
    return given_settings(settings_argv(read_config(text, option, inline=True), parser), parser)


def validate_arms(args, common: dict) -> None:
    """Read every arm's ``--<mode>_args`` into ``args.arm_settings`` and build every configuration's arguments
    before anything runs; ``ValueError``: ``compare: arm 'lora' (--lora_args or the flags common ...): <message>``."""
    seed = parse_list(args.seeds, int)[0]
    configs = [
        c
        for c in configurations(parse_list(args.modes), parse_list(args.strategies))
        if c["label"] not in args.reuse_map
    ]
    args.arm_settings = {}
    try:
        for mode in TRAINING_MODES:
            label = next((c["label"] for c in configs if c["mode"] == mode), mode)
            args.arm_settings[mode] = arm_settings(getattr(args, f"{mode}_args", ""), f"--{mode}_args")
        for config in configs:
            label, mode = config["label"], config["mode"]
            out = os.path.join(args.output_dir, label.replace(":", "-"), f"seed{seed}")
            run_arguments(config, seed, args, common, out)
    except ValueError as err:  # name the arm and where its settings come from
        raise ValueError(f"compare: arm {label!r} (--{mode}_args or the flags common to every arm): {err}") from err


def run_one(config: dict, seed: int, args, common: dict) -> dict:
    """Run one configuration with one seed, or read it (``--reuse``, a finished earlier run without ``--rerun``)."""
    from ..finetune.recipe import run_finetune
    from ..flags.training import setup_process_logging
    from ..hub.cards import read_record
    from ..utils.checkpoints import output_dir_is_finished

    reuse = args.reuse_map.get(config["label"])
    out = reuse or os.path.join(args.output_dir, config["label"].replace(":", "-"), f"seed{seed}")
    timing = os.path.join(out, "compare_wall_seconds.json")
    record = {"seed": None if reuse else seed, "output_dir": out, "reused": bool(reuse)}
    finished = reuse or (output_dir_is_finished(out) and os.path.isfile(timing) and not args.rerun)
    print(
        f"compare: arm {config['label']!r}, seed {seed}: {'reading the finished run in' if finished else 'running into'}"
        f" {out}",
        flush=True,
    )  # which arm is running, before its logs
    if finished:
        results = read_record(out, "all_results.json")
        wall = (
            read_record(out, os.path.basename(timing))["wall_seconds"]
            if not reuse
            else results.get("wall_seconds", results.get("train_runtime"))
        )
    else:
        model_args, data_args, training_args = run_arguments(config, seed, args, common, out)
        setup_process_logging(training_args)
        started = time.time()
        results = run_finetune(model_args, data_args, training_args, final=True)  # finetune_arguments: final
        wall = time.time() - started
        os.makedirs(out, exist_ok=True)
        with open(timing, "w", encoding="utf-8") as f:
            json.dump({"wall_seconds": wall}, f)
    state = os.path.join(out, "trainer_state.json")
    steps = read_record(out, "trainer_state.json").get("global_step") if os.path.isfile(state) else None
    return {**record, "results": results, "wall_seconds": wall, "steps": steps}


def run_facts(runs: list[dict]) -> dict:
    """What an arm's runs (:func:`run_one`'s) recorded beside the metric: ``train_examples`` / ``dev_examples``
    (``train_samples``; ``examples_scored``, else ``eval_samples``), ``steps`` (the first run's ``global_step``),
    ``cache_build_seconds`` (the feature cache built by one of them: its ``feature_extraction_runtime`` on a cache
    miss) and ``wall_seconds`` (the mean per run, that build left out: it serves every strategy)."""
    first = runs[0]["results"]
    builds = [
        r["results"].get("feature_extraction_runtime") or 0.0
        if r["results"].get("feature_cache_hit") is False
        else 0.0
        for r in runs
    ]
    walls = [r["wall_seconds"] - b for r, b in zip(runs, builds) if r["wall_seconds"] is not None]
    return {
        "train_examples": first.get("train_samples"),
        "dev_examples": first.get("examples_scored", first.get("eval_samples")),
        "steps": runs[0].get("steps"),
        "cache_build_seconds": sum(builds) or None,
        "wall_seconds": statistics.fmean(walls) if walls else None,
    }


def trainable_parameters(task, model_args, training_args) -> int:
    """The parameters with ``requires_grad`` of the model the run's mode builds (``finetuning.build_model``), without
    printing its load report (the run prints it)."""
    import transformers

    from ..finetune.recipe import build_model
    from ..modes.lora.mode import trainable_parameter_counts

    verbosity = transformers.logging.get_verbosity()
    transformers.logging.set_verbosity_error()
    try:
        return trainable_parameter_counts(build_model(task, model_args, training_args))[0]
    finally:
        transformers.logging.set_verbosity(verbosity)


def arm_budget(task, config: dict, seed: int, args, common: dict) -> dict:
    """What a configuration trains with, after the task's and mode's defaults (``apply_task_defaults``): ``epochs``
    (``"N steps"`` with ``--max_steps``), peak ``learning_rate`` (or ``--lr_grid``), :func:`trainable_parameters`."""
    model_args, _, training_args = run_arguments(config, seed, args, common, args.output_dir)  # final
    steps = training_args.max_steps
    return {
        "epochs": f"{steps} steps" if steps > 0 else f"{training_args.num_train_epochs:g}",
        "learning_rate": training_args.lr_grid or f"{training_args.learning_rate:g}",
        "trainable_parameters": trainable_parameters(task, model_args, training_args),
    }


def build_parser() -> argparse.ArgumentParser:
    """The ``compare`` flags (argparse; other flags go to every fine-tune run; errors raise ``UsageError``)."""
    parser = ArgumentParser(
        prog="hf-bert-tasks compare",
        description=__doc__.split("\n")[0],
        epilog="Any other flag of `hf-bert-tasks finetune` is passed to every run.",
    )
    parser.add_argument("--task", required=True, help="registered task (`hf-bert-tasks tasks`)")
    parser.add_argument("--model_name_or_path", required=True, help="checkpoint every arm starts from")
    parser.add_argument("--output_dir", required=True, help="one sub-folder per arm and seed, plus the report")
    parser.add_argument("--data_dir", default=None, help="folder with the task's original files; else the Hub")
    modes = ",".join(TRAINING_MODES)
    parser.add_argument("--modes", default=modes, help="comma-separated: " + modes)
    parser.add_argument(
        "--strategies",
        default="concat_last_four",
        help="comma-separated feature_based layer strategies (paper Table 7)",
    )
    parser.add_argument("--seeds", default="1", help="comma-separated seeds; each arm runs once per seed")
    parser.add_argument("--title", default=None, help="title of the report and chart")
    parser.add_argument(
        "--json", action="store_true", help="print comparison.json instead of the report (the runs' logs: stderr)"
    )
    parser.add_argument(
        "--rerun", action="store_true", help="run every configuration again even if output_dir holds its finished run"
    )
    parser.add_argument(
        "--reuse",
        action="append",
        default=[],
        help="label=DIR: take DIR/all_results.json for that configuration instead of running it",
    )
    for mode in TRAINING_MODES:
        parser.add_argument(
            f"--{mode}_args",
            default="",
            metavar="YAML",
            help=f"settings of the {mode} runs only: a YAML/JSON file or an inline YAML mapping "
            "such as '{num_train_epochs: 3, learning_rate: 1e-3}'",
        )
    return parser


def main(argv: list[str] | None = None) -> dict:
    """Parse ``argv``, check every arm, run (or reuse) every configuration x seed, write and print the report.

    Raises:
        ValueError: a bad flag or arm setting (naming the arm), a ``--reuse`` that is not ``LABEL=DIR`` or names no
            configuration of ``--modes``/``--strategies``.
        FileNotFoundError: a ``--reuse`` folder without ``all_results.json``.
    """
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    args, extra = build_parser().parse_known_args(argv)
    common = given_settings(extra)  # the fine-tune flags given for every run
    args.reuse_map = {}
    labels = [c["label"] for c in configurations(parse_list(args.modes), parse_list(args.strategies))]
    for item in args.reuse:
        if "=" not in item:
            raise ValueError(f"--reuse {item!r}: expected LABEL=DIR, e.g. finetune=runs/real/mrpc")
        label, path = item.split("=", 1)
        if label not in labels:  # it would be ignored and the configuration run in full
            raise ValueError(
                f"--reuse {item}: no configuration {label!r} in this comparison{close_names([label], labels)}; "
                f"expected one of {labels}"
            )
        if not os.path.isfile(os.path.join(path, "all_results.json")):
            raise FileNotFoundError(f"--reuse {item}: {path}/all_results.json not found")
        args.reuse_map[label] = path
    validate_arms(args, common)  # every arm's settings and arguments, before the first run starts
    task = get_task(args.task)
    # --json: stdout holds the JSON only; the runs' own logs and lines go to stderr
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        rows = compare_rows(task, args, common)
        parts = [p for p in os.path.normpath(args.model_name_or_path).split(os.sep) if p]
        model = next(
            (p for p in reversed(parts) if p not in ("model", "snapshots") and not re.fullmatch(r"[0-9a-f]{40}", p)),
            args.model_name_or_path,
        )  # a package's or the Hub cache's folder: the model's own name
        arms = ", ".join(dict.fromkeys(get_training_mode(c["mode"]).name for c in rows))
        display = task.metric_spec(task.primary_metric).display
        title = args.title or f"{task.name}: dev {display} of {arms} from {model} (seeds {args.seeds})"
        paths = write_report(task, rows, args.output_dir, title)
    if args.json:
        with open(paths["json"], encoding="utf-8") as f:
            print(f.read())
    else:
        print("\n".join(console_lines(task, rows, title, trivial_baselines(rows))))
        print("\n" + fill(f"report: {paths['md']}, {paths['png']}, {paths['json']} (every run; for scripts: --json)"))
    return {"rows": rows, "paths": paths}


def compare_rows(task, args, common: dict) -> list[dict]:
    """Run (or read) every configuration x seed (:func:`run_one`) and return one report row per configuration:
    the mean / sample std / n of the primary dev metric (0-100, the task's declaration), :func:`run_facts`, the trivial
    baseline, the paper's number (none on the user's own files: not the paper's data) and :func:`arm_budget`."""
    key = f"eval_{task.primary_metric}"
    spec = task.metric_spec(task.primary_metric)
    seeds = parse_list(args.seeds, int)
    own_data = any(common.get(k) for k in ("train_file", "validation_file", "dataset_name"))
    rows = []
    for config in configurations(parse_list(args.modes), parse_list(args.strategies)):
        reused = bool(args.reuse_map.get(config["label"]))  # a reused run stands for every seed
        runs = [run_one(config, seed, args, common) for seed in (seeds[:1] if reused else seeds)]
        values = [spec.to_percent(r["results"][key]) for r in runs if key in r["results"]]
        base = next(
            (
                spec.to_percent(r["results"][f"{PREFIX}{task.primary_metric}"])
                for r in runs
                if f"{PREFIX}{task.primary_metric}" in r["results"]
            ),
            None,
        )
        mean, std = summarize(values) if values else (None, 0.0)
        paper, source = (None, "") if own_data else paper_number(task, config)
        rows.append(
            {
                **config,
                "name": get_training_mode(config["mode"]).row_name(config),
                "mean": mean,
                "std": std,
                "n": len(values),
                "values": values,
                **run_facts(runs),
                "baseline": base,
                "paper": paper,
                "paper_source": source,
                "paper_split": paper_split(source),
                "reused": reused,
                **({} if reused else arm_budget(task, config, seeds[0], args, common)),
                "runs": [
                    {k: v for k, v in r.items() if k != "results"} | {"metric": r["results"].get(key)} for r in runs
                ],
            }
        )
    return rows


if __name__ == "__main__":
    sys.exit(run_subcommand("compare"))
