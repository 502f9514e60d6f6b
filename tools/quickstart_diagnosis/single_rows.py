"""Quickstart rows one at a time (session 2026-12-01, issues 25/27): pretrain one seed's checkpoint, or fine-tune one
sample task from it (optionally from a random-init copy, on the first N training examples, or on another copy of the
sample folder) at the quickstart's settings, one thread. Prints one PRE / RESULT line with the dev metric per epoch.

    python tools/quickstart_diagnosis/single_rows.py pretrain SEED OUT_DIR
    python tools/quickstart_diagnosis/single_rows.py finetune CKPT TASK FOLDER EPOCHS LR SEED MAX_TRAIN RANDOM_INIT \
        OUT_DIR [DATA_DIR]

MAX_TRAIN 0 = all; RANDOM_INIT 1 = a randomly initialised copy of CKPT; DATA_DIR replaces the sample folder
(e.g. a variant written by tools/make_samples.py into another folder). Run pinned: taskset -c 0 OMP_NUM_THREADS=1.
"""

import json
import os
import sys
import time
from dataclasses import replace

import torch

from hf_bert_tasks.scripts import quickstart as q
from hf_bert_tasks.scripts import quickstart_steps as qs

torch.set_num_threads(1)
started = time.time()
if sys.argv[1] == "pretrain":
    seed, out = int(sys.argv[2]), sys.argv[3]
    _, rows, _ = qs.pretrain_step(q.FULL, out, seed)
    print(
        "PRE", seed, [(r.metric, round(r.value, 4), r.works) for r in rows], round(time.time() - started), flush=True
    )
    sys.exit(0)
ckpt, task, folder, epochs, lr, seed, max_train, random_init, out = sys.argv[2:11]
if len(sys.argv) > 11:  # another copy of the sample folder
    qs.sample_path = lambda *parts: sys.argv[11]
model = qs.random_init_copy(ckpt, out + "-random-init-bert", int(seed)) if random_init == "1" else ckpt
plan = replace(q.FULL, max_train_samples=int(max_train) or None)
result = qs.finetune_sample(plan, q.TaskRun(task, folder, float(epochs), float(lr)), model, out, int(seed))
with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
    history = json.load(f)["log_history"]
per_epoch = [round(e.get("eval_f1", e.get("eval_accuracy")), 3) for e in history if "eval_loss" in e]
print(
    "RESULT",
    out,
    {k: round(v, 4) for k, v in result.items() if k in ("eval_f1", "eval_accuracy")},
    "per epoch",
    per_epoch,
    "wall",
    round(time.time() - started),
    flush=True,
)
