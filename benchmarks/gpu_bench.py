"""BERT-base training throughput and MFU on one GPU (ours vs transformers' ``BertForPreTraining`` on the same
batches), and GLUE fine-tuning throughput of our recipe vs transformers' ``run_glue.py``.

    python benchmarks/gpu_bench.py                                   # GPU: BERT-base pretraining + fine-tuning, bf16
    python benchmarks/gpu_bench.py --only pretraining --sides ours,reference --seq 128 512 --pretrain_batch 256 64
    python benchmarks/gpu_bench.py --compile                         # + torch.compile
    python benchmarks/gpu_bench.py --device cpu --tiny               # CPU smoke test of the same code (tiny config)
    python benchmarks/gpu_bench.py glue --work runs/gpu/glue         # our fine-tune recipe vs run_glue.py

Called by ``benchmarks/gpu.sh`` (steps ``pretrain_throughput``, ``pretrain_compiled``, ``glue_vs_run_glue``), which
passes ``--results`` so the rows land in its JSON (schema: ``benchmarks/gpu_report.py``).

**Synthetic-batch throughput** (the default command). Each measurement trains one model for ``--steps`` optimizer
steps on synthetic batches of full length (no data loading in the timed loop), after ``--warmup`` untimed steps:

* **pretraining**, MLM + NSP at each ``--seq``, 15 % of the positions predicted, capped as google's
  create_pretraining_data.py (``max_predictions_per_seq`` 20 at seq <= 128, 80 above), NSP labels. Sides
  (``--sides``): *ours* = ``BertForPreTrainingMaskedOnly`` (the pretrain recipe's model: the MLM vocabulary projection
  on the masked positions only), *reference* = transformers' ``BertForPreTraining`` (projects all B x S positions to
  the vocabulary, then ignores the unmasked ones in the loss). Both start from the same weights (ours loads the
  reference's state dict), train on the same batch tensors with the same dtype, attention (SDPA) and optimizer;
* **fine-tuning**: ``BertForSequenceClassification`` (2 labels, the GLUE recipe's model), ours only (the reference
  would be the same model).

AdamW (lr 1e-4, weight decay 0.01, fused on CUDA), gradient clipping at 1.0, autocast to ``--dtype`` (bf16 default;
fp16 uses a GradScaler as Trainer's ``--fp16``). Per row: step time, tokens/s and sequences/s (batch x seq / step
time, every position a real token), and two MFUs against the device's dense bf16 peak (:data:`PEAK_TFLOPS`):

* ``mfu_6n`` (the headline, issue 26's definition): 6 x N x tokens/s / peak, N = every parameter of the model counted
  once (:func:`count_parameters`: embeddings included, the tied MLM decoder once). N and the FLOPs credited are the
  same for both sides, so their MFU ratio is their throughput ratio: the reference's extra vocabulary projections are
  wasted work, not model FLOPs;
* ``mfu`` (matmuls + attention): :func:`flops_per_token`, 6 x the weights of the matrix multiplies actually needed
  (encoder; the MLM head for the 15 % predicted tokens) + 12 x L x H x S for attention (Kaplan et al. 2020; PaLM,
  Chowdhery et al. 2022, appendix B).

**GLUE fine-tuning** (``glue``): a random-init BERT (``--preset``, base on a GPU) with a WordPiece vocabulary trained
on the built-in samples is fine-tuned on the built-in MRPC sample (``hf_bert_tasks/samples/MRPC``, 1,600 training
pairs) for ``--max_steps`` steps by ``hf-bert-tasks finetune`` and by ``../shared/baselines/glue/run_glue.py``
(transformers' example adapted to run offline; it reads the same rows converted to JSON Lines by that folder's
``convert_glue.py``), each in a fresh process with a fresh datasets cache. Same model folder, batch 32, max length
128, lr 2e-5, 10 % warmup, weight decay 0, seed 42, precision and optimizer, dynamic padding and length-grouped
batches (``--train_sampling_strategy group_by_length``; run_glue: ``--pad_to_max_length False``). Reported: each
side's Trainer ``train_samples_per_second`` (max_steps x batch / train_runtime) and ours / run_glue.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import gpu_report  # benchmarks/ is not a package: imported from its folder

#: dense (no sparsity) peak TFLOP/s for bf16/fp16 tensor cores, from the vendors' data sheets (H100/H200 SXM:
#: 989.4, A100: 312); the longest key contained in the device name wins (``peak_tflops``).
PEAK_TFLOPS = {
    "H200": 989.0,
    "H100 SXM": 989.0,
    "H100 PCIe": 756.0,
    "H100": 989.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10G": 70.0,
    "A10": 125.0,
    "V100": 125.0,
    "T4": 65.0,
    "RTX 4090": 165.0,
}
#: parameters of transformers' ``BertForPreTraining`` at BERT-large's size (L 24, H 1024, A 16, vocab 30522), the
#: tied decoder once; tests/test_gpu_bench.py recounts it from a model built on the meta device.
BERT_LARGE_PARAMS = 336_226_108
#: NVIDIA's BERT-large pretraining at seq 128 on one A100 in mixed precision (issue 26's anchor), sequences/s.
NVIDIA_A100_BERT_LARGE_SEQ_PER_S = 580.0
SIDE_LABELS = {
    "ours": "ours (BertForPreTrainingMaskedOnly)",
    "reference": "reference (transformers BertForPreTraining)",
}


def peak_key(device_name: str) -> str | None:
    """The :data:`PEAK_TFLOPS` entry for ``device_name`` (longest key contained in it, case-insensitive), or None."""
    for key in sorted(PEAK_TFLOPS, key=len, reverse=True):
        if key.lower() in device_name.lower():
            return key
    return None


def peak_tflops(device_name: str, override: float | None) -> float | None:
    """Dense bf16 peak TFLOP/s: ``override`` if given, else the table's entry for ``device_name`` (None: unknown)."""
    if override:
        return override
    key = peak_key(device_name)
    return PEAK_TFLOPS[key] if key else None


