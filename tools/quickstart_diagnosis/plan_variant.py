"""The whole quickstart with ``QuickstartPlan`` fields replaced, one thread (session 2026-12-02, issue 25):

python tools/quickstart_diagnosis/plan_variant.py SEED OUT pretrain_steps=1600 frozen_epochs=20
"""

import ast
import sys
from dataclasses import replace

from hf_bert_tasks.scripts import quickstart as q
from hf_bert_tasks.utils.threads import use_threads

print(use_threads(1))
seed, out = int(sys.argv[1]), sys.argv[2]
kw = {a.split("=")[0]: ast.literal_eval(a.split("=")[1]) for a in sys.argv[3:]}
q.run_quickstart(out, seed, replace(q.FULL, **kw))
