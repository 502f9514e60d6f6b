"""Feature cache benchmark: one head epoch from the cache vs recomputing the frozen encoder every epoch.

    .venv/bin/python benchmarks/bench_feature_cache.py                      # random BERT-mini (4 x 256), offline
    .venv/bin/python benchmarks/bench_feature_cache.py --model PATH --examples 512 --seq 64

For each head (sentence-level linear head over [CLS], and the paper's NER BiLSTM over tokens) it measures, in the
same run and with the same head, data, batch size and thread count:

* ``baseline``: one epoch of ``BertFeatureBasedModel.forward`` + backward (the frozen encoder runs on every batch,
  which is what ``Trainer`` does in ``--mode feature_based --feature_cache false``);
* ``cached``: one epoch of :func:`hf_bert_tasks.feature_based.train_head_from_cache` (the encoder never runs);
* the one-off cost of building the cache, and the peak resident memory (RSS, sampled every 5 ms) of each loop.

Goal: cached epoch >= 10x faster than the baseline. Prints one line per head and the ratios; ``main()`` returns them.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import threading
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


class PeakRSS:
    """Context manager sampling the process RSS (psutil) every ``interval`` s; ``.peak_mb`` after exit."""

    def __init__(self, interval: float = 0.005):
        import psutil

        self.proc, self.interval, self.peak = psutil.Process(), interval, 0
        self._stop = threading.Event()

    def _run(self):
        while not self._stop.is_set():
            self.peak = max(self.peak, self.proc.memory_info().rss)
            time.sleep(self.interval)

    def __enter__(self):
        self.peak = self.proc.memory_info().rss
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.proc.memory_info().rss)

    @property
    def peak_mb(self) -> float:
        return self.peak / 2**20


def synthetic_features(n: int, seq: int, vocab: int, token_level: bool, seed: int = 0):
    """``n`` random sequences of 8..``seq`` WordPieces ([CLS] ... [SEP]) with random labels (a ``datasets.Dataset``)."""
    import datasets
    import numpy as np

    rng = np.random.default_rng(seed)
    ids, labels = [], []
    for _ in range(n):
        length = int(rng.integers(8, seq + 1))
        ids.append([2] + rng.integers(5, vocab, length - 2).tolist() + [3])
        labels.append(([-100] + rng.integers(0, 9, length - 2).tolist() + [-100]) if token_level else int(rng.integers(0, 2)))
    return datasets.Dataset.from_dict({"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids], "labels": labels})


def one_head(name, problem_type, head, args, encoder_dir, tokenizer) -> dict:
    import torch
    from transformers import DataCollatorForTokenClassification, DataCollatorWithPadding

    from hf_bert_tasks.feature_based import BertFeatureBasedModel, build_feature_cache, train_head_from_cache

    token_level = problem_type == "token_classification"
    data = synthetic_features(args.examples, args.seq, len(tokenizer), token_level)
    collator = (DataCollatorForTokenClassification if token_level else DataCollatorWithPadding)(tokenizer)
    model = BertFeatureBasedModel.from_encoder(encoder_dir, problem_type, "concat_last_four", head=head,
                                               num_labels=9 if token_level else 2, head_hidden_size=args.lstm_hidden)
    torch.set_num_threads(args.threads)
    # baseline: the frozen encoder recomputed on every batch of the epoch
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    model.train()
    with PeakRSS() as mem_base:
        start = time.perf_counter()
        for i in range(0, len(data), args.batch):
            batch = collator([data[j] for j in range(i, min(i + args.batch, len(data)))])
            model(**batch).loss.backward()
            opt.step()
            opt.zero_grad()
        baseline = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as root:
        start = time.perf_counter()
        cache, _ = build_feature_cache(model, data, collator, root, args.seq, batch_size=args.batch)
        build = time.perf_counter() - start
        train_args = argparse.Namespace(seed=0, learning_rate=1e-3, weight_decay=0.0, warmup_steps=0,
                                        per_device_train_batch_size=args.batch, num_train_epochs=1, max_grad_norm=1.0)
        with PeakRSS() as mem_cache:
            out = train_head_from_cache(model, cache, train_args, num_threads=args.threads)
        cached = out.metrics["train_runtime"]
        disk = sum(os.path.getsize(p) for p in cache.shards()) / 2**20
    row = {"head": name, "baseline_epoch_s": baseline, "cached_epoch_s": cached, "speedup": baseline / cached,
           "cache_build_s": build, "cache_mb": disk, "peak_rss_baseline_mb": mem_base.peak_mb,
           "peak_rss_cached_mb": mem_cache.peak_mb}
    print(f"{name:28s} baseline {baseline:7.2f} s/epoch | cached {cached:6.2f} s/epoch | speedup {row['speedup']:6.1f}x "
          f"(goal >= 10x) | cache build {build:.2f} s, {disk:.1f} MB on disk | peak RSS "
          f"{mem_base.peak_mb:.0f} MB vs {mem_cache.peak_mb:.0f} MB")
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="encoder folder (default: a random BERT-mini built here)")
    parser.add_argument("--examples", type=int, default=256)
    parser.add_argument("--seq", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lstm_hidden", type=int, default=128, help="BiLSTM units per direction (paper: 768)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for both loops")
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
        rows = [one_head("sentence: linear over [CLS]", "single_label_classification", "linear", args, encoder_dir,
                         tokenizer),
                one_head(f"NER: 2-layer BiLSTM {args.lstm_hidden}", "token_classification", "bilstm", args,
                         encoder_dir, tokenizer)]
    return rows


if __name__ == "__main__":
    main()
