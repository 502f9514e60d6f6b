"""Padding in REAL pretraining batches (issue 42 item 1): is packing / unpadding worth it?

    python benchmarks/padding_fraction.py [--shared ../shared] [--seq 128 512] [--batch 256 64] [--json out.json]

Builds the transfer experiment's corpus (``tools/pretraining_transfer.py corpus``: the unlabelled text of
``../shared/data``, one sentence per line, documents between blank lines), trains its 8,192-piece WordPiece
vocabulary, makes the pretrain recipe's NSP instances (:func:`hf_bert_tasks.pretraining.data.build_pretraining_dataset`,
google's rules: target length ``max_seq_length - 3``, ``short_seq_prob`` 0.1) at each ``--seq``, and reports, per
length, the fraction of token positions that are padding:

* ``fixed``: every batch padded to ``--seq`` (``1 - mean length / seq``);
* ``dynamic``: batches of ``--batch`` instances in a seeded random order (the Trainer's sampler), each padded to its
  longest instance (the recipe's collator), averaged over all full batches;
* the share of instances shorter than ``seq`` and their mean length.

The padded positions are work an unpadded (varlen attention) or packed model would skip: at most that fraction of
the encoder's FLOPs. The data pipeline only (no model): a minute of CPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def padding_fractions(lengths: np.ndarray, seq: int, batch: int, seed: int = 0) -> dict:
    """Padding of ``lengths`` (``int [n]``, real tokens per instance, each ``<= seq``) when batched: ``fixed`` (pad to
    ``seq``) and ``dynamic`` (random batches of ``batch``, pad to the longest; full batches only), as fractions of the
    padded positions; ``short_share`` = instances with fewer than ``seq`` tokens, ``mean_length``."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if lengths.size == 0 or (lengths > seq).any():
        raise ValueError(
            f"need >= 1 instance, each <= {seq} tokens (got {lengths.size}, max {lengths.max(initial=0)})"
        )
    order = np.random.default_rng(seed).permutation(lengths.size)
    n_full = lengths.size // batch
    if n_full == 0:
        raise ValueError(f"{lengths.size} instances make no full batch of {batch}")
    batches = lengths[order[: n_full * batch]].reshape(n_full, batch)
    dynamic = 1.0 - batches.sum() / (batches.max(axis=1) * batch).sum()
    return {
        "instances": int(lengths.size),
        "mean_length": float(lengths.mean()),
        "short_share": float((lengths < seq).mean()),
        "fixed": float(1.0 - lengths.mean() / seq),
        "dynamic": float(dynamic),
        "batches": int(n_full),
    }


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--shared", default=os.environ.get("HF_BERT_TASKS_SHARED") or os.path.join(REPO, "..", "shared")
    )
    parser.add_argument("--seq", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--batch", type=int, nargs="+", default=[256, 64])
    parser.add_argument("--short_seq_prob", type=float, default=0.1)
    parser.add_argument("--vocab_size", type=int, default=8192)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    if len(args.batch) != len(args.seq):
        parser.error("give one --batch per --seq")
    sys.path.insert(0, REPO)
    from hf_bert_tasks.pretraining.data import build_pretraining_dataset
    from hf_bert_tasks.pretraining.documents import load_documents
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    spec = importlib.util.spec_from_file_location(
        "pretraining_transfer", os.path.join(REPO, "tools", "pretraining_transfer.py")
    )
    transfer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(transfer)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.txt")
        transfer.build_corpus(args.shared, corpus)
        docs = load_documents(corpus, cache_dir=os.path.join(tmp, "cache"))
        tokenizer = train_wordpiece_tokenizer(
            lambda: (s for d in docs["sentences"] for s in d), vocab_size=args.vocab_size
        )
        for seq, batch in zip(args.seq, args.batch):
            instances = build_pretraining_dataset(
                docs, tokenizer, max_seq_length=seq, short_seq_prob=args.short_seq_prob, seed=0
            )
            lengths = np.fromiter((len(x) for x in instances["input_ids"]), dtype=np.int64)
            out[str(seq)] = dict(
                padding_fractions(lengths, seq, batch),
                seq=seq,
                batch=batch,
                short_seq_prob=args.short_seq_prob,
                documents=len(docs),
            )
            r = out[str(seq)]
            print(
                f"seq {seq} x batch {batch}: {r['instances']} instances, mean length {r['mean_length']:.1f}, "
                f"{100 * r['short_share']:.1f} % shorter than {seq}; padding: fixed {100 * r['fixed']:.1f} %, "
                f"dynamic {100 * r['dynamic']:.1f} %",
                flush=True,
            )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=2)
    return out


if __name__ == "__main__":
    main()
