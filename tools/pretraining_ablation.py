"""Small-budget pretraining options at equal tokens (issue 25 item 3): held-out MLM loss of the paper's settings
against NSP off, a 40 % masking rate and dropout off, each a one-flag change of the same run.

    python tools/pretraining_ablation.py corpus   --shared ../shared --out runs/ablation
    python tools/pretraining_ablation.py pretrain --out runs/ablation --seeds 1,2 --arms paper,mlm_only --core 0
    python tools/pretraining_ablation.py evaluate --out runs/ablation
    python tools/pretraining_ablation.py report   --out runs/ablation      # markdown table, mean ± std

``corpus`` writes the corpus of ``tools/pretraining_transfer.py`` (unlabelled text of ``../shared/data``, google's
format) split by document: every 20th document is held out (``heldout.txt``), the rest is ``train.txt``; a WordPiece
vocabulary (8,000) is trained once on ``train.txt`` so every arm reads the same WordPieces.

``pretrain`` runs ``hf-bert-tasks pretrain`` per arm and seed with the same budget: tiny BERT (L=2, H=128), sequences
of 128 tokens, batch 8, the same number of steps (so the same number of sequences and token positions), lr 1e-4, 1 %
warm-up, masked-only decoder; each run in its own process, pinned to ``--core`` with one thread. The arms (one flag
each against ``paper``):

* ``paper``: MLM + NSP, 15 % of the tokens (exact count, at most 20 per sequence), 80/10/10, dropout 0.1 (§3.1, A.2);
* ``mlm_only``: ``--no_next_sentence_prediction`` (RoBERTa, Liu et al. 2019 §4.2, FULL-SENTENCES packing);
* ``mask40``: ``--mlm_probability 0.4`` and the per-sequence cap scaled with it (52 = 0.4 x 128; Wettig et al. 2022);
* ``dropout0``: ``--dropout 0`` (Cramming, Geiping & Goldstein 2022).

``evaluate`` scores every checkpoint on the same held-out masks, so the arms are comparable although they train with
different objectives and rates: the held-out documents become (a) the paper's A/B pairs and (b) full-length single
segments (``create_pretraining_examples`` with and without NSP, seed 0), each masked once at 15 % (exact count, cap
20, 80/10/10, collator seed 0). Reported: MLM loss in nats per masked token and MLM accuracy on each set, and the
same for a context-free unigram predictor (WordPiece frequencies of ``train.txt``) on the same targets.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
ARMS = {
    "paper": [],
    "mlm_only": ["--no_next_sentence_prediction"],
    "mask40": ["--mlm_probability", "0.4", "--max_predictions_per_seq", "52"],
    "dropout0": ["--dropout", "0"],
}
HOLDOUT_EVERY = 20
SEQ, BATCH, VOCAB = 128, 8, 8000


def _documents(path: str) -> list[list[str]]:
    """Google's format: one sentence per line, a blank line between documents."""
    docs, doc = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                doc.append(line)
            elif doc:
                docs.append(doc)
                doc = []
    if doc:
        docs.append(doc)
    return docs


def _write(path: str, docs: list[list[str]]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(d) for d in docs) + "\n")


def corpus(shared: str, out: str) -> dict:
    sys.path.insert(0, HERE)
    from pretraining_transfer import build_corpus

    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    os.makedirs(out, exist_ok=True)
    full = os.path.join(out, "corpus-full.txt")
    build_corpus(shared, full)
    docs = _documents(full)
    held = [d for i, d in enumerate(docs) if i % HOLDOUT_EVERY == HOLDOUT_EVERY - 1]
    train = [d for i, d in enumerate(docs) if i % HOLDOUT_EVERY != HOLDOUT_EVERY - 1]
    _write(os.path.join(out, "train.txt"), train)
    _write(os.path.join(out, "heldout.txt"), held)
    tokenizer = train_wordpiece_tokenizer([s for d in train for s in d], vocab_size=VOCAB)
    tokenizer.save_pretrained(os.path.join(out, "tokenizer"))
    info = {
        "documents": len(docs),
        "train_documents": len(train),
        "heldout_documents": len(held),
        "train_sentences": sum(map(len, train)),
        "heldout_sentences": sum(map(len, held)),
        "vocab_size": len(tokenizer),
    }
    with open(os.path.join(out, "corpus.json"), "w", encoding="utf-8") as f:
        json.dump(info, f, indent=1)
    return info


