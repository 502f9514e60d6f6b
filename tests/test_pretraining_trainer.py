"""PretrainingTrainer: the update and the metrics do not depend on how the same examples are split into batches.

Reference values come from a plain PyTorch computation in the test (google-research/bert ``get_masked_lm_output``:
sum of the predicted tokens' cross-entropies / number of predicted tokens; NSP: mean over examples).
"""

import copy

import pytest
import torch

#: Static MLM targets (labels) per example: 1, 3, 2, 1, 4, 1 and 2 predicted tokens, so a mean of per-batch means
#: differs from the mean over tokens.
ROWS = [
    ([2, 7, 9, 10, 11, 3], [-100, 7, -100, -100, -100, -100], 0),
    ([2, 5, 8, 12, 13, 14, 3], [-100, 5, 8, -100, 13, -100, -100], 1),
    ([2, 30, 31, 3, 16, 19, 3], [-100, -100, 31, -100, 16, -100, -100], 0),
    ([2, 21, 22, 3, 27, 28, 3], [-100, 21, -100, -100, -100, -100, -100], 1),
    ([2, 6, 7, 9, 10, 33, 5, 11, 3], [-100, 6, 7, -100, 10, -100, 5, -100, -100], 0),
    ([2, 17, 18, 3, 20, 3], [-100, -100, -100, -100, 20, -100], 1),
    ([2, 29, 27, 28, 3, 34, 3], [-100, 29, -100, 28, -100, -100, -100], 0),
]


def _dataset(rows):
    from datasets import Dataset

    return Dataset.from_dict(
        {
            "input_ids": [r[0] for r in rows],
            "labels": [r[1] for r in rows],
            "next_sentence_label": [r[2] for r in rows],
        }
    )


def _model(vocab_size):
    from transformers import BertConfig

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForPreTrainingMaskedOnly(config)


def _trainer(model, tokenizer, tmp_path, train_rows=None, eval_rows=None, **args):
    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining
    from hf_bert_tasks.pretraining.config import PretrainTrainingArguments
    from hf_bert_tasks.pretraining.trainer import PretrainingTrainer

    training_args = PretrainTrainingArguments(
        output_dir=str(tmp_path),
        max_steps=1,
        learning_rate=0.1,
        optim="sgd",
        weight_decay=0.0,
        warmup_steps=0,
        lr_scheduler_type="constant",
        max_grad_norm=0.0,
        save_strategy="no",
        eval_strategy="no",
        report_to="none",
        disable_tqdm=True,
        use_cpu=True,
        seed=0,
        **args,
    )
    return PretrainingTrainer(
        model=model,
        args=training_args,
        train_dataset=_dataset(train_rows) if train_rows else None,
        eval_dataset=_dataset(eval_rows) if eval_rows else None,
        data_collator=DataCollatorForBertPretraining(tokenizer, seed=0),
    )


def _reference_terms(model, rows):
    """Per-token MLM cross-entropies and per-example NSP cross-entropies, one example at a time (no padding)."""
    import torch.nn.functional as F

    mlm, nsp, correct, nsp_correct = [], [], 0, 0
    for ids, labels, nsp_label in rows:
        ids_t, labels_t = torch.tensor([ids]), torch.tensor([labels])
        out = model.bert(ids_t, attention_mask=torch.ones_like(ids_t), token_type_ids=torch.zeros_like(ids_t))
        selected = labels_t != -100
        logits = model.cls.predictions(out.last_hidden_state[selected])
        mlm.append(F.cross_entropy(logits, labels_t[selected], reduction="none"))
        correct += (logits.argmax(-1) == labels_t[selected]).sum().item()
        nsp_logits = model.cls.seq_relationship(out.pooler_output)
        nsp.append(F.cross_entropy(nsp_logits, torch.tensor([nsp_label])))
        nsp_correct += int(nsp_logits.argmax(-1).item() == nsp_label)
    return torch.cat(mlm), torch.stack(nsp), correct, nsp_correct


