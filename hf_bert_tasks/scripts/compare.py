"""Fine-tuning vs LoRA vs frozen features, on the same task and seeds (``hf-bert-tasks compare`` = ``recipes/compare.py``).

The paper's §5.3 / Table 7 protocol: fine-tune BERT, and train a head on frozen features from several layer
strategies; report dev scores side by side. Each configuration runs through the fine-tune recipe
(``--mode finetune|lora|feature_based``), once per seed; feature-based runs share one feature cache holding every
layer, so the frozen encoder runs once per split for all strategies.

    hf-bert-tasks compare --task conll2003 --data_dir ../shared/data/conll2003 \\
        --model_name_or_path bert-base-cased --output_dir runs/compare/conll2003 \\
        --modes finetune,lora,feature_based \\
        --strategies embeddings,second_to_last,last,sum_last_four,concat_last_four,sum_all,scalar_mix \\
        --seeds 1,2,3 --feature_based_args "{num_train_epochs: 10, learning_rate: 1e-3}" \
        --finetune_args finetune_arm.yaml   # a file holding e.g. "num_train_epochs: 3"

Any other flag (``--max_train_samples 2000``, ``--max_seq_length 128`` …) goes to every run; ``--<mode>_args``
only to that mode's runs: a YAML/JSON file or an inline YAML mapping of fine-tune flag names (without ``--``) to
values. Every arm's flags are parsed and checked by the fine-tune recipe's own parser before the first run starts,
so an unknown flag or a bad value in any arm is an error at once, naming the arm and the flag. (A string of flags,
``"--num_train_epochs 3"``, the form of earlier releases, still works with a deprecation note.) ``--reuse finetune=runs/real/mrpc`` takes a finished run's ``all_results.json`` instead of
running that configuration (marked "reused" in the report). Finished runs in ``output_dir`` are reused too, so an
interrupted comparison resumes where it stopped (``--rerun`` runs them again).

Writes ``comparison.json`` (every run and the mean ± sample std per configuration), ``comparison.md`` (a table laid
out like Table 7, the paper's numbers beside ours) and ``comparison.png`` (bar chart, matplotlib Agg backend).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import statistics
import textwrap
import time

from ..cli import ArgumentParser, UsageError, warn_deprecated_flag
from ..modes import TRAINING_MODES, get_training_mode


def parse_list(text: str, kind=str) -> list:
    """``"a,b"`` -> ``["a", "b"]`` (converted with ``kind``). Raises ValueError for an empty list."""
    items = [kind(x.strip()) for x in text.split(",") if x.strip()]
    if not items:
        raise ValueError(f"expected a comma-separated list, got {text!r}")
    return items


def configurations(modes: list[str], strategies: list[str]) -> list[dict]:
    """One dict per configuration: ``{"label", "mode", "strategy"}`` (``strategy`` ``None`` unless feature-based).

    Raises:
        ValueError: unknown mode or strategy (lists the known ones).
    """
    configs = []
    for mode in modes:
        if mode not in TRAINING_MODES:
            raise ValueError(f"--modes: unknown mode {mode!r}; expected some of {list(TRAINING_MODES)}")
        configs += TRAINING_MODES[mode].compare_arms(strategies)  # feature-based: one per strategy
    return configs


def paper_number(task, config: dict) -> tuple[float | None, str]:
    """The paper's number for a configuration (x100) and where it comes from; ``(None, "")`` if it has none.

    CoNLL-2003: Table 7 (dev F1, BERT-BASE) for fine-tuning and each strategy. Other tasks: the fine-tuning row of
    the task's ``paper_results["BERT-base"]`` (GLUE: Table 1, *test* server), nothing for LoRA / frozen features.
    """
    return get_training_mode(config["mode"]).paper_number(task, config)


def summarize(values: list[float]) -> tuple[float, float]:
    """Mean and sample standard deviation (0.0 for a single value)."""
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def run_settings(config: dict, seed: int, args, out: str) -> dict:
    """What compare itself sets for one configuration and seed: fine-tune argument names -> values. Progress bars
    stay on (``disable_tqdm`` is not set)."""
    settings = {"task": args.task, "model_name_or_path": args.model_name_or_path, "output_dir": out, "seed": seed,
                "mode": config["mode"], "do_train": True, "do_eval": True, "save_strategy": "no",
                "overwrite_output_dir": True, "report_to": "none"}
    if args.data_dir:
        settings["data_dir"] = args.data_dir
    if config["strategy"]:
        settings.update(feature_strategy=config["strategy"], feature_cache_layers="all",
                        feature_cache_dir=os.path.join(args.output_dir, "feature_cache"))
    return settings


def finetune_parser():
    """The fine-tune recipe's parser (its argument dataclasses; errors raise ``UsageError``)."""
    from ..arguments import CliArgumentParser, DataArguments, FinetuneTrainingArguments, ModelArguments

    return CliArgumentParser((ModelArguments, DataArguments, FinetuneTrainingArguments),
                             prog="hf-bert-tasks finetune")


