"""Padding-free forward passes for transformers' BERT-family models, parameters and checkpoints unchanged: the
encoder runs on the flattened row (:mod:`hf_bert_tasks.padding_free.attention`), then its ``last_hidden_state`` is
scattered back to ``[N, Lmax, H]`` before the pooler and the heads, so every head, loss and post-processing runs as
on a padded batch. Why: docs/design.md, "padding_free: batches without padding"."""

from __future__ import annotations

import functools
import types

import torch
import torch.nn.functional as F

from .attention import register_varlen_attention

#: the padding-free kwargs of :func:`hf_bert_tasks.padding_free.collator.flatten_padded_batch` the encoder reads
FLAT_KWARGS = ("input_ids", "token_type_ids", "position_ids", "cu_seq_lens_q", "cu_seq_lens_k")
LENGTH_KWARGS = ("max_length_q", "max_length_k")
#: architectures whose absolute positions start at 0 in every sequence and whose attention goes through transformers'
#: ``AttentionInterface`` (RoBERTa's positions start after the pad id; DeBERTa-v2 has its own attention): BERT
SUPPORTED_MODEL_TYPES = ("bert",)


def transformers_model(model):
    """The transformers model inside ``model`` (a peft wrapper's base model, else ``model``)."""
    return model.get_base_model() if hasattr(model, "get_base_model") else model


def enable_padding_free(model):
    """Let ``model`` (a transformers BERT ``*For*`` model or a peft wrapper of one) take padding-free batches
    (:class:`~hf_bert_tasks.padding_free.collator.PaddingFreeCollator`) as well as padded ones; returns ``model``.
    Sets the attention implementation to the registered varlen function (not written to ``config.json``: a saved
    checkpoint loads with transformers' default attention), wraps the model's ``forward``
    (an instance attribute: also called by peft's ``self.model.forward``) and hooks its encoder (``base_model``).
    Idempotent.

    Raises:
        ValueError: a ``model_type`` not in :data:`SUPPORTED_MODEL_TYPES`; a model without a ``base_model`` encoder
            distinct from itself (e.g. a bare ``BertModel``)."""
    inner = transformers_model(model)
    encoder = inner.base_model
    model_type = getattr(inner.config, "model_type", None)
    if model_type not in SUPPORTED_MODEL_TYPES:  # positions from 0 per sequence, attention through AttentionInterface
        raise ValueError(
            f"--padding_free: model_type {model_type!r} is not supported; expected one of {list(SUPPORTED_MODEL_TYPES)}"
        )
    if encoder is inner:
        raise ValueError(
            f"--padding_free: {type(inner).__name__} has no head around its encoder (expected a *For* model)"
        )
    if getattr(inner, "_padding_free", False):
        return model
    inner.set_attn_implementation(register_varlen_attention())
    encoder.register_forward_pre_hook(_encoder_pre_hook, with_kwargs=True)
    encoder.register_forward_hook(_encoder_post_hook, with_kwargs=True)
    encoder._padding_free_batch = None
    inner.forward = types.MethodType(_padding_free_forward(type(inner).forward), inner)
    inner._padding_free = True
    return model


def _padding_free_forward(forward):
    """The head model's ``forward`` for both batch kinds (``forward``: the class's): a padded batch unchanged; a
    padding-free one with a zero ``input_ids`` of the padded shape (``[N, Lmax]``, or ``[B, C, Lmax]`` with
    ``num_choices``) for the head's shape logic, the flat tensors kept for the encoder's hooks."""

    @functools.wraps(forward)  # the signature Trainer reads to keep the model's columns
    def padding_free(self, *args, **kwargs):
        if "cu_seq_lens_q" not in kwargs:
            return forward(self, *args, **kwargs)
        flat = {k: kwargs.pop(k) for k in (*FLAT_KWARGS, *LENGTH_KWARGS) if k in kwargs}
        choices = kwargs.pop("num_choices", None)
        cu, longest = flat["cu_seq_lens_q"], int(flat["max_length_q"])
        n = len(cu) - 1
        shape = (n, longest) if choices is None else (n // int(choices), int(choices), longest)
        lengths = (cu[1:] - cu[:-1]).long().to(flat["input_ids"].device)
        real = torch.arange(longest, device=lengths.device)[None, :] < lengths[:, None]  # bool [N, Lmax]
        self.base_model._padding_free_batch = dict(flat, real=real)
        targets = {k: kwargs.pop(k) for k in ("start_positions", "end_positions") if k in kwargs}
        try:
            outputs = forward(self, torch.zeros(shape, dtype=torch.long, device=real.device), **kwargs)
        finally:
            self.base_model._padding_free_batch = None
        if "start_logits" in outputs:  # question answering: no span in padding (see question_answering_outputs)
            outputs = question_answering_outputs(outputs, real, **targets)
        return outputs

    return padding_free


def _encoder_pre_hook(module, args, kwargs):
    """The encoder's inputs: the flat row of the head model's padding-free batch (``[1, T]`` ids, ``position_ids``,
    ``cu_seq_lens``, no ``attention_mask``); other calls unchanged."""
    batch = getattr(module, "_padding_free_batch", None)
    if batch is None:
        return None
    kwargs = {k: v for k, v in kwargs.items() if k not in ("input_ids", "attention_mask", "position_ids")}
    kwargs.update({k: v for k, v in batch.items() if k != "real"})
    return (), kwargs


def _encoder_post_hook(module, args, kwargs, output):
    """``last_hidden_state`` ``[1, T, H]`` scattered back to ``[N, Lmax, H]`` (zeros at padding) and the pooler run
    again on it (``[CLS]`` at position 0 of each sequence), so the heads see a padded batch's shapes."""
    batch = getattr(module, "_padding_free_batch", None)
    if batch is None:
        return None
    real = batch["real"]
    hidden = output.last_hidden_state[0]  # [T, H]
    padded = hidden.new_zeros((*real.shape, hidden.shape[-1]))
    padded[real] = hidden
    output["last_hidden_state"] = padded
    if getattr(module, "pooler", None) is not None:
        output["pooler_output"] = module.pooler(padded)
    return output


def question_answering_outputs(outputs, real: torch.Tensor, start_positions=None, end_positions=None):
    """Start/end logits ``[N, Lmax]`` with the padding set to the dtype's lowest value (no span can start or end
    there, and the softmax runs over the real tokens only) and, with targets (``int64 [N]``), the loss of
    ``BertForQuestionAnswering`` on them (mean of the start and end cross-entropies; positions clamped to ``Lmax``
    and ignored there, as transformers). A padded batch's softmax also runs over its ``[PAD]`` positions, whose
    count depends on the batch: the padding-free loss equals the padded one with the padding's logits masked."""
    low = torch.finfo(outputs.start_logits.dtype).min
    outputs["start_logits"] = outputs.start_logits.masked_fill(~real, low)
    outputs["end_logits"] = outputs.end_logits.masked_fill(~real, low)
    if start_positions is not None and end_positions is not None:
        ignored = outputs.start_logits.size(1)
        start = F.cross_entropy(outputs.start_logits, start_positions.clamp(0, ignored), ignore_index=ignored)
        end = F.cross_entropy(outputs.end_logits, end_positions.clamp(0, ignored), ignore_index=ignored)
        outputs["loss"] = (start + end) / 2
    return outputs