@pytest.mark.parametrize("batch,accumulation", [(2, 1), (1, 2)])
def test_one_step_update_is_the_global_per_token_gradient(vocab_tokenizer, tmp_path, batch, accumulation):
    rows = ROWS[:2]  # 1 and 3 predicted tokens
    model = _model(len(vocab_tokenizer))
    reference = copy.deepcopy(model)
    trainer = _trainer(
        model,
        vocab_tokenizer,
        tmp_path,
        train_rows=rows,
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
    )
    trainer.train()
    # expected: one SGD step (lr 0.1) on sum(token CE) / 4 tokens + sum(NSP CE) / 2 examples
    mlm, nsp, _, _ = _reference_terms(reference, rows)
    (mlm.sum() / 4 + nsp.sum() / 2).backward()
    # the old normalisation (mean of micro-batch means) gives another update: the test can tell them apart
    wrong = copy.deepcopy(reference)
    wrong.zero_grad()
    w_mlm, w_nsp, _, _ = _reference_terms(wrong, rows)
    ((w_mlm[:1].mean() + w_mlm[1:].mean()) / 2 + w_nsp.mean()).backward()
    trained = dict(model.named_parameters())
    largest_gap_to_wrong = 0.0
    for name, p in reference.named_parameters():
        if p.grad is None:
            continue
        expected = p.detach() - 0.1 * p.grad
        # float32 sums in another order (padding, micro-batches): agreement to 1e-6 absolute on O(0.1) weights
        torch.testing.assert_close(trained[name].detach(), expected, rtol=1e-5, atol=1e-6, msg=name)
        wrong_p = dict(wrong.named_parameters())[name]
        largest_gap_to_wrong = max(
            largest_gap_to_wrong, (expected - (wrong_p.detach() - 0.1 * wrong_p.grad)).abs().max().item()
        )
    assert largest_gap_to_wrong > 1e-4


def test_eval_metrics_are_token_weighted_whatever_the_eval_batch(vocab_tokenizer, tmp_path):
    model = _model(len(vocab_tokenizer)).eval()
    mlm, nsp, correct, nsp_correct = _reference_terms(model, ROWS)
    n_tokens = sum(sum(x != -100 for x in r[1]) for r in ROWS)
    assert n_tokens == 14 and mlm.numel() == 14
    expected = {
        "eval_mlm_loss": mlm.sum().item() / 14,
        "eval_mlm_accuracy": correct / 14,
        "eval_nsp_loss": nsp.mean().item(),
        "eval_nsp_accuracy": nsp_correct / 7,
    }
    expected["eval_loss"] = expected["eval_mlm_loss"] + expected["eval_nsp_loss"]
    for eval_batch in (1, 3, 7):
        trainer = _trainer(model, vocab_tokenizer, tmp_path, eval_rows=ROWS, per_device_eval_batch_size=eval_batch)
        metrics = trainer.evaluate()
        for key, value in expected.items():
            # padding to the longest row of a batch changes float32 rounding only: 1e-5 relative
            assert metrics[key] == pytest.approx(value, rel=1e-5, abs=1e-6), (eval_batch, key)


def test_training_step_metrics_stay_on_the_device(vocab_tokenizer, tmp_path, monkeypatch):
    """compute_loss adds the step's sums to a device tensor: no .item()/.tolist() (a host sync on GPU) per step."""
    model = _model(len(vocab_tokenizer))
    trainer = _trainer(model, vocab_tokenizer, tmp_path, train_rows=ROWS[:2], per_device_train_batch_size=2)
    batch = trainer.data_collator([dict(r) for r in _dataset(ROWS[:2])])
    counts = torch.tensor([4, 2])
    syncs = []
    for name in ("item", "tolist"):
        original = getattr(torch.Tensor, name)
        monkeypatch.setattr(
            torch.Tensor, name, lambda self, *a, _o=original, _n=name: syncs.append(_n) or _o(self, *a)
        )
    model.train()
    for _ in range(3):
        trainer.compute_loss(model, batch, num_items_in_batch=counts)
    monkeypatch.undo()
    assert syncs == []
    # 3 steps x (4 tokens, 2 examples) summed on the device, read once
    assert trainer._train_sums[1].item() == 12 and trainer._train_sums[4].item() == 6