def given_settings(argv: list[str], parser=None) -> dict:
    """The fine-tune flags given in ``argv`` (the command line's pass-through flags) as ``{name: value}``, converted
    by the fine-tune parser (types, choices, ``--no_<flag>``); flags not given are absent, not defaults.
    ``--config FILE`` contributes its mapping, below the explicit flags (as ``hf-bert-tasks finetune``).

    Raises:
        ValueError: an unknown flag (with the closest known one), a value the parser refuses, a bad config file.
    """
    import argparse

    from ..arguments import _unrecognized

    parser = parser or finetune_parser()
    argv = [part for a in argv for part in (a.split("=", 1) if a.startswith("--config=") else [a])]
    config = {}
    if "--config" in argv:
        i = argv.index("--config")
        if i + 1 >= len(argv):
            raise ValueError("--config needs a path to a .yaml or .json file")
        config = typed_settings(_read_mapping(argv[i + 1], "--config"), "--config", parser)
        del argv[i : i + 2]
    for action in parser._actions:  # only what argv gives: no defaults, nothing required
        action.default, action.required = argparse.SUPPRESS, False
    namespace, remaining = parser.parse_known_args(argv)
    if remaining:
        raise UsageError(_unrecognized(parser, remaining))
    return {**config, **vars(namespace)}


def typed_settings(values: dict, option: str, parser=None) -> dict:
    """``{name: value}`` from a YAML/JSON mapping, each value converted as the fine-tune parser converts that flag's
    text (YAML reads ``1e-3`` as a string) and checked against its choices; ``None`` values are left out.

    Raises:
        ValueError: an unknown name (``unrecognized arguments: --name value``, with the closest known flag) or a
            value the flag does not accept (argparse's wording).
    """
    from ..arguments import _unrecognized

    parser = parser or finetune_parser()
    # by flag, not dest: --no_group_by_length shares group_by_length's dest (and stores the opposite)
    actions = {flag: a for a in parser._actions for flag in a.option_strings if a.dest != "help"}
    settings = {}
    for key, value in values.items():
        name = str(key).lstrip("-")
        if value is None:
            continue
        action = actions.get(f"--{name}")
        if action is None or action.dest != name:
            given = [f"--{name}", *map(str, value if isinstance(value, list) else [value])]
            raise UsageError(_unrecognized(parser, given))
        if isinstance(value, list) and action.nargs not in ("+", "*"):
            raise UsageError(f"argument --{name}: expected one value, got a list ({value})")
        settings[name] = [_convert(action, v) for v in value] if isinstance(value, list) else _convert(action, value)
    return settings


def _convert(action, value):
    """``value`` (a YAML scalar) as argparse stores it for ``action`` when its text is given on the command line
    (``true`` -> ``"true"``, ``3`` -> ``"3"``, then the flag's own conversion), so a setting means the same in a YAML
    arm and on the command line."""
    if action.type is not None:
        text = str(value).lower() if isinstance(value, bool) else str(value)
        try:
            value = action.type(text)
        except (TypeError, ValueError):
            kind = getattr(action.type, "__name__", repr(action.type))
            raise UsageError(f"argument {action.option_strings[0]}: invalid {kind} value: {text!r}") from None
    if action.choices is not None and value not in action.choices:
        choices = ", ".join(map(repr, action.choices))
        raise UsageError(f"argument {action.option_strings[0]}: invalid choice: {value!r} (choose from {choices})")
    return value