def pretrain(out: str, arms: list[str], seeds: list[int], steps: int, core: int | None) -> None:
    for arm in arms:
        for seed in seeds:
            run = os.path.join(out, f"{arm}-seed{seed}")
            if os.path.isfile(os.path.join(run, "pretraining_summary.json")):
                print(f"{run}: done, kept")
                continue
            cmd = [
                sys.executable,
                "-m",
                "hf_bert_tasks.cli",
                "pretrain",
                "--train_files",
                os.path.join(out, "train.txt"),
                "--tokenizer_name",
                os.path.join(out, "tokenizer"),
                "--preset",
                "tiny",
                "--max_seq_length",
                str(SEQ),
                "--selection",
                "exact",
                "--max_predictions_per_seq",
                "20",
                "--per_device_train_batch_size",
                str(BATCH),
                "--max_steps",
                str(steps),
                "--learning_rate",
                "1e-4",
                "--warmup_steps",
                "0.01",
                "--validation_split_percentage",
                "0",
                "--eval_strategy",
                "no",
                "--save_strategy",
                "no",
                "--logging_steps",
                "100",
                "--disable_tqdm",
                "True",
                "--report_to",
                "none",
                "--seed",
                str(seed),
                "--output_dir",
                run,
                "--dataset_cache_dir",
                os.path.join(out, "cache"),
                *ARMS[arm],
            ]
            if core is not None:
                cmd = ["taskset", "-c", str(core), *cmd]
            env = dict(
                os.environ,
                OMP_NUM_THREADS="1",
                HF_HUB_OFFLINE="1",
                HF_DATASETS_OFFLINE="1",
                TOKENIZERS_PARALLELISM="false",
            )
            start = time.time()
            os.makedirs(run, exist_ok=True)
            with open(os.path.join(run, "console.log"), "w", encoding="utf-8") as log:
                status = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=False)
            wall = time.time() - start
            if status.returncode:
                raise SystemExit(f"{run}: exit {status.returncode}; see {run}/console.log")
            with open(os.path.join(run, "wall.json"), "w", encoding="utf-8") as f:
                json.dump({"wall_s": wall, "command": cmd}, f)
            print(f"{run}: {wall:.0f} s")


def _heldout_sets(out: str, tokenizer, path: str | None = None):
    """The two held-out sets of ``path`` (default ``out/heldout.txt``; google's format), masked once:
    ``{"pairs": batches, "segments": batches}`` (lists of collated batches)."""
    from datasets import Dataset

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining
    from hf_bert_tasks.pretraining.data import build_pretraining_dataset

    docs = Dataset.from_dict({"sentences": _documents(path or os.path.join(out, "heldout.txt"))})
    collator = DataCollatorForBertPretraining(
        tokenizer, seed=0, mlm_probability=0.15, selection="exact", max_predictions_per_seq=20
    )
    sets = {}
    for name, nsp in (("pairs", True), ("segments", False)):
        instances = build_pretraining_dataset(
            docs, tokenizer, next_sentence_prediction=nsp, max_seq_length=SEQ, seed=0
        )
        rows = [{k: v for k, v in r.items() if k in ("input_ids", "token_type_ids", "word_ids")} for r in instances]
        for i, r in enumerate(rows):
            r["idx"] = i
        sets[name] = [collator(rows[i : i + 64]) for i in range(0, len(rows), 64)]
    return sets


def _unigram_scores(out: str, tokenizer, sets) -> dict:
    """The context-free reference on the same masked targets: each target scored by its WordPiece's frequency in
    ``train.txt`` (add-one smoothed over the vocabulary), accuracy of always answering the most frequent piece."""
    import numpy as np

    counts = np.ones(len(tokenizer), dtype=np.float64)
    docs = _documents(os.path.join(out, "train.txt"))
    sentences = [s for d in docs for s in d]
    for i in range(0, len(sentences), 10_000):
        ids = tokenizer(sentences[i : i + 10_000], add_special_tokens=False)["input_ids"]
        counts += np.bincount(
            np.concatenate([np.asarray(x, dtype=np.int64) for x in ids if x]), minlength=len(tokenizer)
        )
    log_p = np.log(counts / counts.sum())
    top = int(counts.argmax())
    scores = {}
    for set_name, batches in sets.items():
        targets = np.concatenate([b["labels"][b["labels"] != -100].numpy() for b in batches])
        scores[set_name] = {
            "mlm_loss": float(-log_p[targets].mean()),
            "mlm_accuracy": float((targets == top).mean()),
            "masked_tokens": int(targets.size),
        }
    return scores


