"""Padded vs padding-free training steps on REAL batches (issue 57 item 2): real tokens per second of each side.

    python benchmarks/padding_free.py --device cuda --dtype bf16 --preset base          # the GPU measurement
    python benchmarks/padding_free.py --device cpu --preset tiny --steps 3 --warmup 1 \\
        --seq 128 512 --batch 16 4 --finetune_batch 16 --max_documents 300                # a CPU rehearsal

Workloads (each: the same batches on both sides, in one process):

* ``pretrain@SEQ``: the transfer experiment's corpus (``tools/pretraining_transfer.py``: the unlabelled text of
  ``../shared/data``), a WordPiece vocabulary trained on it (``--vocab_size``), the pretrain recipe's NSP instances at
  ``SEQ`` (google's rules, ``short_seq_prob`` 0.1) in a seeded random order, batches of ``--batch`` masked by the
  recipe's collator (exact selection, 15 %); model ``BertForPreTrainingMaskedOnly`` (the recipe's default head);
* ``sst2`` / ``conll2003``: the tasks' own reader, preprocess (``max_seq_length`` 128) and collator on the first
  ``--finetune_examples`` training examples of ../shared/data, random batches of ``--finetune_batch``; model the
  task's head.

Each side: ``--warmup`` untimed steps, then ``--steps`` timed training steps (forward, backward, AdamW step), over
``--rounds`` rounds; the median round. Figures: real (non-padding) tokens per second of each side, their ratio,
the batches' padding share and, with a known peak (CUDA), MFU counted on real tokens (6 N real tokens/s over the
peak). Padding-free: :class:`hf_bert_tasks.padding_free.PaddingFreeCollator`'s batches and
:func:`hf_bert_tasks.padding_free.enable_padding_free` (on CUDA in bf16 the varlen kernel; on the CPU the fallback:
the attention re-padded, the rest of each layer on real tokens). ``--results FILE --step padding_free`` appends the
rows to gpu.sh's results file (benchmarks/gpu_report.py)."""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, REPO)


def _pretraining_batches(shared: str, tmp: str, seqs, batches, args) -> tuple:
    """``(tokenizer, {"pretrain@SEQ": [padded batch, ...]})`` from the transfer corpus (module docstring)."""
    import numpy as np

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining
    from hf_bert_tasks.pretraining.data import build_pretraining_dataset
    from hf_bert_tasks.pretraining.documents import load_documents
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    spec = importlib.util.spec_from_file_location(
        "pretraining_transfer", os.path.join(REPO, "tools", "pretraining_transfer.py")
    )
    transfer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(transfer)
    corpus = os.path.join(tmp, "corpus.txt")
    transfer.build_corpus(shared, corpus)
    docs = load_documents(corpus, cache_dir=os.path.join(tmp, "cache"))
    if args.max_documents:
        docs = docs.select(range(min(args.max_documents, len(docs))))
    tokenizer = train_wordpiece_tokenizer(
        lambda: (s for d in docs["sentences"] for s in d), vocab_size=args.vocab_size
    )
    out = {}
    n = args.warmup + args.steps
    for seq, batch in zip(seqs, batches):
        instances = build_pretraining_dataset(docs, tokenizer, max_seq_length=seq, short_seq_prob=0.1, seed=0)
        order = np.random.default_rng(0).permutation(len(instances))
        collator = DataCollatorForBertPretraining(
            tokenizer, seed=0, selection="exact", max_predictions_per_seq=seq // 6
        )
        rows = [instances[int(i)] for i in order[: n * batch]]
        keep = ("input_ids", "token_type_ids", "next_sentence_label")
        out[f"pretrain@{seq}"] = [
            collator([{k: r[k] for k in keep if k in r} for r in rows[i * batch : (i + 1) * batch]]) for i in range(n)
        ]
        if len(out[f"pretrain@{seq}"][-1]["input_ids"]) < batch:
            raise ValueError(f"pretrain@{seq}: {len(instances)} instances make fewer than {n} batches of {batch}")
    return tokenizer, out


def _task_batches(shared: str, tokenizer, args) -> dict:
    """``{task: [padded batch, ...]}`` of SST-2 and CoNLL-2003 from ../shared/data (module docstring)."""
    import numpy as np

    from hf_bert_tasks.tasks import get_task

    folders = {"sst2": "glue/SST-2", "conll2003": "conll2003"}
    out = {}
    n = args.warmup + args.steps
    for name, folder in folders.items():
        task = get_task(name)
        raw = task.load(os.path.join(shared, "data", folder))[task.train_split]
        raw = raw.select(range(min(args.finetune_examples, len(raw))))
        features = task.preprocess(raw, tokenizer, 128, task.train_split)
        columns = [
            c
            for c in ("input_ids", "token_type_ids", "attention_mask", "label", "labels")
            if c in features.column_names
        ]
        features = features.select_columns(columns)
        order = np.random.default_rng(0).permutation(len(features))
        collator, b = task.data_collator(tokenizer), args.finetune_batch
        out[name] = [collator([features[int(i)] for i in order[k * b : (k + 1) * b]]) for k in range(n)]
    return out