def run_arguments(config: dict, seed: int, args, common: dict, out: str):
    """The fine-tune recipe's ``(ModelArguments, DataArguments, FinetuneTrainingArguments)`` for one configuration
    and seed: :func:`run_settings`, then ``common`` (the flags given for every run), then the arm's own settings
    (``args.arm_settings[mode]``); a later one wins. The dataclasses run their own checks.

    Raises:
        ValueError: a check of the argument dataclasses failed (e.g. ``--lora_dropout 1.5``).
    """
    settings = {**run_settings(config, seed, args, out), **common, **args.arm_settings.get(config["mode"], {})}
    return tuple(finetune_parser().parse_dict(settings))


def _read_mapping(text: str, option: str) -> dict:
    """A YAML/JSON file path or an inline YAML mapping -> the mapping (file contents read; empty -> ``{}``).

    Raises:
        FileNotFoundError: a ``.yaml``/``.yml``/``.json`` name that is not a file.
        ValueError: not valid YAML, or not a mapping of names to plain values or lists (names ``option``).
    """
    import yaml

    source = text
    if os.path.isfile(text):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    elif text.endswith((".yaml", ".yml", ".json")):
        raise FileNotFoundError(f"{option} {source}: no such file")
    try:
        values = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"{option} {source!r}: not valid YAML ({' '.join(str(err).split())})") from None
    if values is None:
        return {}
    if not isinstance(values, dict):  # bad input, not a programming error: ValueError, reported by the CLI boundary
        example = "'{num_train_epochs: 3, learning_rate: 1e-3}'"
        message = f"{option} {source!r}: expected a YAML mapping of fine-tune flags to values, e.g. {example}"
        raise ValueError(message)  # noqa: TRY004
    for key, value in values.items():
        if isinstance(value, dict):
            message = f"{option} {source!r}: {str(key).lstrip('-')}: expected a plain value or a list, got a mapping"
            raise ValueError(message)  # noqa: TRY004
    return values


def arm_settings(text: str, option: str, parser=None) -> dict:
    """``--<mode>_args`` value -> fine-tune settings ``{name: value}``. ``text`` is a YAML/JSON file path, an inline
    YAML mapping (``"{num_train_epochs: 3, learning_rate: 1e-3}"``) or, deprecated, a string of flags
    (``"--num_train_epochs 3"``). Values are converted as the fine-tune flags convert their text
    (:func:`typed_settings`); ``null`` leaves a setting out.

    Raises:
        ValueError: the file or the YAML cannot be read, it is not a mapping of flag names to plain values (names
            ``option``), or it holds a name or value the fine-tune recipe does not accept.
    """
    text = (text or "").strip()
    if not text:
        return {}
    if text.startswith("-"):
        warn_deprecated_flag(f"{option} '--flag value ...'", f"{option} '{{flag: value, ...}}' (YAML)")
        return given_settings(shlex.split(text), parser)
    return typed_settings(_read_mapping(text, option), option, parser)


def validate_arms(args, common: dict) -> None:
    """Read every arm's ``--<mode>_args`` into ``args.arm_settings`` and build every configuration's argument
    dataclasses (their checks included) before anything runs; the first error names the arm.

    Raises:
        ValueError: ``compare: arm 'lora' (--lora_args or the flags common to every arm): <the message>``.
    """
    reused = dict(args.reuse_map)
    seed = parse_list(args.seeds, int)[0]
    configs = [c for c in configurations(parse_list(args.modes), parse_list(args.strategies)) if c["label"] not in reused]
    args.arm_settings = {}
    for mode in TRAINING_MODES:
        label = next((c["label"] for c in configs if c["mode"] == mode), mode)
        with _naming_the_arm(label, mode):
            args.arm_settings[mode] = arm_settings(getattr(args, f"{mode}_args", ""), f"--{mode}_args")
    for config in configs:
        out = os.path.join(args.output_dir, config["label"].replace(":", "-"), f"seed{seed}")
        with _naming_the_arm(config["label"], config["mode"]):
            run_arguments(config, seed, args, common, out)


@contextlib.contextmanager
def _naming_the_arm(label: str, mode: str):
    """Re-raise a ``ValueError`` with the arm's label and where its settings come from."""
    try:
        yield
    except ValueError as err:
        where = f"--{mode}_args or the flags common to every arm"
        raise ValueError(f"compare: arm {label!r} ({where}): {err}") from err


