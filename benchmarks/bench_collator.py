"""Pretraining collator throughput: ours vs transformers' ``DataCollatorForLanguageModeling`` as run_mlm.py uses it.

    python benchmarks/bench_collator.py [--batches 100 --batch_size 32 --max_seq_length 128 --repeats 5]

Inputs: pretraining instances (``create_pretraining_examples`` over the built-in corpus, a WordPiece vocabulary
trained on it (at most 2,000 entries; the small corpus gives ~420); lengths vary, so every batch is padded dynamically), the same batches for every side. One
timed run collates all ``--batches`` batches; runs are interleaved in one process (same torch threads).

* reference: transformers' ``DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)`` fed
  ``special_tokens_mask`` with each instance, as ``run_mlm.py`` does (``return_special_tokens_mask=True`` at
  tokenization, which spares the collator its per-row special-token loop); it passes ``next_sentence_label``
  through. Token-level Bernoulli selection, 80/10/10.
* ours, the same job: ``DataCollatorForBertPretraining`` (Bernoulli selection, 80/10/10, NSP labels), fed the
  columns the pretrain recipe gives it (``input_ids``, ``token_type_ids``, ``next_sentence_label``, and ``idx``, the
  row index that keys each example's masks: ``pretraining_data.add_example_index``).
* ours, variants (compared with the line above, not with the reference, which has no such mode): google's exact
  count per sequence (``selection="exact"``), whole-word masking (needs ``word_ids``), and both.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(REPO, "hf_bert_tasks", "samples", "pretraining", "corpus.txt")
SMOKE_ARGS = ["--batches", "20", "--repeats", "2"]


def instances(max_seq_length: int, seed: int = 0):
    """(tokenizer, list of feature dicts) from the built-in corpus (``dupe_factor`` 4)."""
    from hf_bert_tasks.pretraining.data import create_pretraining_examples
    from hf_bert_tasks.pretraining.documents import read_documents
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    docs = read_documents(CORPUS)
    tokenizer = train_wordpiece_tokenizer([s for d in docs for s in d], vocab_size=2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = create_pretraining_examples(
            {"sentences": docs}, tokenizer=tokenizer, max_seq_length=max_seq_length, dupe_factor=4, seed=seed
        )
    return tokenizer, [{k: out[k][i] for k in out} for i in range(len(out["input_ids"]))]


def main(argv: list[str] | None = None) -> list[dict]:
    from transformers import DataCollatorForLanguageModeling

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)

    tokenizer, rows = instances(args.max_seq_length)
    for i, r in enumerate(rows):  # what run_mlm.py's tokenization adds (return_special_tokens_mask=True)
        r["special_tokens_mask"] = tokenizer.get_special_tokens_mask(r["input_ids"], already_has_special_tokens=True)
        r["idx"] = i  # what the pretrain recipe adds (the dataset row index keying the masks)
    batches = [
        [rows[(i * args.batch_size + j) % len(rows)] for j in range(args.batch_size)] for i in range(args.batches)
    ]

    def cols(keys):
        return [[{k: r[k] for k in keys} for r in b] for b in batches]

    reference_data = cols(("input_ids", "token_type_ids", "special_tokens_mask", "next_sentence_label"))
    plain = cols(("input_ids", "token_type_ids", "next_sentence_label", "idx"))
    with_words = cols(("input_ids", "token_type_ids", "next_sentence_label", "word_ids", "idx"))

    def side(name, role, collator, data, description):
        def run(_r):
            for b in data:
                collator(b)

        return harness.Side(name, role, run, description=description)

    ref = "reference: transformers DataCollatorForLanguageModeling + special_tokens_mask"
    ours = "ours: DataCollatorForBertPretraining (Bernoulli, NSP)"
    sides = [
        side(
            ref,
            "reference",
            DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15, seed=0),
            reference_data,
            "run_mlm.py's collator and inputs; token-level Bernoulli 15 %, 80/10/10",
        ),
        side(
            ours,
            "ours",
            DataCollatorForBertPretraining(tokenizer, seed=0),
            plain,
            "Bernoulli 15 %, 80/10/10, NSP labels passed through",
        ),
        side(
            "ours: exact count, NSP",
            "ours",
            DataCollatorForBertPretraining(tokenizer, seed=0, selection="exact"),
            plain,
            "google's count per sequence (max_predictions_per_seq 20)",
        ),
        side(
            "ours: Bernoulli, whole-word, NSP",
            "ours",
            DataCollatorForBertPretraining(tokenizer, seed=0, whole_word_mask=True),
            with_words,
            "whole-word units, 80/10/10 decided per word",
        ),
        side(
            "ours: exact count, whole-word, NSP",
            "ours",
            DataCollatorForBertPretraining(tokenizer, seed=0, whole_word_mask=True, selection="exact"),
            with_words,
            "google's count with whole-word units",
        ),
    ]
    print(
        f"collators: {args.batches} batches of {args.batch_size} instances (seq <= {args.max_seq_length}, dynamic "
        f"padding) per timed run"
    )
    measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
    comparisons = [harness.Comparison(ours, ref)] + [
        harness.Comparison(s.name, ours, kind="variant") for s in sides[2:]
    ]
    res = harness.result(
        "collator",
        "Pretraining collator (MLM + NSP)",
        measured,
        comparisons,
        config={
            "batches": args.batches,
            "batch_size": args.batch_size,
            "max_seq_length": args.max_seq_length,
            "instances": len(rows),
            "vocab_size": len(tokenizer),
            "mlm_probability": 0.15,
            "corpus": "hf_bert_tasks/samples/pretraining/corpus.txt (dupe_factor 4)",
        },
        work=(args.batches, "batches"),
        notes=[
            (
                "variants are compared with ours (Bernoulli): transformers has no whole-word mode with 80/10/10 and no "
                "exact-count selection"
            )
        ],
    )
    print(harness.format_result(res))
    return [res]


if __name__ == "__main__":
    main()
