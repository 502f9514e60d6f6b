"""Feature-based mode, training epochs of the BiLSTM head: the head alone (the limit), the cached epochs through
``Trainer`` without and with the one-off cache build, and ``Trainer`` recomputing the frozen encoder.

    python benchmarks/bench_feature_cache.py                      # random BERT-mini (4 x 256), offline
    python benchmarks/bench_feature_cache.py --model PATH --examples 160 --batch 8 --epochs 3
    python benchmarks/run.py feature_cache --smoke                # plumbing check at a tiny size

Every side is this package's code (variants, not a reference). For each head — the paper's NER head (§5.3: a
two-layer BiLSTM, 768 units per direction) and a small one (``--small_hidden`` per direction) — with the same encoder,
data (synthetic sentences of 8..``--seq`` WordPieces with token labels), strategy ``concat_last_four``, batch size,
learning rate and thread count, interleaved in one process:

* **head alone (limit)**: forward + backward + gradient clipping + AdamW step of the model on cached ``features``,
  over the very batches ``Trainer``'s data loader yields for the cache (collated once, untimed, held in memory):
  the head's own compute, nothing else;
* **cached epochs (Trainer)**: ``Trainer.train()`` on a feature cache built before the round (``datasets`` Arrow
  file read through :class:`~hf_bert_tasks.modes.feature_based.mode.FeatureCacheCollator`): the per-epoch cost;
* **cached incl. build (Trainer)**: the run builds the cache (one encoder pass, ``build_feature_cache``) into a
  fresh folder, then ``Trainer.train()`` on it, as ``--mode feature_based`` does on a cache miss: what a run pays;
* **recompute encoder (Trainer)**: ``Trainer.train()`` on the tokenized split: the frozen encoder runs
  on every batch (``--feature_cache false``).

Each timed run trains ``--epochs`` epochs (default 2; Trainer.train()'s one-off set-up and its closing
``gc.collect()`` are in the Trainer sides, amortised over the epochs). Ratios: cached / limit (goal of issue 14:
<= 1.10), recompute / cached (the per-epoch speed-up, build left out) and recompute / cached incl. build (the
speed-up at ``--epochs`` epochs, build paid). Figures: per-epoch cost, the build (timed inside every "incl. build"
round), build + epochs x per-epoch, and the epochs after which the cache has paid for its build. The default size
(80 sequences of 8..32 WordPieces, mean 20 — CoNLL-2003 train averages 19.0 with the all-MiniLM-L6-v2 tokenizer —
batch 4) gives 20 batches per epoch, so Trainer's per-step costs weigh as in a real epoch; the run fails if the
default size gives fewer than :data:`MIN_BATCHES`. The paper head costs ~0.2 s per sequence-epoch on one thread at
this size, so the benchmark takes ~8 minutes on one idle core. A fresh model and ``Trainer`` are built untimed
before every run.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

SMOKE_ARGS = ["--examples", "8", "--seq", "16", "--batch", "4", "--epochs", "2", "--repeats", "2", "--warmup", "1"]
#: batches per epoch the default size must give (an epoch of one batch hides Trainer's per-step costs; issue 23)
MIN_BATCHES = 20


def synthetic_features(n: int, seq: int, vocab: int, seed: int = 0):
    """``n`` random sequences of 8..``seq`` WordPieces ([CLS] ... [SEP]) with 9 token labels (``datasets.Dataset``)."""
    import datasets
    import numpy as np

    rng = np.random.default_rng(seed)
    ids, labels = [], []
    for _ in range(n):
        length = int(rng.integers(8, seq + 1))
        ids.append([2] + rng.integers(5, vocab, length - 2).tolist() + [3])
        labels.append([-100] + rng.integers(0, 9, length - 2).tolist() + [-100])
    return datasets.Dataset.from_dict(
        {"input_ids": ids, "attention_mask": [[1] * len(x) for x in ids], "labels": labels}
    )


def one_head(hidden: int, args, encoder_dir, tokenizer, root) -> dict:
    import torch
    from transformers import DataCollatorForTokenClassification, Trainer, TrainingArguments

    from hf_bert_tasks.modes.feature_based.mode import BertFeatureBasedModel, FeatureCacheCollator, build_feature_cache

    torch.set_num_threads(args.threads)
    data = synthetic_features(args.examples, args.seq, len(tokenizer))
    token_collator = DataCollatorForTokenClassification(tokenizer)

    def new_model():
        torch.manual_seed(0)
        return BertFeatureBasedModel.from_encoder(
            encoder_dir,
            "token_classification",
            "concat_last_four",
            head="bilstm",
            num_labels=9,
            head_hidden_size=hidden,
        )

    def build(model, folder):
        """The one-off cache build (one encoder pass at the training batch size) and the collator reading it."""
        cache, layers, hit = build_feature_cache(model, data, token_collator, folder, args.seq, batch_size=args.batch)
        if hit:
            raise RuntimeError(f"{folder}: expected a fresh cache build, found an existing cache")
        return cache, FeatureCacheCollator(
            layers, model.layers, model.encoder.config.hidden_size, fallback=token_collator
        )

    cache, cache_collator = build(new_model(), os.path.join(root, f"cache{hidden}"))
    cache_mb = sum(os.path.getsize(f["filename"]) for f in cache.cache_files) / 2**20
    targs = TrainingArguments(
        output_dir=os.path.join(root, "out"),
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch,
        learning_rate=1e-3,
        weight_decay=0.0,
        warmup_steps=0,
        max_grad_norm=1.0,
        optim="adamw_torch",
        logging_strategy="no",
        save_strategy="no",
        eval_strategy="no",
        report_to="none",
        disable_tqdm=True,
        use_cpu=True,
        seed=0,
        dataloader_num_workers=0,
    )

    def trainer_for(dataset, collator):
        m = new_model().train()
        m.accepts_loss_kwargs = False  # as the recipe (finetuning.declare_batch_mean_loss)
        return Trainer(model=m, args=targs, train_dataset=dataset, data_collator=collator)

    # The limit's batches: exactly what Trainer's data loader yields for the cache, collated once, in memory.
    batches = list(trainer_for(cache, cache_collator).get_train_dataloader())
    if args.default_size and len(batches) < MIN_BATCHES:
        raise RuntimeError(f"the default size gives {len(batches)} batches per epoch, fewer than {MIN_BATCHES}")
    state = {}

    def fresh(key, make):
        def prepare(_r):
            state.clear()
            gc.collect()  # every side starts with the same (collected) heap; Trainer.train() ends with a gc.collect()
            state[key] = make()

        return prepare

    def new_limit():
        m = new_model().train()
        params = [p for p in m.parameters() if p.requires_grad]
        return m, params, torch.optim.AdamW(params, lr=1e-3, weight_decay=0.0)

    def limit(_r):
        m, params, opt = state["limit"]
        for batch in batches * args.epochs:
            m(**batch).loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            opt.zero_grad(set_to_none=True)

    built_root = os.path.join(root, f"built{hidden}")

    def with_build(_r):
        trainer = state["built"]  # built untimed without data; the run builds the cache into a fresh folder
        start = time.perf_counter()
        trainer.train_dataset, trainer.data_collator = build(trainer.model, built_root)
        build_s = time.perf_counter() - start
        trainer.train()
        return {"build_s": build_s}

    name = f"2-layer BiLSTM {hidden}/direction"
    sides = [
        harness.Side(
            f"ours, {name}: head alone (limit)",
            "ours",
            limit,
            prepare=fresh("limit", new_limit),
            description="model(features=...) + backward + clip + AdamW over Trainer's cached batches",
        ),
        harness.Side(
            f"ours, {name}: cached epochs (Trainer)",
            "ours",
            lambda _r: state["cached"].train() and None,
            prepare=fresh("cached", lambda: trainer_for(cache, cache_collator)),
            description="Trainer.train() on a feature cache built before the round + collator",
        ),
        harness.Side(
            f"ours, {name}: cached incl. build (Trainer)",
            "ours",
            with_build,
            prepare=fresh("built", lambda: trainer_for(None, None)),
            after=lambda _r, _extra: shutil.rmtree(built_root),
            description="build_feature_cache into a fresh folder, then Trainer.train() on it",
        ),
        harness.Side(
            f"ours, {name}: recompute encoder (Trainer)",
            "ours",
            lambda _r: state["recompute"].train() and None,
            prepare=fresh("recompute", lambda: trainer_for(data, token_collator)),
            description="Trainer.train(), frozen encoder on every batch",
        ),
    ]
    measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
    res = record(hidden, args, encoder_dir, measured, [s.name for s in sides], len(batches), cache_mb)
    print(harness.format_result(res))
    return res


def record(
    hidden: int, args, encoder_dir: str, measured: dict, names: list[str], n_batches: int, cache_mb: float
) -> dict:
    """The harness record of one head: sides ``names`` = (limit, cached, incl. build, recompute), three ratios."""
    gc.collect()
    start = time.perf_counter()
    gc.collect()  # what Trainer.train() does once at its end (accelerate's free_memory), in this process's heap
    gc_s = time.perf_counter() - start
    enough = n_batches >= MIN_BATCHES
    notes = [
        (
            "ratios: cached / head alone (goal <= 1.10); recompute / cached (per epoch, build left out); "
            f"recompute / cached incl. build (at {args.epochs} epochs, build paid)"
        ),
        "Trainer sides include Trainer.train()'s one-off set-up and closing gc.collect (per run, not per epoch)",
    ]
    if not enough:
        notes.append(
            f"{n_batches} batches per epoch (< {MIN_BATCHES}): a plumbing size, Trainer's per-step costs barely weigh"
        )
    return harness.result(
        f"feature_cache_bilstm{hidden}",
        f"Feature-based BiLSTM head, {args.epochs} epoch(s) of {n_batches} "
        f"batches (2-layer BiLSTM {hidden}/direction)",
        measured,
        [
            harness.Comparison(names[0], names[1], kind="variant"),
            harness.Comparison(names[1], names[3], kind="variant"),
            harness.Comparison(names[2], names[3], kind="variant"),
        ],
        config={
            "encoder": os.path.basename(encoder_dir),
            "examples": args.examples,
            "seq": args.seq,
            "batch": args.batch,
            "batches_per_epoch": n_batches,
            "threads": args.threads,
            "strategy": "concat_last_four",
            "head": "bilstm",
            "lstm_hidden": hidden,
            "lstm_layers": 2,
            "cache_dtype": "float16",
            "epochs": args.epochs,
        },
        work=(args.examples * args.epochs, "examples"),
        checks={f"batches per epoch >= {MIN_BATCHES}": n_batches} if enough else None,
        figures={
            **cost_figures(measured, names, args.epochs),
            "cache size, MB": round(cache_mb, 2),
            "batches per epoch": n_batches,
            "one gc.collect() in this process (Trainer.train() ends with one), s": round(gc_s, 3),
        },
        notes=notes,
    )


def cost_figures(measured: dict, names: list[str], epochs: int) -> dict:
    """What the cache costs and saves, from the medians of the sides ``names`` = (limit, cached, incl. build,
    recompute) in seconds: per-epoch cost, the build (timed inside every "incl. build" round), the total at
    ``epochs`` epochs and the epochs after which the build has paid for itself."""
    sides = measured["sides"]
    cached, built, recompute = (sides[n]["median_s"] for n in names[1:])
    build = harness.extra_summary(sides[names[2]], "build_s")
    per_epoch, saved = cached / epochs, (recompute - cached) / epochs
    return {
        "cached per epoch, s (cached epochs / epochs)": round(per_epoch, 3),
        "cache build, s (median [min, max] of the builds inside the incl.-build rounds)": f"{build['median']:.3f} [{build['min']:.3f}, {build['max']:.3f}]",
        f"cached total at {epochs} epochs incl. build, s (measured)": round(built, 3),
        f"build + {epochs} x per-epoch, s": round(build["median"] + epochs * per_epoch, 3),
        "epochs for the cache to pay its build (build / per-epoch saving)": round(build["median"] / saved, 2)
        if saved > 0
        else "never (recomputing was not slower per epoch)",
    }


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=None, help="encoder folder (default: a random BERT-mini built here)")
    parser.add_argument(
        "--examples",
        type=int,
        default=80,
        help="sequences (default 80 at batch 4: 20 batches per epoch; the paper head alone takes "
        "~0.2 s per sequence-epoch on 1 CPU thread, ~8 min for the whole benchmark)",
    )
    parser.add_argument(
        "--seq",
        type=int,
        default=32,
        help="longest synthetic sequence in WordPieces (lengths uniform in 8..seq; default mean 20)",
    )
    parser.add_argument("--batch", type=int, default=4, help="training batch size (and the cache build's)")
    parser.add_argument("--paper_hidden", type=int, default=768, help="the paper's BiLSTM units per direction")
    parser.add_argument("--small_hidden", type=int, default=64, help="the small head's BiLSTM units per direction")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for every side")
    parser.add_argument("--epochs", type=int, default=2, help="epochs per timed run (every side)")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)
    args.default_size = all(getattr(args, k) == parser.get_default(k) for k in ("examples", "batch"))

    from transformers import AutoTokenizer

    from hf_bert_tasks.utils.modeling import build_random_bert
    from hf_bert_tasks.utils.resources import sample_texts
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    with tempfile.TemporaryDirectory() as tmp:
        encoder_dir = args.model
        if encoder_dir is None:
            tok = train_wordpiece_tokenizer(sample_texts(), vocab_size=2000)
            encoder_dir = build_random_bert(os.path.join(tmp, "mini"), tok, preset="mini", seed=0)
        tokenizer = AutoTokenizer.from_pretrained(encoder_dir)
        print(
            f"encoder {os.path.basename(encoder_dir)}; {args.examples} sequences of 8..{args.seq} WordPieces, "
            f"batch {args.batch} ({-(-args.examples // args.batch)} batches per epoch), {args.threads} thread(s), "
            "strategy concat_last_four"
        )
        return [
            one_head(hidden, args, encoder_dir, tokenizer, tmp) for hidden in (args.paper_hidden, args.small_hidden)
        ]


if __name__ == "__main__":
    main()
