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

Issue 43 adds books: ``pretrain --add_corpus books+text`` trains on the book shards too, ``--hold_out_books`` keeps
every 20th book out of training (``evaluate --hold_out_books`` scores it), ``--text_copies K`` repeats the old text
K times against the books, ``--next_sentence_prediction`` pretrains with the paper's MLM + NSP; ``grid`` / ``rows`` /
``render`` run and report the per-arm lr grid.

``pretrain`` runs ``hf-bert-tasks pretrain`` with the small-budget settings (tiny BERT, MLM only on full-length
segments, batch 8, lr 1e-3; :data:`PRETRAIN_FLAGS`). ``finetune`` writes, per seed and fraction, a shuffled subset
of the training split (the same subset for both arms: the subset's seed is the run's seed) into ``OUT/data`` and
fine-tunes one arm on it; the dev split is always the full official one. The random arm is ``BertForPreTraining``
re-initialised from the pretrained folder's config and tokenizer (``quickstart_steps.random_init_copy``), so the arms
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
    "--preset",
    "tiny",
    "--max_seq_length",
    "128",
    "--selection",
    "exact",
    "--max_predictions_per_seq",
    "20",
    "--no_next_sentence_prediction",
    "--per_device_train_batch_size",
    "8",
    "--max_steps",
    "22000",
    "--learning_rate",
    "1e-3",
    "--warmup_steps",
    "0.02",
    "--validation_split_percentage",
    "0",
    "--eval_strategy",
    "no",
    "--save_strategy",
    "steps",
    "--save_steps",
    "5000",
    "--save_total_limit",
    "1",
    "--logging_steps",
    "500",
    "--disable_tqdm",
    "True",
    "--report_to",
    "none",
    "--seed",
    "42",
]


def epochs_for(n_examples: int, full_epochs: int, batch: int = BATCH, min_steps: int = MIN_STEPS) -> int:
    """Epochs for a subset of ``n_examples``: ``full_epochs``, or more so that the run has >= ``min_steps`` steps of
    ``batch`` examples."""
    steps_per_epoch = math.ceil(n_examples / batch)
    return max(full_epochs, math.ceil(min_steps / steps_per_epoch))


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


#: with ``--hold_out_books`` every 20th book (index 19, 39, ...) is held out, as pretraining_ablation.py holds out
#: every 20th document of the old text: a fixed set of books no run trains on, to score held-out MLM on books
HELDOUT_BOOK_EVERY = 20


