"""Pretraining step time (forward + backward + AdamW) with the full MLM head vs the masked-positions-only head.

    python benchmarks/bench_pretrain_step.py [--preset tiny --vocab_size 30522 --batch_size 32 --seq 128 --steps 5]

Same weights, same batch (15 % of positions predicted, NSP labels): ``BertForPreTraining`` projects all B·L positions
to the vocabulary, ``BertForPreTrainingMaskedOnly`` only the predicted ones. Printed: median seconds per step of each
and the speed-up ratio (baseline = the full head, measured in the same run).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _step_time(model, batch, steps: int) -> float:
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    times = []
    for _ in range(steps + 1):
        start = time.perf_counter()
        model(**batch).loss.backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])  # first step warms up


def main(argv: list[str] | None = None) -> dict[str, float]:
    import torch
    from transformers import BertForPreTraining

    from hf_bert_tasks.modeling import bert_config
    from hf_bert_tasks.pretraining import BertForPreTrainingMaskedOnly

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--vocab_size", type=int, nargs="+", default=[30522, 8000])
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args(argv)

    results = {}
    for vocab in args.vocab_size:
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(5, vocab, (args.batch_size, args.seq), generator=g)
        labels = torch.where(torch.rand(ids.shape, generator=g) < 0.15, ids, torch.full_like(ids, -100))
        batch = {
            "input_ids": ids,
            "attention_mask": torch.ones_like(ids),
            "token_type_ids": torch.zeros_like(ids),
            "labels": labels,
            "next_sentence_label": torch.randint(0, 2, (args.batch_size,), generator=g),
        }
        config = bert_config(args.preset, vocab_size=vocab)
        torch.manual_seed(0)
        full = BertForPreTraining(config).train()
        masked = BertForPreTrainingMaskedOnly(config).train()
        masked.load_state_dict(full.state_dict())
        t_full = _step_time(full, batch, args.steps)
        t_masked = _step_time(masked, batch, args.steps)
        results[f"vocab{vocab}_full_s"] = t_full
        results[f"vocab{vocab}_masked_only_s"] = t_masked
        print(
            f"{args.preset} BERT, vocab {vocab}, batch {args.batch_size} x seq {args.seq}, "
            f"{torch.get_num_threads()} thread(s):"
        )
        print(f"  full MLM head (baseline)      {t_full:7.3f} s/step   1.00x")
        print(f"  masked-positions-only head    {t_masked:7.3f} s/step   {t_full / t_masked:5.2f}x faster")
    return results


if __name__ == "__main__":
    main()