def _model(workload: str, vocab_size: int, args):
    import torch
    from transformers import BertConfig

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly
    from hf_bert_tasks.tasks import get_task
    from hf_bert_tasks.utils.modeling import BERT_PRESETS

    torch.manual_seed(0)
    sizes = {**BERT_PRESETS[args.preset], "vocab_size": vocab_size, "max_position_embeddings": 512}
    sizes["attention_probs_dropout_prob"] = args.attention_dropout  # torch's varlen kernel has no dropout
    if workload.startswith("pretrain@"):
        return BertForPreTrainingMaskedOnly(BertConfig(**sizes))
    task = get_task(workload)
    return task.model_class().from_config(BertConfig(**sizes, **task.model_config_kwargs()))


def _time_side(model, batches: list[dict], args, device) -> list[float]:
    """Seconds of each round's ``--steps`` timed training steps (after ``--warmup`` untimed ones)."""
    import torch

    model.to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
    moved = [{k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in b.items()} for b in batches]
    autocast = torch.autocast("cuda", torch.bfloat16) if args.dtype == "bf16" else contextlib.nullcontext()

    def step(batch):
        with autocast:
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    rounds = []
    for _ in range(args.rounds):
        for batch in moved[: args.warmup]:
            step(batch)
        sync()
        start = time.perf_counter()
        for batch in moved[args.warmup :]:
            step(batch)
        sync()
        rounds.append(time.perf_counter() - start)
    return rounds


def _check(padded_model, free_model, padded: dict, flat: dict, args, device) -> tuple[float, str]:
    """``(|loss padded - loss padding-free|, kernel)`` of the first batch, in evaluation mode (no dropout), before
    any step (same weights); ``kernel``: what :func:`hf_bert_tasks.padding_free.attention.kernel_for` picks for a
    training step at this dtype and attention dropout."""
    import torch

    from hf_bert_tasks.padding_free.attention import kernel_for

    autocast = torch.autocast("cuda", torch.bfloat16) if args.dtype == "bf16" else contextlib.nullcontext()
    losses = []
    for model, batch in ((padded_model, padded), (free_model, flat)):
        model.to(device).eval()
        with torch.no_grad(), autocast:
            moved = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
            losses.append(float(model(**moved).loss))
    probe = torch.zeros(1, 1, 1, 1, device=device, dtype=torch.bfloat16 if args.dtype == "bf16" else torch.float32)
    return abs(losses[0] - losses[1]), kernel_for(probe, args.attention_dropout)


def measure(workload: str, batches: list[dict], vocab_size: int, args, device, peak) -> dict:
    """Both sides of one workload: ``{real_tokens, padded_positions, padded_tokens_per_s, free_tokens_per_s, ...}``."""
    from gpu_bench import count_parameters, mfu_6n

    from hf_bert_tasks.padding_free import enable_padding_free, flatten_padded_batch

    timed = batches[args.warmup :]
    real = sum(int(b["attention_mask"].sum()) for b in timed)
    positions = sum(b["attention_mask"].numel() for b in timed)
    padded_model = _model(workload, vocab_size, args)
    free_model = enable_padding_free(copy.deepcopy(padded_model))
    flat = [flatten_padded_batch(b) for b in batches]
    loss_diff, kernel = _check(padded_model, free_model, batches[0], flat[0], args, device)
    padded_s = statistics.median(_time_side(padded_model, batches, args, device))
    free_s = statistics.median(_time_side(free_model, flat, args, device))
    result = {
        "workload": workload,
        "real_tokens": real,
        "padded_positions": positions,
        "padding_share": 1 - real / positions,
        "padded_tokens_per_s": real / padded_s,
        "free_tokens_per_s": real / free_s,
        "speedup": padded_s / free_s,
        "parameters": count_parameters(padded_model),
        "loss_abs_diff": loss_diff,
        "kernel": kernel,
    }
    if peak:
        result["padded_mfu_real"] = mfu_6n(result["parameters"], result["padded_tokens_per_s"], peak)
        result["free_mfu_real"] = mfu_6n(result["parameters"], result["free_tokens_per_s"], peak)
    print(
        f"{workload}: padding {100 * result['padding_share']:.1f} %; real tokens/s padded "
        f"{result['padded_tokens_per_s']:,.0f}, padding-free {result['free_tokens_per_s']:,.0f} "
        f"({result['speedup']:.2f}x); kernel {kernel}, |loss diff| {loss_diff:.2e}"
        + (
            f"; MFU on real tokens {100 * result['padded_mfu_real']:.1f} % -> {100 * result['free_mfu_real']:.1f} %"
            if peak
            else ""
        ),
        flush=True,
    )
    return result


