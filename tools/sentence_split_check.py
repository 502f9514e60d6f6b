"""Speed and agreement of sentence splitters on a Project Gutenberg shard (issue 43 item 1: which splitter).

    python tools/sentence_split_check.py ../shared/data/pretraining_books/books-000.txt.xz [--lib_path DIR]

Times ``pretraining_documents.split_into_sentences`` (rules) over every paragraph of the shard and, when importable
(``--lib_path``: a ``pip install --target`` folder, never the project's venv), blingfire's ``text_to_sentences``
and pysbd's ``Segmenter`` (pysbd on a sample: it is slow); then counts the sampled paragraphs each splitter splits
exactly as pysbd does (pysbd as the reference: the most careful rules of the three). With ``--tokenizer DIR`` also
times the pipeline's reading (``load_documents``, one document per book) and NSP instance creation at 128
WordPieces (``build_pretraining_dataset``, one process). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import lzma
import sys
import time


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("shard")
    parser.add_argument("--lib_path", default=None)
    parser.add_argument("--sample", type=int, default=3000, help="paragraphs (every 5th) compared with pysbd")
    parser.add_argument("--tokenizer", default=None, help="also time reading + instance creation with this tokenizer")
    args = parser.parse_args(argv)
    if args.lib_path:
        sys.path.append(args.lib_path)
    from hf_bert_tasks.pretraining.documents import split_into_sentences

    with lzma.open(args.shard, "rt", encoding="utf-8") as f:
        paragraphs = [line.strip() for line in f if line.strip()]
    words = sum(len(p.split()) for p in paragraphs)
    splitters = {"rules (pretraining_data.split_into_sentences)": split_into_sentences}
    try:
        import blingfire

        splitters["blingfire"] = lambda text: [s for s in blingfire.text_to_sentences(text).split("\n") if s]
    except ImportError:
        pass
    reference = None
    try:
        import pysbd

        segmenter = pysbd.Segmenter(language="en", clean=False)
        reference = lambda text: [s.strip() for s in segmenter.segment(text) if s.strip()]
    except ImportError:
        pass
    sample = paragraphs[::5][: args.sample]
    out = {"shard": args.shard, "paragraphs": len(paragraphs), "words": words, "splitters": {}}
    for name, split in splitters.items():
        start = time.perf_counter()
        n = sum(len(split(p)) for p in paragraphs)
        seconds = time.perf_counter() - start
        out["splitters"][name] = {
            "sentences": n,
            "seconds": round(seconds, 3),
            "M_words_per_s": round(words / seconds / 1e6, 3),
        }
    if reference is not None:
        sample_words = sum(len(p.split()) for p in sample)
        start = time.perf_counter()
        expected = [reference(p) for p in sample]
        seconds = time.perf_counter() - start
        out["splitters"]["pysbd (sample)"] = {
            "paragraphs": len(sample),
            "sentences": sum(map(len, expected)),
            "M_words_per_s": round(sample_words / seconds / 1e6, 4),
        }
        for name, split in splitters.items():
            got = [split(p) for p in sample]
            out["splitters"][name]["same_as_pysbd"] = f"{sum(g == e for g, e in zip(got, expected))} / {len(sample)}"
            out["splitters"][name]["sample_sentences"] = sum(map(len, got))
    if args.tokenizer:
        import tempfile

        from transformers import AutoTokenizer

        from hf_bert_tasks.pretraining.data import build_pretraining_dataset
        from hf_bert_tasks.pretraining.documents import load_documents

        tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
        with tempfile.TemporaryDirectory() as cache:
            start = time.perf_counter()
            docs = load_documents(args.shard, document_boundary="blank_line", split_sentences=True, cache_dir=cache)
            read_s = time.perf_counter() - start
            start = time.perf_counter()
            instances = build_pretraining_dataset(docs, tokenizer, max_seq_length=128, seed=42)
            build_s = time.perf_counter() - start
        out["pipeline"] = {
            "books": len(docs),
            "read_and_split_s": round(read_s, 2),
            "instances": len(instances),
            "instances_s": round(build_s, 2),
            "k_words_per_s_instances": round(words / build_s / 1e3),
        }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
