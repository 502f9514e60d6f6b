"""Label efficiency on real data: a checkpoint pretrained with this package vs a random init of it, fine-tuned on
1 %, 5 %, 20 % and 100 % of the labels of SST-2 and CoNLL-2003 (issue 25 item 2).

The paper's claim at the scale of this machine is label efficiency: with few labels the task cannot be learned from
the labels alone, so what pretraining put into the encoder shows (Howard & Ruder 2018, ULMFiT §5, Fig. 3: with 100
labelled examples a pretrained model matched training from scratch on 100x more). Stages, each a committed command:

    python tools/pretraining_ablation.py corpus --shared ../shared --out /tmp/abl/run   # corpus, held-out split, vocab
    python tools/label_efficiency.py pretrain --corpus /tmp/abl/run --out runs/label_eff --core 1
    python tools/label_efficiency.py evaluate --corpus /tmp/abl/run --out runs/label_eff   # held-out MLM loss
    python tools/label_efficiency.py finetune --out runs/label_eff --arm random --core 0
    python tools/label_efficiency.py finetune --out runs/label_eff --arm pretrained --core 1
    python tools/label_efficiency.py report   --out runs/label_eff     # markdown table + label_efficiency.png

``pretrain`` runs ``hf-bert-tasks pretrain`` with the small-budget settings (tiny BERT, MLM only on full-length
segments, batch 8, lr 1e-3; :data:`PRETRAIN_FLAGS`). ``finetune`` writes, per seed and fraction, a shuffled subset
of the training split (the same subset for both arms: the subset's seed is the run's seed) into ``OUT/data`` and
fine-tunes one arm on it; the dev split is always the full official one. The random arm is ``BertForPreTraining``
re-initialised from the pretrained folder's config and tokenizer (``quickstart.random_init_copy``), so the arms
differ only in the encoder's initial weights. Epochs grow as the subset shrinks so that every run takes at least
:data:`MIN_STEPS` optimizer steps (:func:`epochs_for`). Finished runs (an ``all_results.json``) are reused.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FRACTIONS = (0.01, 0.05, 0.2, 1.0)
SEEDS = (1, 2, 3)
BATCH = 32
LEARNING_RATE = 3e-4  # the better of 1e-4 / 3e-4 for both arms in docs/results.md's transfer experiment
MIN_STEPS = 600

#: task -> (data folder under ../shared/data, train file, dev file, metric key, epochs on the full split)
TASKS = {
    "sst2": ("glue/SST-2", "train.tsv", "dev.tsv", "eval_accuracy", 1),
    "conll2003": ("conll2003", "train.txt", "valid.txt", "eval_f1", 3),
}

PRETRAIN_FLAGS = [
    "--preset", "tiny", "--max_seq_length", "128", "--selection", "exact", "--max_predictions_per_seq", "20",
    "--no_next_sentence_prediction", "--per_device_train_batch_size", "8", "--max_steps", "22000",
    "--learning_rate", "1e-3", "--warmup_steps", "0.02", "--validation_split_percentage", "0",
    "--eval_strategy", "no", "--save_strategy", "steps", "--save_steps", "5000", "--save_total_limit", "1",
    "--logging_steps", "500", "--disable_tqdm", "True", "--report_to", "none", "--seed", "42",
]


def epochs_for(n_examples: int, full_epochs: int) -> int:
    """Epochs for a subset of ``n_examples``: ``full_epochs``, or more so that the run has >= MIN_STEPS steps."""
    steps_per_epoch = math.ceil(n_examples / BATCH)
    return max(full_epochs, math.ceil(MIN_STEPS / steps_per_epoch))


def _read_examples(task: str, path: str) -> tuple[str, list[str]]:
    """(header, examples) of a training file: TSV rows for SST-2 (quoting off, as GLUE), sentences for CoNLL."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if task == "sst2":
        header, *rows = text.rstrip("\n").split("\n")
        return header + "\n", [row + "\n" for row in rows]
    blocks = [b for b in text.split("\n\n") if b.strip() and not b.lstrip().startswith("-DOCSTART-")]
    return "", [b.strip("\n") + "\n\n" for b in blocks]


def write_subset(task: str, shared: str, out: str, fraction: float, seed: int) -> tuple[str, int]:
    """Write ``fraction`` of ``task``'s training examples (shuffled with ``seed``) and a link to its dev file.

    Returns ``(data_dir, number of training examples)``. The full split (fraction 1.0) is the shared folder itself.
    """
    folder, train, dev, _, _ = TASKS[task]
    source = os.path.join(shared, "data", folder)
    header, examples = _read_examples(task, os.path.join(source, train))
    if fraction >= 1.0:
        return source, len(examples)
    n = max(1, round(fraction * len(examples)))
    target = os.path.join(out, "data", task, f"frac{fraction:g}-seed{seed}")
    if not os.path.isfile(os.path.join(target, train)):
        os.makedirs(target, exist_ok=True)
        chosen = random.Random(seed).sample(examples, n)
        with open(os.path.join(target, train + ".tmp"), "w", encoding="utf-8") as f:
            f.write(header + "".join(chosen))
        os.replace(os.path.join(target, train + ".tmp"), os.path.join(target, train))
        if not os.path.exists(os.path.join(target, dev)):
            os.symlink(os.path.abspath(os.path.join(source, dev)), os.path.join(target, dev))
    return target, n


