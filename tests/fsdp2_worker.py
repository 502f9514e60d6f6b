"""Worker for tests/test_fsdp2.py: a few optimizer steps of a tiny BERT, one process or FSDP2 over gloo (torchrun).

    python tests/fsdp2_worker.py pretrain OUT_DIR            # one process, the whole global batch
    torchrun --nproc_per_node 2 tests/fsdp2_worker.py pretrain OUT_DIR   # FSDP2: rank r takes rows r::world

Each rank computes the package's loss terms on its rows (``pretraining_terms`` with the masked-only MLM head for
``pretrain``; the per-labelled-token cross-entropy of the NER head for ``finetune``), divides the summed
cross-entropy by the GLOBAL count of terms and multiplies by the number of processes (FSDP2 averages gradients, as
DDP), so one process and N processes make the same update (docs/design.md, losses per token of the global batch).
Writes ``losses.json`` (the global loss of each step) and, from rank 0, the full (unsharded) state dict saved with
``save_pretrained`` in ``OUT_DIR/model``.
"""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.nn.functional as F

STEPS, ROWS, LENGTH, VOCAB = 3, 8, 12, 60


def tiny_config():
    from transformers import BertConfig

    return BertConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=5,
    )


def batch(step):
    """The global batch of ``step``: the same tensors in every process (seeded)."""
    g = torch.Generator().manual_seed(1000 + step)
    input_ids = torch.randint(5, VOCAB, (ROWS, LENGTH), generator=g)
    labels = torch.full((ROWS, LENGTH), -100)
    chosen = torch.rand(ROWS, LENGTH, generator=g) < 0.3
    chosen[:, 1] = True  # at least one target per row
    labels[chosen] = torch.randint(0, VOCAB, (int(chosen.sum()),), generator=g)
    return {
        "input_ids": input_ids,
        "token_type_ids": torch.zeros_like(input_ids),
        "attention_mask": torch.ones_like(input_ids),
        "labels": labels,
        "next_sentence_label": torch.randint(0, 2, (ROWS,), generator=g),
        "tag_labels": torch.where(chosen, labels % 5, torch.full_like(labels, -100)),
    }


def loss_sums(kind, model, rows):
    """``(sum of cross-entropies, number of terms)`` of the package's loss for ``rows`` (both scalars)."""
    if kind == "pretrain":
        from hf_bert_tasks.pretraining.trainer import pretraining_terms

        out = model(
            input_ids=rows["input_ids"],
            token_type_ids=rows["token_type_ids"],
            attention_mask=rows["attention_mask"],
            labels=rows["labels"],
        )
        mlm_ce, nsp_ce, _ = pretraining_terms(
            out.prediction_logits, out.seq_relationship_logits, rows["labels"], rows["next_sentence_label"]
        )
        return mlm_ce.sum(), torch.tensor(float(mlm_ce.numel())), nsp_ce.sum(), torch.tensor(float(nsp_ce.numel()))
    logits = model(input_ids=rows["input_ids"], attention_mask=rows["attention_mask"]).logits
    labels = rows["tag_labels"]
    ce = F.cross_entropy(logits.view(-1, logits.shape[-1]), labels.view(-1), ignore_index=-100, reduction="sum")
    zero = torch.zeros(())
    return ce, labels.ne(-100).sum().float(), zero, zero


def main(kind, out_dir):
    from transformers import BertForTokenClassification

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")
    torch.manual_seed(0)
    model_class = BertForPreTrainingMaskedOnly if kind == "pretrain" else BertForTokenClassification
    model = model_class(tiny_config())
    if kind == "pretrain":
        assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    if world > 1:
        from torch.distributed.fsdp import fully_shard

        for layer in model.bert.encoder.layer:
            fully_shard(layer)
        fully_shard(model)
    # SGD: the update is linear in the gradient (AdamW divides near-zero gradients by their own size, so float noise
    # between reduction orders would become visible in the weights after one step)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    losses = []
    for step in range(STEPS):
        full = batch(step)
        rows = {k: v[rank::world].contiguous() for k, v in full.items()}
        mlm_sum, mlm_n, nsp_sum, nsp_n = loss_sums(kind, model, rows)
        counts = torch.stack([mlm_n, nsp_n]).detach()
        sums = torch.stack([mlm_sum, nsp_sum]).detach()
        if world > 1:
            dist.all_reduce(counts)
            dist.all_reduce(sums)
        loss = mlm_sum / counts[0] * world + (nsp_sum / counts[1] * world if kind == "pretrain" else 0)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(sums[0] / counts[0] + (sums[1] / counts[1] if kind == "pretrain" else 0)))
    if world > 1:
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        state = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    else:
        state = model.state_dict()
    if rank == 0:
        os.makedirs(out_dir, exist_ok=True)
        plain = model_class(tiny_config())  # an unwrapped model to save the gathered weights with
        plain.load_state_dict(state)
        plain.save_pretrained(os.path.join(out_dir, "model"))
        with open(os.path.join(out_dir, "losses.json"), "w", encoding="utf-8") as f:
            json.dump(losses, f)
    if world > 1:
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
    # everything is written and the group torn down: leave without the interpreter's teardown, where a rank was
    # still aborted by the C++ runtime ("terminate called without an active exception", CI of 2026-12-02)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