def count_parameters(model) -> int:
    """N of the 6N rule: the elements of every parameter tensor of ``model``, each tensor once (``parameters()``
    yields a tied tensor once: the MLM decoder weight is the word-embedding matrix)."""
    return sum(p.numel() for p in model.parameters())


def mfu_6n(n_params: int, tokens_per_s: float, peak: float) -> float:
    """Model FLOPs utilisation, as a fraction: ``6 * n_params * tokens_per_s`` FLOP/s (forward + backward, 2 + 4
    FLOPs per parameter and token) over ``peak`` TFLOP/s."""
    if peak <= 0:
        raise ValueError(f"peak must be > 0 TFLOP/s, got {peak}")
    return 6.0 * n_params * tokens_per_s / (peak * 1e12)


def anchor_mfu_bert_large_a100() -> float:
    """The NVIDIA anchor as an MFU by the same 6N formula: 580 sequences/s x 128 tokens of BERT-large
    (:data:`BERT_LARGE_PARAMS`) on one A100 (312 TFLOP/s dense bf16/fp16)."""
    return mfu_6n(BERT_LARGE_PARAMS, NVIDIA_A100_BERT_LARGE_SEQ_PER_S * 128, PEAK_TFLOPS["A100"])


def flops_per_token(config, seq: int, head: str, predicted_fraction: float) -> float:
    """Training FLOPs per input token (see module docstring), counting only the matmuls needed plus attention:
    6 x (encoder matmul weights + the head actually computed, per token) + 12 x L x H x S."""
    L, H, inter, V = config.num_hidden_layers, config.hidden_size, config.intermediate_size, config.vocab_size
    encoder = L * (4 * H * H + 2 * H * inter)
    if head == "pretraining":
        head_params = predicted_fraction * (H * H + H * V) + (H * H + 2 * H) / seq  # MLM transform+decoder, pooler+NSP
    else:
        head_params = (H * H + 2 * H) / seq  # pooler + classifier, once per sequence
    return 6 * (encoder + head_params) + 12 * L * H * seq


def predictions_per_sequence(seq: int) -> int:
    """MLM targets per synthetic sequence: 15 % of ``seq``, capped at google's ``max_predictions_per_seq`` (20 for
    seq <= 128, phase 1; 80 above, phase 2)."""
    return min(20 if seq <= 128 else 80, round(0.15 * seq))


