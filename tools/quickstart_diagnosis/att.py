"""Quickstart plateau diagnosis: per layer and head, the [CLS] attention on [CLS] and on [SEP] (100 SST-2 sample dev
sentences).

Usage: python tools/quickstart_diagnosis/att.py MODEL_DIR
"""

import pathlib
import sys

import torch
from transformers import AutoTokenizer, BertModel

torch.set_num_threads(1)
d = sys.argv[1]
tok = AutoTokenizer.from_pretrained(d)
m = BertModel.from_pretrained(d, attn_implementation="eager").eval()
lines = [l.split("\t")[0] for l in pathlib.Path("hf_bert_tasks/samples/SST-2/dev.tsv").read_text().splitlines()[1:101]]
b = tok(lines, padding=True, return_tensors="pt")
with torch.no_grad():
    o = m(**b, output_attentions=True)
L = b["attention_mask"].sum(1)
for li, a in enumerate(o.attentions):
    cls = a[:, :, 0, :]  # B,H,T
    sep = torch.stack([cls[i, :, L[i] - 1] for i in range(len(L))]).mean(0)
    print("layer", li, "CLS->CLS", cls[:, :, 0].mean(0).numpy().round(2), "CLS->SEP", sep.numpy().round(2))
