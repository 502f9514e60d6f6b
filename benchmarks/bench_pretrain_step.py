"""Pretraining step time (forward + backward + AdamW): ours (masked positions only) vs transformers' full MLM head.

    python benchmarks/bench_pretrain_step.py [--preset tiny --vocab_size 30522 8000 --batch_size 32 --seq 128]

Same weights (ours loads the reference's state dict), same batch (15 % of the positions are MLM targets, NSP labels),
same optimizer settings, one process, interleaved steps:

* reference: transformers' ``BertForPreTraining``, which projects all B x L positions to the vocabulary;
* ours: ``hf_bert_tasks.pretraining.recipe.BertForPreTrainingMaskedOnly``, which projects only the target positions (the
  pretrain recipe's ``--masked_only_decoder``). Both give the same loss (tests/test_pretrain_recipe.py).

One timed run is one optimizer step; each side has its own AdamW.
"""

from __future__ import annotations

import argparse
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

SMOKE_ARGS = ["--vocab_size", "8000", "--batch_size", "8", "--repeats", "2"]


def main(argv: list[str] | None = None) -> list[dict]:
    import torch
    from transformers import BertForPreTraining

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly
    from hf_bert_tasks.utils.modeling import bert_config

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default="tiny")
    parser.add_argument("--vocab_size", type=int, nargs="+", default=[30522, 8000])
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)

    results = []
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

        def step_fn(model, batch=batch):
            opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

            def run(_r):
                model(**batch).loss.backward()
                opt.step()
                opt.zero_grad()

            return run

        ref = "reference: transformers BertForPreTraining (full MLM head)"
        ours = "ours: BertForPreTrainingMaskedOnly (target positions only)"
        sides = [
            harness.Side(ref, "reference", step_fn(full), description="vocabulary projection of B x L positions"),
            harness.Side(ours, "ours", step_fn(masked), description="vocabulary projection of the MLM targets"),
        ]
        print(
            f"{args.preset} BERT, vocab {vocab}, batch {args.batch_size} x seq {args.seq}, "
            f"{torch.get_num_threads()} torch thread(s)"
        )
        measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
        res = harness.result(
            f"pretrain_step_vocab{vocab}",
            f"Pretraining step, {args.preset} BERT, vocab {vocab}",
            measured,
            [harness.Comparison(ours, ref)],
            config={
                "preset": args.preset,
                "vocab_size": vocab,
                "batch_size": args.batch_size,
                "seq": args.seq,
                "mlm_fraction": 0.15,
                "optimizer": "AdamW lr 1e-4",
                "threads": torch.get_num_threads(),
            },
            work=(args.batch_size * args.seq, "tokens"),
        )
        print(harness.format_result(res))
        results.append(res)
    return results


if __name__ == "__main__":
    main()
