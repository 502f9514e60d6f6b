"""Pretraining-data creation (documents -> masked MLM + NSP instances on disk): ours vs NVIDIA's script.

    python benchmarks/bench_pretraining_data.py                        # WikiText-2 valid, 3 rounds
    python benchmarks/bench_pretraining_data.py --lines 1000 --repeats 2 --warmup 0   # smoke size
    python benchmarks/bench_pretraining_data.py --input_repeat 16 --repeats 1 --warmup 0   # 16x input: RSS, rate

Reference: NVIDIA DeepLearningExamples' ``create_pretraining_data.py`` (PyTorch BERT) from
``../shared/baselines/pretraining/`` (unmodified; its ``tokenization.py`` has one marked import adaptation). Ours:
``benchmarks/pretraining_data_ours.py`` (this package's ``documents_dataset`` -> ``build_pretraining_dataset`` ->
``DataCollatorForBertPretraining.static_mask_map``, saved with ``save_to_disk``). Same input file (one sentence per
line, blank line between documents: ``make_input.py`` of the baseline folder on the first ``--lines`` lines of
``../shared/data/pretraining_text/wikitext-2.valid.tokens``), same vocabulary (all-MiniLM-L6-v2's uncased
``vocab.txt``), max_seq_length 128, max_predictions_per_seq 20, masked_lm_prob 0.15, short_seq_prob 0.1,
dupe_factor 1, seed 12345.

Both sides run as fresh subprocesses through ``benchmarks/timed_main.py`` (same wrapper, same environment,
``TQDM_DISABLE=1``); the harness times each whole process. Reported: input sentences/s over the whole process
(headline), and each side's own ``import_s`` (start-up: NVIDIA imports numpy/h5py, ours torch/transformers/datasets)
and ``main_s`` (read, tokenize, build pairs, mask, write), instances written, CPU seconds and peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
#: code this benchmark times in subprocesses: report.py marks the row stale when any of it changes
TIMED_PATHS = [
    "benchmarks/pretraining_data_ours.py",
    "benchmarks/timed_main.py",
    "hf_bert_tasks/pretraining/data.py",
    "hf_bert_tasks/pretraining/documents.py",
    "hf_bert_tasks/pretraining/collators.py",
    "hf_bert_tasks/finetune/data.py",
]
SMOKE_ARGS = ["--lines", "1000", "--repeats", "2", "--warmup", "0"]


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=None, help="WikiText .tokens file (default: shared wikitext-2 valid)")
    parser.add_argument("--lines", type=int, default=0, help="first N lines of --corpus (0: all)")
    parser.add_argument(
        "--input_repeat",
        type=int,
        default=1,
        help="the input file holds the converted corpus K times (scaling runs: peak RSS, rates)",
    )
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--dupe_factor", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)

    baseline_dir = harness.shared_path("baselines", "pretraining")
    corpus = args.corpus or harness.shared_path("data", "pretraining_text", "wikitext-2.valid.tokens")
    vocab = os.path.join(harness.minilm_path(), "vocab.txt")
    py = sys.executable
    env = dict(
        os.environ,
        TQDM_DISABLE="1",
        PYTHONDONTWRITEBYTECODE="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
    )
    work = tempfile.mkdtemp(prefix="bench_pretraining_data_")
    try:
        input_file = os.path.join(work, "input.txt")
        made = subprocess.run(
            [py, os.path.join(baseline_dir, "make_input.py"), corpus, input_file, str(args.lines)],
            capture_output=True,
            text=True,
            check=True,
        )
        if args.input_repeat > 1:  # K copies of the documents, blank line between copies
            with open(input_file, encoding="utf-8") as f:
                text = f.read().rstrip("\n") + "\n"
            with open(input_file, "w", encoding="utf-8") as f:
                f.write("\n".join([text] * args.input_repeat))
        with open(input_file, encoding="utf-8") as f:
            sentences = sum(1 for line in f if line.strip())
        print(f"input: {made.stdout.strip()}")
        common = [
            "--vocab_file",
            vocab,
            "--input_file",
            input_file,
            "--max_seq_length",
            str(args.max_seq_length),
            "--max_predictions_per_seq",
            str(args.max_predictions_per_seq),
            "--dupe_factor",
            str(args.dupe_factor),
            "--masked_lm_prob",
            "0.15",
            "--short_seq_prob",
            "0.1",
            "--random_seed",
            "12345",
        ]
        out_ref, out_ours = os.path.join(work, "nvidia.hdf5"), os.path.join(work, "ours")
        report = os.path.join(work, "report.json")
        wrapper = [py, os.path.join(HERE, "timed_main.py"), "--report", report]
        ref_cmd = wrapper + [
            "--script",
            os.path.join(baseline_dir, "create_pretraining_data.py"),
            "--",
            *common,
            "--output_file",
            out_ref,
        ]
        ours_cmd = wrapper + [
            "--script",
            os.path.join(HERE, "pretraining_data_ours.py"),
            "--",
            *common,
            "--output_dir",
            out_ours,
        ]

        def clean(_r):
            for path in (out_ref, out_ours, report):
                shutil.rmtree(path, ignore_errors=True) if os.path.isdir(path) else (
                    os.remove(path) if os.path.exists(path) else None
                )

        def runner(cmd, name):
            return lambda r: harness.run_subprocess(cmd, cwd=REPO, env=env, log_path=os.path.join(work, f"{name}.log"))

        def after_ref(_r, _extra):
            import h5py

            with h5py.File(out_ref, "r") as f:
                n = len(f["input_ids"])
            return {**_read(report), "instances": n}

        def after_ours(_r, _extra):
            return {**_read(report), "instances": _read(os.path.join(out_ours, "counts.json"))["instances"]}

        ref_name = "reference: NVIDIA create_pretraining_data.py"
        ours_name = "ours: build_pretraining_dataset + static_mask_map"
        sides = [
            harness.Side(
                ref_name,
                "reference",
                runner(ref_cmd, "nvidia"),
                prepare=clean,
                after=after_ref,
                command=ref_cmd,
                description="pure-Python WordPiece, one process, HDF5 (gzip) output",
            ),
            harness.Side(
                ours_name,
                "ours",
                runner(ours_cmd, "ours"),
                prepare=clean,
                after=after_ours,
                command=ours_cmd,
                description="fast tokenizer, datasets.map, Arrow output (save_to_disk)",
            ),
        ]
        measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    res = harness.result(
        "pretraining_data" + (f"_x{args.input_repeat}" if args.input_repeat > 1 else ""),
        "Pretraining-data creation (MLM + NSP instances, static masks)",
        measured,
        [harness.Comparison(ours_name, ref_name)],
        config={
            "corpus": os.path.basename(corpus),
            "lines": args.lines or "all",
            "input_repeat": args.input_repeat,
            "sentences": sentences,
            "input": made.stdout.strip().split(" -> ")[0],
            "vocab": "all-MiniLM-L6-v2 vocab.txt (uncased, 30522)",
            "max_seq_length": args.max_seq_length,
            "max_predictions_per_seq": args.max_predictions_per_seq,
            "dupe_factor": args.dupe_factor,
            "masked_lm_prob": 0.15,
            "short_seq_prob": 0.1,
            "seed": 12345,
            "timing": "whole subprocess (start-up included); import_s / main_s per side in extra",
        },
        work=(sentences, "sentences"),
        notes=["NVIDIA shuffles documents and instances; ours keeps corpus order (shuffle at training time)"],
    )
    for name, side in res["sides"].items():
        main_s = harness.extra_summary(side, "main_s")
        if main_s:
            side["main_rate"] = {"unit": "sentences/s", "median": sentences / main_s["median"]}
    main_ref, main_ours = (harness.extra_summary(res["sides"][n], "main_s")["median"] for n in (ref_name, ours_name))
    res["figures"]["main() only, ratio of medians (reference / ours; start-up excluded)"] = round(
        main_ref / main_ours, 2
    )
    print(harness.format_result(res))
    for name, side in res["sides"].items():
        print(
            f"  {name}: import {harness.extra_summary(side, 'import_s')['median']:.2f} s, main "
            f"{harness.extra_summary(side, 'main_s')['median']:.2f} s ({side['main_rate']['median']:.0f} "
            f"sentences/s without start-up), {side['extra'][0]['instances']} instances, peak RSS "
            f"{harness.extra_summary(side, 'peak_rss_mib')['median']:.0f} MiB"
        )
    return [res]


def _read(path: str) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


if __name__ == "__main__":
    main()
