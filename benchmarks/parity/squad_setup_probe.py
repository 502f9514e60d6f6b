"""SQuAD parity, step 1 (no training): what each side's ``Trainer`` is about to train, read at ``Trainer.train``
(issue 59). Runs transformers' ``run_qa.py`` (``shared/baselines/qa``) or the package's ``finetune`` in this process
with ``Trainer.train`` replaced by a probe that records, then stops the run:

- the training arguments that shape optimisation (lr, schedule, warmup, weight decay, AdamW betas/eps, clipping,
  batch, accumulation, epochs, sampler, seeds, dropout of the model config);
- the ``qa_outputs`` head as initialised (saved) and a hash of every other weight;
- the optimizer's parameter groups (which parameters get weight decay) and the lr at every step of the schedule;
- the train dataloader: sampler class, batches per epoch, padded tokens per batch over an epoch;
- the loss and the gradient on one fixed batch (the first 8 windows, each side's collator, dropout seeded), through
  the side's own ``compute_loss`` with the ``num_items_in_batch`` its ``get_batch_samples`` gives.

    python benchmarks/parity/squad_setup_probe.py probe run_qa|ours OUT.pt --model DIR --data DIR [flags...]
    python benchmarks/parity/squad_setup_probe.py compare RUN_QA.pt OURS.pt

``--data``: a folder with train-v1.1.json and dev-v1.1.json (``squad_split.py``). Unknown flags (after an optional ``--``) go to
the side's command line (e.g. ``-- --train_sampling_strategy random``). ``compare`` prints the differences of two records.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
#: transformers' run_qa.py, adapted to run offline: ../shared/baselines/qa beside the repository
BASELINE = os.path.join(os.path.dirname(ROOT), "shared", "baselines", "qa")


class Stop(BaseException):
    """Raised by the probe to end the run before training (not an ``Exception``: no error boundary catches it)."""


COMMON = {"lr": "5e-5", "batch": "32", "epochs": "2", "max_seq": "256", "stride": "96", "seed": "42"}


def side_argv(side: str, model: str, data: str, out: str, extra: list[str]) -> list[str]:
    """The issue's command line of ``side`` (lr 5e-5, batch 32, 2 epochs, seq 256, stride 96, warmup 0.1, wd 0.01)."""
    c = COMMON
    if side == "run_qa":
        return [
            "run_qa.py", "--model_name_or_path", model, "--train_file", f"{data}/train-v1.1.json",
            "--validation_file", f"{data}/dev-v1.1.json", "--do_train", "--do_eval",
            "--per_device_train_batch_size", c["batch"], "--learning_rate", c["lr"], "--num_train_epochs", c["epochs"],
            "--max_seq_length", c["max_seq"], "--doc_stride", c["stride"], "--seed", c["seed"], "--save_strategy", "no",
            "--logging_steps", "50", "--report_to", "none", "--output_dir", out, "--warmup_steps", "0.1",
            "--weight_decay", "0.01", *extra,
        ]  # fmt: skip
    return [
        "finetune", "--task", "squad_v1", "--model_name_or_path", model, "--data_dir", data, "--output_dir", out,
        "--per_device_train_batch_size", c["batch"], "--learning_rate", c["lr"], "--num_train_epochs", c["epochs"],
        "--max_seq_length", c["max_seq"], "--doc_stride", c["stride"], "--seed", c["seed"], "--warmup_steps", "0.1",
        "--weight_decay", "0.01", *extra,
    ]  # fmt: skip