def run_one(config: dict, seed: int, args, common: dict) -> dict:
    """Run (or reuse) one configuration with one seed; returns its record (metric, wall seconds, folder)."""
    from ..arguments import output_dir_is_finished, setup_process_logging
    from ..finetuning import run_finetune

    reuse = dict(args.reuse_map).get(config["label"])
    if reuse:
        path = os.path.join(reuse, "all_results.json")
        with open(path, encoding="utf-8") as f:
            results = json.load(f)
        wall = results.get("wall_seconds", results.get("train_runtime"))
        return {"seed": None, "output_dir": reuse, "reused": True, "results": results, "wall_seconds": wall}
    name = config["label"].replace(":", "-")
    out = os.path.join(args.output_dir, name, f"seed{seed}")
    timing = os.path.join(out, "compare_wall_seconds.json")
    if output_dir_is_finished(out) and os.path.isfile(timing) and not args.rerun:
        with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
            results = json.load(f)
        with open(timing, encoding="utf-8") as f:
            wall = json.load(f)["wall_seconds"]
        return {"seed": seed, "output_dir": out, "reused": False, "results": results, "wall_seconds": wall}
    model_args, data_args, training_args = run_arguments(config, seed, args, common, out)
    setup_process_logging(training_args)
    started = time.time()
    results = run_finetune(model_args, data_args, training_args)
    wall = time.time() - started
    if training_args.should_log:  # what `hf-bert-tasks finetune` prints after each run
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in results.items() if k.startswith("eval_")})
    os.makedirs(out, exist_ok=True)
    with open(timing, "w", encoding="utf-8") as f:
        json.dump({"wall_seconds": wall}, f)
    return {"seed": seed, "output_dir": out, "reused": False, "results": results, "wall_seconds": wall}


