"""Issue 42's fast-path options compute what the plain path computes, on CPU in fp32: the static-slot masked MLM head
(``benchmarks/static_slots.py``) gives the masked-only head's loss, logits and gradients.

Tolerance: fp32, absolute 1e-5 on the loss and 1e-5 (+ relative 1e-4) on every logit and gradient element: the two
paths sum the same terms in a different order (a [B*P, V] matmul with padding rows vs a [N, V] one), nothing more.
"""

import os
import sys

import pytest
import torch

from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly
from hf_bert_tasks.utils.modeling import bert_config
from tests.conftest import REPO

sys.path.insert(0, os.path.join(REPO, "benchmarks"))
from static_slots import BertForPreTrainingStaticSlots, static_slots


def _models_and_batch():
    torch.manual_seed(0)
    config = bert_config("tiny", vocab_size=97)
    plain = BertForPreTrainingMaskedOnly(config).eval()  # eval: no dropout, so both see the same network
    static = BertForPreTrainingStaticSlots(config).eval()
    static.load_state_dict(plain.state_dict())
    ids = torch.tensor([[2, 11, 12, 13, 14, 15, 16, 3], [2, 21, 22, 23, 3, 0, 0, 0], [2, 31, 32, 33, 34, 35, 36, 3]])
    labels = torch.full_like(ids, -100)
    labels[0, [1, 4, 5]] = torch.tensor([40, 41, 42])  # 3 predicted
    labels[1, [2]] = torch.tensor([50])  # 1 predicted (a padded row)
    # row 2: none predicted
    batch = {
        "input_ids": ids,
        "attention_mask": (ids != 0).long(),
        "token_type_ids": torch.zeros_like(ids),
        "labels": labels,
        "next_sentence_label": torch.tensor([0, 1, 0]),
    }
    return plain, static, batch


def _loss_and_grads(model, batch):
    model.zero_grad(set_to_none=True)
    out = model(**batch)
    out.loss.backward()
    return out, {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_static_slots_give_the_plain_loss_logits_and_gradients():
    plain_model, static_model, batch = _models_and_batch()
    static_model.static_predictions = 4  # > 3, the most predicted in a row
    plain, plain_grads = _loss_and_grads(plain_model, batch)
    static, static_grads = _loss_and_grads(static_model, batch)
    assert plain.prediction_logits.shape == (4, 97) and static.prediction_logits.shape == (3, 4, 97)
    valid = static_slots(batch["labels"] != -100, 4)[1]
    torch.testing.assert_close(static.prediction_logits[valid], plain.prediction_logits, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(static.loss, plain.loss, atol=1e-5, rtol=0)
    assert static_grads.keys() == plain_grads.keys()
    for name, grad in plain_grads.items():
        torch.testing.assert_close(static_grads[name], grad, atol=1e-5, rtol=1e-4, msg=name)


def test_static_slots_equal_to_the_row_maximum_are_enough():
    plain_model, static_model, batch = _models_and_batch()
    static_model.static_predictions = 3
    torch.testing.assert_close(static_model(**batch).loss, plain_model(**batch).loss, atol=1e-5, rtol=0)


def test_slot_order_follows_the_labels_row_major_order():
    selected = torch.tensor([[False, True, False, True], [True, False, False, False]])
    order, valid = static_slots(selected, 3)
    assert order.tolist()[0][:2] == [1, 3] and order.tolist()[1][0] == 0
    assert valid.tolist() == [[True, True, False], [True, False, False]]


def test_too_few_static_slots_are_refused():
    _, static_model, batch = _models_and_batch()
    static_model.static_predictions = 2
    with pytest.raises(ValueError, match="3 predicted positions, more than static_predictions=2"):
        static_model(**batch)


def test_static_slots_leave_no_graph_break():
    """What the option is for: torch.compile traces the whole forward (the plain head's boolean index breaks it)."""
    import torch._dynamo as dynamo

    plain_model, static_model, batch = _models_and_batch()
    static_model.static_predictions = 4
    assert dynamo.explain(static_model)(**batch).graph_break_count == 0
    assert dynamo.explain(plain_model)(**batch).graph_break_count > 0