# ------------------------------------------------------------------- MLM only (no NSP: RoBERTa, Liu et al. 2019 §4.2)
def test_terms_without_nsp_labels_have_no_nsp_loss_and_no_nsp_metrics():
    from hf_bert_tasks.pretraining.trainer import metrics_from_sums, pretraining_terms

    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # two predicted tokens, vocabulary of 3
    labels = torch.tensor([[-100, 0, -100], [2, -100, -100]])
    mlm_ce, nsp_ce, stats = pretraining_terms(logits, torch.zeros(2, 2), labels, None)
    assert nsp_ce is None
    expected_ce = torch.nn.functional.cross_entropy(logits, torch.tensor([0, 2]), reduction="none")
    torch.testing.assert_close(mlm_ce, expected_ce)
    # per example: MLM loss sum, 1 predicted token, 1 correct; the three NSP columns stay 0
    expected_stats = torch.zeros(2, 6)
    expected_stats[:, 0], expected_stats[:, 1], expected_stats[:, 2] = expected_ce, 1.0, 1.0
    torch.testing.assert_close(stats, expected_stats)
    metrics = metrics_from_sums(stats.sum(0).tolist())
    assert set(metrics) == {"mlm_loss", "mlm_accuracy"}
    assert metrics["mlm_accuracy"] == 1.0 and metrics["mlm_loss"] == pytest.approx(expected_ce.mean().item())


def _dataset_without_nsp(rows):
    from datasets import Dataset

    return Dataset.from_dict({"input_ids": [r[0] for r in rows], "labels": [r[1] for r in rows]})


def test_mlm_only_step_is_the_per_token_mlm_gradient(vocab_tokenizer, tmp_path):
    """Batches without next_sentence_label: the update is that of sum(token CE) / tokens alone (no NSP term), and the
    training log has MLM metrics and no NSP metrics."""
    rows = ROWS[:2]  # 1 and 3 predicted tokens
    model = _model(len(vocab_tokenizer))
    reference = copy.deepcopy(model)
    trainer = _trainer(model, vocab_tokenizer, tmp_path, per_device_train_batch_size=2, logging_steps=1)
    trainer.train_dataset = _dataset_without_nsp(rows)
    trainer.train()
    mlm, _nsp, _, _ = _reference_terms(reference, rows)
    (mlm.sum() / 4).backward()
    trained = dict(model.named_parameters())
    for name, p in reference.named_parameters():  # the NSP layer and the pooler (no gradient) must stay unchanged
        expected = p.detach() - 0.1 * p.grad if p.grad is not None else p.detach()
        torch.testing.assert_close(trained[name].detach(), expected, rtol=1e-5, atol=1e-6, msg=name)
    logged = [h for h in trainer.state.log_history if "mlm_loss" in h]
    assert len(logged) == 1 and not any(k.startswith("nsp_") for k in logged[0])
    assert logged[0]["mlm_loss"] == pytest.approx(mlm.mean().item(), abs=1e-4)


def test_mlm_only_evaluation_has_no_nsp_metrics(vocab_tokenizer, tmp_path):
    model = _model(len(vocab_tokenizer)).eval()
    mlm, _nsp, correct, _ = _reference_terms(model, ROWS)
    trainer = _trainer(model, vocab_tokenizer, tmp_path, per_device_eval_batch_size=3)
    trainer.eval_dataset = _dataset_without_nsp(ROWS)
    metrics = trainer.evaluate()
    assert not any(k.startswith("eval_nsp") for k in metrics)
    assert metrics["eval_mlm_loss"] == pytest.approx(mlm.sum().item() / 14, rel=1e-5)
    assert metrics["eval_mlm_accuracy"] == correct / 14
    assert metrics["eval_loss"] == pytest.approx(metrics["eval_mlm_loss"])