def _pinned(cmd: list[str], core: int | None) -> tuple[list[str], dict]:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    return (["taskset", "-c", str(core), *cmd] if core is not None else cmd), env


def pretrain(corpus_dir: str, out: str, core: int | None) -> None:
    cmd = [sys.executable, "-m", "hf_bert_tasks.cli", "pretrain", "--train_files", os.path.join(corpus_dir, "train.txt"),
           "--tokenizer_name", os.path.join(corpus_dir, "tokenizer"), "--output_dir", os.path.join(out, "pretrain"),
           "--dataset_cache_dir", os.path.join(corpus_dir, "cache"), *PRETRAIN_FLAGS]
    cmd, env = _pinned(cmd, core)
    os.makedirs(out, exist_ok=True)
    start = time.time()
    with open(os.path.join(out, "pretrain.log"), "w") as log:
        subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    with open(os.path.join(out, "pretrain_wall.json"), "w") as f:
        json.dump({"wall_s": time.time() - start, "command": cmd}, f, indent=1)


def evaluate(corpus_dir: str, out: str) -> dict:
    """Held-out MLM loss and accuracy of the pretrained checkpoint, of its random init and of the unigram reference,
    on ``pretraining_ablation.py``'s held-out documents masked once (the same targets as its ablation table)."""
    import torch
    from transformers import AutoTokenizer

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pretraining_ablation as ablation

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(corpus_dir, "tokenizer"))
    sets = ablation._heldout_sets(corpus_dir, tokenizer)
    results = {"unigram": ablation._unigram_scores(corpus_dir, tokenizer, sets),
               "pretrained": ablation.score_model(os.path.join(out, "pretrain"), sets),
               "random init": ablation.score_model(os.path.join(out, "random-init"), sets)}
    with open(os.path.join(out, "heldout_mlm.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return results


def finetune(out: str, shared: str, arm: str, core: int | None, tasks: list[str], fractions: list[float],
             seeds: list[int], model_dir: str | None = None) -> None:
    from hf_bert_tasks.scripts.quickstart import random_init_copy

    model = model_dir or os.path.join(out, "pretrain")
    if arm == "random":
        random_dir = os.path.join(out, "random-init")
        if not os.path.isfile(os.path.join(random_dir, "config.json")):
            random_init_copy(model, random_dir, seed=0)
        model = random_dir
    for task in tasks:
        _, _, _, key, full_epochs = TASKS[task]
        for fraction in fractions:
            for seed in seeds:
                data_dir, n = write_subset(task, shared, out, fraction, seed)
                run_dir = os.path.join(out, "finetune", task, f"frac{fraction:g}", arm, f"seed_{seed}")
                if os.path.isfile(os.path.join(run_dir, "all_results.json")):
                    continue
                epochs = epochs_for(n, full_epochs)
                cmd = [sys.executable, "-m", "hf_bert_tasks.cli", "finetune", "--task", task,
                       "--model_name_or_path", model, "--data_dir", data_dir, "--output_dir", run_dir,
                       "--seed", str(seed), "--learning_rate", str(LEARNING_RATE),
                       "--per_device_train_batch_size", str(BATCH), "--max_seq_length", "128",
                       "--num_train_epochs", str(epochs), "--eval_strategy", "no", "--save_strategy", "no",
                       "--logging_steps", "50", "--disable_tqdm", "True", "--no_cache_tokenized"]
                cmd, env = _pinned(cmd, core)
                os.makedirs(os.path.dirname(run_dir), exist_ok=True)
                start = time.time()
                with open(run_dir + ".log", "w") as log:
                    subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
                wall = time.time() - start
                with open(os.path.join(run_dir, "all_results.json")) as f:
                    value = json.load(f)[key]
                with open(os.path.join(run_dir, "label_efficiency_run.json"), "w") as f:
                    json.dump({"task": task, "fraction": fraction, "arm": arm, "seed": seed, "train_examples": n,
                               "epochs": epochs, key: value, "wall_s": wall, "model": model}, f, indent=1)
                print(f"{task} {fraction:g} ({n} examples, {epochs} epochs) {arm} seed {seed}: {key} {value:.4f} "
                      f"({wall:.0f} s)", flush=True)


def collect(out: str) -> dict:
    """``{task: {fraction: {arm: [run records]}}}`` from the runs' ``label_efficiency_run.json``."""
    table: dict = {}
    root = os.path.join(out, "finetune")
    for dirpath, _, files in os.walk(root):
        if "label_efficiency_run.json" in files:
            with open(os.path.join(dirpath, "label_efficiency_run.json")) as f:
                run = json.load(f)
            table.setdefault(run["task"], {}).setdefault(run["fraction"], {}).setdefault(run["arm"], []).append(run)
    return table


def _stats(values: list[float]) -> tuple[float, float]:
    return statistics.mean(values), (statistics.stdev(values) if len(values) > 1 else float("nan"))


def report(out: str) -> str:
    table = collect(out)
    lines = [("| task (dev metric, x100) | labels (fraction) | epochs | pretrained (ours) | random init | gain | "
              "gain > 2 x max seed std | wall s per run (pretrained / random) |"), "|---|---|---|---|---|---|---|---|"]
    for task, by_fraction in table.items():
        key = TASKS[task][3]
        for fraction in sorted(by_fraction):
            arms = by_fraction[fraction]
            if set(arms) != {"pretrained", "random"}:
                continue
            p = [100 * r[key] for r in sorted(arms["pretrained"], key=lambda r: r["seed"])]
            q = [100 * r[key] for r in sorted(arms["random"], key=lambda r: r["seed"])]
            (pm, ps), (qm, qs) = _stats(p), _stats(q)
            walls = [statistics.mean(r["wall_s"] for r in arms[a]) for a in ("pretrained", "random")]
            run = arms["pretrained"][0]
            lines.append(
                f"| {task} ({key}) | {run['train_examples']:,} ({100 * fraction:g} %) | {run['epochs']} | "
                f"{pm:.1f} ± {ps:.1f} ({', '.join(f'{v:.2f}' for v in p)}) | "
                f"{qm:.1f} ± {qs:.1f} ({', '.join(f'{v:.2f}' for v in q)}) | {pm - qm:+.1f} | "
                f"{'yes' if pm - qm > 2 * max(ps, qs) else 'no'} | {walls[0]:.0f} / {walls[1]:.0f} |")
    with open(os.path.join(out, "label_efficiency.json"), "w") as f:
        json.dump(table, f, indent=1)
    plot(table, os.path.join(out, "label_efficiency.png"))
    return "\n".join(lines)


def plot(table: dict, path: str) -> None:
    """Dev metric vs number of labelled examples (log x), both arms, mean ± seed std as error bars."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(table), figsize=(5.5 * len(table), 4), squeeze=False)
    for ax, (task, by_fraction) in zip(axes[0], table.items()):
        key = TASKS[task][3]
        for arm, style in (("pretrained", "o-"), ("random", "s--")):
            points = sorted((runs[arm][0]["train_examples"], _stats([100 * r[key] for r in runs[arm]]))
                            for runs in by_fraction.values() if arm in runs)
            if points:
                xs = [x for x, _ in points]
                ax.errorbar(xs, [m for _, (m, _) in points], yerr=[0 if math.isnan(s) else s for _, (_, s) in points],
                            fmt=style, capsize=3, label="pretrained (this package)" if arm == "pretrained"
                            else "random init (same architecture)")
        ax.set_xscale("log")
        ax.set_xlabel("labelled training examples (1 %, 5 %, 20 %, 100 %)")
        ax.set_ylabel(f"dev {key.removeprefix('eval_')} x 100 (mean ± std, 3 seeds)")
        ax.set_title(task)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=["pretrain", "evaluate", "finetune", "report"])
    parser.add_argument("--out", default="runs/label_eff")
    parser.add_argument("--corpus", default="/tmp/abl/run", help="pretraining_ablation.py corpus's --out folder")
    parser.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    parser.add_argument("--arm", choices=["pretrained", "random"])
    parser.add_argument("--model_dir", default=None, help="pretrained folder (default OUT/pretrain)")
    parser.add_argument("--core", type=int, default=None, help="pin every run to this CPU, one thread")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--fractions", default=",".join(map(str, FRACTIONS)))
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    args = parser.parse_args(argv)
    if args.stage == "pretrain":
        pretrain(args.corpus, args.out, args.core)
    elif args.stage == "evaluate":
        print(json.dumps(evaluate(args.corpus, args.out), indent=1))
    elif args.stage == "finetune":
        if not args.arm:
            parser.error("finetune needs --arm pretrained|random")
        finetune(args.out, args.shared, args.arm, args.core, args.tasks.split(","),
                 [float(x) for x in args.fractions.split(",")], [int(s) for s in args.seeds.split(",")],
                 args.model_dir)
    else:
        print(report(args.out))


if __name__ == "__main__":
    main()
