"""The attention function of padding-free batches, registered with transformers' ``AttentionInterface`` (and a mask
function with ``AttentionMaskInterface``) as :data:`ATTENTION_NAME`: a variable-length kernel where one runs
(FlashAttention's ``flash_attn_varlen_func``; torch's ``torch.nn.attention.varlen.varlen_attn`` on CUDA without
dropout), else SDPA on the sequences re-padded for the attention only (correct; the attention no faster than a
padded batch's, the rest of each layer on real tokens only: the CPU path).
Why: docs/design.md, "padding_free: batches without padding"."""

from __future__ import annotations

import functools
import importlib
import importlib.util

import torch
import torch.nn.functional as F

#: the ``attn_implementation`` name under which :func:`varlen_attention_forward` is registered
ATTENTION_NAME = "hf_bert_tasks_varlen"


def repadded_sdpa(query, key, value, cu_seq_lens: torch.Tensor, max_length: int, dropout: float, scaling):
    """The fallback kernel: ``query`` / ``key`` / ``value`` ``[1, heads, T, head_dim]`` of a flattened row put back
    into ``[N, heads, Lmax, head_dim]`` (``cu_seq_lens`` ``int [N + 1]``), SDPA with a key padding mask, and the
    real rows taken out again: ``[1, T, heads, head_dim]``. Attention then costs what a padded batch's does
    (``N * Lmax**2``, not the ``T**2`` of one block-diagonal mask); the rest of the layer runs on the ``T`` real
    tokens."""
    lengths = (cu_seq_lens[1:] - cu_seq_lens[:-1]).long().to(query.device)
    real = torch.arange(max_length, device=query.device)[None, :] < lengths[:, None]  # bool [N, Lmax]

    def repad(t):  # [1, heads, T, head_dim] -> [N, heads, Lmax, head_dim]
        out = t.new_zeros((*real.shape, t.shape[1], t.shape[3]))
        out[real] = t[0].transpose(0, 1)
        return out.transpose(1, 2)

    out = F.scaled_dot_product_attention(
        repad(query), repad(key), repad(value), real[:, None, None, :], dropout_p=dropout, scale=scaling
    )
    return out.transpose(1, 2)[real][None]


@functools.cache
def _flash_varlen():
    """FlashAttention's ``flash_attn_varlen_func`` when the package is installed, else ``None``."""
    if importlib.util.find_spec("flash_attn") is None:
        return None
    # an optional CUDA build, not a dependency of the package: looked up by name, never required
    return importlib.import_module("flash_attn").flash_attn_varlen_func


def _torch_varlen():
    """torch's ``varlen_attn`` when this torch has it, else ``None`` (CUDA only: it refuses CPU tensors)."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except ImportError:
        return None
    return varlen_attn


def kernel_for(query: torch.Tensor, dropout: float) -> str:
    """Which kernel :func:`varlen_attention_forward` runs for ``query`` (``[1, heads, T, head_dim]``):
    ``"flash_attn"`` (CUDA, half precision, flash_attn installed), ``"torch_varlen"`` (CUDA, half precision, no
    dropout: torch's kernel has none) or ``"sdpa_repadded"`` (anything else, the CPU included: :func:`repadded_sdpa`)."""
    half = query.dtype in (torch.float16, torch.bfloat16)
    if query.is_cuda and half and _flash_varlen() is not None:
        return "flash_attn"
    if query.is_cuda and half and dropout == 0.0 and _torch_varlen() is not None:
        return "torch_varlen"
    return "sdpa_repadded"


def varlen_attention_forward(
    module, query, key, value, attention_mask, dropout: float = 0.0, scaling: float | None = None, **kwargs
):
    """transformers' attention-function contract (``ALL_ATTENTION_FUNCTIONS``): ``query`` / ``key`` / ``value``
    ``[B, heads, L, head_dim]``, returns ``(output [B, L, heads, head_dim], None)``. A padding-free batch
    (``B = 1``, ``cu_seq_lens_q`` / ``cu_seq_lens_k`` ``int32 [N + 1]`` and ``max_length_q`` / ``max_length_k`` in
    ``kwargs``, from :class:`hf_bert_tasks.padding_free.collator.PaddingFreeCollator`) attends within each sequence
    only (:func:`kernel_for` picks the kernel); any other batch is plain SDPA with its ``attention_mask`` (the 4-D
    mask :func:`varlen_mask` made, or ``None``). Bidirectional (BERT's encoder); ``scaling`` ``1/sqrt(head_dim)`` by
    default."""
    cu_q, cu_k = kwargs.get("cu_seq_lens_q"), kwargs.get("cu_seq_lens_k")
    if cu_q is None:
        out = F.scaled_dot_product_attention(query, key, value, attention_mask, dropout_p=dropout, scale=scaling)
        return out.transpose(1, 2).contiguous(), None
    cu_k = cu_q if cu_k is None else cu_k
    max_q, max_k = int(kwargs.get("max_length_q")), int(kwargs.get("max_length_k") or kwargs.get("max_length_q"))
    kernel = kernel_for(query, dropout)
    if kernel == "sdpa_repadded":
        return repadded_sdpa(query, key, value, cu_q, max_q, dropout, scaling), None
    q, k, v = (t[0].transpose(0, 1) for t in (query, key, value))  # [T, heads, head_dim]
    cu_q, cu_k = cu_q.to(query.device, torch.int32), cu_k.to(query.device, torch.int32)
    if kernel == "flash_attn":
        out = _flash_varlen()(q, k, v, cu_q, cu_k, max_q, max_k, dropout_p=dropout, softmax_scale=scaling)
    else:
        out = _torch_varlen()(q, k, v, cu_q, cu_k, max_q, max_k, scale=scaling)
    return out[None], None  # [1, T, heads, head_dim]


def varlen_mask(*args, attention_mask=None, **kwargs):
    """transformers' mask-function contract (``ALL_MASK_ATTENTION_FUNCTIONS``) for :data:`ATTENTION_NAME`: a padded
    batch (2-D ``attention_mask``) gets SDPA's 4-D mask; a batch without one gets ``None`` (a padding-free batch:
    :func:`varlen_attention_forward` reads ``cu_seq_lens``, never a ``[T, T]`` mask made here)."""
    if attention_mask is None:
        return None
    from transformers.masking_utils import sdpa_mask

    return sdpa_mask(*args, attention_mask=attention_mask, **kwargs)


def register_varlen_attention() -> str:
    """Register :func:`varlen_attention_forward` and :func:`varlen_mask` as :data:`ATTENTION_NAME` (idempotent);
    returns the name, for ``model.set_attn_implementation``."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(ATTENTION_NAME, varlen_attention_forward)
    AttentionMaskInterface.register(ATTENTION_NAME, varlen_mask)
    return ATTENTION_NAME
