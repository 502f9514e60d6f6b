"""The results of ``benchmarks/gpu.sh``: one JSON file of rows that every step appends to, and the markdown table
made from it for docs/benchmarks.md.

    python benchmarks/gpu_report.py render runs/gpu/gpu_results.json [--expect STEP,...] [--out runs/gpu/report.md]
    python benchmarks/gpu_report.py transfer --transfer_dir runs/gpu/transfer --results runs/gpu/gpu_results.json
    python benchmarks/gpu_report.py wall --results runs/gpu/gpu_results.json --step transfer --seconds 412 --budget_s 390

The results file is a JSON list of rows. Each row is a dict with these keys:

* ``step``: the gpu.sh step id (:data:`STEPS`, or ``wall_time`` for the per-step wall clock);
* ``metric``: what was measured, in words, unique within its step;
* ``value``: a finite number (a step that produces NaN, inf or no number fails, see :func:`make_row`);
* ``units``: ``sequences/s``, ``samples/s``, ``%``, ``x`` (a ratio), ``s``, ``nats`` or ``points`` (a signed
  difference of two percentages);
* ``anchor``: what the figure is compared with (a published number, the reference side, a budget);
* ``device``: the device name (``nvidia-smi``'s, or ``cpu (dry run ...)``);
* ``commit``: the git commit the numbers were measured at (``+dirty``: with uncommitted changes);
* ``dry_run``: ``True`` for ``gpu.sh --dry-run`` rows (toy sizes on CPU: they check the plumbing, they are not
  measurements);
* ``config``: the settings behind the number (batch, sequence length, dtype, command line, ...).

``device``, ``commit`` and ``dry_run`` come from the ``GPU_SH_DEVICE``, ``GPU_SH_COMMIT`` and ``GPU_SH_DRY_RUN``
variables that gpu.sh exports (:func:`environment`). This module imports no torch: each call takes well under a
second.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys

#: gpu.sh's steps, in the order the report shows them.
STEPS = ("pretrain_throughput", "pretrain_compiled", "glue_vs_run_glue", "padding_free", "transfer", "transfer_books")
WALL_STEP = "wall_time"
UNITS = ("sequences/s", "samples/s", "tokens/s", "%", "x", "s", "nats", "points")
#: the transfer experiment's tasks: key in tools/pretraining_transfer.py's transfer_results.json -> (name, metric,
#: the anchor its figures are compared with; the CPU numbers are docs/results.md's, issue 12 item 4)
TRANSFER_TASKS = {
    "sst2": (
        "SST-2",
        "dev accuracy",
        (
            "CPU run (docs/results.md: BERT-tiny, 3,600 steps): pretrained 78.0 vs random init 80.9; fully "
            "pretrained BERT-Mini (Turc et al. 2019): SST-2 test 85.9"
        ),
    ),
    "conll2003": (
        "CoNLL-2003",
        "dev entity F1",
        "CPU run (docs/results.md: BERT-tiny, 3,600 steps): pretrained 43.9 vs random init 47.3",
    ),
}
GAIN_ANCHOR = "the paper's claim: pretrained > random init; issue 12's target: >= +3 points"


def _git_commit() -> str:
    """Short hash of HEAD, ``+dirty`` when tracked files differ from it; ``unknown`` without git."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = (
            subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=repo, capture_output=True, check=False).returncode
            != 0
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def environment() -> dict:
    """``device``, ``commit`` and ``dry_run`` for new rows: gpu.sh's ``GPU_SH_*`` variables, else ``unknown``, git's
    HEAD and ``False``."""
    return {
        "device": os.environ.get("GPU_SH_DEVICE") or "unknown",
        "commit": os.environ.get("GPU_SH_COMMIT") or _git_commit(),
        "dry_run": os.environ.get("GPU_SH_DRY_RUN", "0") == "1",
    }