def _hash(tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def record(trainer) -> dict:
    """What ``trainer`` would train with (see the module docstring)."""
    import torch

    a, model = trainer.args, trainer.model
    rec = {
        "trainer_class": type(trainer).__name__,
        "args": {
            k: getattr(a, k, None)
            for k in (
                "learning_rate",
                "lr_scheduler_type",
                "warmup_steps",
                "warmup_ratio",
                "weight_decay",
                "adam_beta1",
                "adam_beta2",
                "adam_epsilon",
                "max_grad_norm",
                "optim",
                "per_device_train_batch_size",
                "gradient_accumulation_steps",
                "num_train_epochs",
                "max_steps",
                "train_sampling_strategy",
                "seed",
                "data_seed",
                "label_smoothing_factor",
                "average_tokens_across_devices",
                "dataloader_drop_last",
                "bf16",
                "fp16",
                "torch_compile",
            )
        },
        "dropout": (model.config.hidden_dropout_prob, model.config.attention_probs_dropout_prob),
        "head": {k: v.detach().clone() for k, v in model.qa_outputs.state_dict().items()},
        "encoder_hash": _hash(v for k, v in model.state_dict().items() if not k.startswith("qa_outputs")),
        "train_columns": list(trainer.train_dataset.column_names),
        "train_rows": len(trainer.train_dataset),
    }
    loader = trainer.get_train_dataloader()
    rec["sampler"] = type(getattr(loader, "batch_sampler", None) and loader.batch_sampler.sampler).__name__
    rec["batches_per_epoch"] = len(loader)
    padded, real, firsts = 0, 0, []
    for i, batch in enumerate(loader):
        padded += batch["input_ids"].numel()
        real += int(batch["attention_mask"].sum())
        if i < 3:
            firsts.append(tuple(batch["input_ids"].shape))
    rec["first_batch_shapes"], rec["padded_tokens"], rec["real_tokens"] = firsts, padded, real
    steps = len(loader) // a.gradient_accumulation_steps * int(a.num_train_epochs)
    rec["optimizer_steps"] = steps
    trainer.create_optimizer_and_scheduler(num_training_steps=steps)
    names = {id(p): n for n, p in model.named_parameters()}
    rec["param_groups"] = [
        {"weight_decay": g["weight_decay"], "n": len(g["params"]), "names": sorted(names[id(p)] for p in g["params"])}
        for g in trainer.optimizer.param_groups
    ]
    rec["optimizer"] = type(trainer.optimizer).__name__
    lrs = []
    for _ in range(steps):
        lrs.append(trainer.lr_scheduler.get_last_lr()[0])
        trainer.optimizer.step()  # no gradients yet: a no-op on the weights, keeps the scheduler warning away
        trainer.lr_scheduler.step()
    rec["lr_per_step"] = lrs
    # one fixed batch: the first 8 windows (identical on both sides at this setting), the side's collator
    rows = [trainer.train_dataset[i] for i in range(8)]
    keep = ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
    batch = trainer.data_collator([{k: r[k] for k in keep} for r in rows])
    batch = {k: v for k, v in batch.items() if k in keep}
    rec["fixed_batch"] = {k: v.clone() for k, v in batch.items()}
    _, count = trainer.get_batch_samples(iter([batch]), 1, torch.device("cpu"))
    rec["num_items_in_batch"] = None if count is None else int(count)
    model.train()
    model.zero_grad()
    torch.manual_seed(0)
    loss = trainer.compute_loss(model, dict(batch), num_items_in_batch=count)
    loss.backward()
    rec["fixed_loss"] = float(loss.detach())
    rec["fixed_grad"] = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    # the same without dropout: the masks depend on the padded width, which differs (run_qa pads to max_length)
    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.p = 0.0
    model.zero_grad()
    loss = trainer.compute_loss(model, dict(batch), num_items_in_batch=count)
    loss.backward()
    rec["fixed_loss_no_dropout"] = float(loss.detach())
    rec["fixed_grad_no_dropout"] = {
        n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None
    }
    model.zero_grad()
    return rec


def probe(side: str, out: str, model: str, data: str, extra: list[str]) -> None:
    """Run ``side`` up to ``Trainer.train`` and save :func:`record` to ``out`` (``torch.save``)."""
    import tempfile

    import torch
    import transformers

    def fake_train(self, *args, **kwargs):
        torch.save(record(self), out)
        raise Stop

    transformers.Trainer.train = fake_train
    work = tempfile.mkdtemp(prefix=f"probe-{side}-")
    argv = side_argv(side, model, data, os.path.join(work, "out"), extra)
    try:
        if side == "run_qa":
            if not os.path.isdir(BASELINE):
                raise OSError(f"{BASELINE} not found: the run_qa side needs run_qa.py (../shared/baselines/qa)")
            sys.path.insert(0, BASELINE)
            import run_qa

            sys.argv = argv
            run_qa.main()
        else:
            from hf_bert_tasks.cli import main

            main(argv)
    except Stop:
        print(f"recorded {side} -> {out}")
        return
    raise RuntimeError(f"{side}: Trainer.train was never called")


def compare(ref_path: str, ours_path: str) -> None:
    """Print the differences between two :func:`probe` records."""
    import torch

    ref, ours = torch.load(ref_path, weights_only=False), torch.load(ours_path, weights_only=False)
    for k in ref["args"]:
        if ref["args"][k] != ours["args"][k]:
            print(f"arg {k}: run_qa {ref['args'][k]!r}  ours {ours['args'][k]!r}")
    for k in ("trainer_class", "dropout", "encoder_hash", "train_rows", "sampler", "batches_per_epoch",
              "optimizer_steps", "optimizer", "num_items_in_batch", "first_batch_shapes", "padded_tokens",
              "real_tokens", "fixed_loss", "fixed_loss_no_dropout"):  # fmt: skip
        print(f"{k}: run_qa {ref[k]!r}  ours {ours[k]!r}")
    for k in ref["head"]:
        same = torch.equal(ref["head"][k], ours["head"][k])
        print(f"head {k}: identical={same} std run_qa {ref['head'][k].std():.5f} ours {ours['head'][k].std():.5f}")
    print("param groups run_qa:", [(g["weight_decay"], g["n"]) for g in ref["param_groups"]])
    print("param groups ours:  ", [(g["weight_decay"], g["n"]) for g in ours["param_groups"]])
    for gr, go in zip(ref["param_groups"], ours["param_groups"]):
        if gr["names"] != go["names"]:
            print("  group names differ:", sorted(set(gr["names"]) ^ set(go["names"]))[:10])
    lr_r, lr_o = ref["lr_per_step"], ours["lr_per_step"]
    print(f"lr steps {len(lr_r)} vs {len(lr_o)}; peak at step {lr_r.index(max(lr_r))} vs {lr_o.index(max(lr_o))};"
          f" max |diff| over common steps {max(abs(x - y) for x, y in zip(lr_r, lr_o)):.3e}")  # fmt: skip
    same_batch = all(
        torch.equal(ref["fixed_batch"][k][:, : ours["fixed_batch"][k].shape[1]], ours["fixed_batch"][k])
        for k in ours["fixed_batch"]
        if ours["fixed_batch"][k].dim() == 2
    )
    print(f"fixed batch identical (ours' width): {same_batch}")
    for key in ("fixed_grad", "fixed_grad_no_dropout"):
        num = sum(float((ref[key][n] - ours[key][n]).pow(2).sum()) for n in ref[key])
        den = sum(float(ref[key][n].pow(2).sum()) for n in ref[key])
        print(f"{key}: relative L2 difference {(num / den) ** 0.5:.3e} (weights "
              f"{'identical' if ref['encoder_hash'] == ours['encoder_hash'] else 'differ'})")  # fmt: skip


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("probe")
    p.add_argument("side", choices=["run_qa", "ours"])
    p.add_argument("out")
    p.add_argument("--model", required=True)
    p.add_argument("--data", required=True)
    c = sub.add_parser("compare")
    c.add_argument("ref")
    c.add_argument("ours")
    args, extra = parser.parse_known_args(argv)  # unknown flags (after an optional --) go to the side
    extra = [x for x in extra if x != "--"]
    if args.cmd == "probe":
        probe(args.side, os.path.abspath(args.out), args.model, args.data, extra)
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    else:
        compare(args.ref, args.ours)


if __name__ == "__main__":
    main()
