"""Batch collation for BERT pretraining: padding, MLM masking (token or whole-word), NSP labels passed through.

transformers 5 removed ``DataCollatorForWholeWordMask`` and ``DataCollatorForSOP``; its
``DataCollatorForLanguageModeling(whole_word_mask=True)`` always uses [MASK] (no 80/10/10) and needs equal-length
features. :class:`DataCollatorForBertPretraining` does MLM + NSP + whole-word masking with dynamic padding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from transformers.data.data_collator import DataCollatorMixin

SELECTION_MODES = ("bernoulli", "exact")

#: feature key of the example index that keys the masking randomness (``datasets.map(..., with_indices=True)``).
EXAMPLE_INDEX = "idx"

# splitmix64 (Steele, Lea & Flood 2014; the seeding generator of java.util.SplittableRandom and of xoshiro):
# a counter-based generator whose n-th output is mix64(key + n * GOLDEN). Used here so every draw is a pure function
# of (seed, epoch, example index, stream, position) -- no generator state to share, copy or checkpoint.
_GOLDEN = 0x9E3779B97F4A7C15
_STREAMS = {"select": 1, "category": 2, "token": 3}


def _mix64(x):
    """splitmix64's finaliser on a ``numpy.uint64`` array (a bijection of 64-bit integers; wraps modulo 2**64).

    Returns a new array; ``x`` is not modified (the steps run in place on one copy).
    """
    import numpy as np

    return _mix64_inplace(np.array(x, dtype=np.uint64))  # np.array copies


def example_keys(seed: int, epoch: int, example_index) -> Any:
    """64-bit masking key per example: ``mix64(mix64(mix64(seed) ^ epoch) ^ index)``.

    Args:
        seed: run seed (any int; taken modulo 2**64).
        epoch: epoch number (0-based) for dynamic masks; 0 for static masks.
        example_index: ``int`` sequence / array ``[B]`` of dataset row indices.

    Returns:
        ``numpy.uint64 [B]``.
    """
    import numpy as np

    idx = np.asarray(example_index, dtype=np.int64).astype(np.uint64)
    base = _mix64(np.uint64(int(seed) % 2**64) + np.uint64(_GOLDEN))
    base = _mix64(base ^ np.uint64(int(epoch) % 2**64))
    return _mix64(base ^ idx)


def keyed_uniform(keys, stream: str, counters):
    """Uniform ``[0, 1)`` doubles: draw ``counters[b, j]`` of sub-stream ``stream`` of example ``b``.

    Args:
        keys: ``numpy.uint64 [B]`` (:func:`example_keys`).
        stream: ``"select"``, ``"category"`` or ``"token"`` (independent sub-streams of one example).
        counters: ``int64 [B, K]`` (torch or numpy), the position (token index within the example, or word index with
            whole-word masking) the draw belongs to, so a draw does not depend on padding or batch composition.

    Returns:
        ``torch.float64 [B, K]``.
    """
    return keyed_uniforms(keys, (stream,), counters)[0]


def keyed_uniforms(keys, streams, counters):
    """:func:`keyed_uniform` of several sub-streams at the same ``counters`` in one vectorised pass over the batch.

    Args:
        keys: ``numpy.uint64 [B]``.
        streams: names of :func:`keyed_uniform`'s sub-streams, ``S`` of them.
        counters: ``int64 [B, K]`` (torch or numpy).

    Returns:
        ``torch.float64 [S, B, K]``; slice ``s`` is bit for bit ``keyed_uniform(keys, streams[s], counters)``.
    """
    import numpy as np
    import torch

    c = counters.numpy() if isinstance(counters, torch.Tensor) else np.asarray(counters)
    consts = np.array([_STREAMS[s] * _GOLDEN % 2**64 for s in streams], dtype=np.uint64)
    sub = _mix64(np.asarray(keys, dtype=np.uint64)[None, :] ^ consts[:, None])  # [S, B]: one seed per stream, row
    with np.errstate(over="ignore"):
        step = c.astype(np.uint64)  # (n + 1) * GOLDEN, shared by the streams
        step += np.uint64(1)
        step *= np.uint64(_GOLDEN)
        state = step[None, :, :] + sub[:, :, None]  # [S, B, K]: splitmix64(sub[s], c), see splitmix64()
    bits = _mix64_inplace(state)
    bits >>= np.uint64(11)  # 53 random bits
    u = bits.astype(np.float64)
    u *= 1.0 / 2**53  # exact: a power of two
    return torch.from_numpy(u)


def splitmix64(seeds, counters):
    """Output number ``counters[b, j] + 1`` of splitmix64 seeded with ``seeds[b]``: ``mix64(seed + (n + 1) * GOLDEN)``.

    Args:
        seeds: ``numpy.uint64 [B]``.
        counters: non-negative integers ``[B, K]``.

    Returns:
        ``numpy.uint64 [B, K]`` (counter 0 is the generator's first output, as in the reference ``splitmix64.c``).
    """
    import numpy as np

    seeds = np.asarray(seeds, dtype=np.uint64)
    with np.errstate(over="ignore"):
        state = np.asarray(counters).astype(np.uint64)  # a new array: updated in place below
        state += np.uint64(1)
        state *= np.uint64(_GOLDEN)
        state += seeds[:, None]
    return _mix64_inplace(state)


def _mix64_inplace(x):
    """:func:`_mix64` on a ``numpy.uint64`` array that the caller owns (overwritten and returned)."""
    import numpy as np

    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


@dataclass
class DataCollatorForBertPretraining(DataCollatorMixin):
    """Pad pretraining instances and choose MLM targets: the output is exactly what ``BertForPreTraining`` takes.

    Input features (dicts of lists, e.g. rows of :func:`hf_bert_tasks.create_pretraining_examples`):
    ``input_ids`` (required), ``token_type_ids``, ``attention_mask``, ``next_sentence_label`` (int), ``word_ids``
    (needed for whole-word masking: word index per token, ``-1``/``None`` for special tokens — the fast tokenizer's
    ``BatchEncoding.word_ids``), and ``labels`` (precomputed static masks: then the features are only padded).

    Output (``torch`` tensors; ``B`` = batch size, ``L`` = longest sequence rounded up to ``pad_to_multiple_of``):

    * ``input_ids`` ``int64 [B, L]`` — masked inputs, padded with ``pad_token_id``;
    * ``token_type_ids`` ``int64 [B, L]`` — 0 for ``[CLS] A [SEP]`` (and padding), 1 for ``B [SEP]``;
    * ``attention_mask`` ``int64 [B, L]`` — 1 for real tokens, 0 for padding;
    * ``labels`` ``int64 [B, L]`` — original id at MLM-selected positions, ``-100`` elsewhere (ignored by the loss);
    * ``next_sentence_label`` ``int64 [B]`` — passed through when the features have it (0 = IsNext, 1 = NotNext).

    Masking (paper §3.1 Task #1 and Appendix C.2; google-research/bert ``create_masked_lm_predictions``;
    transformers ``DataCollatorForLanguageModeling.torch_mask_tokens``):

    * candidates are the real tokens that are not special (``tokenizer.all_special_ids``: ``[CLS]``, ``[SEP]``,
      ``[PAD]``, ``[MASK]``, ``[UNK]``); with whole-word masking, a *word* is a candidate unit and all its candidate
      pieces are selected together;
    * ``selection="bernoulli"`` (transformers' behaviour): each candidate unit is selected independently with
      probability ``mlm_probability``; ``selection="exact"`` (google's): ``min(max_predictions_per_seq,
      max(1, round(n * mlm_probability)))`` targets per sequence, where ``n`` counts the real tokens *including*
      ``[CLS]``/``[SEP]`` as google's ``len(tokens)`` does and ``round`` is half-up (Python 2's, which google ran);
      units are taken in random order, a whole word that would exceed the count is skipped (google's WWM rule), so
      with whole-word masking the count can be below the target;
    * each selected unit becomes ``[MASK]`` with probability ``mask_replace_prob`` (0.8), a random *ordinary*
      (non-special) vocabulary token with probability ``random_replace_prob`` (0.1), and stays unchanged otherwise;
      with whole-word masking this category is decided **once per word** (all pieces of a word are [MASK]ed, or all
      replaced by random pieces, or all kept), whereas google's WWM decides per piece. google draws random tokens
      from the whole vocabulary including special tokens; we draw ordinary tokens only, as transformers does not.

    Static masks: call :meth:`static_mask_map` in a batched ``datasets.map`` with ``with_indices=True`` (after
    ``dupe_factor`` passes of :func:`~hf_bert_tasks.create_pretraining_examples`) to store ``labels`` and masked
    ``input_ids``; the collator then pads them unchanged. Dynamic masks (RoBERTa-style, the default): masks are drawn
    at every batch.

    Randomness (what a mask depends on): when the features carry an ``idx`` (the dataset row index, e.g. from
    ``ds.map(lambda b, i: {"idx": i}, with_indices=True, batched=True)``), every draw of example ``idx`` is a pure
    function of ``(seed, epoch, idx, position)`` — counter-based splitmix64 hashing, see :func:`example_keys` and
    :func:`keyed_uniform` — so masks do not depend on the batch an example lands in, its padding, the
    ``DataLoader`` worker or the DDP rank that collates it, and a resumed run redraws exactly the masks of an
    uninterrupted one. ``epoch`` is set with :meth:`set_epoch` (the pretraining recipe's callback does it at each
    epoch start; it lives in shared memory, so persistent ``DataLoader`` workers see it too): with dynamic masks each
    epoch gets new masks. Without ``idx``, a key per row is drawn from the collator's own ``torch.Generator`` (or
    torch's global generator when ``seed`` is ``None``): reproducible in one process, but ``DataLoader`` workers
    would repeat one another's stream — give ``idx`` there.

    Example (vocabulary where ``[PAD]=0 [CLS]=2 [SEP]=3 [MASK]=4``; ``mlm_probability=1.0``,
    ``mask_replace_prob=1.0``)::

        >>> c = DataCollatorForBertPretraining(tok, mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0)
        >>> c([{"input_ids": [2, 7, 3], "next_sentence_label": 1}, {"input_ids": [2, 7, 9, 3], "next_sentence_label": 0}])
        {'input_ids': tensor([[2, 4, 3, 0], [2, 4, 4, 3]]), 'token_type_ids': tensor([[0, 0, 0, 0], [0, 0, 0, 0]]),
         'attention_mask': tensor([[1, 1, 1, 0], [1, 1, 1, 1]]), 'labels': tensor([[-100, 7, -100, -100],
         [-100, 7, 9, -100]]), 'next_sentence_label': tensor([1, 0])}

    Args:
        tokenizer: tokenizer giving ``pad_token_id``, ``mask_token_id``, ``all_special_ids`` and ``len(tokenizer)``.
        mlm: choose MLM targets (``False``: only pad, e.g. for NSP-only fine-tuning experiments).
        mlm_probability: fraction of tokens to predict (0.15).
        mask_replace_prob / random_replace_prob: the 80 % / 10 % (the rest, 10 %, stays unchanged).
        selection: ``"bernoulli"`` or ``"exact"`` (see above).
        max_predictions_per_seq: cap of ``"exact"`` selection (google: 20 at seq 128, 80 at seq 512).
        whole_word_mask: select and replace whole words (needs ``word_ids`` in the features).
        pad_to_multiple_of: round ``L`` up to a multiple (e.g. 8 for tensor cores).
        max_length: pad every batch to this length (static padding); inputs longer than it raise.
        seed: the masking seed (``None``: one drawn from torch's global generator when the collator is built, so
            ``transformers.set_seed`` makes it reproducible).
        return_tensors: only ``"pt"``.

    Raises:
        ValueError: bad probabilities or mode, a tokenizer without a mask/pad token, whole-word masking without
            ``word_ids``, features of different keys, or a ``word_ids``/``token_type_ids``/``labels`` list whose length
            differs from ``input_ids`` (the message names the feature index).
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
    generator: Any = field(default=None, init=False, repr=False)
    _epoch: Any = field(default=None, init=False, repr=False)

    def __post_init__(self):
        import torch

        if not 0.0 < self.mlm_probability <= 1.0:
            raise ValueError(f"mlm_probability must be in (0, 1], got {self.mlm_probability}")
        if (
            self.mask_replace_prob < 0
            or self.random_replace_prob < 0
            or self.mask_replace_prob + self.random_replace_prob > 1
        ):
            raise ValueError(
                f"mask_replace_prob ({self.mask_replace_prob}) and random_replace_prob ({self.random_replace_prob}) "
                "must be >= 0 and sum to at most 1"
            )
        if self.selection not in SELECTION_MODES:
            raise ValueError(f"selection must be one of {SELECTION_MODES}, got {self.selection!r}")
        if self.max_predictions_per_seq < 1:
            raise ValueError(f"max_predictions_per_seq must be >= 1, got {self.max_predictions_per_seq}")
        if self.return_tensors != "pt":
            raise ValueError(f"return_tensors: only 'pt' is supported, got {self.return_tensors!r}")
        if self.tokenizer.pad_token_id is None:
            raise ValueError("the tokenizer has no pad token ([PAD]); BERT pretraining needs one")
        if self.mlm and self.tokenizer.mask_token_id is None:
            raise ValueError("the tokenizer has no mask token ([MASK]); MLM needs one")
        special = sorted(set(self.tokenizer.all_special_ids))
        vocab_size = len(self.tokenizer)
        self._special_ids = torch.tensor(special, dtype=torch.long)
        is_special = torch.zeros(vocab_size, dtype=torch.bool)
        is_special[self._special_ids[self._special_ids < vocab_size]] = True
        self._ordinary_ids = torch.nonzero(~is_special).flatten()
        self._is_special_lut = is_special
        if self.mlm and len(self._ordinary_ids) == 0:
            raise ValueError("the vocabulary has no ordinary (non-special) tokens to draw random replacements from")
        if self.seed is not None:
            self.generator = torch.Generator().manual_seed(int(self.seed))
            self._base_seed = int(self.seed)
        else:
            self._base_seed = int(torch.randint(0, 2**62, (1,)).item())
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

    def _row_keys(self, example_index, n_rows: int):
        import numpy as np
        import torch

        if example_index is not None:
            return example_keys(self._base_seed, self.epoch, example_index)
        draws = torch.randint(0, 2**62, (n_rows,), generator=self.generator)
        return draws.numpy().astype(np.uint64)

    # ------------------------------------------------------------------ padding
    def _pad(self, features: list[dict]) -> dict[str, Any]:
        import itertools

        import numpy as np
        import torch

        if not features:
            raise ValueError("cannot collate an empty list of features")
        keys = set(features[0])
        if "input_ids" not in keys:
            raise ValueError(f"feature 0 has no 'input_ids' (keys: {sorted(keys)})")
        for i, f in enumerate(features):
            if set(f) != keys:
                raise ValueError(f"feature {i} has keys {sorted(f)}, feature 0 has {sorted(keys)}")
        lengths = [len(f["input_ids"]) for f in features]
        longest = max(lengths)
        length = self.max_length if self.max_length is not None else longest
        if longest > length:
            raise ValueError(f"a feature has {longest} tokens, more than max_length={self.max_length}")
        if self.pad_to_multiple_of:
            length = int(math.ceil(length / self.pad_to_multiple_of) * self.pad_to_multiple_of)
        n = len(features)
        right = getattr(self.tokenizer, "padding_side", "right") != "left"
        pos = torch.arange(length).unsqueeze(0)
        lens = torch.tensor(lengths).unsqueeze(1)
        real = pos < lens if right else pos >= length - lens  # bool [n, length]: the token slots, row-major
        total = sum(lengths)

        def fill(key: str, pad_value: int, none_value: int | None = None):
            rows = [f[key] for f in features]
            for i, values in enumerate(rows):
                if len(values) != lengths[i]:
                    raise ValueError(
                        f"feature {i}: '{key}' has {len(values)} entries but 'input_ids' has {lengths[i]}"
                    )
            # one conversion for the whole batch: the rows, concatenated, fill the token slots in row-major order
            try:
                flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int64, count=total)
            except TypeError:  # None entries (word ids of special tokens)
                if none_value is None:
                    raise
                flat = np.fromiter((none_value if v is None else v for r in rows for v in r), dtype=np.int64,
                                   count=total)
            out = torch.full((n, length), pad_value, dtype=torch.long)
            out[real] = torch.from_numpy(flat)
            return out

        batch = {"input_ids": fill("input_ids", self.tokenizer.pad_token_id)}
        batch["token_type_ids"] = (
            fill("token_type_ids", 0) if "token_type_ids" in keys else torch.zeros_like(batch["input_ids"])
        )
        if "attention_mask" in keys:
            batch["attention_mask"] = fill("attention_mask", 0)
        else:
            batch["attention_mask"] = real.long()
        if "labels" in keys:
            batch["labels"] = fill("labels", -100)
        if "word_ids" in keys:
            batch["word_ids"] = fill("word_ids", -1, none_value=-1)
        if "next_sentence_label" in keys:
            batch["next_sentence_label"] = torch.tensor(
                [int(f["next_sentence_label"]) for f in features], dtype=torch.long
            )
        return batch

    # ------------------------------------------------------------------ masking
    def mask_tokens(self, input_ids, attention_mask, word_ids=None, example_index=None):
        """Choose MLM targets and corrupt the inputs (rules in the class docstring).

        Args:
            input_ids: ``int64 [B, L]``.
            attention_mask: ``int64 [B, L]``, 1 for real tokens.
            word_ids: ``int64 [B, L]`` word index per token, ``-1`` for special/pad positions (whole-word masking).
            example_index: ``[B]`` dataset row indices keying the draws (see "Randomness" in the class docstring), or
                ``None`` (keys from the collator's generator).

        Returns:
            ``(masked_input_ids, labels)``, both ``int64 [B, L]``; ``labels`` is ``-100`` where not selected.
        """
        import torch

        if self.whole_word_mask and word_ids is None:
            raise ValueError(
                "whole_word_mask=True needs a 'word_ids' list per feature (word index per token, -1 for special "
                "tokens): create the features with hf_bert_tasks.create_pretraining_examples or store "
                "BatchEncoding.word_ids(i) of a fast tokenizer"
            )
        candidate = attention_mask.bool() & ~self._is_special_lut[input_ids.clamp(0, len(self._is_special_lut) - 1)]
        candidate &= input_ids < len(self._is_special_lut)
        b = input_ids.shape[0]
        keys = self._row_keys(example_index, b)
        # position of each token within its own example (independent of padding side and batch width)
        position = (attention_mask.long().cumsum(1) - 1).clamp(min=0)
        if self.whole_word_mask:
            # unit = word; tokens with word id -1 that are candidates (should not happen) become their own unit.
            words = word_ids.clone()
            words[~candidate] = -1
            n_units = int(words.max().item()) + 1 if words.numel() else 0
            n_units = max(n_units, 1)
            unit = words.clamp(min=0)
            unit_index = torch.arange(n_units).expand(b, n_units)
            # selection and 80/10/10 draws per word, random tokens per piece
            unit_u, unit_cat = keyed_uniforms(keys, ("select", "category"), unit_index)
            token_u = keyed_uniform(keys, "token", position)
            if self.selection == "bernoulli":
                unit_selected = unit_u < self.mlm_probability
            else:
                unit_selected = self._exact_words(words, candidate, attention_mask, unit_u, n_units)
            selected = unit_selected.gather(1, unit) & candidate
            category = unit_cat.gather(1, unit)
        else:
            u, category, token_u = keyed_uniforms(keys, ("select", "category", "token"), position)
            if self.selection == "bernoulli":
                selected = (u < self.mlm_probability) & candidate
            else:
                scores = u.masked_fill(~candidate, 2.0)
                rank = scores.argsort(dim=1).argsort(dim=1)
                k = self._num_to_predict(attention_mask).clamp(max=candidate.sum(1))
                selected = (rank < k.unsqueeze(1)) & candidate
        labels = torch.where(selected, input_ids, torch.full_like(input_ids, -100))
        masked = input_ids.clone()
        to_mask = selected & (category < self.mask_replace_prob)
        to_random = (
            selected
            & (category >= self.mask_replace_prob)
            & (category < self.mask_replace_prob + self.random_replace_prob)
        )
        masked[to_mask] = self.tokenizer.mask_token_id
        if to_random.any():
            picks = (token_u * len(self._ordinary_ids)).long()
            masked[to_random] = self._ordinary_ids[picks.clamp(max=len(self._ordinary_ids) - 1)[to_random]]
        return masked, labels

    def _num_to_predict(self, attention_mask):
        import torch

        n_real = attention_mask.sum(1).double()
        target = torch.floor(n_real * self.mlm_probability + 0.5).long()  # half-up, as Python 2's round
        return target.clamp(min=1, max=self.max_predictions_per_seq)

    def _exact_words(self, words, candidate, attention_mask, unit_u, n_units):
        """google's WWM exact count: words in random order, skip a word that would exceed the count."""
        import torch

        b = words.shape[0]
        sizes = torch.zeros(b, n_units, dtype=torch.long)
        sizes.scatter_add_(1, words.clamp(min=0), candidate.long())
        k = self._num_to_predict(attention_mask).tolist()
        order = unit_u.masked_fill(sizes == 0, 2.0).argsort(dim=1).tolist()
        sizes_l = sizes.tolist()
        rows, cols = [], []
        for row in range(b):
            total, row_sizes, budget = 0, sizes_l[row], k[row]
            for w in order[row]:
                s = row_sizes[w]
                if s == 0 or total >= budget:
                    break  # sorted: only empty units remain / count reached
                if total + s > budget:
                    continue
                rows.append(row)
                cols.append(w)
                total += s
        selected = torch.zeros(b, n_units, dtype=torch.bool)
        selected[torch.tensor(rows, dtype=torch.long), torch.tensor(cols, dtype=torch.long)] = True
        return selected

    def torch_call(self, features: list[dict]) -> dict[str, Any]:
        """Collate ``features`` into the tensors listed in the class docstring."""
        example_index = None
        if features and EXAMPLE_INDEX in features[0]:
            features = [dict(f) for f in features]
            example_index = [int(f.pop(EXAMPLE_INDEX)) for f in features]
        batch = self._pad(features)
        word_ids = batch.pop("word_ids", None)
        if self.mlm and "labels" not in batch:
            batch["input_ids"], batch["labels"] = self.mask_tokens(
                batch["input_ids"], batch["attention_mask"], word_ids, example_index
            )
        return batch

    def static_mask_map(self, batch: dict[str, list], indices: list[int] | None = None) -> dict[str, list]:
        """Batched ``datasets.map`` function storing static masks: masked ``input_ids`` and ``labels`` per row.

        Use after ``dupe_factor`` passes of :func:`~hf_bert_tasks.create_pretraining_examples` (google's static
        masking: each copy gets its own mask). Rows keep their lengths (no padding is stored). With
        ``with_indices=True`` (or an ``idx`` column) the mask of row ``i`` is a function of ``(seed, i)`` only (epoch
        0), so the result is the same for any ``batch_size`` and ``num_proc``; without indices the rows draw keys
        from the collator's generator (deterministic in one process only).
        """
        if indices is None and EXAMPLE_INDEX in batch:
            indices = list(batch[EXAMPLE_INDEX])
        rows = [{k: batch[k][i] for k in batch if k != EXAMPLE_INDEX} for i in range(len(batch["input_ids"]))]
        for r in rows:
            r.pop("labels", None)
        saved, self.max_length, self.pad_to_multiple_of = (self.max_length, self.pad_to_multiple_of), None, None
        try:
            padded = self._pad(rows)
        finally:
            self.max_length, self.pad_to_multiple_of = saved
        keys_epoch, index = self.epoch, None
        if indices is not None:
            index = list(indices)
            self._epoch.fill_(0)  # static masks: one draw per row, not per epoch
        try:
            masked, labels = self.mask_tokens(
                padded["input_ids"], padded["attention_mask"], padded.get("word_ids"), index
            )
        finally:
            self._epoch.fill_(keys_epoch)
        lengths = [len(r["input_ids"]) for r in rows]
        out = dict(batch)
        right = getattr(self.tokenizer, "padding_side", "right") != "left"
        width = masked.shape[1]
        sl = [slice(0, n) if right else slice(width - n, width) for n in lengths]
        out["input_ids"] = [masked[i, s].tolist() for i, s in enumerate(sl)]
        out["labels"] = [labels[i, s].tolist() for i, s in enumerate(sl)]
        return out
