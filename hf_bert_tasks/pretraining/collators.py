"""Batch collation for BERT pretraining: padding, MLM masking (token or whole-word), NSP labels passed through
(transformers 5's ``DataCollatorForLanguageModeling(whole_word_mask=True)`` has no 80/10/10, needs equal lengths)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from transformers.data.data_collator import DataCollatorMixin

SELECTION_MODES = ("bernoulli", "exact")

#: feature key of the example index that keys the masking randomness (``datasets.map(..., with_indices=True)``).
EXAMPLE_INDEX = "idx"

# Keyed randomness: splitmix64 (Steele, Lea & Flood 2014). Why: docs/design.md, "collators: keyed randomness".
_GOLDEN = 0x9E3779B97F4A7C15
_STREAM_SALTS = np.array([s * _GOLDEN % 2**64 for s in (1, 2, 3)], dtype=np.uint64)  # select, category, token


def _mix64(x):
    """splitmix64's finaliser (a bijection of 64-bit integers) on a ``numpy.uint64`` array it may overwrite."""
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def splitmix64(seeds, counters):
    """``numpy.uint64 [*broadcast(S, T), K]``: output ``n + 1`` of splitmix64 seeded with ``seeds [*S]``,
    ``mix64(seed + (n + 1) * GOLDEN)``, for ``n`` in ``counters [*T, K]`` (0: ``splitmix64.c``'s first output)."""
    with np.errstate(over="ignore"):
        step = np.asarray(counters).astype(np.uint64)  # a new array: updated in place
        step += np.uint64(1)
        step *= np.uint64(_GOLDEN)
        return _mix64(step + np.asarray(seeds, dtype=np.uint64)[..., None])


def example_keys(seed: int, *words):
    """``numpy.uint64`` masking keys ``[B]`` (0-d when every word is an int) of ``seed`` and ``words`` (ints modulo
    2**64 or int arrays ``[B]``, broadcast: ``(epoch, idx)`` or ``(epoch, worker, call, row)``)."""
    key = _mix64(np.array((int(seed) + _GOLDEN) % 2**64, dtype=np.uint64))
    for w in words:
        w = np.uint64(w % 2**64) if isinstance(w, int) else np.asarray(w, np.int64).astype(np.uint64)
        key = _mix64(key ^ w)
    return key


def keyed_uniforms(seed: int, words, counters):
    """The masking draws (select, category, token), ``numpy.float64 [3, B, K]`` in ``[0, 1)``, of examples keyed by
    ``(seed, *words)`` (:func:`example_keys`) at ``counters`` (ints ``[B or 1, K]``: token or word index of each
    draw); no generator state. Key and stream formulas: docs/design.md, "collators: key and stream formulas"."""
    return _uniforms(example_keys(seed, *words), _STREAM_SALTS, counters)


def keyed_uniform(keys, stream: str, counters):
    """One sub-stream (``"select"``, ``"category"`` or ``"token"``) of :func:`keyed_uniforms` for ``keys``
    (``numpy.uint64 [B]``, :func:`example_keys`) at ``counters`` (``int [B, K]``): ``torch.float64 [B, K]``."""
    salt = _STREAM_SALTS[("select", "category", "token").index(stream)]
    return torch.from_numpy(_uniforms(keys, salt[None], np.asarray(counters))[0])


def _uniforms(keys, salts, counters):
    bits = splitmix64(_mix64(np.atleast_1d(keys)[None, :] ^ salts[:, None]), counters)
    bits >>= np.uint64(11)
    return bits.astype(np.float64) * (1.0 / 2**53)  # exact: a power of two


