"""Run the benchmarks (all, or the named ones), print every ratio with its spread, write ``benchmarks/results.json``.

    python benchmarks/run.py                          # every bench_*.py at its defaults (= make bench)
    python benchmarks/run.py squad_postprocess collator
    python benchmarks/run.py --smoke                  # every benchmark at a tiny size (plumbing check, seconds each)
    python benchmarks/run.py glue_e2e --args glue_e2e="--tasks mrpc,stsb,cola --seeds 42,43,44 --max_steps 0"
    python benchmarks/run.py glue_e2e --label full --args glue_e2e="..."   # stored as glue_e2e[full]
    python benchmarks/run.py --list
    python benchmarks/report.py                       # regenerate the tables in docs/benchmarks.md

Each ``benchmarks/bench_<name>.py`` has ``main(argv) -> list[dict]``: records built by ``benchmarks/harness.py``
(interleaved rounds, median/min/max per side, ratios of medians with the paired per-round spread). This runner
executes each benchmark in a fresh process, streams its output, prints one summary line per ratio, and merges the
records into ``benchmarks/results.json`` under the benchmark's name with its run's context: commit, dirty flag,
date, the arguments, load average before/after, wall time; the file's ``machine`` block holds the CPU model, cores,
threads, memory and library versions of the latest run. Benchmarks not run keep their earlier entries (each entry
says when and at which commit it was measured). ``benchmarks/gpu.sh`` is separate (it needs a GPU).

Needs ``../shared`` (data and baselines; ``HF_BERT_TASKS_SHARED`` overrides the path) and the ``bench`` extra.
"""

from __future__ import annotations

import argparse
import datetime
import glob
import importlib.metadata
import json
import os
import platform
import shlex
import subprocess
import sys
import sysconfig
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
MARK = "BENCHMARK_RETURNED "
RESULTS = os.path.join(HERE, "results.json")
LIBRARIES = ("torch", "transformers", "datasets", "tokenizers", "numpy", "h5py", "tqdm", "hf-bert-tasks")

CHILD = """
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("bench", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
args = json.loads(sys.argv[2])
if args is None:
    args = list(getattr(module, "SMOKE_ARGS", []))
result = module.main(args)
import os
package = os.path.join({repo!r}, "hf_bert_tasks") + os.sep
timed = sorted({{os.path.relpath(m.__file__, {repo!r}) for m in list(sys.modules.values())
                if (getattr(m, "__file__", None) or "").startswith(package)}})
timed += list(getattr(module, "TIMED_PATHS", []))
print({mark!r} + json.dumps({{"args": args, "results": result, "timed_files": timed}}))
"""


def portable(text: str) -> str:
    """``text`` with this machine's absolute paths replaced by the names a reader can use anywhere.

    The recorded command lines name the interpreter, the repository, ``../shared`` and the model folder by absolute
    path; the committed ``results.json`` says ``python``, ``.``, ``../shared`` and ``<site-packages>`` instead.
    """
    shared = os.environ.get("HF_BERT_TASKS_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))
    for path, name in (
        (sys.executable, "python"),
        (os.path.join(sys.prefix, "bin", "python"), "python"),
        (os.path.realpath(shared), "../shared"),
        (shared, "../shared"),
        (sysconfig.get_paths()["purelib"], "<site-packages>"),
        (REPO, "."),
    ):
        text = text.replace(json.dumps(path)[1:-1], name)
    return text


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        return names[0] if names else platform.processor() or "unknown"
    except OSError:
        return platform.processor() or "unknown"


def machine() -> dict:
    """CPU model, cores, threads, memory, Python and library versions of this machine."""
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_model": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS", "unset"),
    }
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            info["mem_gib"] = round(int(f.readline().split()[1]) / 2**20, 1)
    except OSError:
        pass
    try:
        import torch

        info["torch_threads"] = torch.get_num_threads()
        info["cuda"] = torch.cuda.is_available()
    except ImportError:
        pass
    versions = {}
    for lib in LIBRARIES:
        try:
            versions[lib] = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            versions[lib] = None
    info["versions"] = versions
    return info


def context() -> dict:
    """Commit, dirty flag, UTC date and load average now."""
    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def discover() -> dict[str, str]:
    """``{name: path}`` of every ``benchmarks/bench_<name>.py``."""
    return {os.path.basename(p)[len("bench_") : -3]: p for p in sorted(glob.glob(os.path.join(HERE, "bench_*.py")))}


def run_one(path: str, args: list[str] | None) -> tuple[int, float, dict]:
    """Run one benchmark's ``main(args)`` (``None``: its ``SMOKE_ARGS``) in a child process."""
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
    )
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(mark=MARK, repo=REPO), path, json.dumps(args)],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    returned: dict = {}
    for line in proc.stdout:
        if line.startswith(MARK):
            returned = json.loads(line[len(MARK) :])
        elif line.strip() and "Warning" not in line and not line.startswith(("  warnings.warn", "[transformers]")):
            print("    " + line.rstrip(), flush=True)
    status = proc.wait()
    return status, time.perf_counter() - start, returned


