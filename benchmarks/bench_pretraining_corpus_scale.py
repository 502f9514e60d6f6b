"""Pretraining data at growing corpus sizes: peak RSS and instances/s of documents -> instances (datasets cache).

    python benchmarks/bench_pretraining_corpus_scale.py [--scales 1 4 16] [--num_proc 1] [--corpus_dir DIR]

Input: every file of ``../shared/data/pretraining_text`` (WikiText-2 valid/test, raw test, tiny Shakespeare; about
4.7 MB), replicated ``N`` times as ``N`` copies of each file for scale ``N``. Each scale runs in a fresh child process
with an empty ``datasets`` cache: :func:`hf_bert_tasks.pretraining.documents.load_documents` (files -> Arrow table of
documents, ``split_sentences``) then :func:`~hf_bert_tasks.pretraining.data.build_pretraining_dataset` (max_seq_length
128, dupe_factor 1, ``--num_proc`` processes), then the same two calls again (a cache hit). Reported per scale: wall
seconds of the first build, instances, instances/s, sentences/s, seconds of the cached rerun, the child's peak RSS
(``ru_maxrss``) and its RSS after imports (the part that does not depend on the corpus). A flat peak RSS and a
constant instances/s across scales mean memory does not grow with the corpus and time grows linearly.
The WordPiece vocabulary (8,000 pieces) is trained once on the 1x corpus, outside the timed part.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.normpath(os.path.join(HERE, "..", "shared", "data", "pretraining_text"))

CHILD = r"""
import json, os, resource, sys, time, warnings
warnings.simplefilter("ignore")
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
from datasets import disable_progress_bars
from transformers import AutoTokenizer
from hf_bert_tasks.pretraining.data import build_pretraining_dataset
from hf_bert_tasks.pretraining.documents import load_documents
from hf_bert_tasks.pretraining.recipe import _corpus_stats
disable_progress_bars()
cfg = json.loads(sys.argv[1])
tok = AutoTokenizer.from_pretrained(cfg["tokenizer"])
base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def build():
    docs = load_documents(cfg["files"], split_sentences=True, cache_dir=cfg["cache"])
    inst = build_pretraining_dataset(docs, tok, batch_size=1000, num_proc=cfg["num_proc"], max_seq_length=128,
                                     seed=0)
    return docs, inst
t0 = time.perf_counter()
docs, inst = build()
first = time.perf_counter() - t0
t0 = time.perf_counter()
build()
cached = time.perf_counter() - t0
stats = _corpus_stats(docs)
print(json.dumps({"seconds": first, "cached_seconds": cached, "documents": stats["documents"],
                  "sentences": stats["sentences"], "instances": len(inst),
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "rss_after_imports_mb": base_rss}))
"""


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus_dir", default=SHARED)
    parser.add_argument("--scales", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--num_proc", type=int, default=None)
    args = parser.parse_args(argv)
    if not os.path.isdir(args.corpus_dir):
        raise SystemExit(f"{args.corpus_dir} is absent (the shared pretraining text)")
    sources = sorted(os.path.join(args.corpus_dir, f) for f in os.listdir(args.corpus_dir) if not f.startswith("."))
    results: dict = {"corpus": sources, "num_proc": args.num_proc, "scales": {}}
    with tempfile.TemporaryDirectory() as tmp:
        sys.path.insert(0, HERE)
        from hf_bert_tasks.pretraining.documents import iter_file_documents
        from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

        tokenizer = train_wordpiece_tokenizer(
            (s for path in sources for d in iter_file_documents(path, split_sentences=True) for s in d),
            vocab_size=8000,
        )
        tokenizer.save_pretrained(os.path.join(tmp, "tokenizer"))
        for scale in args.scales:
            folder = os.path.join(tmp, f"x{scale}")
            os.makedirs(folder)
            files = []
            for copy in range(scale):
                for src in sources:
                    dst = os.path.join(folder, f"{copy}-{os.path.basename(src)}")
                    os.symlink(src, dst)
                    files.append(dst)
            cfg = {
                "files": files,
                "tokenizer": os.path.join(tmp, "tokenizer"),
                "cache": os.path.join(tmp, f"cache{scale}"),
                "num_proc": args.num_proc,
            }
            env = dict(os.environ, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
            proc = subprocess.run(
                [sys.executable, "-c", CHILD, json.dumps(cfg)], capture_output=True, text=True, env=env, check=False
            )
            if proc.returncode:
                raise RuntimeError(f"scale {scale} failed:\n{proc.stderr[-3000:]}")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["instances_per_s"] = row["instances"] / row["seconds"]
            row["sentences_per_s"] = row["sentences"] / row["seconds"]
            results["scales"][scale] = row
            print(
                f"x{scale}: {row['documents']} docs, {row['sentences']} sentences -> {row['instances']} instances "
                f"in {row['seconds']:.1f} s ({row['instances_per_s']:.0f} inst/s, {row['sentences_per_s']:.0f} "
                f"sent/s); cached rerun {row['cached_seconds']:.2f} s; peak RSS {row['peak_rss_mb']:.0f} MB "
                f"(after imports {row['rss_after_imports_mb']:.0f} MB)",
                flush=True,
            )
    return results


if __name__ == "__main__":
    print(json.dumps(main(), indent=2))