def segment_word_units(word_ids: np.ndarray, candidate: np.ndarray, boundary: np.ndarray) -> np.ndarray:
    """Whole-word units that never group tokens across a segment boundary (google-research/bert
    ``create_pretraining_data.py``: words are built per segment, ``[CLS]``/``[SEP]`` end a word). ``word_ids``: word
    index per token ``int64 [B, L]`` (``-1`` at special/pad positions; ids may restart at 0 in segment B, as
    ``BatchEncoding.word_ids(i)`` of a fast tokenizer on a pair); ``candidate``: ``bool [B, L]`` tokens that may be
    masked; ``boundary``: ``bool [B, L]`` real non-candidate tokens (``[CLS]``/``[SEP]``) that start a new segment.
    Returns ``int64 [B, L]`` unit ids >= 0 (0 where not a candidate): a segment whose word ids do not already exceed
    every id of the earlier segments of its row is shifted past them, so ids that continue across segments (the
    pretraining features) keep their values and restarting ids get distinct ones."""
    words = np.where(candidate, word_ids, -1).astype(np.int64)
    segment = boundary.cumsum(1)
    unit = np.maximum(words, 0)
    seen_max = np.full(len(words), -1, dtype=np.int64)
    for s in range(int(segment.max(initial=0)) + 1):
        inside = (segment == s) & (words >= 0)
        if not inside.any():
            continue
        lowest = np.where(inside, words, np.iinfo(np.int64).max).min(1)
        shift = np.where(inside.any(1), np.maximum(seen_max + 1 - lowest, 0), 0)[:, None]
        unit = np.where(inside, words + shift, unit)
        seen_max = np.maximum(seen_max, np.where(inside, words + shift, -1).max(1))
    return unit


