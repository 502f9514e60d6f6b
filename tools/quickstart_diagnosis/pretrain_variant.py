"""The quickstart's pretraining step with ``QuickstartPlan`` fields replaced (session 2026-12-02, issue 25):

python tools/quickstart_diagnosis/pretrain_variant.py SEED OUT pretrain_batch_size=8 pretrain_steps=2000 ...
"""

import ast
import sys
import time
from dataclasses import replace

import torch

from hf_bert_tasks.scripts import quickstart as q
from hf_bert_tasks.scripts import quickstart_steps as qs

torch.set_num_threads(1)
t0 = time.time()
seed, out = int(sys.argv[1]), sys.argv[2]
kw = {a.split("=")[0]: ast.literal_eval(a.split("=")[1]) for a in sys.argv[3:]}
_, rows, _ = qs.pretrain_step(replace(q.FULL, **kw), out, seed)
print("PRE", seed, kw, [(r.metric, round(r.value, 4), r.works) for r in rows], round(time.time() - t0), flush=True)