def score_model(model_dir: str, sets: dict) -> dict:
    """Held-out MLM loss (nats per masked target) and accuracy of ``model_dir``'s MLM head on the masked ``sets``
    (:func:`_heldout_sets`): ``{set name: {"mlm_loss", "mlm_accuracy", "masked_tokens", "instances"}}``."""
    import torch
    from transformers import AutoModelForPreTraining

    model = AutoModelForPreTraining.from_pretrained(model_dir).eval()
    scores = {}
    for set_name, batches in sets.items():
        loss_sum = correct = count = 0.0
        for batch in batches:
            inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
            with torch.no_grad():
                logits = model(**inputs).prediction_logits
            labels = batch["labels"]
            chosen = labels != -100
            picked, target = logits[chosen], labels[chosen]
            loss_sum += torch.nn.functional.cross_entropy(picked, target, reduction="sum").item()
            correct += (picked.argmax(-1) == target).sum().item()
            count += target.numel()
        scores[set_name] = {
            "mlm_loss": loss_sum / count,
            "mlm_accuracy": correct / count,
            "masked_tokens": int(count),
            "instances": sum(len(b["input_ids"]) for b in batches),
        }
    return scores


def evaluate(out: str) -> dict:
    import torch
    from transformers import AutoTokenizer

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(out, "tokenizer"))
    sets = _heldout_sets(out, tokenizer)
    results = {"unigram": _unigram_scores(out, tokenizer, sets)}
    print("unigram", json.dumps(results["unigram"]))
    for name in sorted(os.listdir(out)):
        run = os.path.join(out, name)
        if not os.path.isfile(os.path.join(run, "pretraining_summary.json")):
            continue
        scores = score_model(run, sets)
        with open(os.path.join(run, "wall.json"), encoding="utf-8") as f:
            scores["wall_s"] = json.load(f)["wall_s"]
        with open(os.path.join(run, "pretraining_summary.json"), encoding="utf-8") as f:
            summary = json.load(f)
        scores["steps"] = summary["steps"]
        scores["train_instances"] = summary["phases"][0]["train_instances"]
        results[name] = scores
        print(name, json.dumps(scores))
    with open(os.path.join(out, "evaluation.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return results


def report(out: str) -> str:
    with open(os.path.join(out, "evaluation.json"), encoding="utf-8") as f:
        results = json.load(f)

    def cell(values: list[float], digits: int) -> str:
        if len(values) == 1:
            return f"{values[0]:.{digits}f} (n=1)"
        return f"{statistics.mean(values):.{digits}f} ± {statistics.stdev(values):.{digits}f} (n={len(values)})"

    lines = [
        (
            "| arm | flags | held-out MLM loss, A/B pairs (nats) | accuracy, pairs | MLM loss, full segments (nats) "
            "| accuracy, segments | steps x batch | wall s per run (one core) |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
    uni = results.get("unigram")
    if uni:
        lines.append(
            f"| unigram (no model) | WordPiece frequencies of train.txt | {uni['pairs']['mlm_loss']:.3f} "
            f"| {uni['pairs']['mlm_accuracy']:.4f} | {uni['segments']['mlm_loss']:.3f} "
            f"| {uni['segments']['mlm_accuracy']:.4f} | - | - |"
        )
    for arm, flags in ARMS.items():
        runs = [r for name, r in results.items() if name.rsplit("-seed", 1)[0] == arm]
        if not runs:
            continue
        lines.append(
            f"| {arm} | `{' '.join(flags) or '(paper settings)'}` "
            f"| {cell([r['pairs']['mlm_loss'] for r in runs], 3)} "
            f"| {cell([r['pairs']['mlm_accuracy'] for r in runs], 4)} "
            f"| {cell([r['segments']['mlm_loss'] for r in runs], 3)} "
            f"| {cell([r['segments']['mlm_accuracy'] for r in runs], 4)} "
            f"| {runs[0]['steps']} x {BATCH} | {cell([r['wall_s'] for r in runs], 0)} |"
        )
    text = "\n".join(lines)
    print(text)
    return text


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["corpus", "pretrain", "evaluate", "report"])
    parser.add_argument("--out", default="runs/ablation")
    parser.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    parser.add_argument("--arms", default=",".join(ARMS), help=f"comma-separated, of {list(ARMS)}")
    parser.add_argument("--seeds", default="1,2")
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--core", type=int, default=None, help="pin each pretraining process to this CPU")
    args = parser.parse_args(argv)
    if args.stage == "corpus":
        print(corpus(args.shared, args.out))
    elif args.stage == "pretrain":
        unknown = sorted(set(args.arms.split(",")) - set(ARMS))
        if unknown:
            raise SystemExit(f"--arms: unknown {unknown}; expected some of {list(ARMS)}")
        pretrain(args.out, args.arms.split(","), [int(s) for s in args.seeds.split(",")], args.steps, args.core)
    elif args.stage == "evaluate":
        evaluate(args.out)
    else:
        report(args.out)


if __name__ == "__main__":
    main()
