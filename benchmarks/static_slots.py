"""Static MLM slots (issue 42, a step towards 50 % MFU): ``BertForPreTrainingMaskedOnly`` with google's fixed
``masked_lm_positions`` instead of a boolean index, so the compiled forward has no data-dependent shape.

:class:`BertForPreTrainingStaticSlots` gathers ``P = static_predictions`` positions per row (the predicted ones
first, in position order, then padding slots that the loss ignores; google's ``max_predictions_per_seq`` slots with
``masked_lm_weights`` 0 on padding): the head's matmul and the cross-entropy are ``[B * P, V]`` and torch.compile
traces the forward without a graph break (the plain head's ``sequence_output[selected]`` makes two). Same loss and
gradients as the plain head (tests/test_gpu_fast_path.py, fp32, 1e-5). Used by ``gpu_bench.py --static_predictions``;
the recipe does not use it yet (docs/design.md, "GPU path at the hardware's limit").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers.models.bert.modeling_bert import BertForPreTrainingOutput

from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly


def static_slots(selected: torch.Tensor, slots: int):
    """``(order int64 [B, P], valid bool [B, P])`` for ``selected`` (``bool [B, L]``, the positions to predict): per
    row its predicted positions first, in position order (a stable sort), then the others, cut to ``P = slots``;
    ``valid`` marks the predicted slots, so ``x[valid]`` of a ``[B, P, ...]`` tensor follows ``labels[selected]``."""
    order = torch.sort(selected.to(torch.int8), dim=1, descending=True, stable=True).indices[:, :slots]
    return order, selected.gather(1, order)


class BertForPreTrainingStaticSlots(BertForPreTrainingMaskedOnly):
    """The masked-only head through ``static_predictions`` slots per row (module doc). With ``labels`` (``int64
    [B, L]``): ``prediction_logits`` ``float [B, P, V]`` (rows of padding slots included), ``loss`` = mean MLM CE over
    the predicted slots + NSP CE (``next_sentence_label`` ``int64 [B]``). Raises ``ValueError`` when a row has more
    than ``P`` predicted positions (checked outside torch.compile only: the check syncs)."""

    static_predictions: int = 20

    def forward(self, input_ids=None, labels=None, next_sentence_label=None, **kwargs):
        if labels is None:
            return super().forward(input_ids=input_ids, next_sentence_label=next_sentence_label, **kwargs)
        sequence_output, pooled_output = self.bert(input_ids, return_dict=True, **kwargs)[:2]
        selected = labels != -100
        slots = self.static_predictions
        if not torch.compiler.is_compiling():
            most = int(selected.sum(1).max()) if selected.numel() else 0
            if most > slots:
                raise ValueError(
                    f"a row has {most} predicted positions, more than static_predictions={slots} "
                    "(set it to the collator's max_predictions_per_seq)"
                )
        order, valid = static_slots(selected, min(slots, labels.shape[1]))
        hidden = sequence_output.gather(1, order.unsqueeze(-1).expand(-1, -1, sequence_output.shape[-1]))  # [B,P,H]
        scores = self.cls.predictions(hidden).flatten(0, 1)  # [B * P, V]
        targets = labels.gather(1, order).masked_fill(~valid, -100).flatten()  # [B * P]
        # mean over the predicted slots (ignore_index drops padding slots; 0 when none is predicted), no sync
        loss = F.cross_entropy(scores, targets, reduction="sum") / valid.sum().clamp(min=1)
        nsp_scores = self.cls.seq_relationship(pooled_output)  # [B, 2]
        if next_sentence_label is not None:
            loss = loss + F.cross_entropy(nsp_scores.view(-1, 2), next_sentence_label.view(-1))
        return BertForPreTrainingOutput(
            loss=loss, prediction_logits=scores.view(*order.shape, -1), seq_relationship_logits=nsp_scores
        )
