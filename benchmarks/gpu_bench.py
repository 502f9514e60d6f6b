"""BERT-base training throughput and MFU on one GPU: pretraining (MLM + NSP) and fine-tuning (sequence pairs).

    python benchmarks/gpu_bench.py                       # GPU: BERT-base, bf16, SDPA, ~2-3 minutes
    python benchmarks/gpu_bench.py --compile             # + torch.compile
    python benchmarks/gpu_bench.py --device cpu --tiny   # CPU smoke test of the same code (tiny config)

Called by ``benchmarks/gpu.sh``. Each measurement trains the model the recipes build for ~``--steps`` optimizer
steps on synthetic batches of full length (no data loading in the timed loop), after ``--warmup`` untimed steps:

* **pretraining**: ``BertForPreTrainingMaskedOnly`` (the pretrain recipe's model: MLM projection on the masked
  positions only), seq 128, 15 % of positions predicted (max 20, google's phase-1 setting), NSP labels;
* **fine-tuning**: ``BertForSequenceClassification`` (2 labels, the GLUE recipe's model), seq 128.

AdamW (fused on CUDA), autocast to ``--dtype`` (bf16 default; fp16 uses a GradScaler as Trainer's ``--fp16``),
attention through PyTorch SDPA (the recipes' default ``--attn_implementation sdpa``). Printed per run: step time,
tokens/s (batch x seq / step time; all positions are real tokens here), achieved TFLOP/s and MFU.

FLOPs per token (training = forward + backward = 3 x forward; Kaplan et al. 2020 / PaLM appendix B): 6 x N_matmul
+ 12 x L x H x S, where N_matmul counts the weights of the encoder's matrix multiplies (not embeddings, LayerNorm,
biases) plus the head actually computed (pretraining: the vocabulary projection for 15 % of the tokens; fine-tuning:
the pooler and classifier). MFU = achieved FLOP/s / the device's dense peak for the dtype (table below; pass
``--peak_tflops`` for another device).
"""

from __future__ import annotations

import argparse
import json
import os
import time

#: dense (no sparsity) peak TFLOP/s for bf16/fp16 tensor cores, from the vendors' data sheets.
PEAK_TFLOPS = {"H200": 989.0, "H100 SXM": 989.0, "H100 PCIe": 756.0, "H100": 989.0, "A100": 312.0, "L40S": 362.0,
               "L4": 121.0, "A10G": 70.0, "A10": 125.0, "V100": 125.0, "T4": 65.0, "RTX 4090": 165.0}


def peak_tflops(device_name: str, override: float | None) -> float | None:
    if override:
        return override
    for key in sorted(PEAK_TFLOPS, key=len, reverse=True):
        if key.lower() in device_name.lower():
            return PEAK_TFLOPS[key]
    return None


def flops_per_token(config, seq: int, head: str, predicted_fraction: float) -> float:
    """Training FLOPs per input token (see module docstring)."""
    L, H, inter, V = config.num_hidden_layers, config.hidden_size, config.intermediate_size, config.vocab_size
    encoder = L * (4 * H * H + 2 * H * inter)
    if head == "pretraining":
        head_params = predicted_fraction * (H * H + H * V) + (H * H + 2 * H) / seq  # MLM transform+decoder, pooler+NSP
    else:
        head_params = (H * H + 2 * H) / seq  # pooler + classifier, once per sequence
    return 6 * (encoder + head_params) + 12 * L * H * seq


