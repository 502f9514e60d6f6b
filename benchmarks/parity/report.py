"""The parity table (issue 59 item 2): ours against the reference example, by family and task, from result rows.

    python benchmarks/parity/report.py benchmarks/parity/results/glue_arms.jsonl \
        benchmarks/parity/results/squad_arms_budget_b.jsonl [--check]

Rows (JSON Lines) come from ``glue_arms.py`` (``side``: ``reference`` / ``ours``, ``metrics`` in percent, ``budget``)
or ``squad_arms.py`` (``arm``: ``run_qa`` is the reference, ``ours_random`` / ``ours_default`` ours; ``eval_f1``,
``eval_exact_match``). For each (family, task, budget) the table gives, over the seeds both sides ran: the mean ±
sample std of the task's headline metric per side, the paired difference ours − reference (mean over seeds, same
seed = same head initialisation and data order seed) with its two-sided 95 % Student-t interval
``mean ± t(0.975, n−1) · sd / sqrt(n)``, the check, and each side's mean wall time and peak RSS.

A side named ``ours_<variant>`` (e.g. ``glue_arms.py``'s ``ours_random``: our defaults but random batches) gets
its own rows against the same reference rows, marked as a diagnostic arm; only ``ours`` (the defaults) is checked.

The check (``--check``): a row fails when ours is significantly behind, i.e. the interval's upper bound is below 0;
the script then exits with status 1 after printing the table. Fewer than 2 paired seeds give no interval (shown "—",
not a failure).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from itertools import product

#: headline metric per task (the GLUE paper's Table 1 metric; SQuAD's F1), then the ones shown beside it
HEADLINE = {
    "mrpc": ("f1", "accuracy"),
    "stsb": ("pearson", "spearmanr"),
    "cola": ("matthews_correlation",),
    "rte": ("accuracy",),
    "squad_v1": ("f1", "exact_match"),
    "squad_v2": ("f1", "exact_match"),
    "conll2003": ("f1",),
    "swag": ("accuracy",),
}
#: two-sided 95 % critical values t(0.975, df) for df = 1..30 (Student's t table, e.g. NIST/SEMATECH 1.3.6.7.2)
T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
SQUAD_ARMS = {"run_qa": "reference", "ours_random": "ours", "ours_default": "ours"}


def t_critical(df: int) -> float:
    """t(0.975, df), the two-sided 95 % Student-t critical value; a table to df 30, the Cornish-Fisher expansion of
    the normal quantile beyond (error < 1e-3). Raises ``ValueError`` for df < 1."""
    if df < 1:
        raise ValueError(f"t_critical: degrees of freedom must be >= 1, got {df}")
    if df <= len(T975):
        return T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def paired_difference(ours: dict[int, float], reference: dict[int, float]) -> dict:
    """Paired difference ours − reference over the seeds in both: ``n``, ``mean``, ``sd`` (sample std; NaN for
    n < 2) and the 95 % Student-t interval ``low``/``high`` (None for n < 2)."""
    seeds = sorted(set(ours) & set(reference))
    diffs = [ours[s] - reference[s] for s in seeds]
    n = len(diffs)
    out = {"n": n, "mean": statistics.mean(diffs) if diffs else math.nan, "sd": math.nan, "low": None, "high": None}
    if n >= 2:
        out["sd"] = statistics.stdev(diffs)
        half = t_critical(n - 1) * out["sd"] / math.sqrt(n)
        out["low"], out["high"] = out["mean"] - half, out["mean"] + half
    return out


def normalise(row: dict, source: str, line: int) -> dict | None:
    """One result row (line ``line`` of file ``source``) as {family, task, side, seed, budget, metrics, wall_s,
    peak_rss_mb}; a SQuAD row's budget is its file's name. None for an arm that is neither side (e.g. SQuAD's
    ``ours_grouped``). Raises ``ValueError`` naming ``source:line`` for a row of neither format."""
    if "side" in row:
        return row
    if "arm" in row:
        side = SQUAD_ARMS.get(row["arm"])
        if side is None:
            return None
        metrics = {k[len("eval_") :]: v for k, v in row.items() if k.startswith("eval_")}  # v2.0: HasAns_f1, ...
        return {"family": "squad", "task": row.get("task", "squad_v1"), "side": side, "seed": row["seed"], "budget": os.path.basename(source),
                "metrics": metrics, "wall_s": row.get("wall_s"), "peak_rss_mb": row.get("peak_rss_mb")}  # fmt: skip
    raise ValueError(f"{source}:{line}: a row with neither 'side' nor 'arm': {sorted(row)}")


def mean_sd(values: list[float]) -> str:
    if not values:
        return "—"
    sd = f"{statistics.stdev(values):.2f}" if len(values) > 1 else "—"
    return f"{statistics.mean(values):.2f} ± {sd}"


def mean_of(rows: list[dict], key: str) -> str:
    values = [r[key] for r in rows if r.get(key) is not None]
    return f"{statistics.mean(values):.0f}" if values else "—"


def budget_label(budget) -> str:
    """A budget for the table: a glue_arms.py settings dict as ``1 ep, lr 0.0001, batch 32, ...``; else as is."""
    if not isinstance(budget, dict):
        return str(budget)
    names = {"epochs": "ep", "lr": "lr", "batch": "batch", "max_seq_length": "seq", "warmup": "warmup",
             "weight_decay": "wd", "max_train_samples": "first"}  # fmt: skip
    return ", ".join(f"{names.get(k, k)} {v:g}" for k, v in budget.items() if v)


def table(rows: list[dict]) -> tuple[str, list[str]]:
    """The markdown table and the names of the (family, task, budget) groups that fail the check."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["family"], r["task"], budget_label(r["budget"])), []).append(r)
    lines = [
        "| family | task (metric) | n | ours mean ± std | reference mean ± std | ours − reference [95 % CI] | check "
        + "| wall s ours / ref | peak RSS MB ours / ref | budget |",
        "|---|---|---:|---|---|---|---|---|---|---|",
    ]
    failed = []
    for (family, task, budget), group in groups.items():
        ours_sides = sorted({r["side"] for r in group if r["side"].startswith("ours")}, key=lambda s: (s != "ours", s))
        for ours_side, metric in product(ours_sides, HEADLINE.get(task, (min(group[0]["metrics"]),))):
            side = {
                s: {r["seed"]: r for r in group if r["side"] == t}
                for s, t in (("ours", ours_side), ("reference",) * 2)
            }
            value = {s: {k: r["metrics"][metric] for k, r in side[s].items()} for s in side}
            d = paired_difference(value["ours"], value["reference"])
            paired = sorted(set(value["ours"]) & set(value["reference"]))
            ci = "—" if d["low"] is None else f"[{d['low']:+.2f}, {d['high']:+.2f}]"
            verdict = "—" if d["high"] is None else ("**behind**" if d["high"] < 0 else "pass")
            if ours_side != "ours":
                verdict = f"({verdict}: a diagnostic arm, not checked)"
            elif verdict == "**behind**":
                failed.append(f"{family}/{task} {metric} ({budget})")
            rs = {s: [side[s][k] for k in paired] for s in side}
            label = "" if ours_side == "ours" else f", {ours_side}"
            lines.append(
                f"| {family} | {task} ({metric}){label} | {d['n']} | {mean_sd([value['ours'][k] for k in paired])} "
                f"| {mean_sd([value['reference'][k] for k in paired])} | {d['mean']:+.2f} {ci} | {verdict} "
                f"| {mean_of(rs['ours'], 'wall_s')} / {mean_of(rs['reference'], 'wall_s')} "
                f"| {mean_of(rs['ours'], 'peak_rss_mb')} / {mean_of(rs['reference'], 'peak_rss_mb')} | {budget} |"
            )
    return "\n".join(lines), failed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", help="JSON Lines files of glue_arms.py / squad_arms.py rows")
    parser.add_argument("--check", action="store_true", help="exit 1 when ours is significantly behind anywhere")
    args = parser.parse_args(argv)
    rows = []
    for path in args.results:
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if line.strip():
                    row = normalise(json.loads(line), path, i)
                    if row is not None:
                        rows.append(row)
    text, failed = table(rows)
    print(text)
    if args.check and failed:
        print("ours significantly behind the reference (95 % CI upper bound < 0): " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