def books_file(corpus_dir: str, spec: str, shared: str, hold_out_books: bool = False) -> str:
    """``corpus_dir/books.txt``: the book files of ``spec`` (``books`` or comma-separated globs; pretraining_transfer's
    ``--corpus``) in google's format, one document per book (written once, then reused).

    With ``hold_out_books``, every :data:`HELDOUT_BOOK_EVERY`-th book (in shard order) goes to
    ``corpus_dir/heldout-books.txt`` and the others to ``corpus_dir/books-train.txt``, whose path is returned; both
    are written together, so the held-out books are the same for every run that reads them."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pretraining_transfer as transfer

    path = os.path.join(corpus_dir, "books-train.txt" if hold_out_books else "books.txt")
    if not os.path.isfile(path):
        _, files = transfer._corpus_files("books" if spec in ("books", "books+text") else spec, shared)
        books = transfer.book_documents(files)
        if hold_out_books:
            if len(books) < HELDOUT_BOOK_EVERY:
                raise ValueError(f"--hold_out_books: {spec} has {len(books)} book(s), fewer than {HELDOUT_BOOK_EVERY}")
            held = [b for i, b in enumerate(books) if i % HELDOUT_BOOK_EVERY == HELDOUT_BOOK_EVERY - 1]
            books = [b for i, b in enumerate(books) if i % HELDOUT_BOOK_EVERY != HELDOUT_BOOK_EVERY - 1]
            transfer._write_documents(heldout_books_path(corpus_dir) + ".tmp", held)
            os.replace(heldout_books_path(corpus_dir) + ".tmp", heldout_books_path(corpus_dir))
        transfer._write_documents(path + ".tmp", books)
        os.replace(path + ".tmp", path)
    return path


def heldout_books_path(corpus_dir: str) -> str:
    """Where :func:`books_file` writes the held-out books (google's format, one document per book)."""
    return os.path.join(corpus_dir, "heldout-books.txt")


def text_file(corpus_dir: str, copies: int = 1) -> str:
    """The ablation corpus's training documents (``corpus_dir/train.txt``), or with ``copies`` > 1 a file holding
    them ``copies`` times in a row (``train-x<copies>.txt``, written once): the old text upsampled against the books
    in a mix, as google's ``create_pretraining_data.py`` repeats its whole input ``dupe_factor`` times (each copy
    masked anew: the collator masks dynamically). Raises ``ValueError`` for ``copies`` < 1."""
    if copies < 1:
        raise ValueError(f"--text_copies: expected a whole number >= 1, got {copies}")
    path = os.path.join(corpus_dir, "train.txt")
    if copies == 1:
        return path
    target = os.path.join(corpus_dir, f"train-x{copies}.txt")
    if not os.path.isfile(target):
        with open(path, encoding="utf-8") as f:
            text = f.read().rstrip("\n") + "\n"
        with open(target + ".tmp", "w", encoding="utf-8") as f:
            f.write("\n".join([text] * copies))  # a blank line between copies: a document boundary
        os.replace(target + ".tmp", target)
    return target


def pretrain_flags(next_sentence_prediction: bool = False) -> list[str]:
    """:data:`PRETRAIN_FLAGS`, MLM only on packed full-length segments; with ``next_sentence_prediction`` the paper's
    objective instead (§3.1 Task #2: A/B pairs, 50 % true next, NSP trains the pooled ``[CLS]``), every other
    setting the same."""
    return [f for f in PRETRAIN_FLAGS if not (next_sentence_prediction and f == "--no_next_sentence_prediction")]


def pretrain(
    corpus_dir: str,
    out: str,
    core: int | None,
    extra_files: list[str] = (),
    text_copies: int = 1,
    next_sentence_prediction: bool = False,
) -> None:
    """``hf-bert-tasks pretrain`` on the ablation corpus's ``train.txt`` (``text_copies`` times, :func:`text_file`),
    plus ``extra_files`` (e.g. :func:`books_file`); the held-out documents stay the ablation's, scored by
    ``evaluate``. ``next_sentence_prediction``: MLM + NSP (:func:`pretrain_flags`)."""
    cmd = [
        sys.executable,
        "-m",
        "hf_bert_tasks.cli",
        "pretrain",
        "--train_files",
        text_file(corpus_dir, text_copies),
        *extra_files,
        "--tokenizer_name",
        os.path.join(corpus_dir, "tokenizer"),
        "--output_dir",
        os.path.join(out, "pretrain"),
        "--dataset_cache_dir",
        os.path.join(corpus_dir, "cache"),
        *pretrain_flags(next_sentence_prediction),
    ]
    cmd, env = _pinned(cmd, core)
    os.makedirs(out, exist_ok=True)
    start = time.time()
    with open(os.path.join(out, "pretrain.log"), "w") as log:
        subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
    with open(os.path.join(out, "pretrain_wall.json"), "w") as f:
        json.dump({"wall_s": time.time() - start, "command": cmd}, f, indent=1)


def evaluate(corpus_dir: str, out: str, heldout_books: str | None = None) -> dict:
    """Held-out MLM loss and accuracy of the pretrained checkpoint, of its random init and of the unigram reference,
    on ``pretraining_ablation.py``'s held-out documents masked once (the same targets as its ablation table): sets
    ``pairs`` and ``segments``. With ``heldout_books`` (:func:`heldout_books_path`), the held-out books masked the
    same way too: sets ``books pairs`` and ``books segments``. ``OUT/random-init`` is made (seed 0,
    ``quickstart_steps.random_init_copy``) when absent. Writes ``OUT/heldout_mlm.json``.

    Raises ``FileNotFoundError`` naming ``heldout_books`` when that file is absent (``pretrain --hold_out_books``
    writes it)."""
    if heldout_books and not os.path.isfile(heldout_books):
        raise FileNotFoundError(f"{heldout_books}: no held-out books; run `pretrain --hold_out_books` first")
    import torch
    from transformers import AutoTokenizer

    from hf_bert_tasks.scripts.quickstart_steps import random_init_copy

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import pretraining_ablation as ablation

    torch.set_num_threads(1)
    tokenizer = AutoTokenizer.from_pretrained(os.path.join(corpus_dir, "tokenizer"))
    sets = ablation._heldout_sets(corpus_dir, tokenizer)
    if heldout_books:
        books = ablation._heldout_sets(corpus_dir, tokenizer, path=heldout_books)
        sets.update({f"books {name}": batches for name, batches in books.items()})
    if not os.path.isfile(os.path.join(out, "random-init", "config.json")):
        random_init_copy(os.path.join(out, "pretrain"), os.path.join(out, "random-init"), seed=0)
    results = {
        "unigram": ablation._unigram_scores(corpus_dir, tokenizer, sets),
        "pretrained": ablation.score_model(os.path.join(out, "pretrain"), sets),
        "random init": ablation.score_model(os.path.join(out, "random-init"), sets),
    }
    with open(os.path.join(out, "heldout_mlm.json"), "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    return results


def finetune(
    out: str,
    shared: str,
    arm: str,
    core: int | None,
    tasks: list[str],
    fractions: list[float],
    seeds: list[int],
    model_dir: str | None = None,
) -> None:
    from hf_bert_tasks.scripts.quickstart_steps import random_init_copy

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
                cmd = [
                    sys.executable,
                    "-m",
                    "hf_bert_tasks.cli",
                    "finetune",
                    "--task",
                    task,
                    "--model_name_or_path",
                    model,
                    "--data_dir",
                    data_dir,
                    "--output_dir",
                    run_dir,
                    "--seed",
                    str(seed),
                    "--learning_rate",
                    str(LEARNING_RATE),
                    "--per_device_train_batch_size",
                    str(BATCH),
                    "--max_seq_length",
                    "128",
                    "--num_train_epochs",
                    str(epochs),
                    "--eval_strategy",
                    "no",
                    "--save_strategy",
                    "no",
                    "--logging_steps",
                    "50",
                    "--disable_tqdm",
                    "True",
                    "--no_cache_tokenized",
                ]
                cmd, env = _pinned(cmd, core)
                os.makedirs(os.path.dirname(run_dir), exist_ok=True)
                start = time.time()
                with open(run_dir + ".log", "w") as log:
                    subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, check=True)
                wall = time.time() - start
                with open(os.path.join(run_dir, "all_results.json")) as f:
                    value = json.load(f)[key]
                with open(os.path.join(run_dir, "label_efficiency_run.json"), "w") as f:
                    json.dump(
                        {
                            "task": task,
                            "fraction": fraction,
                            "arm": arm,
                            "seed": seed,
                            "train_examples": n,
                            "epochs": epochs,
                            key: value,
                            "wall_s": wall,
                            "model": model,
                        },
                        f,
                        indent=1,
                    )
                print(
                    f"{task} {fraction:g} ({n} examples, {epochs} epochs) {arm} seed {seed}: {key} {value:.4f} "
                    f"({wall:.0f} s)",
                    flush=True,
                )


# ------------------------------------------------------------------ the paper's protocol on a GPU (issue 43 item 2)
#: fine-tuning lr grid per arm and label fraction (BERT-mini, batch 128 or 32, a few hundred steps per run): larger
#: than the paper's {5e-5 .. 2e-5} for BERT-base, since small models and short runs want larger rates (docs/results.md:
#: at batch 32 both arms gained from 1e-4 to 3e-4); 3e-4 and 1e-3 bracket the better of those two for batch 128.
LR_GRID = (3e-4, 1e-3)
#: the labelled subset of a fraction is drawn once with this seed (the same for both arms and every run seed)
SUBSET_SEED = 0
#: a subset of at least this many examples trains at batch 128, a smaller one at 32 (enough steps per epoch)
LARGE_BATCH, SMALL_BATCH, LARGE_FROM = 128, 32, 10_000
GRID_MIN_STEPS = 300


def batch_for(n_examples: int) -> int:
    """Batch size for a training set of ``n_examples``: :data:`LARGE_BATCH` from :data:`LARGE_FROM` on, else 32."""
    return LARGE_BATCH if n_examples >= LARGE_FROM else SMALL_BATCH


def grid_jobs(tasks: list[str], fractions: list[float]) -> list[tuple[str, float, str]]:
    """``(task, fraction, arm)`` in run order: fractions as given (largest first: full data is the priority)."""
    return [(t, f, arm) for f in fractions for t in tasks for arm in ("pretrained", "random")]


def run_grid(
    out: str,
    shared: str,
    model_dir: str,
    tasks: list[str],
    fractions: list[float],
    lr_grid: list[float],
    seeds: list[int],
    workers: int,
    deadline_s: float,
    kill_s: float,
    extra: list[str],
    min_steps: int = GRID_MIN_STEPS,
) -> list[dict]:
    """Fine-tune both arms on every (task, fraction): one ``hf-bert-tasks finetune --lr_grid ... --seeds ...`` process
    per (task, fraction, arm) (the data tokenized once per process), ``workers`` processes at once on one device.
    No process starts after ``deadline_s``; any still running at ``kill_s`` is killed (its finished runs count).
    Writes ``OUT/grid/<task>/frac<f>/<arm>/`` and ``OUT/grid_jobs.json``; returns the job records."""
    import concurrent.futures
    import signal

    from hf_bert_tasks.scripts.quickstart_steps import random_init_copy

    start = time.time()
    models = {"pretrained": model_dir, "random": os.path.join(out, "random-init")}
    if not os.path.isfile(os.path.join(models["random"], "config.json")):
        random_init_copy(model_dir, models["random"], seed=0)
    subsets = {(t, f): write_subset(t, shared, out, f, SUBSET_SEED) for t in tasks for f in fractions}  # before

    def one(job):
        task, fraction, arm = job
        data_dir, n = subsets[task, fraction]
        batch = batch_for(n)
        epochs = epochs_for(n, TASKS[task][4], batch, min_steps)
        run_dir = os.path.join(out, "grid", task, f"frac{fraction:g}", arm)
        record = {
            "task": task,
            "fraction": fraction,
            "arm": arm,
            "train_examples": n,
            "batch": batch,
            "epochs": epochs,
            "run_dir": run_dir,
            "status": "not started (deadline)",
            "wall_s": 0.0,
        }
        begin = time.time()
        if begin - start > deadline_s:
            return record
        cmd = [
            sys.executable,
            "-m",
            "hf_bert_tasks.cli",
            "finetune",
            "--task",
            task,
            "--model_name_or_path",
            models[arm],
            "--data_dir",
            data_dir,
            "--output_dir",
            run_dir,
            "--lr_grid",
            ",".join(f"{lr:g}" for lr in lr_grid),
            "--seeds",
            ",".join(map(str, seeds)),
            "--per_device_train_batch_size",
            str(batch),
            "--per_device_eval_batch_size",
            "256",
            "--max_seq_length",
            "128",
            "--num_train_epochs",
            str(epochs),
            "--eval_strategy",
            "no",
            "--save_strategy",
            "no",
            "--logging_steps",
            "50",
            "--disable_tqdm",
            "True",
            "--no_cache_tokenized",
            "--report_to",
            "none",
            *extra,
        ]
        record["command"] = cmd
        os.makedirs(os.path.dirname(run_dir), exist_ok=True)
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        with open(run_dir + ".log", "w") as log:
            proc = subprocess.Popen(
                cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            try:
                code = proc.wait(timeout=max(1.0, kill_s - (time.time() - start)))
                record["status"] = "finished" if code == 0 else f"failed (exit {code}; see {run_dir}.log)"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                record["status"] = "killed at the time limit"
        record["wall_s"] = time.time() - begin
        print(f"{task} {fraction:g} {arm}: {record['status']} ({record['wall_s']:.0f} s)", flush=True)
        return record

    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        records = list(pool.map(one, grid_jobs(tasks, fractions)))
    with open(os.path.join(out, "grid_jobs.json"), "w") as f:
        json.dump({"wall_s": time.time() - start, "jobs": records, "lr_grid": lr_grid, "seeds": seeds}, f, indent=1)
    return records


def grid_runs(out: str) -> list[dict]:
    """Every finished (task, fraction, arm, lr, seed) run under ``OUT/grid`` with its dev metric (x100)."""
    with open(os.path.join(out, "grid_jobs.json")) as f:
        jobs = json.load(f)["jobs"]
    runs = []
    for job in jobs:
        key = TASKS[job["task"]][3]
        root = job["run_dir"]
        for lr_dir in sorted(os.listdir(root)) if os.path.isdir(root) else []:
            lr_path = os.path.join(root, lr_dir)
            for seed_dir in sorted(os.listdir(lr_path)) if lr_dir.startswith("lr_") and os.path.isdir(lr_path) else []:
                path = os.path.join(root, lr_dir, seed_dir, "all_results.json")
                if seed_dir.startswith("seed_") and os.path.isfile(path):
                    with open(path) as f:
                        result = json.load(f)
                    runs.append(
                        {
                            **{k: job[k] for k in ("task", "fraction", "arm", "train_examples", "batch", "epochs")},
                            "learning_rate": float(lr_dir[3:]),
                            "seed": int(seed_dir[5:]),
                            "metric": key,
                            "value": 100 * result[key],
                            "train_runtime_s": result.get("train_runtime"),
                        }
                    )
    return runs


def grid_rows(outs: list[str], transfer_dir: str | None, timings: dict[str, float], step: str) -> list[dict]:
    """gpu_report rows of the grids in ``outs`` (one grid, or one split across cores or lr passes): one per
    fine-tuning run (dev metric x100), held-out MLM of the pretraining (``transfer_dir/pretrain``) and the stage
    timings (``timings``: name -> seconds)."""
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))
    from gpu_report import make_row

    rows = []
    if transfer_dir:
        with open(os.path.join(transfer_dir, "pretrain", "pretraining_summary.json")) as f:
            summary = json.load(f)
        phase = summary["phases"][-1]
        final = phase.get("final_eval", {})
        config = {
            "steps": summary.get("steps"),
            "batch_size": phase.get("batch_size"),
            "max_seq_length": phase.get("max_seq_length"),
            "corpus": summary.get("corpus"),
            "train_instances": phase.get("train_instances"),
        }
        first = "first GPU run (text only, 1.9 M words, same held-out documents and vocabulary recipe): "
        rows.append(
            make_row(
                step, "pretraining: held-out MLM loss", final["eval_mlm_loss"], "nats", first + "5.76 nats", config
            )
        )
        rows.append(
            make_row(
                step,
                "pretraining: held-out MLM accuracy",
                100 * final["eval_mlm_accuracy"],
                "%",
                first + "18.3 %",
                config,
            )
        )
        with open(os.path.join(transfer_dir, "pretrain", "trainer_state.json")) as f:
            train = [h for h in json.load(f)["log_history"] if "train_runtime" in h]
        if train:
            rows.append(
                make_row(
                    step,
                    "pretraining: Trainer train_runtime",
                    train[-1]["train_runtime"],
                    "s",
                    "first GPU run: 88.6 s",
                    config,
                )
            )
    for name, seconds in timings.items():
        rows.append(make_row(step, f"wall: {name}", seconds, "s", "issue 43: the whole group <= 330 s on one H200"))
    for r in (run for out in outs for run in grid_runs(out)):
        rows.append(
            make_row(
                step,
                f"{r['task']} {100 * r['fraction']:g} % labels, {r['arm']}, lr "
                f"{r['learning_rate']:.0e}, seed {r['seed']}: dev {r['metric'].removeprefix('eval_')}",
                r["value"],
                "%",
                "the other arm at its own best lr (render)",
                {"run": r},
            )
        )
    return rows


