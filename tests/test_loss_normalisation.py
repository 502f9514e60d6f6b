"""The fine-tuning loss of an optimizer step is normalised over its global batch (hf_bert_tasks.finetune.trainer).

Each test trains a tiny dropout-free BERT for one optimizer step with plain SGD (no momentum, no weight decay, no
clipping, constant learning rate), so the update is exactly ``-lr * gradient`` and any change of the loss scale shows
up in it (Adam's first step would hide it: its update is ~``lr * sign(gradient)``). The expected update is computed
here by hand: each example alone through the model (no padding), its head loss times its number of loss terms, summed
and divided by the number of terms of the whole batch.

Tolerance: the Trainer runs pad the examples of a micro-batch to a common length, which changes the summation order
of the attention and matmul kernels, so updates agree to float32 rounding, not bitwise: ``rtol=1e-4, atol=1e-7``
on updates of order 1e-4..1e-2 (the micro-batch-mean error these tests guard against is 30 % and more, see
``test_micro_batch_means_would_fail_the_token_check``).
"""

import pytest
import torch

#: Two CoNLL-like sentences (ids of conftest.VOCAB) with unequal numbers of labelled WordPieces: 6 and 1.
#: "[CLS] the cat sat on the mat [SEP]" (every word labelled) and "[CLS] un ##believ ##able dog [SEP]" (only the
#: first sub-token of "unbelievable" labelled, "dog" unlabelled as if beyond a truncated label window).
NER_EXAMPLES = [
    {"input_ids": [2, 5, 7, 9, 10, 5, 11, 3], "labels": [-100, 0, 1, 0, 0, 0, 2, -100]},
    {"input_ids": [2, 24, 25, 26, 8, 3], "labels": [-100, 1, -100, -100, -100, -100]},
]
LR = 0.5


def _tiny_config(**kwargs):
    from transformers import BertConfig

    from tests.conftest import VOCAB

    return BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        **kwargs,
    )


def _model(cls, **config_kwargs):
    from hf_bert_tasks.finetune.recipe import declare_batch_mean_loss

    torch.manual_seed(0)
    return declare_batch_mean_loss(cls(_tiny_config(**config_kwargs)))