def synthetic_batch(kind: str, vocab_size: int, batch_size: int, seq: int, device) -> dict:
    """One full-length batch (the same tensors for every side: generator seeded with 1).

    ``input_ids`` int64 [B, S] (ids 5..V-1, [CLS]=2 first), ``attention_mask`` all ones, ``token_type_ids`` 0 for the
    first half and 1 for the second; pretraining adds ``labels`` [B, S] (the original id at
    :func:`predictions_per_sequence` random positions, -100 elsewhere) and ``next_sentence_label`` [B]; fine-tuning
    adds ``labels`` [B] in {0, 1}.
    """
    import torch

    g = torch.Generator(device="cpu").manual_seed(1)
    ids = torch.randint(5, vocab_size, (batch_size, seq), generator=g)
    ids[:, 0] = 2
    batch = {
        "input_ids": ids,
        "attention_mask": torch.ones_like(ids),
        "token_type_ids": torch.cat(
            [torch.zeros(batch_size, seq // 2), torch.ones(batch_size, seq - seq // 2)], 1
        ).long(),
    }
    if kind == "pretraining":
        predicted = predictions_per_sequence(seq)
        labels = torch.full((batch_size, seq), -100, dtype=torch.long)
        for row in range(batch_size):
            pos = torch.randperm(seq - 2, generator=g)[:predicted] + 1
            labels[row, pos] = ids[row, pos]
        batch["labels"] = labels
        batch["next_sentence_label"] = torch.randint(0, 2, (batch_size,), generator=g)
    else:
        batch["labels"] = torch.randint(0, 2, (batch_size,), generator=g)
    return {k: v.to(device) for k, v in batch.items()}


def bench_config(args, seq: int):
    """BERT-base (vocab 30522) or, with ``--tiny``, the tiny preset (vocab 2000); SDPA attention."""
    from hf_bert_tasks.utils.modeling import bert_config

    if args.tiny:
        config = bert_config("tiny", vocab_size=2000, max_position_embeddings=max(512, seq))
    else:
        config = bert_config("base", vocab_size=30522)
    config._attn_implementation = "sdpa"
    return config


def build_model(kind: str, side: str, config):
    """The model of one side, initialised from seed 0: ``reference`` is ``BertForPreTraining``, ``ours`` is
    ``BertForPreTrainingMaskedOnly`` holding the same weights; fine-tuning: ``BertForSequenceClassification``."""
    import torch
    from transformers import BertConfig, BertForPreTraining, BertForSequenceClassification

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    torch.manual_seed(0)
    if kind == "finetuning":
        return BertForSequenceClassification(BertConfig(**{**config.to_dict(), "num_labels": 2}))
    reference = BertForPreTraining(config)
    if side == "reference":
        return reference
    ours = BertForPreTrainingMaskedOnly(config)
    ours.load_state_dict(reference.state_dict())
    return ours


def measure(
    kind: str,
    args,
    device,
    dtype,
    seq: int | None = None,
    batch_size: int | None = None,
    side: str = "ours",
    static: bool = False,
) -> dict:
    """Train one model (``kind``, ``side``) on one synthetic batch shape; returns the row (keys in main's print)."""
    import torch

    seq = seq or args.seq[0]
    batch_size = batch_size or (args.pretrain_batch[0] if kind == "pretraining" else args.finetune_batch)
    config = bench_config(args, seq)
    model = build_model(kind, side, config)
    static = static and kind == "pretraining" and side == "ours"
    if static:  # the same weights in the static-slot head (benchmarks/static_slots.py)
        from static_slots import BertForPreTrainingStaticSlots

        static_model = BertForPreTrainingStaticSlots(config)
        static_model.load_state_dict(model.state_dict())
        static_model.static_predictions = predictions_per_sequence(seq)  # google's masked_lm_positions slots
        model = static_model
    n_params = count_parameters(model)
    model.to(device).train()
    model.accepts_loss_kwargs = False
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.01, fused=device.type == "cuda")
    scaler = torch.amp.GradScaler(enabled=dtype == torch.float16)
    compile_kwargs = {"mode": args.compile_mode} if args.compile_mode else {}
    step_fn = torch.compile(model, backend=args.compile_backend, **compile_kwargs) if args.compile else model
    batch = synthetic_batch(kind, model.config.vocab_size, batch_size, seq, device)
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
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(1)  # the same dropout masks for every side: same weights + batch + masks -> same first loss
    compile_start = time.perf_counter()
    first_loss = step().detach().float().item()  # the first warmup step: same weights and batch -> same loss
    for _ in range(args.warmup - 1):
        loss = step()
    sync()
    warmup_s = time.perf_counter() - compile_start
    start = time.perf_counter()
    for _ in range(args.steps):
        loss = step()
    sync()
    seconds = (time.perf_counter() - start) / args.steps
    profile = profile_steps(step, args.profile, device, args.profile_top) if args.profile else None
    if profile is not None:  # time per step as the profile saw it (its overhead included): for the busy fraction
        print(
            f"profile ({profile['activity']}, {args.profile} steps): busy {100 * profile['busy']:.1f} % of "
            f"{profile['wall_ms'] / args.profile:.1f} ms a step; "
            + ", ".join(f"{k} {100 * v:.1f} %" for k, v in sorted(profile["families"].items(), key=lambda kv: -kv[1]))
        )
        for k in profile["top"]:
            print(f"  {100 * k['share']:5.1f} %  {k['ms'] / args.profile:8.3f} ms/step  x{k['calls']:<5d} {k['name']}")
    tokens_per_s = batch_size * seq / seconds
    fpt = flops_per_token(config, seq, kind, predictions_per_sequence(seq) / seq)
    achieved = fpt * tokens_per_s / 1e12
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
    peak = peak_tflops(device_name, args.peak_tflops)
    row = {
        "kind": kind,
        "side": side,
        "batch": batch_size,
        "seq": seq,
        "dtype": str(dtype).replace("torch.", ""),
        "compile": args.compile,
        "compile_backend": args.compile_backend if args.compile else None,
        "compile_mode": args.compile_mode if args.compile else None,
        "static_predictions": static,
        "step_s": seconds,
        "tokens_per_s": tokens_per_s,
        "sequences_per_s": batch_size / seconds,
        "tflops": achieved,
        "mfu": achieved / peak if peak else None,
        "params": n_params,
        "mfu_6n": mfu_6n(n_params, tokens_per_s, peak) if peak else None,
        "peak_tflops": peak,
        "peak_source": (
            "given with --peak_tflops"
            if args.peak_tflops
            else f"dense bf16, vendor data sheet: gpu_bench.PEAK_TFLOPS[{peak_key(device_name)!r}]"
            if peak
            else None
        ),
        "device_name": device_name,
        "warmup_s": warmup_s,
        "first_loss": first_loss,
        "final_loss": loss.detach().float().item() if args.steps else first_loss,
        "params_m": n_params / 1e6,
        "predictions_per_seq": predictions_per_sequence(seq) if kind == "pretraining" else None,
    }
    if device.type == "cuda":
        row["peak_mem_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
    if profile is not None:
        row["profile"] = profile
    return row


def profile_steps(step, n_steps: int, device, top: int) -> dict:
    """Run ``n_steps`` more training steps under ``torch.profiler`` and return what takes the step's time:
    ``{"steps", "activity", "total_ms" (device time of all kernels / ops over those steps, ms), "top": [{"name",
    "ms", "share" (fraction of total_ms), "calls"}, ...]}`` for the ``top`` kernels by self device time (CUDA
    kernels on a GPU; on CPU, operators by self CPU time, which only checks the plumbing). The profiled steps are
    not in the timed ones."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    cuda = device.type == "cuda"
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        start = time.perf_counter()
        for _ in range(n_steps):
            step()
        if cuda:
            torch.cuda.synchronize()
        wall_ms = 1000 * (time.perf_counter() - start)
    events = prof.key_averages()
    if cuda:  # kernels only (device_type CUDA); self time on the device
        timed = [
            (e.key, e.self_device_time_total, e.count)
            for e in events
            if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA and e.self_device_time_total > 0
        ]
    else:
        timed = [(e.key, e.self_cpu_time_total, e.count) for e in events if e.self_cpu_time_total > 0]
    total_us = sum(t for _, t, _ in timed)
    timed.sort(key=lambda x: -x[1])
    families: dict[str, float] = {}
    for name, t, _ in timed:
        families[kernel_family(name)] = families.get(kernel_family(name), 0.0) + t / max(total_us, 1e-9)
    return {
        "steps": n_steps,
        "activity": "CUDA kernels (self device time)" if cuda else "CPU operators (self CPU time)",
        "total_ms": total_us / 1000,
        "wall_ms": wall_ms,
        "busy": total_us / 1000 / wall_ms if wall_ms else 0.0,
        "families": families,
        "top": [
            {"name": name[:160], "ms": t / 1000, "share": t / total_us if total_us else 0.0, "calls": count}
            for name, t, count in timed[:top]
        ],
    }


def kernel_family(name: str) -> str:
    """A coarse class of a kernel or operator name, for the profile's summary rows: ``matmul`` (GEMMs: cutlass,
    cublas, sm90 xmma, aten::mm/addmm/bmm), ``attention`` (flash / memory-efficient / SDPA), ``optimizer`` (the
    fused/multi-tensor AdamW), ``softmax/cross-entropy``, ``elementwise/norm/other``."""
    n = name.lower()
    if any(k in n for k in ("flash", "fmha", "attention", "efficient_attention", "sdpa")):
        return "attention"
    if any(
        k in n
        for k in (
            "gemm",
            "cutlass",
            "cublas",
            "xmma",
            "sm90_",
            "nvjet",
            "aten::mm",
            "aten::addmm",
            "aten::bmm",
            "aten::linear",
            "matmul",
        )
    ):
        return "matmul"
    if any(k in n for k in ("adam", "multi_tensor", "foreach")):
        return "optimizer"
    if any(k in n for k in ("softmax", "cross_entropy", "nll_loss", "log_softmax")):
        return "softmax/cross-entropy"
    return "elementwise/norm/other"


def _variant(row: dict) -> str:
    """The fast-path options of a row, for its metric names: ``""`` (plain eager) or e.g. ``", compiled
    (reduce-overhead), static slots"``."""
    parts = []
    if row.get("compile"):
        parts.append(f"compiled ({row.get('compile_mode') or 'default'})")
    if row.get("static_predictions"):
        parts.append("static slots")
    return "".join(", " + p for p in parts)


def _same_shape(a: dict, b: dict) -> bool:
    return all(a.get(k) == b.get(k) for k in ("kind", "seq", "batch", "dtype"))


def throughput_result_rows(rows: list[dict], step: str, previous: list[dict]) -> list[dict]:
    """gpu.sh result rows (gpu_report's schema) for measured pretraining ``rows``: per row its sequences/s and MFU
    (6N, %), then ours / reference where both sides ran the same shape, and torch.compile / eager where ``previous``
    (the results file so far) holds the eager row of the same side and shape.

    Raises:
        ValueError: a row without MFU (no peak known for the device: pass ``--peak_tflops``).
    """
    anchor_mfu = 100 * anchor_mfu_bert_large_a100()
    out = []
    for r in rows:
        if r["kind"] != "pretraining":
            continue
        if r["mfu_6n"] is None:
            raise ValueError(
                f"no bf16 peak known for device {r['device_name']!r} (table: {sorted(PEAK_TFLOPS)}); "
                "pass --peak_tflops"
            )
        mode = f", {r['compile_mode']}" if r.get("compile_mode") else ""
        compiled = f", torch.compile ({r['compile_backend']}{mode})" if r["compile"] else ""
        static = ", static MLM slots" if r.get("static_predictions") else ""
        shape = f"seq {r['seq']} x batch {r['batch']}, {r['dtype']}{compiled}{static}"
        config = {
            k: r.get(k)
            for k in (
                "kind",
                "side",
                "seq",
                "batch",
                "dtype",
                "compile",
                "compile_backend",
                "compile_mode",
                "static_predictions",
                "step_s",
                "tokens_per_s",
                "params",
                "peak_tflops",
                "peak_source",
                "first_loss",
                "final_loss",
                "predictions_per_seq",
                "warmup_s",
            )
        }
        config["mfu_matmul_attention"] = r["mfu"]
        if "peak_mem_gib" in r:
            config["peak_mem_gib"] = r["peak_mem_gib"]
        if r["side"] == "ours" and r["seq"] == 128:
            rate_anchor = (
                "NVIDIA BERT-large seq 128: ~580 sequences/s on one A100, mixed precision (BERT-large: ~3x "
                "BERT-base's FLOPs per token; compare the MFU rows)"
            )
        elif r["side"] == "ours":
            rate_anchor = "the reference row of the same shape (no published figure quoted here)"
        else:
            rate_anchor = "same batches, weights, dtype, SDPA attention and AdamW as the ours row"
        out.append(
            gpu_report.make_row(
                step,
                f"{SIDE_LABELS[r['side']]} sequences/s, {shape}",
                r["sequences_per_s"],
                "sequences/s",
                rate_anchor,
                config,
            )
        )
        out.append(
            gpu_report.make_row(
                step,
                f"{SIDE_LABELS[r['side']]} MFU (6N, N = {r['params'] / 1e6:.1f}M), {shape}",
                100 * r["mfu_6n"],
                "%",
                f"NVIDIA's 580 seq/s = {anchor_mfu:.1f} % by this 6N formula (BERT-large, A100 312 TFLOP/s); MosaicBERT "
                "(Portes et al. 2023) reports its MFU with unpadding and bf16",
                config,
            )
        )
        out.append(
            gpu_report.make_row(
                step,
                f"{SIDE_LABELS[r['side']]} MFU (needed FLOPs: gpu_bench.flops_per_token), {shape}",
                100 * r["mfu"],
                "%",
                "issue 42's goal: 50 % of the FLOPs the step needs (encoder, MLM head on the predicted positions, "
                "attention)",
                config,
            )
        )
    for r in rows:
        prof = r.get("profile")
        if not prof:
            continue
        shape = f"{r['side']}, seq {r['seq']} x batch {r['batch']}{_variant(r)}"
        what = "GPU kernels" if prof["activity"].startswith("CUDA") else "CPU operators (dry run)"
        cfg = {
            "seq": r["seq"],
            "side": r["side"],
            "profile_steps": prof["steps"],
            "wall_ms": prof["wall_ms"],
            "total_ms": prof["total_ms"],
        }
        out.append(
            gpu_report.make_row(
                step,
                f"profile {shape}: {what} busy (their time / wall time of {prof['steps']} steps)",
                100 * prof["busy"],
                "%",
                "100 % = the device never waits for the host (launch overhead, syncs)",
                cfg,
            )
        )
        for family, share in sorted(prof["families"].items(), key=lambda kv: -kv[1]):
            if share > 0:
                out.append(
                    gpu_report.make_row(
                        step,
                        f"profile {shape}: share of {what} time, {family}",
                        100 * share,
                        "%",
                        "gpu_bench.kernel_family classes",
                        cfg,
                    )
                )
        for i, k in enumerate(prof["top"], 1):
            if k["share"] > 0:
                out.append(
                    gpu_report.make_row(
                        step,
                        f"profile {shape}: #{i} {k['name'][:90]}",
                        100 * k["share"],
                        "%",
                        f"{k['ms'] / prof['steps']:.3f} ms a step, {k['calls']} calls in {prof['steps']} steps",
                        cfg,
                    )
                )
    for ours in rows:
        if ours["kind"] != "pretraining" or ours["side"] != "ours":
            continue
        for ref in rows:
            if (
                ref["side"] == "reference"
                and ref["compile"] == ours["compile"]
                and _same_shape(ours, ref)
                and not ours.get("static_predictions")
            ):
                out.append(
                    gpu_report.make_row(
                        step,
                        f"ours / reference sequences/s, seq {ours['seq']} x batch {ours['batch']}",
                        ours["sequences_per_s"] / ref["sequences_per_s"],
                        "x",
                        "> 1: the masked-only MLM decoder is faster on the same batches",
                        {"seq": ours["seq"]},
                    )
                )
        if ours["compile"]:
            for old in previous:
                c = old.get("config", {})
                if (
                    old["units"] == "sequences/s"
                    and c.get("side") == "ours"
                    and not c.get("compile")
                    and not c.get("static_predictions")
                    and _same_shape(ours, c)
                ):
                    out.append(
                        gpu_report.make_row(
                            step,
                            f"ours torch.compile / eager sequences/s, seq {ours['seq']} x batch {ours['batch']}"
                            f"{', static MLM slots (eager: plain head)' if ours.get('static_predictions') else ''}",
                            ours["sequences_per_s"] / old["value"],
                            "x",
                            f"eager row of step {old['step']} (same shape and dtype)",
                            {"seq": ours["seq"]},
                        )
                    )
    return out


def throughput_main(argv: list[str] | None = None) -> list[dict]:
    import torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model (Trainer's --torch_compile)")
    parser.add_argument(
        "--compile_backend",
        default="inductor",
        help="torch.compile backend (inductor; 'eager' traces with dynamo only: CPU smoke tests)",
    )
    parser.add_argument(
        "--compile_mode",
        default=None,
        choices=["default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"],
        help="torch.compile mode (reduce-overhead: CUDA graphs)",
    )
    parser.add_argument(
        "--static_predictions",
        nargs="?",
        const="on",
        default="off",
        choices=["off", "on", "both"],
        help="ours: fixed masked-position slots per row (BertForPreTrainingMaskedOnly."
        "static_predictions); both: ours without, then with",
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        help="after timing, profile this many steps with torch.profiler (top kernels, their share)",
    )
    parser.add_argument("--profile_top", type=int, default=12, help="kernels listed by --profile")
    parser.add_argument("--tiny", action="store_true", help="tiny BERT (CPU smoke test)")
    parser.add_argument("--seq", type=int, nargs="+", default=[128], help="sequence length(s)")
    parser.add_argument(
        "--pretrain_batch",
        type=int,
        nargs="+",
        default=[256],
        help="pretraining batch per --seq (one value: for all; paper: 256 sequences of 128)",
    )
    parser.add_argument("--finetune_batch", type=int, default=32, help="paper's GLUE batch")
    parser.add_argument("--sides", default="ours", help="pretraining sides, comma-separated: ours, reference")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--peak_tflops", type=float, default=None, help="device peak for MFU if not in the table")
    parser.add_argument("--only", choices=["pretraining", "finetuning"], default=None)
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    parser.add_argument("--results", default=None, help="append gpu.sh result rows to this JSON (gpu_report.py)")
    parser.add_argument("--step", default="pretrain_throughput", help="step name of the --results rows")
    args = parser.parse_args(argv)
    if len(args.pretrain_batch) not in (1, len(args.seq)):
        parser.error(f"--pretrain_batch: give one value or one per --seq ({len(args.seq)}), got {args.pretrain_batch}")
    sides = [s.strip() for s in args.sides.split(",") if s.strip()]
    if not sides or any(s not in SIDE_LABELS for s in sides):
        parser.error(f"--sides: comma-separated from {list(SIDE_LABELS)}, got {args.sides!r}")
    if args.warmup < 1 or args.steps < 1:
        parser.error("--warmup and --steps must be >= 1")
    batches = args.pretrain_batch * len(args.seq) if len(args.pretrain_batch) == 1 else args.pretrain_batch
    device = torch.device(args.device)
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        print(
            f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  peak "
            f"{peak_tflops(torch.cuda.get_device_name(), args.peak_tflops)} TFLOP/s ({args.dtype})"
        )
    plan = []
    for kind in [args.only] if args.only else ["pretraining", "finetuning"]:
        if kind == "pretraining":
            statics = {"off": [False], "on": [True], "both": [False, True]}[args.static_predictions]
            plan += [
                (kind, seq, batch, side, static)
                for seq, batch in zip(args.seq, batches)
                for side in sides
                for static in (statics if side == "ours" else [False])
            ]
        else:
            plan += [(kind, seq, args.finetune_batch, "ours", False) for seq in args.seq]
    rows = []
    failed = []
    for kind, seq, batch, side, static in plan:
        try:
            row = measure(kind, args, device, dtype, seq=seq, batch_size=batch, side=side, static=static)
        except Exception as error:  # noqa: BLE001 - one failing variant must not take the others' rows with it
            import traceback

            traceback.print_exc()
            failed.append(f"{kind} {side}{' static' if static else ''} seq {seq}: {type(error).__name__}: {error}")
            if device.type == "cuda":
                torch.cuda.empty_cache()
            continue
        rows.append(row)
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the finished side's model and optimizer state are garbage now
        mfu = (
            f"{100 * row['mfu_6n']:.1f} % (6N), {100 * row['mfu']:.1f} % (matmul+attention)"
            if row["mfu"] is not None
            else "n/a (no peak for this device)"
        )
        print(
            f"{kind:12s} {side:9s}{' static' if row['static_predictions'] else ''} batch {row['batch']:4d} x seq "
            f"{row['seq']}  {row['dtype']}"
            f"{' +compile' if row['compile'] else ''}  step {1000 * row['step_s']:8.1f} ms  "
            f"sequences/s {row['sequences_per_s']:9.1f}  tokens/s {row['tokens_per_s']:10.0f}  "
            f"{row['tflops']:7.1f} TFLOP/s  MFU {mfu}  (warmup {row['warmup_s']:.1f} s, loss {row['first_loss']:.3f}"
            f" -> {row['final_loss']:.3f})",
            flush=True,
        )
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)
    if args.results:
        result = throughput_result_rows(rows, args.step, gpu_report.load_rows(args.results))
        gpu_report.append_rows(args.results, result)
        for r in result:
            if r["units"] == "x":
                print(f"{r['metric']}: {r['value']:.3f}x")
    if failed:  # after the others' rows are written
        raise RuntimeError(f"{len(failed)} of {len(plan)} measurements failed: " + "; ".join(failed))
    return rows


# ---------------------------------------------------------------------------------------------- GLUE vs run_glue
def _shared_root(given: str | None) -> str:
    """``given``, else ``$HF_BERT_TASKS_SHARED``, else ``../shared`` next to the repository (benchmarks/harness.py's
    rule). Raises ``FileNotFoundError`` when it holds no ``baselines/glue/run_glue.py``."""
    root = given or os.environ.get("HF_BERT_TASKS_SHARED") or os.path.normpath(os.path.join(REPO, "..", "shared"))
    if not os.path.isfile(os.path.join(root, "baselines", "glue", "run_glue.py")):
        raise FileNotFoundError(
            f"{root}/baselines/glue/run_glue.py is absent: the GLUE comparison needs ../shared "
            "(--shared or HF_BERT_TASKS_SHARED: the folder holding data/ and baselines/)"
        )
    return root


def build_glue_model(output_dir: str, preset: str, vocab_size: int) -> str:
    """A random-init ``BertForPreTraining`` of ``preset`` (seed 0) with a 2,000-piece WordPiece vocabulary trained on
    the built-in samples, saved to ``output_dir``. The embedding matrix has ``max(vocab_size, len(tokenizer))`` rows
    (30522 for BERT-base: the real model's size and optimizer cost; ids above the tokenizer's never occur)."""
    import torch
    from transformers import BertForPreTraining

    from hf_bert_tasks.utils.modeling import bert_config
    from hf_bert_tasks.utils.resources import sample_texts
    from hf_bert_tasks.utils.tokenizers import save_tokenizer_for_model, train_wordpiece_tokenizer

    tokenizer = train_wordpiece_tokenizer(sample_texts(), vocab_size=2000)
    config = bert_config(preset, vocab_size=max(vocab_size, len(tokenizer)), pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    BertForPreTraining(config).save_pretrained(output_dir)
    save_tokenizer_for_model(tokenizer, output_dir, config)
    return output_dir


def write_mrpc_json(shared: str, data_dir: str, out_dir: str) -> dict:
    """``data_dir``'s MRPC ``train.tsv`` / ``dev.tsv`` as run_glue's JSON Lines (``train.json``, ``validation.json``)
    with ``convert_glue.py``'s own MRPC reader (``shared/baselines/glue``). Returns the paths."""
    spec = importlib.util.spec_from_file_location(
        "convert_glue", os.path.join(shared, "baselines", "glue", "convert_glue.py")
    )
    convert = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(convert)
    os.makedirs(out_dir, exist_ok=True)
    paths = {}
    for split, name in (("train", "train.tsv"), ("validation", "dev.tsv")):
        rows = convert.convert_mrpc(os.path.join(data_dir, name))
        paths[split] = os.path.join(out_dir, f"{split}.json")
        with open(paths[split], "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    return paths


def _run_logged(cmd: list[str], log: str, env: dict) -> float:
    """Run ``cmd`` with stdout+stderr in ``log``; returns its wall seconds. Raises ``RuntimeError`` with the log's
    last lines when it fails."""
    start = time.perf_counter()
    with open(log, "w", encoding="utf-8") as f:
        status = subprocess.run(cmd, check=False, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    if status != 0:
        with open(log, encoding="utf-8", errors="replace") as f:
            tail = "".join(f.readlines()[-30:])
        raise RuntimeError(f"exit status {status}: {' '.join(cmd)}\n--- last lines of {log}:\n{tail}")
    return time.perf_counter() - start


#: the phases of timed_main.py --phases, in the order of a run, with their names in the report
PHASES = (
    ("interpreter_s", "interpreter start"),
    ("startup_s", "start-up (imports, data, model, Trainer)"),
    ("data_s", "data loading + collation (+ logging)"),
    ("forward_backward_s", "forward + backward + clipping"),
    ("optimizer_s", "optimizer step"),
    ("step_end_s", "scheduler + zero_grad"),
    ("eval_s", "evaluation during training"),
    ("after_train_s", "after training (save, writes)"),
)


def phase_rows(step: str, results: dict) -> list[dict]:
    """Result rows of the per-phase breakdown (``results[side]["phases"]``, seconds from timed_main.py --phases):
    per side and phase its seconds (phases of 0 s get no row), then run_glue / ours per phase where both are > 0;
    the ``steps`` each side timed go into the rows' config."""
    out = []
    for name, label in (("ours", "ours"), ("run_glue", "run_glue.py"), ("ours_compiled", "ours + torch.compile")):
        if name not in results:
            continue
        phases = results[name]["phases"]
        for key, what in PHASES:
            if phases.get(key, 0.0) > 0:
                out.append(
                    gpu_report.make_row(
                        step,
                        f"phase {what}: {label}",
                        phases[key],
                        "s",
                        "timed_main.py --phases (Trainer events, CUDA synchronised)",
                        {"steps": phases.get("steps")},
                    )
                )
    ours, theirs = results["ours"]["phases"], results["run_glue"]["phases"]
    for key, what in PHASES:
        if ours.get(key, 0.0) > 0 and theirs.get(key, 0.0) > 0:
            out.append(
                gpu_report.make_row(
                    step,
                    f"phase {what}: run_glue / ours",
                    theirs[key] / ours[key],
                    "x",
                    "> 1: run_glue.py spends longer in this phase",
                    {},
                )
            )
    return out


def glue_main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(
        prog="gpu_bench.py glue", description="GLUE fine-tune throughput: hf-bert-tasks finetune vs run_glue.py"
    )
    parser.add_argument("--work", required=True, help="folder for the model, data, runs and logs (replaced)")
    parser.add_argument("--preset", default="base", help="BERT preset of the random-init model")
    parser.add_argument("--vocab_size", type=int, default=30522, help="embedding rows (at least the tokenizer's)")
    parser.add_argument("--data_dir", default=os.path.join(REPO, "hf_bert_tasks", "samples", "MRPC"))
    parser.add_argument("--shared", default=None, help="folder holding baselines/glue (default ../shared)")
    parser.add_argument("--max_steps", type=int, default=200)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--precision", choices=["bf16", "fp32"], default="bf16")
    parser.add_argument("--results", default=None, help="append gpu.sh result rows to this JSON")
    parser.add_argument("--step", default="glue_vs_run_glue")
    parser.add_argument("--compiled_side", action="store_true", help="also ours with --torch_compile True")
    args = parser.parse_args(argv)
    shared = _shared_root(args.shared)
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    model = build_glue_model(os.path.join(args.work, f"random-bert-{args.preset}"), args.preset, args.vocab_size)
    data = write_mrpc_json(shared, args.data_dir, os.path.join(args.work, "mrpc_json"))
    precision = (
        ["--bf16", "True", "--optim", "adamw_torch_fused"] if args.precision == "bf16" else ["--optim", "adamw_torch"]
    )
    common = [
        "--model_name_or_path",
        model,
        "--do_train",
        "--max_seq_length",
        "128",
        "--per_device_train_batch_size",
        str(args.batch_size),
        "--learning_rate",
        "2e-5",
        "--warmup_steps",
        "0.1",
        "--weight_decay",
        "0.0",
        "--seed",
        "42",
        "--max_steps",
        str(args.max_steps),
        "--train_sampling_strategy",
        "group_by_length",
        "--save_strategy",
        "no",
        "--logging_steps",
        "50",
        "--report_to",
        "none",
        "--disable_tqdm",
        "True",
        *precision,
    ]
    timed = [sys.executable, os.path.join(HERE, "timed_main.py"), "--phases"]
    sides = {
        "run_glue": [
            "--script",
            os.path.join(shared, "baselines", "glue", "run_glue.py"),
            "--",
            "--task_name",
            "mrpc",
            "--train_file",
            data["train"],
            "--validation_file",
            data["validation"],
            "--pad_to_max_length",
            "False",
            *common,
        ],
        "ours": [
            "--module",
            "hf_bert_tasks.cli",
            "--",
            "finetune",
            "--task",
            "mrpc",
            "--data_dir",
            args.data_dir,
            "--eval_strategy",
            "no",
            *common,
        ],
    }
    if args.compiled_side:  # ours again with torch.compile: is compiling worth it for fine-tuning (dynamic shapes)?
        sides["ours_compiled"] = sides["ours"] + ["--torch_compile", "True"]
    results = {}
    for name, side_args in sides.items():
        out_dir = os.path.join(args.work, name)
        env = dict(
            os.environ,
            HF_HUB_OFFLINE="1",
            HF_DATASETS_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
            TOKENIZERS_PARALLELISM="false",
            HF_DATASETS_CACHE=os.path.join(args.work, f"cache-{name}"),
            PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
        )
        report = os.path.join(args.work, f"{name}.timed.json")
        cmd = [*timed, "--report", report, *side_args, "--output_dir", out_dir]
        wall = _run_logged(cmd, os.path.join(args.work, f"{name}.log"), env)
        path = os.path.join(out_dir, "train_results.json")
        if not os.path.isfile(path):
            raise RuntimeError(f"{name}: {path} is absent after a successful run (see {args.work}/{name}.log)")
        with open(path, encoding="utf-8") as f:
            results[name] = dict(json.load(f), wall_s=wall, command=cmd)
        with open(report, encoding="utf-8") as f:
            timing = json.load(f)
        r = results[name]
        r["phases"] = dict(timing["phases"], interpreter_s=max(wall - timing["import_s"] - timing["main_s"], 0.0))
        print(
            f"{name:13s} {r['train_samples_per_second']:9.1f} samples/s  train_runtime {r['train_runtime']:.1f} s  "
            f"train_loss {r['train_loss']:.4f}  (whole process {wall:.1f} s)",
            flush=True,
        )
        print(
            "              phases: "
            + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in r["phases"].items()),
            flush=True,
        )
    ratio = results["ours"]["train_samples_per_second"] / results["run_glue"]["train_samples_per_second"]
    print(f"ours / run_glue: {ratio:.3f}x")
    rows = []
    if args.results:
        setting = (
            f"MRPC sample, random {args.preset}, {args.max_steps} steps x {args.batch_size}, {args.precision}, "
            "dynamic padding + group_by_length"
        )
        for name, label in (("ours", "ours (hf-bert-tasks finetune)"), ("run_glue", "run_glue.py")):
            r = results[name]
            config = {k: r[k] for k in ("train_runtime", "train_loss", "wall_s", "command")}
            rows.append(
                gpu_report.make_row(
                    args.step,
                    f"{label} train samples/s, {setting}",
                    r["train_samples_per_second"],
                    "samples/s",
                    "run_glue.py (transformers' example), same data, model and settings",
                    config,
                )
            )
        if "ours_compiled" in results:
            r = results["ours_compiled"]
            rows.append(
                gpu_report.make_row(
                    args.step,
                    f"ours + torch.compile train samples/s, {setting}",
                    r["train_samples_per_second"],
                    "samples/s",
                    "the ours row (eager)",
                    {k: r[k] for k in ("train_runtime", "train_loss", "wall_s")},
                )
            )
            rows.append(
                gpu_report.make_row(
                    args.step,
                    "ours torch.compile / eager train samples/s",
                    r["train_samples_per_second"] / results["ours"]["train_samples_per_second"],
                    "x",
                    "> 1: compile pays for itself within these steps",
                    {},
                )
            )
        rows += phase_rows(args.step, results)
        rows.append(
            gpu_report.make_row(
                args.step, "ours / run_glue train samples/s", ratio, "x", "1.0 = as fast as run_glue.py", {}
            )
        )
        gpu_report.append_rows(args.results, rows)
    return rows


def main(argv: list[str] | None = None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["glue"]:
        return glue_main(argv[1:])
    return throughput_main(argv)


if __name__ == "__main__":
    try:
        main()
    except (ValueError, RuntimeError, FileNotFoundError) as error:
        sys.exit(f"gpu_bench.py: {error}")
