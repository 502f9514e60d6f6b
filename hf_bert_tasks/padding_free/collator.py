"""The padding-free collator: any of the package's collators (MLM / whole-word / NSP pretraining, GLUE, CoNLL-2003,
SQuAD, SWAG), then its padded batch flattened into one row of real tokens (transformers' padding-free format, as
``DataCollatorWithFlattening``). Why: docs/design.md, "padding_free: batches without padding"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from transformers.data.data_collator import DataCollatorMixin

#: the token columns that are flattened to ``[1, T]``; every other ``[B, L]`` column keeps its rows (trimmed to ``Lmax``)
FLAT_KEYS = ("input_ids", "token_type_ids")


def flatten_padded_batch(batch: dict[str, Any]) -> dict[str, Any]:
    """Flatten one right-padded batch (``attention_mask`` ``[B, L]``, or ``[B, C, L]`` for multiple choice, each
    row's real tokens first) into transformers' padding-free kwargs; a new dict, ``batch`` unchanged.

    Returns:
        ``input_ids`` / ``token_type_ids`` ``int64 [1, T]`` (``T`` = real tokens of the batch, rows concatenated in
        order), ``position_ids`` ``int64 [1, T]`` restarting at 0 per sequence, ``cu_seq_lens_q`` / ``cu_seq_lens_k``
        ``int32 [N + 1]`` (``N`` = ``B``, or ``B * C``; cumulative lengths from 0), ``max_length_q`` /
        ``max_length_k`` (``int``: the longest sequence, ``Lmax``), no ``attention_mask``; with ``[B, C, L]``
        inputs ``num_choices`` (``int64`` scalar, ``C``), read by :func:`hf_bert_tasks.padding_free.model.enable_padding_free`.
        Every other tensor keeps its shape, except those of shape ``[B, L]`` (e.g. MLM / NER ``labels``), trimmed
        to ``[B, Lmax]``: their labels per example stay as the inner collator made them.

    Raises:
        ValueError: no ``attention_mask`` or ``input_ids``; a row whose real tokens do not come first (left
            padding); a trimmed column holding a value other than ``-100`` or the pad value past ``Lmax``."""
    if "attention_mask" not in batch or "input_ids" not in batch:
        raise ValueError(f"padding-free flattening needs input_ids and attention_mask; the batch has {sorted(batch)}")
    mask = torch.as_tensor(batch["attention_mask"]).bool()
    shape = mask.shape  # [B, L] or [B, C, L]
    rows = mask.reshape(-1, shape[-1])  # [N, L]
    lengths = rows.sum(-1)  # [N]
    if not torch.equal(rows, torch.arange(shape[-1])[None, :] < lengths[:, None]):
        raise ValueError(
            "padding-free flattening needs right padding (real tokens first in every row of attention_mask)"
        )
    longest = int(lengths.max()) if len(lengths) else 0
    cu = torch.zeros(len(lengths) + 1, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, 0)
    out: dict[str, Any] = {}
    for key, value in batch.items():
        if key == "attention_mask":
            continue
        if key in FLAT_KEYS:
            out[key] = torch.as_tensor(value).reshape(-1, shape[-1])[rows][None, :]
        elif isinstance(value, torch.Tensor) and value.shape[:2] == shape[:2] and value.dim() == 2 == len(shape):
            extra = value[:, longest:]
            if extra.numel() and not bool(((extra == -100) | (extra == 0)).all()):
                raise ValueError(
                    f"padding-free flattening: column {key!r} holds values past the longest row ({longest})"
                )
            out[key] = value[:, :longest]
        else:
            out[key] = value
    out["position_ids"] = (torch.arange(int(cu[-1])) - torch.repeat_interleave(cu[:-1].long(), lengths))[None, :]
    out.update(cu_seq_lens_q=cu, cu_seq_lens_k=cu.clone(), max_length_q=longest, max_length_k=longest)
    if len(shape) == 3:
        out["num_choices"] = torch.tensor(shape[1])
    return out


@dataclass
class PaddingFreeCollator(DataCollatorMixin):
    """Wrap a collator: ``collator(features)`` masks, labels and pads per example exactly as without the wrapper,
    then :func:`flatten_padded_batch` drops the padding (``--padding_free``; transformers'
    ``DataCollatorWithFlattening`` format, plus the labels of the inner collator).

    Example (two GLUE pairs of 3 and 2 WordPieces, padded by the inner collator to ``L = 3``)::

        >>> inner = lambda f: {"input_ids": torch.tensor([[101, 7, 102], [101, 102, 0]]),
        ...     "token_type_ids": torch.tensor([[0, 0, 1], [0, 1, 0]]),
        ...     "attention_mask": torch.tensor([[1, 1, 1], [1, 1, 0]]), "labels": torch.tensor([1, 0])}
        >>> PaddingFreeCollator(inner)([{}, {}])
        {'input_ids': tensor([[101, 7, 102, 101, 102]]), 'token_type_ids': tensor([[0, 0, 1, 0, 1]]),
         'labels': tensor([1, 0]), 'position_ids': tensor([[0, 1, 2, 0, 1]]),
         'cu_seq_lens_q': tensor([0, 3, 5], dtype=torch.int32), 'cu_seq_lens_k': tensor([0, 3, 5], dtype=torch.int32),
         'max_length_q': 3, 'max_length_k': 3}

    Args:
        collator: the inner collator (any callable from a list of features to a padded batch with
            ``attention_mask``); its other attributes (e.g. ``set_epoch``) are reached through the wrapper.
        return_tensors: only ``"pt"``.

    Raises:
        ValueError: ``return_tensors`` other than ``"pt"``; as :func:`flatten_padded_batch`."""

    collator: Any
    return_tensors: str = "pt"

    def __post_init__(self):
        if self.return_tensors != "pt":
            raise ValueError(f"PaddingFreeCollator: return_tensors must be 'pt', got {self.return_tensors!r}")

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "collator":
            raise AttributeError(name)
        return getattr(self.collator, name)

    def torch_call(self, features: list[dict]) -> dict[str, Any]:
        """The inner collator's batch, flattened (see the class)."""
        return flatten_padded_batch(self.collator(features))