def table_from_rows(rows: list[dict]) -> tuple[dict, dict]:
    """``(table, selected)`` from grid rows: ``table[task][fraction][arm]`` = the runs of the lr chosen on dev (the
    best mean over seeds, ``lr_grid.select_learning_rate``, the paper's rule) as records with the metric key;
    ``selected[(task, fraction, arm)]`` = ``(lr, per_lr summaries, grid)``."""
    from hf_bert_tasks.finetune.grid import select_learning_rate

    runs = [r["config"]["run"] for r in rows if "run" in r.get("config", {})]
    cells: dict = {}
    for r in runs:
        cells.setdefault((r["task"], r["fraction"], r["arm"]), []).append(r)
    table: dict = {}
    selected = {}
    for (task, fraction, arm), cell in sorted(cells.items()):
        key = cell[0]["metric"]
        lr, per_lr = select_learning_rate([{"learning_rate": r["learning_rate"], key: r["value"]} for r in cell], key)
        chosen = sorted((r for r in cell if r["learning_rate"] == lr), key=lambda r: r["seed"])
        table.setdefault(task, {}).setdefault(fraction, {})[arm] = [{**r, key: r["value"] / 100} for r in chosen]
        selected[task, fraction, arm] = (lr, per_lr, sorted({r["learning_rate"] for r in cell}))
    return table, selected


