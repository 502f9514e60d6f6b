"""One quickstart fine-tune at the quickstart's settings with overrides (session 2026-12-02, issue 25):

    python tools/quickstart_diagnosis/one_run.py CKPT OUT SEED RANDOM_INIT key=value ...

key=value pairs go to ``quickstart_steps.finetune_sample`` (e.g. ``mode=\"lora\" epochs=10 learning_rate=2e-3``,
``max_train_samples=160``); ``task=\"mrpc\"`` picks the sample task (default sst2); ``plan_<field>=`` replaces a
``QuickstartPlan`` field. Prints one RESULT line with the last dev metric and the last 8 evaluations. One thread.
"""

import ast
import json
import os
import sys
import time
from dataclasses import replace

import torch

from hf_bert_tasks.scripts import quickstart as q
from hf_bert_tasks.scripts import quickstart_steps as qs

torch.set_num_threads(1)
t0 = time.time()
ckpt, out, seed, rnd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
kw = {}
for a in sys.argv[5:]:
    k, v = a.split("=", 1)
    try:
        v = ast.literal_eval(v)
    except (ValueError, SyntaxError):  # a bare word stays a string
        pass
    kw[k] = v
task = kw.pop("task", "sst2")
folder = {"sst2": "SST-2", "mrpc": "MRPC", "mnli": "MNLI"}[task]
run = next(r for r in q.FULL.tasks if r.task == task)
planmod = {k[5:]: kw.pop(k) for k in list(kw) if k.startswith("plan_")}
plan = replace(q.FULL, **planmod)
model = qs.random_init_copy(ckpt, out + "-rnd", seed) if rnd == "1" else ckpt
res = qs.finetune_sample(plan, run, model, out, seed, **kw)
with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
    hist = json.load(f)["log_history"]
pe = [round(e.get("eval_accuracy", e.get("eval_f1", 0)), 3) for e in hist if "eval_loss" in e]
print(
    "RESULT",
    out,
    round(res.get("eval_accuracy", res.get("eval_f1")), 4),
    "per-eval",
    pe[-8:],
    "wall",
    round(time.time() - t0),
    flush=True,
)