def result_rows(results: list[dict], step: str, config: dict) -> list[dict]:
    """gpu_report rows of :func:`measure`'s results (tokens/s of each side, the ratio, padding share, MFU)."""
    import gpu_report

    rows = []
    for r in results:
        w, cfg = r["workload"], dict(config, workload=r["workload"], real_tokens=r["real_tokens"])
        rows += [
            gpu_report.make_row(step, f"{w}: real tokens/s, padded", r["padded_tokens_per_s"], "tokens/s", "-", cfg),
            gpu_report.make_row(
                step, f"{w}: real tokens/s, padding-free", r["free_tokens_per_s"], "tokens/s", "padded side", cfg
            ),
            gpu_report.make_row(
                step,
                f"{w}: padding-free vs padded",
                r["speedup"],
                "x",
                "issue 57's targets: >= 1.4x at 128, >= 2x at 512 (pretraining)",
                cfg,
            ),
            gpu_report.make_row(step, f"{w}: padding share", 100 * r["padding_share"], "%", "-", cfg),
            gpu_report.make_row(
                step,
                f"{w}: |loss padded - padding-free|, first batch ({r['kernel']})",
                r["loss_abs_diff"],
                "nats",
                "CPU float32 tests: < 1e-5",
                cfg,
            ),
        ]
        if "free_mfu_real" in r:
            for side in ("padded", "free"):
                name = "padded" if side == "padded" else "padding-free"
                rows.append(
                    gpu_report.make_row(
                        step, f"{w}: MFU on real tokens, {name}", 100 * r[f"{side}_mfu_real"], "%", "6N / peak", cfg
                    )
                )
    return rows


def main(argv=None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--shared", default=os.environ.get("HF_BERT_TASKS_SHARED") or os.path.join(REPO, "..", "shared")
    )
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "fp32"])
    parser.add_argument("--preset", default="base", choices=["tiny", "mini", "small", "base"])
    parser.add_argument("--vocab_size", type=int, default=8192)
    parser.add_argument("--attention_dropout", type=float, default=0.0, help="both sides (torch varlen: none)")
    parser.add_argument("--seq", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--batch", type=int, nargs="+", default=[256, 64])
    parser.add_argument("--finetune_batch", type=int, default=32)
    parser.add_argument("--finetune_examples", type=int, default=4000)
    parser.add_argument("--no_finetune", action="store_true", help="pretraining workloads only")
    parser.add_argument("--max_documents", type=int, default=None, help="first N corpus documents (a rehearsal)")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=None, help="torch threads (CPU)")
    parser.add_argument("--peak_tflops", type=float, default=None, help="device peak for MFU if not in the table")
    parser.add_argument("--json", default=None)
    parser.add_argument("--results", default=None, help="gpu.sh's results file to append rows to")
    parser.add_argument("--step", default="padding_free")
    args = parser.parse_args(argv)
    if len(args.seq) != len(args.batch):
        parser.error("give one --batch per --seq")
    import torch
    from gpu_bench import peak_tflops

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("--device cuda: torch sees no CUDA device (--device cpu for a rehearsal)")
    peak = peak_tflops(torch.cuda.get_device_name(), args.peak_tflops) if device.type == "cuda" else args.peak_tflops
    with tempfile.TemporaryDirectory() as tmp:
        tokenizer, workloads = _pretraining_batches(args.shared, tmp, args.seq, args.batch, args)
        if not args.no_finetune:
            workloads.update(_task_batches(args.shared, tokenizer, args))
        results = [measure(w, b, len(tokenizer), args, device, peak) for w, b in workloads.items()]
    config = {k: v for k, v in vars(args).items() if k not in ("json", "results", "shared", "peak_tflops")}
    if peak:  # the report names the peak behind the MFU rows
        source = "given with --peak_tflops" if args.peak_tflops else "dense bf16, vendor data sheet (gpu_bench)"
        config.update(peak_tflops=peak, peak_source=source)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"config": config, "results": results}, f, indent=2)
    if args.results:
        import gpu_report

        gpu_report.append_rows(args.results, result_rows(results, args.step, config))
    return results


if __name__ == "__main__":
    main()