def _snapshot(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def _trainer_update(tmp_path, model, examples, collator, batch: int, accumulation: int, unit: str | None):
    """Parameter change of one optimizer step; ``unit=None``: the plain LengthSortedTrainer (micro-batch means)."""
    from datasets import Dataset
    from transformers import TrainingArguments

    from hf_bert_tasks.finetune.trainer import GlobalLossTrainer, LengthSortedTrainer

    args = TrainingArguments(
        output_dir=str(tmp_path / f"b{batch}-ga{accumulation}-{unit}"),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        learning_rate=LR,
        optim="sgd",
        lr_scheduler_type="constant",
        weight_decay=0.0,
        max_grad_norm=0.0,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=3,
        disable_tqdm=True,
    )
    before = _snapshot(model)
    kwargs = {} if unit is None else {"loss_unit": unit}
    trainer_class = LengthSortedTrainer if unit is None else GlobalLossTrainer
    trainer = trainer_class(
        model=model, args=args, train_dataset=Dataset.from_list(examples), data_collator=collator, **kwargs
    )
    trainer.train()
    return {n: p.detach() - before[n] for n, p in model.named_parameters()}


def _expected_update(model, examples, terms_per_example) -> dict[str, torch.Tensor]:
    """``-LR * gradient of sum_i(head loss of example i alone x its terms) / all terms``, each example unpadded."""
    model.zero_grad()
    total = sum(terms_per_example)
    for example, terms in zip(examples, terms_per_example):
        if terms == 0:  # an unlabelled example (label -100): no loss term, and its head loss is NaN (0 / 0)
            continue
        inputs = {k: torch.tensor([v]) for k, v in example.items()}
        (model(**inputs).loss * terms / total).backward()
    update = {n: -LR * p.grad.detach().clone() for n, p in model.named_parameters()}
    model.zero_grad()
    return update


def _ner_collator():
    def collate(features):
        width = max(len(f["input_ids"]) for f in features)
        pad = [width - len(f["input_ids"]) for f in features]
        return {
            "input_ids": torch.tensor([f["input_ids"] + [0] * p for f, p in zip(features, pad)]),
            "attention_mask": torch.tensor([[1] * len(f["input_ids"]) + [0] * p for f, p in zip(features, pad)]),
            "labels": torch.tensor([f["labels"] + [-100] * p for f, p in zip(features, pad)]),
        }

    return collate


def _assert_updates_close(got, expected):
    for name in expected:
        torch.testing.assert_close(got[name], expected[name], rtol=1e-4, atol=1e-7, msg=name)


@pytest.mark.parametrize("batch, accumulation", [(2, 1), (1, 2)])
def test_ner_update_is_the_global_token_mean(tmp_path, batch, accumulation):
    from transformers import BertForTokenClassification

    expected = _expected_update(_model(BertForTokenClassification, num_labels=3), NER_EXAMPLES, [6, 1])
    got = _trainer_update(
        tmp_path,
        _model(BertForTokenClassification, num_labels=3),
        NER_EXAMPLES,
        _ner_collator(),
        batch,
        accumulation,
        "labels",
    )
    _assert_updates_close(got, expected)


def test_micro_batch_means_would_fail_the_token_check(tmp_path):
    """Guard of the test above: Trainer's per-micro-batch mean (what the recipe did before) gives another update for
    batch 1 x accumulation 2 — the one-label sentence weighs as much as the six-label one."""
    from transformers import BertForTokenClassification

    expected = _expected_update(_model(BertForTokenClassification, num_labels=3), NER_EXAMPLES, [6, 1])
    got = _trainer_update(
        tmp_path, _model(BertForTokenClassification, num_labels=3), NER_EXAMPLES, _ner_collator(), 1, 2, None
    )
    relative = (got["classifier.weight"] - expected["classifier.weight"]).norm() / expected["classifier.weight"].norm()
    assert relative > 0.3


#: Three GLUE-like examples: with batch 2 x accumulation 2 the step's micro-batches hold 2 and 1 examples.
SEQ_EXAMPLES = [
    {"input_ids": [2, 5, 7, 9, 3], "labels": 1},
    {"input_ids": [2, 8, 12, 3, 19, 3], "labels": 0},
    {"input_ids": [2, 30, 17, 20, 14, 3], "labels": 1},
]
#: SQuAD-like windows, one start/end position each, all of one length: BertForQuestionAnswering's softmax runs over
#: every position, padding included, so padding would change a window's loss (a fact of the head, not of the batch).
QA_EXAMPLES = [
    {"input_ids": [2, 5, 7, 9, 10, 3], "start_positions": 1, "end_positions": 2},
    {"input_ids": [2, 8, 12, 3, 19, 3], "start_positions": 4, "end_positions": 4},
    {"input_ids": [2, 30, 17, 20, 14, 3], "start_positions": 0, "end_positions": 0},
]


def _padding_collator(features):
    width = max(len(f["input_ids"]) for f in features)
    out = {
        "input_ids": torch.tensor([f["input_ids"] + [0] * (width - len(f["input_ids"])) for f in features]),
        "attention_mask": torch.tensor(
            [[1] * len(f["input_ids"]) + [0] * (width - len(f["input_ids"])) for f in features]
        ),
    }
    for key in features[0]:
        if key != "input_ids":
            out[key] = torch.tensor([f[key] for f in features])
    return out


#: The same sequences with the middle example's label unknown (-100, as SWAG's unlabelled rows): 2 loss terms.
SEQ_EXAMPLES_UNKNOWN = [dict(e, labels=-100) if i == 1 else e for i, e in enumerate(SEQ_EXAMPLES)]

#: head -> (model class name, examples, loss terms per example, loss unit)
PER_EXAMPLE_HEADS = {
    "sequence_classification": ("BertForSequenceClassification", SEQ_EXAMPLES, [1, 1, 1], "labels"),
    "sequence_classification_unknown_label": (
        "BertForSequenceClassification",
        SEQ_EXAMPLES_UNKNOWN,
        [1, 0, 1],
        "labels",
    ),
    "question_answering": ("BertForQuestionAnswering", QA_EXAMPLES, [1, 1, 1], "examples"),
}


@pytest.mark.parametrize("head", sorted(PER_EXAMPLE_HEADS))
def test_shorter_last_micro_batch_counts_each_example_once(tmp_path, head):
    """Per-example heads, batch 2 x accumulation 2 over 3 examples (micro-batches of 2 and 1): the micro-batch of 1
    must not weigh as much as the micro-batch of 2 (the update is the mean over the labelled examples)."""
    import transformers

    name, examples, terms, unit = PER_EXAMPLE_HEADS[head]
    cls = getattr(transformers, name)
    expected = _expected_update(_model(cls), examples, terms)
    got = _trainer_update(tmp_path, _model(cls), examples, _padding_collator, 2, 2, unit)
    _assert_updates_close(got, expected)


def test_count_loss_terms():
    from hf_bert_tasks.finetune.trainer import count_loss_terms

    labels = torch.tensor([[-100, 0, 1, -100], [-100, 2, -100, -100]])
    assert count_loss_terms({"labels": labels}, "labels").item() == 3
    assert count_loss_terms({"labels": labels}, "examples").item() == 2
    assert count_loss_terms({"labels": torch.tensor([1, -100, 0])}, "labels").item() == 2  # SWAG: -100 = unknown
    assert count_loss_terms({"start_positions": torch.tensor([0, 4, 1])}, "examples").item() == 3
    with pytest.raises(KeyError, match="without targets"):
        count_loss_terms({"input_ids": labels}, "examples")