def measure(kind: str, args, device, dtype) -> dict:
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from hf_bert_tasks.modeling import bert_config
    from hf_bert_tasks.pretraining import BertForPreTrainingMaskedOnly

    if args.tiny:
        config = bert_config("tiny", vocab_size=2000, max_position_embeddings=args.seq)
    else:
        config = bert_config("base", vocab_size=30522)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    if kind == "pretraining":
        model = BertForPreTrainingMaskedOnly(config)
        batch_size = args.pretrain_batch
    else:
        config = BertConfig(**{**config.to_dict(), "num_labels": 2})
        model = BertForSequenceClassification(config)
        batch_size = args.finetune_batch
    model.to(device).train()
    model.accepts_loss_kwargs = False
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=device.type == "cuda")
    scaler = torch.amp.GradScaler(enabled=dtype == torch.float16)
    step_fn = torch.compile(model) if args.compile else model
    g = torch.Generator(device="cpu").manual_seed(1)
    S = args.seq
    ids = torch.randint(5, config.vocab_size, (batch_size, S), generator=g).to(device)
    ids[:, 0] = 2
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids),
             "token_type_ids": torch.cat([torch.zeros(batch_size, S // 2), torch.ones(batch_size, S - S // 2)], 1).long().to(device)}
    predicted = min(20, round(0.15 * S))
    if kind == "pretraining":
        labels = torch.full((batch_size, S), -100, dtype=torch.long)
        for row in range(batch_size):
            pos = torch.randperm(S - 2, generator=g)[:predicted] + 1
            labels[row, pos] = ids[row, pos].cpu()
        batch["labels"] = labels.to(device)
        batch["next_sentence_label"] = torch.randint(0, 2, (batch_size,), generator=g).to(device)
    else:
        batch["labels"] = torch.randint(0, 2, (batch_size,), generator=g).to(device)
    autocast = torch.autocast(device.type, dtype=dtype, enabled=dtype != torch.float32)

    def step():
        with autocast:
            loss = step_fn(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        return loss

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    compile_start = time.perf_counter()
    for _ in range(args.warmup):
        loss = step()
    sync()
    warmup_s = time.perf_counter() - compile_start
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    sync()
    seconds = (time.perf_counter() - start) / args.steps
    tokens_per_s = batch_size * S / seconds
    fpt = flops_per_token(config, S, kind, predicted / S)
    achieved = fpt * tokens_per_s / 1e12
    peak = peak_tflops(torch.cuda.get_device_name() if device.type == "cuda" else "cpu", args.peak_tflops)
    row = {"kind": kind, "batch": batch_size, "seq": S, "dtype": str(dtype).replace("torch.", ""),
           "compile": args.compile, "step_s": seconds, "tokens_per_s": tokens_per_s, "tflops": achieved,
           "mfu": achieved / peak if peak else None, "warmup_s": warmup_s, "final_loss": loss.detach().float().item(),
           "params_m": sum(p.numel() for p in model.parameters()) / 1e6}
    if device.type == "cuda":
        row["peak_mem_gib"] = torch.cuda.max_memory_allocated() / 2**30
        torch.cuda.reset_peak_memory_stats()
    return row


def main(argv: list[str] | None = None) -> list[dict]:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (Trainer's --torch_compile)")
    parser.add_argument("--tiny", action="store_true", help="tiny BERT (CPU smoke test)")
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--pretrain_batch", type=int, default=256, help="paper: 256 sequences of 128 (phase 1)")
    parser.add_argument("--finetune_batch", type=int, default=32, help="paper's GLUE batch")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--peak_tflops", type=float, default=None, help="device peak for MFU if not in the table")
    parser.add_argument("--only", choices=["pretraining", "finetuning"], default=None)
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    device = torch.device(args.device)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  peak "
              f"{peak_tflops(torch.cuda.get_device_name(), args.peak_tflops)} TFLOP/s ({args.dtype})")
    rows = []
    for kind in [args.only] if args.only else ["pretraining", "finetuning"]:
        row = measure(kind, args, device, dtype)
        rows.append(row)
        mfu = f"{100 * row['mfu']:.1f} %" if row["mfu"] is not None else "n/a (no peak for this device)"
        print(f"{kind:12s} batch {row['batch']:4d} x seq {row['seq']}  {row['dtype']}{' +compile' if row['compile'] else ''}"
              f"  step {1000 * row['step_s']:8.1f} ms  tokens/s {row['tokens_per_s']:10.0f}  "
              f"{row['tflops']:7.1f} TFLOP/s  MFU {mfu}  (warmup {row['warmup_s']:.1f} s, loss {row['final_loss']:.3f})",
              flush=True)
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    return rows


if __name__ == "__main__":
    main()