@dataclass
class DataCollatorForBertPretraining(DataCollatorMixin):
    """Pad pretraining instances and choose MLM targets: the output is exactly what ``BertForPreTraining`` takes.

    Input features (dicts of lists, e.g. rows of :func:`hf_bert_tasks.create_pretraining_examples`): ``input_ids``
    (required), ``token_type_ids``, ``attention_mask``, ``next_sentence_label``, ``word_ids`` (whole-word masking: word
    index per token, ``-1``/``None`` for special tokens), ``idx`` (keys the masks) and ``labels`` (static masks: only
    padded). Output, ``torch`` tensors (``L`` = longest sequence rounded up to ``pad_to_multiple_of``):
    ``input_ids`` ``int64 [B, L]`` (masked, padded with ``pad_token_id``), ``token_type_ids`` and ``attention_mask``
    ``int64 [B, L]`` (0 at padding), ``labels`` ``int64 [B, L]`` (original id where selected, else ``-100``) and
    ``next_sentence_label`` ``int64 [B]`` when the features have it.

    Masking (paper §3.1, Appendix C.2; google-research/bert ``create_masked_lm_predictions``; transformers
    ``DataCollatorForLanguageModeling``), in :meth:`mask_tokens`: select among real non-special tokens (or words),
    then ``[MASK]`` / random ordinary token / kept; every draw is :func:`keyed_uniforms` of ``(seed, epoch, idx)``
    (:meth:`set_epoch`). Rules and keys without ``idx``: docs/design.md, "collators: masking rules".

    Example (a vocabulary where ``[PAD]=0 [CLS]=2 [SEP]=3 [MASK]=4``)::

        >>> c = DataCollatorForBertPretraining(tok, mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0)
        >>> c([{"input_ids": [2, 7, 3], "next_sentence_label": 1}, {"input_ids": [2, 7, 9, 3], "next_sentence_label": 0}])
        {'input_ids': tensor([[2, 4, 3, 0], [2, 4, 4, 3]]), 'token_type_ids': tensor([[0, 0, 0, 0], [0, 0, 0, 0]]),
         'attention_mask': tensor([[1, 1, 1, 0], [1, 1, 1, 1]]), 'labels': tensor([[-100, 7, -100, -100],
         [-100, 7, 9, -100]]), 'next_sentence_label': tensor([1, 0])}

    Args:
        tokenizer: gives ``pad_token_id``, ``mask_token_id``, ``all_special_ids`` and ``len(tokenizer)``.
        mlm: choose MLM targets (``False``: only pad).
        mlm_probability, mask_replace_prob, random_replace_prob: 0.15, 0.8, 0.1 (the rest stays unchanged).
        selection, max_predictions_per_seq: ``"bernoulli"`` or ``"exact"``, the latter's cap (google: 20 at 128).
        whole_word_mask: select and replace whole words (needs ``word_ids``).
        pad_to_multiple_of, max_length: round ``L`` up to a multiple; pad to a fixed length (longer inputs raise).
        seed: the masking seed (``None``: drawn from torch's global generator). return_tensors: only ``"pt"``.

    Raises:
        ValueError: bad probabilities or mode, a tokenizer without a mask/pad token, whole-word masking without
            ``word_ids``, features of different keys or a column whose length differs from ``input_ids``.
    """

    tokenizer: Any
    mlm: bool = True
    mlm_probability: float = 0.15
    mask_replace_prob: float = 0.8
    random_replace_prob: float = 0.1
    selection: str = "bernoulli"
    max_predictions_per_seq: int = 20
    whole_word_mask: bool = False
    pad_to_multiple_of: int | None = None
    max_length: int | None = None
    seed: int | None = None
    return_tensors: str = "pt"
    _epoch: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        p, mask_p, random_p = self.mlm_probability, self.mask_replace_prob, self.random_replace_prob
        sel, cap, tensors, tok = self.selection, self.max_predictions_per_seq, self.return_tensors, self.tokenizer
        for bad, message in (
            (not 0.0 < p <= 1.0, f"mlm_probability must be in (0, 1], got {p}"),
            (
                min(mask_p, random_p) < 0 or mask_p + random_p > 1,
                f"mask_replace_prob ({mask_p}) and random_replace_prob ({random_p}) must be >= 0 and sum to at most 1",
            ),
            (sel not in SELECTION_MODES, f"selection must be one of {SELECTION_MODES}, got {sel!r}"),
            (cap < 1, f"max_predictions_per_seq must be >= 1, got {cap}"),
            (tensors != "pt", f"return_tensors: only 'pt' is supported, got {tensors!r}"),
            (tok.pad_token_id is None, "the tokenizer has no pad token ([PAD]); BERT pretraining needs one"),
            (self.mlm and tok.mask_token_id is None, "the tokenizer has no mask token ([MASK]); MLM needs one"),
        ):
            if bad:
                raise ValueError(message)
        self._is_special = np.isin(np.arange(len(tok)), tok.all_special_ids)  # bool [V]
        self._ordinary_ids = np.flatnonzero(~self._is_special)
        if self.mlm and len(self._ordinary_ids) == 0:
            raise ValueError("the vocabulary has no ordinary (non-special) tokens to draw random replacements from")
        self._base_seed = int(self.seed) if self.seed is not None else int(torch.randint(0, 2**62, (1,)).item())
        self._calls = 0  # calls without idx in this process: they key the masks
        # shared memory: DataLoader workers (forked or spawned, persistent or not) read the value set by the trainer
        self._epoch = torch.zeros((), dtype=torch.long).share_memory_()

    @property
    def epoch(self) -> int:
        """The epoch the dynamic masks are drawn for (0-based)."""
        return int(self._epoch.item())

    def set_epoch(self, epoch: int) -> None:
        """Draw the masks of epoch ``epoch`` from now on (dynamic masking; static masks are stored, unaffected)."""
        if int(epoch) < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        self._epoch.fill_(int(epoch))

    def _pad(self, features: list[dict], max_length: int | None, multiple: int | None) -> dict[str, Any]:
        """One numpy conversion per column; why not ``tokenizer.pad``: docs/design.md, "collators: padding"."""
        if not features:
            raise ValueError("cannot collate an empty list of features")
        keys = set(features[0])
        if "input_ids" not in keys:
            raise ValueError(f"feature 0 has no 'input_ids' (keys: {sorted(keys)})")
        for i, f in enumerate(features):
            if set(f) != keys:
                raise ValueError(f"feature {i} has keys {sorted(f)}, feature 0 has {sorted(keys)}")
        lengths = [len(f["input_ids"]) for f in features]
        length = max_length if max_length is not None else max(lengths)
        if max(lengths) > length:
            raise ValueError(f"a feature has {max(lengths)} tokens, more than max_length={max_length}")
        length = -(-length // multiple) * multiple if multiple else length  # rounded up to a multiple
        pos, lens = np.arange(length)[None, :], np.array(lengths)[:, None]
        left = getattr(self.tokenizer, "padding_side", "right") == "left"
        real = pos >= length - lens if left else pos < lens  # bool [B, length]: the token slots, row-major

        def fill(key: str, pad_value: int):
            rows = [f[key] for f in features]
            for i, (values, n) in enumerate(zip(rows, lengths)):
                if len(values) != n:
                    raise ValueError(f"feature {i}: '{key}' has {len(values)} entries but 'input_ids' has {n}")
            try:  # the rows, concatenated, fill the token slots in row-major order
                flat = np.fromiter(itertools.chain.from_iterable(rows), np.int64, count=sum(lengths))
            except TypeError:  # None: the word id of a special token
                if key != "word_ids":
                    raise
                flat = np.fromiter((-1 if v is None else v for r in rows for v in r), np.int64, count=sum(lengths))
            out = np.full((len(rows), length), pad_value, dtype=np.int64)
            out[real] = flat  # numpy: 5x faster than torch's index_put here
            return out

        batch = {
            "input_ids": fill("input_ids", self.tokenizer.pad_token_id),
            "token_type_ids": np.zeros(real.shape, np.int64),
            "attention_mask": real.astype(np.int64),
        }
        for key, pad_value in (("token_type_ids", 0), ("attention_mask", 0), ("labels", -100), ("word_ids", -1)):
            if key in keys:
                batch[key] = fill(key, pad_value)
        if "next_sentence_label" in keys:
            batch["next_sentence_label"] = np.array([int(f["next_sentence_label"]) for f in features], dtype=np.int64)
        return {k: torch.from_numpy(v) for k, v in batch.items()}

    def mask_tokens(self, input_ids, attention_mask, word_ids=None, example_index=None, epoch: int | None = None):
        """Choose MLM targets and corrupt the inputs (the class docstring's rules): ``input_ids``, ``attention_mask``
        and ``word_ids`` (``-1`` at special/pad positions) ``int64 [B, L]``; ``example_index`` ``[B]`` row indices
        keying the draws, or ``None``; ``epoch`` (default: :attr:`epoch`). Returns ``(masked_input_ids, labels)``,
        both ``int64 [B, L]``, ``labels`` ``-100`` where not selected."""
        if self.whole_word_mask and word_ids is None:
            raise ValueError(
                "whole_word_mask=True needs a 'word_ids' list per feature (word index per token, -1 for "
                "special tokens): create the features with hf_bert_tasks.create_pretraining_examples or "
                "store BatchEncoding.word_ids(i) of a fast tokenizer"
            )
        ids, real = np.asarray(input_ids), np.asarray(attention_mask) != 0  # numpy: 2x faster than torch here
        n_vocab, n_rows = len(self._is_special), ids.shape[0]
        candidate = real & (ids < n_vocab) & ~self._is_special[np.clip(ids, 0, n_vocab - 1)]
        position = np.maximum(real.cumsum(1) - 1, 0)  # index in its own example, whatever the padding
        if self.whole_word_mask:  # a word never spans a [SEP]: each segment's word ids made distinct
            boundary = real & ~candidate
            unit = segment_word_units(np.asarray(word_ids), candidate, boundary)
        else:
            unit = position
        width = max(ids.shape[1], int(unit.max(initial=0)) + 1)
        words = [self.epoch if epoch is None else epoch, example_index]
        if example_index is None:  # issue 24: DataLoader workers and epochs must not repeat one stream
            info = torch.utils.data.get_worker_info()
            self._calls += 1
            words[1:] = [0 if info is None else info.seed + 1, self._calls, np.arange(n_rows)]
        # draw k of a row belongs to its unit k (token position or word index), the random token to position k
        draws = keyed_uniforms(self._base_seed, words, np.arange(width)[None])  # [3, B, width]
        u_select, u_category, u_token = draws.reshape(3, -1)  # flat indices: 3x faster than np.take_along_axis
        at_unit, at_position = (x + np.arange(n_rows)[:, None] * width for x in (unit, position))
        if self.selection == "bernoulli":
            selected = u_select[at_unit] < self.mlm_probability
        else:
            sizes = np.bincount(at_unit.ravel(), candidate.ravel(), minlength=u_select.size).astype(np.int64)
            selected = self._exact_count(draws[0], sizes.reshape(n_rows, width), real)[at_unit]
        selected &= candidate
        category = u_category[at_unit]  # one 80/10/10 draw per unit
        labels = np.where(selected, ids, -100)
        masked = np.where(selected & (category < self.mask_replace_prob), self.tokenizer.mask_token_id, ids)
        to_random = selected & (category >= self.mask_replace_prob)
        to_random &= category < self.mask_replace_prob + self.random_replace_prob
        picks = (u_token[at_position[to_random]] * len(self._ordinary_ids)).astype(np.int64)
        masked[to_random] = self._ordinary_ids[np.minimum(picks, len(self._ordinary_ids) - 1)]
        return torch.from_numpy(masked), torch.from_numpy(labels)

    def _exact_count(self, u, sizes, real):
        """google's exact count: ``bool [B * U]`` (flat), the units taken when visiting them in the order of ``u [B,
        U]``, taking each that still fits the row's count (``sizes``: ``int64 [B, U]`` candidate tokens per unit;
        ``real``: ``bool [B, L]``). Why rounds: docs/design.md, "collators: exact count"."""
        target = np.floor(real.sum(1, keepdims=True) * self.mlm_probability + 0.5)  # half-up, as Python 2's round
        remaining = np.clip(target, 1, self.max_predictions_per_seq).astype(np.int64)
        order = np.where(sizes == 0, 2.0, u).argsort(axis=1) + np.arange(len(u))[:, None] * u.shape[1]  # flat
        size = sizes.ravel()[order]  # in visiting order
        taken = np.zeros(size.shape, dtype=bool)
        while (fits := (size <= remaining) & (size > 0) & ~taken).any():
            new = fits & ((size * fits).cumsum(1) <= remaining)
            taken |= new
            remaining -= (size * new).sum(1, keepdims=True)
        out = np.zeros(u.size, dtype=bool)
        out[order] = taken
        return out

    def torch_call(self, features: list[dict]) -> dict[str, Any]:
        """Collate ``features`` into the tensors listed in the class docstring."""
        example_index = None
        if features and EXAMPLE_INDEX in features[0]:  # keys the masks; _pad leaves the column out
            example_index = [int(f[EXAMPLE_INDEX]) for f in features]
        batch = self._pad(features, self.max_length, self.pad_to_multiple_of)
        word_ids = batch.pop("word_ids", None)
        if self.mlm and "labels" not in batch:
            batch["input_ids"], batch["labels"] = self.mask_tokens(
                batch["input_ids"], batch["attention_mask"], word_ids, example_index
            )
        return batch

    def static_mask_map(self, batch: dict[str, list], indices: list[int] | None = None) -> dict[str, list]:
        """Batched ``datasets.map`` function storing static masks (google's: one per ``dupe_factor`` copy), unpadded
        ``input_ids`` and ``labels``; row ``i`` keyed by ``(seed, epoch 0, i)`` with ``with_indices=True`` or an
        ``idx`` column (any ``batch_size`` and ``num_proc``), else by the call count."""
        if indices is None and EXAMPLE_INDEX in batch:
            indices = list(batch[EXAMPLE_INDEX])
        rows = [
            {k: v[i] for k, v in batch.items() if k not in (EXAMPLE_INDEX, "labels")}
            for i in range(len(batch["input_ids"]))
        ]
        padded = self._pad(rows, None, None)
        masked, labels = self.mask_tokens(
            padded["input_ids"],
            padded["attention_mask"],
            padded.get("word_ids"),
            None if indices is None else list(indices),
            epoch=0,
        )
        width, left = masked.shape[1], getattr(self.tokenizer, "padding_side", "right") == "left"
        cut = [slice(width - len(r), width) if left else slice(0, len(r)) for r in batch["input_ids"]]
        return {
            **batch,
            "input_ids": [masked[i, s].tolist() for i, s in enumerate(cut)],
            "labels": [labels[i, s].tolist() for i, s in enumerate(cut)],
        }