def make_row(
    step: str, metric: str, value, units: str, anchor: str, config: dict | None = None, env: dict | None = None
) -> dict:
    """One result row (schema in the module docstring).

    Raises:
        ValueError: ``value`` is not a finite number (None, NaN, inf, a string), or ``units`` is not in
            :data:`UNITS`; the message names the step and the metric.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"step {step!r}, metric {metric!r}: value {value!r} is not a finite number")
    if units not in UNITS:
        raise ValueError(f"step {step!r}, metric {metric!r}: units {units!r} not in {UNITS}")
    env = env or environment()
    return {
        "step": step,
        "metric": metric,
        "value": float(value),
        "units": units,
        "anchor": anchor,
        "device": env["device"],
        "commit": env["commit"],
        "dry_run": env["dry_run"],
        "config": config or {},
    }


def load_rows(path: str) -> list[dict]:
    """The rows in ``path`` (``[]`` when it does not exist).

    Raises:
        ValueError: the file does not hold a JSON list of row objects.
    """
    if not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        rows = json.load(f)
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "step" in r and "metric" in r for r in rows):
        raise ValueError(f"{path}: expected a JSON list of result rows (dicts with step, metric, value, ...)")
    return rows


def append_rows(path: str, rows: list[dict], replace: str = "step") -> list[dict]:
    """Add ``rows`` to the results file ``path`` (created if needed) and return all its rows.

    A step run again replaces its earlier rows: ``replace="step"`` drops every earlier row of the new rows' steps
    (a step's own numbers), ``replace="metric"`` only those with the same step and metric (the wall-clock rows).
    The file is written to a temporary name and renamed, so an interrupted write leaves the previous file whole.
    """
    if replace not in ("step", "metric"):
        raise ValueError(f"replace must be 'step' or 'metric', got {replace!r}")
    if replace == "step":
        steps = {r["step"] for r in rows}
        kept = [r for r in load_rows(path) if r["step"] not in steps]
    else:
        keys = {(r["step"], r["metric"]) for r in rows}
        kept = [r for r in load_rows(path) if (r["step"], r["metric"]) not in keys]
    merged = kept + rows
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(merged, f, indent=2)
        f.write("\n")
    os.replace(tmp, path)
    return merged


def fmt(value: float) -> str:
    """A value for the table: thousands separated above 1,000, 1-3 decimals below."""
    size = abs(value)
    if size >= 1000:
        return f"{value:,.0f}"
    if size >= 100:
        return f"{value:.1f}"
    if size >= 1:
        return f"{value:.2f}"
    return f"{value:.3g}"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render(rows: list[dict]) -> str:
    """The markdown for docs/benchmarks.md: where and at which commit the rows were measured, a table of every step's
    rows (in :data:`STEPS` order, then any other step) and the wall clock of each step against its budget."""
    if not rows:
        raise ValueError("no result rows to render")
    devices = sorted({r["device"] for r in rows})
    commits = sorted({r["commit"] for r in rows})
    lines = []
    if any(r.get("dry_run") for r in rows):
        lines.append(
            "**Dry run** (`gpu.sh --dry-run`: toy sizes on CPU): these rows check the plumbing, they are "
            "not measurements."
        )
        lines.append("")
    lines.append(
        f"Measured by `bash benchmarks/gpu.sh` on {', '.join(devices)} at commit "
        f"{', '.join(f'`{c}`' for c in commits)}."
    )
    peaks = sorted(
        {
            (r["config"]["peak_tflops"], r["config"].get("peak_source", ""))
            for r in rows
            if "peak_tflops" in r.get("config", {})
        }
    )
    for peak, source in peaks:
        lines.append(f"MFU peak: {fmt(peak)} TFLOP/s ({source}).")
    lines += ["", "| step | metric | value | units | compared with |", "|---|---|---|---|---|"]
    order = {step: i for i, step in enumerate(STEPS)}
    data = [r for r in rows if r["step"] != WALL_STEP]
    data.sort(key=lambda r: order.get(r["step"], len(order)))  # stable: a step's rows keep their order
    for r in data:
        lines.append(
            f"| {_cell(r['step'])} | {_cell(r['metric'])} | {fmt(r['value'])} | {_cell(r['units'])} | "
            f"{_cell(r['anchor'])} |"
        )
    walls = [r for r in rows if r["step"] == WALL_STEP]
    if walls:
        lines += ["", "| step | wall clock (s) | budget (s) |", "|---|---|---|"]
        for r in walls:
            lines.append(f"| {_cell(r['metric'])} | {fmt(r['value'])} | {fmt(r['config'].get('budget_s', 0))} |")
    return "\n".join(lines) + "\n"


def missing_steps(rows: list[dict], expect: list[str]) -> list[str]:
    """The steps of ``expect`` with no row in ``rows``."""
    present = {r["step"] for r in rows}
    return [s for s in expect if s not in present]


def _read_json(path: str, what: str):
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} is absent: the {what} did not finish (see its log)")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def transfer_rows(
    transfer_dir: str, finetune_dir: str = "finetune", pretrain_wall_s: float | None = None, env: dict | None = None
) -> list[dict]:
    """The ``transfer`` step's rows from the files tools/pretraining_transfer.py wrote under ``transfer_dir``.

    Read: ``pretrain/pretraining_summary.json`` (steps, the final held-out MLM loss and accuracy),
    ``pretrain/trainer_state.json`` (Trainer's ``train_runtime`` and ``train_samples_per_second``: sequences of
    ``max_seq_length`` WordPieces per second) and ``<finetune_dir>/transfer_results.json`` (the ``report`` stage's
    per-seed dev metrics x 100, both arms). Rows: the pretraining figures, then per task the mean over seeds of each
    arm and the gain (pretrained - random init, in points).

    Raises:
        FileNotFoundError: a stage's output is missing (names the file).
        ValueError: a task of :data:`TRANSFER_TASKS` lacks one arm in transfer_results.json.
    """
    summary = _read_json(os.path.join(transfer_dir, "pretrain", "pretraining_summary.json"), "pretrain stage")
    state = _read_json(os.path.join(transfer_dir, "pretrain", "trainer_state.json"), "pretrain stage")
    results = _read_json(os.path.join(transfer_dir, finetune_dir, "transfer_results.json"), "report stage")
    train = [h for h in state["log_history"] if "train_runtime" in h]
    if not train:
        raise ValueError(f"{transfer_dir}/pretrain/trainer_state.json has no train_runtime entry")
    final = summary["phases"][-1]["final_eval"] if summary.get("phases") else {}
    phase = summary["phases"][-1] if summary.get("phases") else {}
    config = {
        "steps": summary.get("steps"),
        "batch_size": phase.get("batch_size"),
        "max_seq_length": phase.get("max_seq_length"),
        "model": summary.get("model"),
        "train_instances": phase.get("train_instances"),
    }
    budget = "issue 26: pretraining <= 8 min on one H100/H200 (gpu.sh budgets this step's pretraining at 3 min)"
    rows = [
        make_row(
            "transfer", "pretraining: Trainer train_runtime", train[-1]["train_runtime"], "s", budget, config, env
        ),
        make_row(
            "transfer",
            "pretraining: sequences/s (Trainer, data loading included)",
            train[-1]["train_samples_per_second"],
            "sequences/s",
            "none (BERT-mini through the recipe's Trainer: dynamic masking and data loading included)",
            config,
            env,
        ),
    ]
    if pretrain_wall_s is not None:
        rows.append(
            make_row(
                "transfer",
                "pretraining: whole stage wall clock (corpus tokenization included)",
                pretrain_wall_s,
                "s",
                budget,
                config,
                env,
            )
        )
    if "eval_mlm_accuracy" in final:
        rows.append(
            make_row(
                "transfer",
                "pretraining: held-out MLM accuracy",
                100 * final["eval_mlm_accuracy"],
                "%",
                "CPU run (docs/results.md, BERT-tiny, 29.5M tokens): 14.8 %",
                config,
                env,
            )
        )
        rows.append(
            make_row(
                "transfer",
                "pretraining: held-out MLM loss",
                final["eval_mlm_loss"],
                "nats",
                "CPU run: 6.1 nats; a context-free unigram predictor: 7.02 nats",
                config,
                env,
            )
        )
    for task, (name, metric, anchor) in TRANSFER_TASKS.items():
        if task not in results:
            raise ValueError(
                f"{transfer_dir}/{finetune_dir}/transfer_results.json has no {task!r} entry (both arms "
                "need a finished run)"
            )
        entry = results[task]
        means = {}
        for arm, label in (("pretrained", "pretrained"), ("random-init", "random init")):
            values = entry[arm]
            means[arm] = sum(values) / len(values)
            rows.append(
                make_row(
                    "transfer",
                    f"{name} {metric}, {label}",
                    means[arm],
                    "%",
                    anchor,
                    {"seeds": len(values), "per_seed": values, "metric_key": entry["metric"]},
                    env,
                )
            )
        rows.append(
            make_row(
                "transfer",
                f"{name} gain (pretrained - random init)",
                means["pretrained"] - means["random-init"],
                "points",
                GAIN_ANCHOR,
                {},
                env,
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("render", help="the markdown table of a results file")
    p.add_argument("results")
    p.add_argument("--expect", default="", help="comma-separated steps that must have rows (else exit 1)")
    p.add_argument("--out", default=None, help="also write the markdown here")
    p = sub.add_parser("transfer", help="append the transfer experiment's rows")
    p.add_argument("--transfer_dir", required=True)
    p.add_argument("--finetune_dir", default="finetune")
    p.add_argument("--results", required=True)
    p.add_argument("--pretrain_wall_s", type=float, default=None)
    p = sub.add_parser("wall", help="append one step's wall clock and budget")
    p.add_argument("--results", required=True)
    p.add_argument("--step", required=True)
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--budget_s", type=float, required=True)
    args = parser.parse_args(argv)
    if args.command == "render":
        rows = load_rows(args.results)
        missing = missing_steps(rows, [s for s in args.expect.split(",") if s])
        if missing:
            print(f"gpu_report: no rows for step(s) {missing} in {args.results}", file=sys.stderr)
            return 1
        text = render(rows)
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                f.write(text)
        print(text, end="")
    elif args.command == "transfer":
        rows = transfer_rows(args.transfer_dir, args.finetune_dir, args.pretrain_wall_s)
        append_rows(args.results, rows)
        for r in rows:
            print(f"{r['metric']}: {fmt(r['value'])} {r['units']}")
    else:
        row = make_row(
            WALL_STEP, args.step, args.seconds, "s", f"budget {args.budget_s:g} s", {"budget_s": args.budget_s}
        )
        append_rows(args.results, [row], replace="metric")
    return 0


if __name__ == "__main__":
    sys.exit(main())
