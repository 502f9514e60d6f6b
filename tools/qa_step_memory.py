"""What one SQuAD training step holds in RAM: the activations a forward pass saves for backward, by attention path.

    OMP_NUM_THREADS=1 python tools/qa_step_memory.py MODEL_DIR [--batch_size 48] [--max_seq_length 256]

Issue 57 item 3 (``benchmarks/bench_squad_memory.py``): a SQuAD v2 training step at 48 x 256 peaks near 6 GB of RSS
for all-MiniLM-L6-v2 in both ``hf-bert-tasks finetune`` and ``run_qa.py``. This tool names where that goes: for each
variant it loads ``AutoModelForQuestionAnswering`` in a fresh process, runs one forward pass with labels on a random
batch (all positions real) and its backward pass, and reads the process's RSS high-water mark (``VmHWM``, reset
through ``/proc/self/clear_refs`` before each pass, proc(5)). Variants: SDPA and eager attention in training mode
(dropout on, the model's config), SDPA with ``attention_probs_dropout_prob=0`` (hidden dropout kept), and eval mode
(no dropout, gradients still recorded). Printed per variant: the RSS increase of the forward pass (what it saves for
backward) and the peak through backward, in MiB. Linux only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys

VARIANTS = {
    "sdpa, train mode (dropout 0.1 everywhere)": ("sdpa", "train"),
    "eager, train mode": ("eager", "train"),
    "sdpa, attention dropout 0 (hidden dropout kept)": ("sdpa", "noattndrop"),
    "sdpa, eval mode (no dropout, gradients on)": ("sdpa", "eval"),
}

CHILD = r"""
import sys, torch
from transformers import AutoModelForQuestionAnswering

def status(field):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) / 1024 for line in f if line.startswith(field + ":"))

def reset():
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")

path, attn, mode, batch, length = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
extra = {"attention_probs_dropout_prob": 0.0} if mode == "noattndrop" else {}
torch.manual_seed(0)
model = AutoModelForQuestionAnswering.from_pretrained(path, attn_implementation=attn, **extra)
model.train(mode != "eval")
ids = torch.randint(1000, 20000, (batch, length))
labels = torch.zeros(batch, dtype=torch.long)
base = status("VmRSS")
reset()
out = model(input_ids=ids, attention_mask=torch.ones_like(ids), token_type_ids=torch.zeros_like(ids),
            start_positions=labels, end_positions=labels)
forward = status("VmHWM") - base
reset()
out.loss.backward()
print(f"{forward:.0f} {status('VmHWM') - base:.0f}")
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a checkpoint folder (e.g. all-MiniLM-L6-v2's)")
    parser.add_argument("--batch_size", type=int, default=48)
    parser.add_argument("--max_seq_length", type=int, default=256)
    args = parser.parse_args(argv)
    print(f"batch {args.batch_size} x {args.max_seq_length}; MiB over the RSS before the forward pass")
    print(f"{'variant':50s} {'forward (saved)':>16s} {'through backward':>17s}")
    for name, (attn, mode) in VARIANTS.items():
        out = subprocess.run(
            [sys.executable, "-c", CHILD, args.model, attn, mode, str(args.batch_size), str(args.max_seq_length)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        print(f"{name:50s} {float(out[-2]):16.0f} {float(out[-1]):17.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
