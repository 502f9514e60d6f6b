"""Quickstart plateau diagnosis: pooler saturation and per-layer [CLS] spread on 200 SST-2 sample dev sentences.

Usage: python tools/quickstart_diagnosis/pool.py MODEL_DIR
"""

import pathlib
import sys

import torch
from transformers import AutoTokenizer, BertModel

torch.set_num_threads(1)
d = sys.argv[1]
tok = AutoTokenizer.from_pretrained(d)
m = BertModel.from_pretrained(d).eval()
lines = [l.split("\t")[0] for l in pathlib.Path("hf_bert_tasks/samples/SST-2/dev.tsv").read_text().splitlines()[1:201]]
b = tok(lines, padding=True, return_tensors="pt")
with torch.no_grad():
    o = m(**b, output_hidden_states=True)
p = o.pooler_output
print("pooler |x|>0.99 share", (p.abs() > 0.99).float().mean().item(), "mean|x|", p.abs().mean().item())
print("pooler per-dim std across examples (mean)", p.std(0).mean().item())
pre = torch.atanh(p.clamp(-0.999999, 0.999999))
print("pre-tanh |z| mean", pre.abs().mean().item())
for i, h in enumerate(o.hidden_states):
    cls = h[:, 0]
    print(
        "layer",
        i,
        "CLS std across ex",
        cls.std(0).mean().item(),
        "norm",
        cls.norm(dim=-1).mean().item(),
        "meanpool std",
        (h * b["attention_mask"][..., None]).sum(1).div(b["attention_mask"].sum(1, keepdim=True)).std(0).mean().item(),
    )
