"""The README's main job, offline on 2 CPU cores: pretrain a small BERT locally, then fine-tune it on the samples.

    hf-bert-tasks quickstart --output_dir runs/quickstart

Steps: (1) train a WordPiece vocabulary on the built-in texts and pretrain a mini BERT (the ``tiny`` preset of
``hf_bert_tasks.modeling.BERT_PRESETS``: L=2, H=128) with MLM + NSP on the built-in corpus
``samples/pretraining/corpus.txt`` (the pretrain recipe, whole-word masking); (2) fine-tune THAT checkpoint on the
SST-2- and MRPC-format samples with the fine-tune recipe; (3) compare dev metrics with the majority-class baseline and
run ``pipeline()`` on the saved model. The sample data are described in ``tools/make_samples.py``.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter

SAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "samples")

#: pretraining of step 1 (the pretrain recipe's flags): seq 64 fits a whole document of the sample corpus.
PRETRAIN_FLAGS = ["--preset", "tiny", "--max_seq_length", "64", "--max_steps", "200", "--per_device_train_batch_size", "32",
                  "--learning_rate", "1e-3", "--warmup_steps", "0.05", "--whole_word_mask", "--eval_steps", "100",
                  "--logging_steps", "50", "--save_strategy", "no", "--validation_split_percentage", "5"]

#: (task, sample folder, epochs, learning rate): a small model needs a larger lr than the paper's grid.
QUICKSTART_RUNS = [("sst2", "SST-2", 6, 1e-3), ("mrpc", "MRPC", 15, 5e-4)]


def sample_texts() -> list[str]:
    """Every line of text in the built-in samples (vocabulary training corpus)."""
    texts = []
    for root, _, files in os.walk(SAMPLES):
        for name in sorted(files):
            with open(os.path.join(root, name), encoding="utf-8") as f:
                texts.extend(line for line in f.read().splitlines() if line.strip())
    return texts


def majority_baseline(task, raw_dev) -> dict[str, float]:
    """Metrics of always predicting the most frequent dev label."""
    import numpy as np

    labels = np.asarray(raw_dev[task.label_column])
    majority = Counter(labels.tolist()).most_common(1)[0][0]
    return task.compute_metrics(np.full_like(labels, majority), labels)


def build_parser() -> argparse.ArgumentParser:
    """The ``quickstart`` flags (errors raise :class:`hf_bert_tasks.cli.UsageError`)."""
    from ..cli import ArgumentParser

    parser = ArgumentParser(prog="hf-bert-tasks quickstart", description=__doc__.split("\n")[0])
    parser.add_argument("--output_dir", default="runs/quickstart", help="where every step writes its outputs")
    parser.add_argument("--seed", type=int, default=42, help="seed of every step")
    parser.add_argument("--overwrite_output_dir", action="store_true", help="run again over a finished quickstart")
    return parser


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)  # before the heavy imports: --help answers at once
    from transformers import pipeline

    from .. import get_task
    from ..tokenization import train_wordpiece_tokenizer
    from . import finetune, pretrain

    os.makedirs(args.output_dir, exist_ok=True)

    print("== 1. WordPiece vocabulary + pretraining a mini BERT with MLM + NSP on the built-in corpus")
    tokenizer_dir = os.path.join(args.output_dir, "tokenizer")
    train_wordpiece_tokenizer(sample_texts(), vocab_size=2000).save_pretrained(tokenizer_dir)
    model_dir = os.path.join(args.output_dir, "pretrained-bert")
    flags = ["--train_files", os.path.join(SAMPLES, "pretraining", "corpus.txt"), "--tokenizer_name", tokenizer_dir,
             "--output_dir", model_dir, "--seed", str(args.seed), *PRETRAIN_FLAGS]
    if args.overwrite_output_dir:
        flags += ["--overwrite_output_dir", "True"]
    pretraining = pretrain.main(flags)

    summary = {"pretraining": {"checkpoint": model_dir, "steps": pretraining["steps"],
                               "mlm_accuracy": pretraining["final_mlm_accuracy"],
                               "nsp_accuracy": pretraining["final_nsp_accuracy"]}}
    for name, folder, epochs, lr in QUICKSTART_RUNS:
        print(f"== 2. fine-tune the pretrained checkpoint on the {folder} sample ({epochs} epochs, lr {lr})")
        task = get_task(name)
        out = os.path.join(args.output_dir, name)
        flags = ["--task", name, "--data_dir", os.path.join(SAMPLES, folder), "--model_name_or_path", model_dir,
                 "--output_dir", out, "--num_train_epochs", str(epochs), "--learning_rate", str(lr),
                 "--seed", str(args.seed), "--save_strategy", "no", "--logging_steps", "20"]
        if args.overwrite_output_dir:
            flags.append("--overwrite_output_dir")
        metrics = finetune.main(flags)
        baseline = majority_baseline(task, task.read_local(os.path.join(SAMPLES, folder))["validation"])
        key = task.primary_metric
        summary[name] = {"fine-tuned": metrics[f"eval_{key}"], "majority baseline": baseline[key], "metric": key}
        clf = pipeline(task.pipeline_tag, model=out, tokenizer=out)
        example = "the soundtrack was wonderful ." if name == "sst2" else {
            "text": "anna bought the clock near the bridge yesterday .",
            "text_pair": "yesterday , near the bridge , anna purchased the clock ."}
        summary[name]["pipeline example"] = {"input": example, "output": clf(example)}

    print("\n== 3. results on the sample dev sets (fine-tuned vs majority class)")
    p = summary["pretraining"]
    print(f"pretraining ({p['steps']} steps): held-out MLM accuracy {p['mlm_accuracy']:.4f}, "
          f"NSP accuracy {p['nsp_accuracy']:.4f}")
    for name, row in summary.items():
        if name == "pretraining":
            continue
        verdict = "beats" if row["fine-tuned"] > row["majority baseline"] else "does NOT beat"
        print(f"{name:6s} {row['metric']}: {row['fine-tuned']:.4f}  majority: {row['majority baseline']:.4f}  "
              f"-> {verdict} the baseline;  pipeline: {row['pipeline example']['output']}")

    print("\n== 4. fine-tuning vs LoRA vs frozen features (paper §5.3, Table 7) on the SST-2 sample")
    from .compare import quickstart_comparison

    summary["comparison"] = quickstart_comparison(model_dir, os.path.join(args.output_dir, "compare"), args.seed)
    with open(os.path.join(args.output_dir, "quickstart_summary.json"), "w", encoding="utf-8") as f:
        json.dump(summary, f, indent=2)
    return summary


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("quickstart"))