def write_report(task, rows: list[dict], output_dir: str, title: str) -> dict[str, str]:
    """Write ``comparison.md``, ``comparison.json`` and ``comparison.png``; returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    key = task.primary_metric
    os.makedirs(output_dir, exist_ok=True)
    paths = {k: os.path.join(output_dir, f"comparison.{k}") for k in ("md", "json", "png")}
    with open(paths["json"], "w", encoding="utf-8") as f:
        json.dump({"task": task.name, "metric": key, "title": title, "rows": rows}, f, indent=2, default=str)
    display = task.metric_spec(key).display
    lines = [f"# {title}", "", (f"Task `{task.name}`, dev {display} (`{key}`) on a 0-100 scale, mean ± sample std "
                                "over seeds; wall time per run (seconds, mean; feature-based runs include building or "
                                "reading the feature cache)."), "",
             f"| System | Paper | Ours ({key}) | seeds | wall s |", "|---|---:|---:|---:|---:|"]
    section = None
    for row in rows:
        group = get_training_mode(row["mode"]).report_group
        if group != section:
            lines.append(f"| **{group}** | | | | |")
            section = group
        paper = "—" if row["paper"] is None else f"{row['paper']:.1f}"
        ours = f"{row['mean']:.1f} ± {row['std']:.1f}" if row["mean"] is not None else "n/a"
        note = " (reused)" if row["reused"] else ""
        wall = "—" if row["wall_seconds"] is None else f"{row['wall_seconds']:.0f}"
        lines.append(f"| {row['name']}{note} | {paper} | {ours} | {row['n']} | {wall} |")
    sources = sorted({r["paper_source"] for r in rows if r["paper_source"]})
    lines += ["", "Paper numbers: " + ("; ".join(sources) if sources else "none for this task") + ". The paper used "
              "BERT-BASE/LARGE on full data; ours use the model and sizes named above.", ""]
    with open(paths["md"], "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.5))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r["mean"] or 0.0 for r in rows], xerr=[r["std"] for r in rows],
            color=[get_training_mode(r["mode"]).colour for r in rows], alpha=0.8, label="ours")
    paper_pts = [(r["paper"], y) for r, y in zip(rows, ys) if r["paper"] is not None]
    if paper_pts:
        ax.scatter([p for p, _ in paper_pts], [y for _, y in paper_pts], marker="D", color="black", zorder=3,
                   label="paper")
    ax.set_yticks(ys)
    ax.set_yticklabels([r["name"] for r in rows])
    values = [r["mean"] for r in rows if r["mean"] is not None] + [p for p, _ in paper_pts]
    low = min(values) if values else 0.0
    ax.set_xlim(max(0.0, low - 10), 100)
    ax.set_xlabel(f"dev {display} (0-100)")
    ax.set_title("\n".join(textwrap.wrap(title, 70)), fontsize=9)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(paths["png"], dpi=110)
    plt.close(fig)
    return paths


def run_compare(args, common: dict) -> dict:
    """Run every configuration x seed and write the report; returns the JSON-able summary."""
    from .. import get_task

    task = get_task(args.task)
    key = f"eval_{task.primary_metric}"
    spec = task.metric_spec(task.primary_metric)
    rows = []
    for config in configurations(parse_list(args.modes), parse_list(args.strategies)):
        runs = []
        for seed in parse_list(args.seeds, int):
            record = run_one(config, seed, args, common)
            runs.append(record)
            if record["reused"]:
                break
        # on the paper's 0-100 scale, from the task's declaration (SQuAD is already 0-100, GLUE/CoNLL are 0-1)
        values = [spec.to_percent(r["results"][key]) for r in runs if key in r["results"]]
        mean, std = summarize(values) if values else (None, 0.0)
        walls = [r["wall_seconds"] for r in runs if r["wall_seconds"] is not None]
        paper, source = paper_number(task, config)
        name = get_training_mode(config["mode"]).row_name(config)
        rows.append({**config, "name": name, "mean": mean, "std": std, "n": len(values), "values": values,
                     "wall_seconds": statistics.fmean(walls) if walls else None, "paper": paper,
                     "paper_source": source, "reused": any(r["reused"] for r in runs),
                     "runs": [{k: v for k, v in r.items() if k != "results"} | {"metric": r["results"].get(key)}
                              for r in runs]})
    title = args.title or f"{task.name}: fine-tuning vs frozen features ({os.path.basename(args.model_name_or_path.rstrip('/'))})"
    paths = write_report(task, rows, args.output_dir, title)
    return {"rows": rows, "paths": paths}


def build_parser() -> argparse.ArgumentParser:
    """The ``compare`` flags (argparse; other flags go to every fine-tune run; errors raise ``UsageError``)."""
    parser = ArgumentParser(prog="hf-bert-tasks compare", description=__doc__.split("\n")[0],
                            epilog="Any other flag of `hf-bert-tasks finetune` is passed to every run.")
    parser.add_argument("--task", required=True, help="registered task (`hf-bert-tasks tasks`)")
    parser.add_argument("--model_name_or_path", required=True, help="checkpoint every arm starts from")
    parser.add_argument("--output_dir", required=True, help="one sub-folder per arm and seed, plus the report")
    parser.add_argument("--data_dir", default=None, help="folder with the task's original files; else the Hub")
    # every registered training mode (hf_bert_tasks.modes), in registration order
    modes = ",".join(TRAINING_MODES)
    parser.add_argument("--modes", default=modes, help="comma-separated: " + modes)
    parser.add_argument("--strategies", default="concat_last_four",
                        help="comma-separated feature_based layer strategies (paper Table 7)")
    parser.add_argument("--seeds", default="1", help="comma-separated seeds; each arm runs once per seed")
    parser.add_argument("--title", default=None, help="title of the report and chart")
    parser.add_argument("--rerun", action="store_true",
                        help="run every configuration again even if output_dir holds its finished run")
    parser.add_argument("--reuse", action="append", default=[],
                        help="label=DIR: take DIR/all_results.json for that configuration instead of running it")
    for mode in TRAINING_MODES:
        parser.add_argument(f"--{mode}_args", default="", metavar="YAML",
                            help=f"settings of the {mode} runs only: a YAML/JSON file or an inline YAML mapping "
                                 "such as '{num_train_epochs: 3, learning_rate: 1e-3}'")
    return parser


def main(argv: list[str] | None = None) -> dict:
    import logging

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    args, extra = build_parser().parse_known_args(argv)
    common = given_settings(extra)  # the fine-tune flags given for every run
    args.reuse_map = []
    for item in args.reuse:
        if "=" not in item:
            raise ValueError(f"--reuse {item!r}: expected LABEL=DIR, e.g. finetune=runs/real/mrpc")
        label, path = item.split("=", 1)
        if not os.path.isfile(os.path.join(path, "all_results.json")):
            raise FileNotFoundError(f"--reuse {item}: {path}/all_results.json not found")
        args.reuse_map.append((label, path))
    validate_arms(args, common)  # every arm's settings and arguments, before the first run starts
    summary = run_compare(args, common)
    with open(summary["paths"]["md"], encoding="utf-8") as f:
        print(f.read())
    return summary


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("compare"))