def summary_lines(name: str, records: list[dict] | dict) -> list[str]:
    if isinstance(records, dict):  # a measurement-only benchmark (no reference side), e.g. pretraining_corpus_scale
        return [f"{name:28s} measurements only (no reference side): {', '.join(sorted(records))} in results.json"]
    lines = []
    for rec in records:
        for c in rec["comparisons"]:
            lines.append(
                f"{rec['name']:28s} {c['ratio_of_medians']:6.2f}x  [{c['paired_min']:.2f}-{c['paired_max']:.2f}]"
                f"  n={c['rounds']}  {c['kind']:9s}  {c['ours']}  vs  {c['baseline']}"
            )
    return lines or [f"{name:28s} (no comparison returned)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the benchmarks and exit")
    parser.add_argument("--smoke", action="store_true", help="each benchmark at its tiny SMOKE_ARGS size")
    parser.add_argument(
        "--args",
        action="append",
        default=[],
        metavar="NAME=ARGS",
        help="arguments for one benchmark, e.g. glue_e2e='--tasks mrpc,stsb' (repeatable)",
    )
    parser.add_argument(
        "--label",
        default=None,
        help="store the entries as NAME[LABEL] (e.g. a full-protocol run next to the default one)",
    )
    parser.add_argument("--output", default=RESULTS, help="results file (merged by benchmark name)")
    opts = parser.parse_args(argv)
    found = discover()
    if opts.list:
        print("\n".join(found))
        return 0
    extra: dict[str, list[str]] = {}
    for item in opts.args:
        name, _, value = item.partition("=")
        if name not in found:
            parser.error(f"--args {item!r}: unknown benchmark {name!r}; found {list(found)}")
        extra[name] = shlex.split(value)
    unknown = [n for n in opts.names if n not in found]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; found {list(found)}")
    chosen = {n: found[n] for n in (opts.names or found)}

    def key(name: str) -> str:
        return f"{name}[{opts.label}]" if opts.label else name

    info = machine()
    print(
        f"machine: {info['cpu_model']}, {info['usable_cpus']} usable CPUs, torch threads "
        f"{info.get('torch_threads')}, OMP_NUM_THREADS={info['omp_num_threads']}; load {os.getloadavg()}"
    )
    try:
        with open(opts.output, encoding="utf-8") as f:
            stored = json.load(f)
    except (OSError, json.JSONDecodeError):
        stored = {}
    stored.setdefault("benchmarks", {})
    suite_start = time.perf_counter()
    status_all = 0
    failed = []
    for name, path in chosen.items():
        args = extra.get(name, None if opts.smoke else [])
        print(
            f"== {name} ({os.path.relpath(path, REPO)}) args {args if args is not None else 'SMOKE_ARGS'}", flush=True
        )
        before = context()
        status, seconds, returned = run_one(path, args)
        after = context()
        entry = {
            "status": status,
            "wall_s": round(seconds, 1),
            "args": returned.get("args", args),
            "profile": "custom" if name in extra else "smoke" if opts.smoke else "default",
            "commit": before["commit"],
            "dirty": before["dirty"],
            "date": before["date"],
            "load_average_before": before["load_average"],
            "load_average_after": after["load_average"],
            "cpu_model": info["cpu_model"],
            "usable_cpus": info["usable_cpus"],
            "torch_threads": info.get("torch_threads"),
            "omp_num_threads": info["omp_num_threads"],
            "results": returned.get("results") or [],
            # what this row times: the package modules the benchmark's process loaded, its TIMED_PATHS (code it
            # runs in subprocesses) and the benchmark itself; report.py marks the row stale when any changed
            "timed_files": sorted(
                set(returned.get("timed_files", [])) | {os.path.relpath(path, REPO), "benchmarks/harness.py"}
            ),
        }
        status_all = status_all or status
        if status == 0:
            stored["benchmarks"][key(name)] = {"benchmark": name, **entry}
        else:
            failed.append(name)
            print(f"   {name} FAILED (exit {status}); results.json keeps its earlier entry", flush=True)
    total = time.perf_counter() - suite_start
    stored["machine"] = info
    stored["last_run"] = {
        **context(),
        "benchmarks": list(chosen),
        "wall_s": round(total, 1),
        "command": " ".join(["python", "benchmarks/run.py", *(argv if argv is not None else sys.argv[1:])]),
    }
    with open(opts.output, "w", encoding="utf-8") as f:
        f.write(portable(json.dumps(stored, indent=1)) + "\n")
    print(
        f"\n== ratios (baseline time / our time: > 1 means ours is faster; [paired-round min-max]); "
        f"{total:.0f} s in all"
    )
    for name in chosen:
        if name in failed:
            print(f"{name:28s} FAILED")
            continue
        for line in summary_lines(name, stored["benchmarks"][key(name)]["results"]):
            print(line)
    print(f"wrote {opts.output}; tables: python benchmarks/report.py")
    return status_all


if __name__ == "__main__":
    sys.exit(main())
