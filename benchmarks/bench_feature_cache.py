"""Feature-based mode, one head epoch: ours from the feature cache vs ours recomputing the frozen encoder.

    python benchmarks/bench_feature_cache.py                      # random BERT-mini (4 x 256), offline
    python benchmarks/bench_feature_cache.py --model PATH --examples 512 --seq 64

Both sides are this package's code (a comparison of two variants, not against a reference). For each head (the
sentence-level linear head over [CLS], and the paper's NER BiLSTM over tokens), with the same head, data, batch
size, learning rate and thread count, interleaved in one process:

* ours, encoder every batch: one epoch of ``BertFeatureBasedModel`` forward + backward in a plain PyTorch loop
  (the frozen encoder runs on every batch, as Trainer does with ``--mode feature_based --feature_cache false``,
  minus Trainer's own overhead);
* ours, from the cache: one epoch of :func:`hf_bert_tasks.feature_based.train_head_from_cache` (the encoder never
  runs). Building the cache (one encoder pass) is a one-off cost, measured once and reported next to it.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

SMOKE_ARGS = ["--examples", "64", "--repeats", "2"]


def synthetic_features(n: int, seq: int, vocab: int, token_level: bool, seed: int = 0):
    """``n`` random sequences of 8..``seq`` WordPieces ([CLS] ... [SEP]) with random labels (a ``datasets.Dataset``)."""
    import datasets
    import numpy as np

    rng = np.random.default_rng(seed)
    ids, labels = [], []
    for _ in range(n):
        length = int(rng.integers(8, seq + 1))
        ids.append([2] + rng.integers(5, vocab, length - 2).tolist() + [3])
        labels.append(([-100] + rng.integers(0, 9, length - 2).tolist() + [-100]) if token_level
                      else int(rng.integers(0, 2)))
    return datasets.Dataset.from_dict({"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids],
                                       "labels": labels})


def one_head(name, problem_type, head, args, encoder_dir, tokenizer, root) -> dict:
    import torch
    from transformers import DataCollatorForTokenClassification, DataCollatorWithPadding

    from hf_bert_tasks.feature_based import BertFeatureBasedModel, build_feature_cache, train_head_from_cache

    token_level = problem_type == "token_classification"
    data = synthetic_features(args.examples, args.seq, len(tokenizer), token_level)
    collator = (DataCollatorForTokenClassification if token_level else DataCollatorWithPadding)(tokenizer)
    torch.set_num_threads(args.threads)

    def new_model():
        return BertFeatureBasedModel.from_encoder(encoder_dir, problem_type, "concat_last_four", head=head,
                                                  num_labels=9 if token_level else 2,
                                                  head_hidden_size=args.lstm_hidden)

    state = {}

    def fresh(_r):
        state["model"] = new_model().train()

    def every_batch(_r):
        model = state["model"]
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
        for i in range(0, len(data), args.batch):
            batch = collator([data[j] for j in range(i, min(i + args.batch, len(data)))])
            model(**batch).loss.backward()
            opt.step()
            opt.zero_grad()

    model = new_model()
    start = time.perf_counter()
    cache, _ = build_feature_cache(model, data, collator, os.path.join(root, head), args.seq, batch_size=args.batch)
    build_s = time.perf_counter() - start
    cache_mb = sum(os.path.getsize(p) for p in cache.shards()) / 2**20
    train_args = argparse.Namespace(seed=0, learning_rate=1e-3, weight_decay=0.0, warmup_steps=0,
                                    per_device_train_batch_size=args.batch, num_train_epochs=1, max_grad_norm=1.0)

    def from_cache(_r):
        train_head_from_cache(state["model"], cache, train_args, num_threads=args.threads)

    base = f"ours, {name}: encoder every batch (plain loop)"
    cached = f"ours, {name}: head from the feature cache"
    sides = [harness.Side(base, "ours", every_batch, prepare=fresh, description="frozen encoder + head, every batch"),
             harness.Side(cached, "ours", from_cache, prepare=fresh, description="train_head_from_cache")]
    measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
    res = harness.result(
        f"feature_cache_{head}", f"Feature-based head epoch ({name})", measured,
        [harness.Comparison(cached, base, kind="variant")],
        config={"encoder": os.path.basename(encoder_dir), "examples": args.examples, "seq": args.seq,
                "batch": args.batch, "threads": args.threads, "strategy": "concat_last_four", "head": head,
                "lstm_hidden": args.lstm_hidden if head == "bilstm" else None},
        work=(args.examples, "examples"),
        figures={"cache build (one-off, measured once), s": round(build_s, 3), "cache size, MB": round(cache_mb, 2)},
    )
    print(harness.format_result(res))
    return res


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="encoder folder (default: a random BERT-mini built here)")
    parser.add_argument("--examples", type=int, default=256)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lstm_hidden", type=int, default=128, help="BiLSTM units per direction (paper: 768)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both sides")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)

    from transformers import AutoTokenizer

    from hf_bert_tasks.modeling import build_random_bert
    from hf_bert_tasks.scripts.quickstart import sample_texts
    from hf_bert_tasks.tokenization import train_wordpiece_tokenizer

    with tempfile.TemporaryDirectory() as tmp:
        encoder_dir = args.model
        if encoder_dir is None:
            tok = train_wordpiece_tokenizer(sample_texts(), vocab_size=2000)
            encoder_dir = build_random_bert(os.path.join(tmp, "mini"), tok, preset="mini", seed=0)
        tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
        print(f"encoder {os.path.basename(encoder_dir)}; {args.examples} sequences of <= {args.seq} WordPieces, "
              f"batch {args.batch}, {args.threads} thread(s), strategy concat_last_four")
        return [one_head("linear head over [CLS]", "single_label_classification", "linear", args, encoder_dir,
                         tokenizer, tmp),
                one_head(f"NER 2-layer BiLSTM {args.lstm_hidden}", "token_classification", "bilstm", args,
                         encoder_dir, tokenizer, tmp)]


if __name__ == "__main__":
    main()
