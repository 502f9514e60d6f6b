"""Quickstart plateau diagnosis (session 2026-11-30): fine-tune only the SST-2 step from a quickstart pretraining
checkpoint with a variant (defaults / random batches / re-initialised pooler / both).

Usage: python tools/quickstart_diagnosis/exp.py CHECKPOINT_DIR VARIANT EPOCHS LR SEED (VARIANT contains "random" and/or
"reinit"); prints one RESULT line. Checkpoints came from `hf-bert-tasks quickstart` at commit 4e642c3.
"""

import json
import os
import pathlib
import sys
import time

import torch

torch.set_num_threads(1)
from hf_bert_tasks.scripts import quickstart as q
from hf_bert_tasks.scripts import quickstart_steps as qs

src, variant, epochs, lr, seed = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
out = f"runs/qs2x/{os.path.basename(os.path.dirname(src))}-{variant}-{epochs}-{lr}-{seed}"
model_dir = src
if "reinit" in variant:
    from transformers import AutoTokenizer, BertForPreTraining

    m = BertForPreTraining.from_pretrained(src)
    torch.manual_seed(seed)
    m.bert.pooler.dense.weight.data.normal_(0, m.config.initializer_range)
    m.bert.pooler.dense.bias.data.zero_()
    if "top" in variant:
        m.bert.encoder.layer[-1].apply(m._init_weights)
    model_dir = out + "-model"
    m.save_pretrained(model_dir)
    AutoTokenizer.from_pretrained(src).save_pretrained(model_dir)
run = q.TaskRun("sst2", "SST-2", epochs, lr)
t = time.time()
extra = {"train_sampling_strategy": "random"} if "random" in variant else {}
r = qs.finetune_sample(q.FULL, run, model_dir, out, seed, **extra)
s = json.loads(pathlib.Path(out, "trainer_state.json").read_text())
print(
    "RESULT",
    variant,
    epochs,
    lr,
    seed,
    "acc",
    round(r["eval_accuracy"], 4),
    "wall",
    round(time.time() - t),
    [round(l["loss"], 2) for l in s["log_history"] if "loss" in l],
)
