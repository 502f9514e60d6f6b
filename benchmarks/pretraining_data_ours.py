"""Our side of ``bench_pretraining_data.py``: NVIDIA ``create_pretraining_data.py``'s job done with this package.

    python benchmarks/pretraining_data_ours.py --vocab_file VOCAB --input_file IN.txt --output_dir OUT \\
        [--max_seq_length 128 --max_predictions_per_seq 20 --dupe_factor 1 --random_seed 12345]

The same inputs and outputs as NVIDIA's script (its flags keep their names): a file with one sentence per line and a
blank line between documents, an uncased WordPiece vocabulary; out come MLM + NSP instances with *static* masks
(google's exact count per sequence, at most ``max_predictions_per_seq``, 80/10/10), written to disk
(``datasets.Dataset.save_to_disk``, Arrow; NVIDIA writes HDF5). Our code path: :func:`documents_dataset`,
:func:`build_pretraining_dataset`, ``dupe_factor`` copies, and ``DataCollatorForBertPretraining.static_mask_map`` as
the pretrain recipe's ``--masking static`` does. Heavy imports are at the top, so ``timed_main.py`` counts them as
start-up for this side as it does for NVIDIA's.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import datasets
import torch  # noqa: F401  (the collator imports it lazily: loaded here, it counts as start-up as NVIDIA's imports do)
from transformers import BertTokenizer

from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining
from hf_bert_tasks.pretraining.data import build_pretraining_dataset
from hf_bert_tasks.pretraining.documents import documents_dataset


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vocab_file", required=True)
    parser.add_argument("--input_file", required=True)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--max_seq_length", type=int, default=128)
    parser.add_argument("--max_predictions_per_seq", type=int, default=20)
    parser.add_argument("--dupe_factor", type=int, default=1)
    parser.add_argument("--masked_lm_prob", type=float, default=0.15)
    parser.add_argument("--short_seq_prob", type=float, default=0.1)
    parser.add_argument("--random_seed", type=int, default=12345)
    args = parser.parse_args(argv)
    datasets.disable_caching()
    datasets.disable_progress_bars()
    tokenizer = BertTokenizer(vocab=args.vocab_file, do_lower_case=True)
    # the text loader's Arrow cache in a fresh folder: every round reads the input file (no cache hit across rounds)
    cache = tempfile.TemporaryDirectory()
    docs = documents_dataset(args.input_file, document_boundary="blank_line", cache_dir=cache.name)
    instances = build_pretraining_dataset(
        docs,
        tokenizer,
        max_seq_length=args.max_seq_length,
        short_seq_prob=args.short_seq_prob,
        dupe_factor=args.dupe_factor,
        seed=args.random_seed,
    )
    collator = DataCollatorForBertPretraining(
        tokenizer,
        mlm_probability=args.masked_lm_prob,
        selection="exact",
        max_predictions_per_seq=args.max_predictions_per_seq,
        seed=args.random_seed,
    )
    instances = instances.map(collator.static_mask_map, batched=True)
    instances.save_to_disk(args.output_dir)
    with open(os.path.join(args.output_dir, "counts.json"), "w", encoding="utf-8") as f:
        json.dump({"documents": len(docs), "instances": len(instances)}, f)
    cache.cleanup()


if __name__ == "__main__":
    main()
