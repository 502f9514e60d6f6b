"""Issue 42's fast-path options compute what the plain path computes, on CPU in fp32: the static-slot masked MLM head
(``BertForPreTrainingMaskedOnly.static_predictions``) gives the default masked-only head's loss and gradients.

Tolerance: fp32, absolute 1e-5 on the loss and 1e-5 (+ relative 1e-4) on every gradient element: the two paths
sum the same terms in a different order (a [B*P, V] matmul with padding rows vs a [N, V] one), nothing more.
"""

import pytest
import torch

from hf_bert_tasks.modeling import bert_config
from hf_bert_tasks.pretraining_trainer import BertForPreTrainingMaskedOnly, pretraining_terms


def _model_and_batch():
    torch.manual_seed(0)
    config = bert_config("tiny", vocab_size=97)
    model = BertForPreTrainingMaskedOnly(config).eval()  # eval: no dropout, so both passes see the same network
    ids = torch.tensor([[2, 11, 12, 13, 14, 15, 16, 3], [2, 21, 22, 23, 3, 0, 0, 0], [2, 31, 32, 33, 34, 35, 36, 3]])
    labels = torch.full_like(ids, -100)
    labels[0, [1, 4, 5]] = torch.tensor([40, 41, 42])  # 3 predicted
    labels[1, [2]] = torch.tensor([50])                # 1 predicted (a padded row)
    # row 2: none predicted
    batch = {"input_ids": ids, "attention_mask": (ids != 0).long(), "token_type_ids": torch.zeros_like(ids),
             "labels": labels, "next_sentence_label": torch.tensor([0, 1, 0])}
    return model, batch


def _loss_and_grads(model, batch, slots):
    model.static_predictions = slots
    model.zero_grad(set_to_none=True)
    out = model(**batch)
    out.loss.backward()
    return out, {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


def test_static_slots_give_the_plain_loss_logits_and_gradients():
    model, batch = _model_and_batch()
    plain, plain_grads = _loss_and_grads(model, batch, 0)
    static, static_grads = _loss_and_grads(model, batch, 4)  # P = 4 > 3, the most predicted in a row
    assert plain.prediction_logits.shape == (4, 97) and static.prediction_logits.shape == (3, 4, 97)
    # the trainer's per-token terms read both layouts: the same CE per predicted token, the same statistics
    terms = [pretraining_terms(o.prediction_logits, o.seq_relationship_logits, batch["labels"],
                               batch["next_sentence_label"]) for o in (plain, static)]
    torch.testing.assert_close(terms[1][0], terms[0][0], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(terms[1][2], terms[0][2], atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(static.loss, plain.loss, atol=1e-5, rtol=0)
    assert static_grads.keys() == plain_grads.keys()
    for name, grad in plain_grads.items():
        torch.testing.assert_close(static_grads[name], grad, atol=1e-5, rtol=1e-4, msg=name)


def test_static_slots_equal_to_the_row_maximum_are_enough():
    model, batch = _model_and_batch()
    plain, _ = _loss_and_grads(model, batch, 0)
    static, _ = _loss_and_grads(model, batch, 3)
    torch.testing.assert_close(static.loss, plain.loss, atol=1e-5, rtol=0)


def test_too_few_static_slots_are_refused():
    model, batch = _model_and_batch()
    with pytest.raises(ValueError, match="3 predicted positions, more than static_predictions=2"):
        _loss_and_grads(model, batch, 2)


def test_static_slots_leave_no_graph_break():
    """What the option is for: torch.compile traces the whole forward (the plain head's boolean index breaks it)."""
    import torch._dynamo as dynamo

    model, batch = _model_and_batch()
    model.static_predictions = 4
    assert dynamo.explain(model)(**batch).graph_break_count == 0
    model.static_predictions = 0
    assert dynamo.explain(model)(**batch).graph_break_count > 0
