"""Collator throughput: DataCollatorForBertPretraining vs transformers' DataCollatorForLanguageModeling.

    python benchmarks/bench_collator.py [--batches 200 --batch_size 32 --max_seq_length 128]

Both collate the same tokenized pretraining instances (built from the built-in corpus with
``create_pretraining_examples``, dynamic lengths); the baseline is transformers' MLM collator (per-token Bernoulli
selection, 80/10/10, ``tokenizer.pad``), which passes ``next_sentence_label`` through but has no whole-word masking
with 80/10/10. Printed: batches/s of each configuration and its ratio to the baseline measured in the same run.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(HERE, "hf_bert_tasks", "samples", "pretraining", "corpus.txt")


def instances(max_seq_length: int, seed: int = 0):
    """(tokenizer, list of feature dicts) from the built-in corpus."""
    from hf_bert_tasks.pretraining_data import create_pretraining_examples, read_documents
    from hf_bert_tasks.tokenization import train_wordpiece_tokenizer

    docs = read_documents(CORPUS)
    tokenizer = train_wordpiece_tokenizer([s for d in docs for s in d], vocab_size=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = create_pretraining_examples(
            {"sentences": docs}, tokenizer=tokenizer, max_seq_length=max_seq_length, dupe_factor=4, seed=seed
        )
    rows = [{k: out[k][i] for k in out} for i in range(len(out["input_ids"]))]
    return tokenizer, rows


def _rate(collator, batches) -> float:
    collator(batches[0])  # warm-up
    start = time.perf_counter()
    for b in batches:
        collator(b)
    return len(batches) / (time.perf_counter() - start)


def main(argv: list[str] | None = None) -> dict[str, float]:
    from transformers import DataCollatorForLanguageModeling

    from hf_bert_tasks.collators import DataCollatorForBertPretraining

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=200)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_seq_length", type=int, default=128)
    args = parser.parse_args(argv)

    tokenizer, rows = instances(args.max_seq_length)
    batches = [
        [rows[(i * args.batch_size + j) % len(rows)] for j in range(args.batch_size)] for i in range(args.batches)
    ]
    plain = [[{k: r[k] for k in ("input_ids", "token_type_ids", "next_sentence_label")} for r in b] for b in batches]
    baseline = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0)
    results = {"transformers DataCollatorForLanguageModeling (baseline)": _rate(baseline, plain)}
    configs = {
        "ours: Bernoulli, NSP": ({}, plain),
        "ours: exact count, NSP": ({"selection": "exact"}, plain),
        "ours: Bernoulli, whole-word, NSP": ({"whole_word_mask": True}, batches),
        "ours: exact count, whole-word, NSP": ({"whole_word_mask": True, "selection": "exact"}, batches),
    }
    for name, (kwargs, data) in configs.items():
        results[name] = _rate(DataCollatorForBertPretraining(tokenizer, seed=0, **kwargs), data)
    base = results["transformers DataCollatorForLanguageModeling (baseline)"]
    print(
        f"collator throughput, {args.batches} batches of {args.batch_size} (seq <= {args.max_seq_length}, "
        f"dynamic padding)"
    )
    for name, rate in results.items():
        print(f"  {name:55s} {rate:8.1f} batches/s   {rate / base:5.2f}x")
    return results


if __name__ == "__main__":
    main()