def render(rows: list[dict], png: str | None = None) -> str:
    """Markdown table (per task and label fraction: each arm at its own dev-selected lr, mean ± std over seeds with
    the per-seed values, the gain and whether it exceeds twice the larger seed std) and the PNG (:func:`plot`)."""
    table, selected = table_from_rows(rows)
    if not table:
        raise ValueError("no fine-tuning runs in the rows (did the grid step run?)")
    header = (
        "| task (dev metric, x100) | labels (fraction) | batch x epochs | pretrained: lr, mean ± std (seeds) | "
        "random init: lr, mean ± std (seeds) | gain | gain > 2 x max seed std |"
    )
    lines = [header, "|---|---|---|---|---|---|---|"]
    for task, by_fraction in table.items():
        for fraction in sorted(by_fraction, reverse=True):
            arms = by_fraction[fraction]
            cells, stats = [], {}
            for arm in ("pretrained", "random"):
                if arm not in arms:
                    cells.append("not run")
                    continue
                values = [r["value"] for r in arms[arm]]
                stats[arm] = _stats(values)
                lr, _, grid = selected[task, fraction, arm]
                edge = " (grid edge)" if len(grid) > 2 and lr in (grid[0], grid[-1]) else ""
                cells.append(
                    f"{lr:.0e}{edge}: {stats[arm][0]:.1f} ± {stats[arm][1]:.1f} "
                    f"({', '.join(f'{v:.2f}' for v in values)})"
                )
            run = next(iter(arms.values()))[0]
            gain = verdict = "-"
            if len(stats) == 2:
                (pm, ps), (qm, qs) = stats["pretrained"], stats["random"]
                gain = f"{pm - qm:+.1f}"
                verdict = "yes" if pm - qm > 2 * max(ps, qs) else "no"
            lines.append(
                f"| {task} ({run['metric']}) | {run['train_examples']:,} ({100 * fraction:g} %) | "
                f"{run['batch']} x {run['epochs']} | {cells[0]} | {cells[1]} | {gain} | {verdict} |"
            )
    if png:
        plot({t: {f: {a: v for a, v in arms.items()} for f, arms in bf.items()} for t, bf in table.items()}, png)
    return "\n".join(lines)


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
    lines = [
        (
            "| task (dev metric, x100) | labels (fraction) | epochs | pretrained (ours) | random init | gain | "
            "gain > 2 x max seed std | wall s per run (pretrained / random) |"
        ),
        "|---|---|---|---|---|---|---|---|",
    ]
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
                f"{'yes' if pm - qm > 2 * max(ps, qs) else 'no'} | {walls[0]:.0f} / {walls[1]:.0f} |"
            )
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
            points = sorted(
                (runs[arm][0]["train_examples"], _stats([100 * r[key] for r in runs[arm]]))
                for runs in by_fraction.values()
                if arm in runs
            )
            if points:
                xs = [x for x, _ in points]
                ax.errorbar(
                    xs,
                    [m for _, (m, _) in points],
                    yerr=[0 if math.isnan(s) else s for _, (_, s) in points],
                    fmt=style,
                    capsize=3,
                    label="pretrained (this package)" if arm == "pretrained" else "random init (same architecture)",
                )
        ax.set_xscale("log")
        # the fractions and seed counts this table holds (a cut grid has fewer of either): the labels say what is shown
        fractions = ", ".join(f"{100 * f:g} %" for f in sorted(by_fraction))
        seeds = sorted({len(runs[arm]) for runs in by_fraction.values() for arm in runs})
        n = f"{seeds[0]}" if len(seeds) == 1 else f"{seeds[0]}-{seeds[-1]}"
        ax.set_xlabel(f"labelled training examples ({fractions} of the labels)")
        ax.set_ylabel(f"dev {key.removeprefix('eval_')} x 100 (mean ± std, {n} seeds)")
        ax.set_title(task)
        ax.grid(alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=["pretrain", "evaluate", "finetune", "report", "grid", "rows", "render"])
    parser.add_argument("--out", default="runs/label_eff")
    parser.add_argument("--corpus", default="/tmp/abl/run", help="pretraining_ablation.py corpus's --out folder")
    parser.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    parser.add_argument("--arm", choices=["pretrained", "random"])
    parser.add_argument("--model_dir", default=None, help="pretrained folder (default OUT/pretrain)")
    parser.add_argument("--core", type=int, default=None, help="pin every run to this CPU, one thread")
    parser.add_argument("--tasks", default=",".join(TASKS))
    parser.add_argument("--fractions", default=",".join(map(str, FRACTIONS)))
    parser.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    parser.add_argument(
        "--add_corpus",
        default=None,
        help="pretrain: add books (books / books+text) or comma-separated globs of book files "
        "(pretraining_transfer.py --corpus) to the ablation corpus's training documents",
    )
    parser.add_argument(
        "--hold_out_books",
        action="store_true",
        help="pretrain: train on all books but every 20th (CORPUS/heldout-books.txt); evaluate: score those books too",
    )
    parser.add_argument(
        "--text_copies",
        type=int,
        default=1,
        help="pretrain: the ablation corpus's training documents this many times (upsampled against --add_corpus)",
    )
    parser.add_argument(
        "--next_sentence_prediction",
        action="store_true",
        help="pretrain: MLM + NSP on A/B pairs (the paper's objective) instead of MLM only on packed segments",
    )
    grid = parser.add_argument_group("grid / rows / render (the GPU group, benchmarks/gpu_transfer_books.sh)")
    grid.add_argument("--lr_grid", default=",".join(f"{lr:g}" for lr in LR_GRID))
    grid.add_argument("--workers", type=int, default=8, help="fine-tuning processes at once")
    grid.add_argument("--min_steps", type=int, default=GRID_MIN_STEPS, help="more epochs for small subsets")
    grid.add_argument("--deadline_s", type=float, default=float("inf"), help="start no job after this")
    grid.add_argument("--kill_s", type=float, default=float("inf"), help="kill running jobs at this")
    grid.add_argument("--finetune_flags", default="", help="extra finetune flags (e.g. '--bf16 True')")
    grid.add_argument("--results", default=None, help="rows / render: gpu_report's results file")
    grid.add_argument("--step", default="transfer_books", help="rows / render: the step id of the rows")
    grid.add_argument("--transfer_dir", default=None, help="rows: pretraining_transfer.py's --out (held-out MLM)")
    grid.add_argument("--timing", action="append", default=[], help="rows: NAME=SECONDS (repeatable)")
    grid.add_argument(
        "--more_out", action="append", default=[], help="rows: another grid's --out whose runs join OUT's (repeatable)"
    )
    grid.add_argument("--png", default=None, help="render: also write the figure here")
    args = parser.parse_args(argv)
    if args.stage == "grid":
        run_grid(
            args.out,
            args.shared,
            args.model_dir or os.path.join(args.out, "pretrain"),
            args.tasks.split(","),
            [float(x) for x in args.fractions.split(",")],
            [float(x) for x in args.lr_grid.split(",")],
            [int(s) for s in args.seeds.split(",")],
            args.workers,
            args.deadline_s,
            args.kill_s,
            args.finetune_flags.split(),
            args.min_steps,
        )
    elif args.stage == "rows":
        sys.path.insert(0, os.path.join(REPO, "benchmarks"))
        from gpu_report import append_rows

        timings = {name: float(value) for name, value in (t.split("=", 1) for t in args.timing)}
        rows = grid_rows([args.out, *args.more_out], args.transfer_dir, timings, args.step)
        append_rows(args.results, rows)
        print(f"{len(rows)} rows of step {args.step} -> {args.results}")
    elif args.stage == "render":
        sys.path.insert(0, os.path.join(REPO, "benchmarks"))
        from gpu_report import load_rows

        print(render([r for r in load_rows(args.results) if r["step"] == args.step], args.png))
    elif args.stage == "pretrain":
        if args.hold_out_books and not args.add_corpus:
            parser.error("--hold_out_books needs --add_corpus (the books to hold some of out)")
        extra = [books_file(args.corpus, args.add_corpus, args.shared, args.hold_out_books)] if args.add_corpus else []
        pretrain(args.corpus, args.out, args.core, extra, args.text_copies, args.next_sentence_prediction)
    elif args.stage == "evaluate":
        books = heldout_books_path(args.corpus) if args.hold_out_books else None
        print(json.dumps(evaluate(args.corpus, args.out, books), indent=1))
    elif args.stage == "finetune":
        if not args.arm:
            parser.error("finetune needs --arm pretrained|random")
        finetune(
            args.out,
            args.shared,
            args.arm,
            args.core,
            args.tasks.split(","),
            [float(x) for x in args.fractions.split(",")],
            [int(s) for s in args.seeds.split(",")],
            args.model_dir,
        )
    else:
        print(report(args.out))


if __name__ == "__main__":
    main()
