"""Run every benchmark in ``benchmarks/`` (one command; ``make bench`` calls it).

    python benchmarks/run.py                 # all bench_*.py, each with its own defaults
    python benchmarks/run.py e2e_mrpc collator   # only these (names without the bench_ prefix)
    python benchmarks/run.py --list

Each ``benchmarks/bench_<name>.py`` has ``main(argv=None) -> dict[str, float]`` that prints its comparison against a
baseline measured in the same run. This runner executes each one in a fresh process (so one benchmark's memory and
threads do not affect the next), streams its output, and at the end prints one summary: wall seconds per benchmark,
its exit status and the numbers its ``main`` returned; the summary also goes to ``runs/benchmarks/results.json``
with the machine description. ``benchmarks/gpu.sh`` is separate (it needs a GPU).

The whole suite is sized to finish in under 10 minutes on 2 CPU cores (results in docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MARK = "BENCHMARK_RETURNED "

CHILD = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("bench", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
result = module.main([])
print({mark!r} + json.dumps(result if isinstance(result, dict) else {{}}, default=float))
"""


def machine() -> dict:
    """CPU model, core count, memory and library versions of this machine."""
    info = {"platform": platform.platform(), "python": platform.python_version(), "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        info["cpu_model"] = names[0] if names else "unknown"
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        info["load_average_at_start"] = os.getloadavg()
    except OSError:
        pass
    import torch
    import transformers

    info.update(torch=torch.__version__, transformers=transformers.__version__, threads=torch.get_num_threads(),
                cuda=torch.cuda.is_available())
    return info


def discover() -> dict[str, str]:
    """``{name: path}`` of every ``benchmarks/bench_<name>.py``."""
    return {os.path.basename(p)[len("bench_"):-3]: p for p in sorted(glob.glob(os.path.join(HERE, "bench_*.py")))}


def run_one(path: str) -> tuple[int, float, dict]:
    """Run one benchmark's ``main([])`` in a child process; returns (exit status, wall seconds, returned dict)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD.format(mark=MARK), path], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    returned: dict = {}
    for line in proc.stdout:
        if line.startswith(MARK):
            returned = json.loads(line[len(MARK):])
        elif "Warning" not in line and not line.startswith(("  warnings.warn", "[transformers]")):
            print("    " + line.rstrip(), flush=True)
    status = proc.wait()
    return status, time.perf_counter() - start, returned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--output", default=os.path.join(REPO, "runs", "benchmarks", "results.json"))
    args = parser.parse_args(argv)
    found = discover()
    if args.list:
        print("\n".join(found))
        return 0
    unknown = [n for n in args.names if n not in found]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; found {list(found)}")
    chosen = {n: found[n] for n in (args.names or found)}
    info = machine()
    print(f"machine: {info}")
    results = {}
    suite_start = time.perf_counter()
    for name, path in chosen.items():
        print(f"== {name} ({os.path.relpath(path, REPO)})", flush=True)
        status, seconds, returned = run_one(path)
        results[name] = {"status": status, "wall_s": round(seconds, 1), "returned": returned}
    total = time.perf_counter() - suite_start
    print(f"\n== summary ({total:.0f} s in all)")
    for name, row in results.items():
        verdict = "ok" if row["status"] == 0 else f"FAILED (exit {row['status']})"
        numbers = ", ".join(f"{k}={v:.4g}" if isinstance(v, (int, float)) else f"{k}={v}"
                            for k, v in row["returned"].items())
        print(f"{name:22s} {verdict:18s} {row['wall_s']:7.1f} s  {numbers}")
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as f:
        json.dump({"machine": info, "total_wall_s": round(total, 1), "benchmarks": results}, f, indent=2)
    print(f"wrote {args.output}")
    return 0 if all(r["status"] == 0 for r in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
