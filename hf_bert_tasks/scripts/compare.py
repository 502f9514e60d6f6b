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
import json
import os
import shlex
import statistics
import textwrap
import time

from ..cli import ArgumentParser, warn_deprecated_flag
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


def run_flags(config: dict, seed: int, args, extra: list[str], out: str) -> list[str]:
    """The fine-tune recipe's flags for one configuration and seed: the common ones, ``extra`` (every run), then the
    arm's own (``args.arm_flags[mode]``), so an arm's value wins over a common one. Progress bars stay on."""
    flags = ["--task", args.task, "--model_name_or_path", args.model_name_or_path, "--output_dir", out,
             "--seed", str(seed), "--mode", config["mode"], "--do_train", "--do_eval", "--save_strategy", "no",
             "--overwrite_output_dir", "--report_to", "none"]
    if args.data_dir:
        flags += ["--data_dir", args.data_dir]
    if config["strategy"]:
        flags += ["--feature_strategy", config["strategy"], "--feature_cache_layers", "all",
                  "--feature_cache_dir", os.path.join(args.output_dir, "feature_cache")]
    return flags + extra + args.arm_flags.get(config["mode"], [])


def arm_settings_to_flags(text: str, option: str) -> list[str]:
    """``--<mode>_args`` value -> fine-tune flags. ``text`` is a YAML/JSON file path, an inline YAML mapping
    (``"{num_train_epochs: 3, learning_rate: 1e-3}"``) or, deprecated, a string of flags (``"--num_train_epochs 3"``).

    Mapping values: ``true``/``false`` -> ``--flag true|false``, a list -> ``--flag a b``, ``null`` -> left out.

    Raises:
        ValueError: the file or the YAML cannot be read, or it is not a mapping of flag names to plain values
            (names ``option``).
    """
    import yaml

    text = (text or "").strip()
    if not text:
        return []
    if text.startswith("-"):
        warn_deprecated_flag(f"{option} '--flag value ...'", f"{option} '{{flag: value, ...}}' (YAML)")
        return shlex.split(text)
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
    if not isinstance(values, dict):  # bad input, not a programming error: ValueError, reported by the CLI boundary
        example = "'{num_train_epochs: 3, learning_rate: 1e-3}'"
        message = f"{option} {source!r}: expected a YAML mapping of fine-tune flags to values, e.g. {example}"
        raise ValueError(message)  # noqa: TRY004
    flags = []
    for key, value in values.items():
        name = str(key).lstrip("-")
        if isinstance(value, dict):
            message = f"{option} {source!r}: {name}: expected a plain value or a list, got a mapping"
            raise ValueError(message)  # noqa: TRY004
        if value is None:
            continue
        if isinstance(value, bool):
            flags += [f"--{name}", str(value).lower()]
        elif isinstance(value, list):
            flags += [f"--{name}", *map(str, value)]
        else:
            flags += [f"--{name}", str(value)]
    return flags


def validate_arms(args, extra: list[str]) -> None:
    """Parse every configuration's flags with the fine-tune recipe's parser (dataclass checks included) before
    anything runs; the first error names the arm and the flag.

    Raises:
        ValueError: ``compare: arm 'lora' (--lora_args / the common flags): <the parser's message>``.
    """
    from ..arguments import DataArguments, FinetuneTrainingArguments, ModelArguments, parse_args

    reused = dict(args.reuse_map)
    seed = parse_list(args.seeds, int)[0]
    for config in configurations(parse_list(args.modes), parse_list(args.strategies)):
        if config["label"] in reused:
            continue
        out = os.path.join(args.output_dir, config["label"].replace(":", "-"), f"seed{seed}")
        try:
            parse_args((ModelArguments, DataArguments, FinetuneTrainingArguments),
                       run_flags(config, seed, args, extra, out), prog="hf-bert-tasks finetune")
        except ValueError as err:
            where = f"--{config['mode']}_args or the flags common to every arm"
            raise ValueError(f"compare: arm {config['label']!r} ({where}): {err}") from err


def run_one(config: dict, seed: int, args, extra: list[str]) -> dict:
    """Run (or reuse) one configuration with one seed; returns its record (metric, wall seconds, folder)."""
    from ..arguments import output_dir_is_finished
    from . import finetune

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
    flags = run_flags(config, seed, args, extra, out)
    started = time.time()
    results = finetune.main(flags)
    wall = time.time() - started
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


def run_compare(args, extra: list[str]) -> dict:
    """Run every configuration x seed and write the report; returns the JSON-able summary."""
    from .. import get_task

    task = get_task(args.task)
    key = f"eval_{task.primary_metric}"
    spec = task.metric_spec(task.primary_metric)
    rows = []
    for config in configurations(parse_list(args.modes), parse_list(args.strategies)):
        runs = []
        for seed in parse_list(args.seeds, int):
            record = run_one(config, seed, args, extra)
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
    args.arm_flags = {mode: arm_settings_to_flags(getattr(args, f"{mode}_args"), f"--{mode}_args")
                      for mode in TRAINING_MODES}
    args.reuse_map = []
    for item in args.reuse:
        if "=" not in item:
            raise ValueError(f"--reuse {item!r}: expected LABEL=DIR, e.g. finetune=runs/real/mrpc")
        label, path = item.split("=", 1)
        if not os.path.isfile(os.path.join(path, "all_results.json")):
            raise FileNotFoundError(f"--reuse {item}: {path}/all_results.json not found")
        args.reuse_map.append((label, path))
    validate_arms(args, extra)  # every arm's flags, before the first run starts
    summary = run_compare(args, extra)
    with open(summary["paths"]["md"], encoding="utf-8") as f:
        print(f.read())
    return summary


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("compare"))
