"""Tokenizers both recipes use: a WordPiece vocabulary trained on a corpus (:func:`train_wordpiece_tokenizer`, BERT's
special tokens), the tokenizer fitted to a checkpoint's position limit (:func:`fit_tokenizer_to_model`) and saved beside
it (:func:`save_tokenizer_for_model`), and where a tokenizer puts its special tokens around a pair
(:func:`pair_template`, for every task family's preprocessing)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from itertools import chain, filterfalse

logger = logging.getLogger(__name__)


#: ``config.model_type`` values whose position ids start after the padding index (``create_position_ids_from_input_ids``
#: in their modeling files): usable positions = ``max_position_embeddings - pad_token_id - 1`` (RoBERTa: 514 -> 512).
PADDING_OFFSET_POSITIONS = ("roberta", "xlm-roberta", "camembert", "longformer", "data2vec-text", "xmod")


def model_position_limit(config) -> int | None:
    """The longest input, in tokens including ``[CLS]``/``[SEP]``, that a model accepts: ``max_position_embeddings``
    of ``config`` (a ``PretrainedConfig`` or a model) or its ``encoder_config`` (:mod:`hf_bert_tasks.modes.feature_based.mode`),
    minus the padding offset for :data:`PADDING_OFFSET_POSITIONS`; ``None`` when the config names no limit."""
    config = getattr(config, "config", config)
    encoder = getattr(config, "encoder_config", None)
    if getattr(config, "max_position_embeddings", None) is None and isinstance(encoder, dict):
        values = {"model_type": getattr(config, "model_type", None), **encoder}
    else:
        values = {k: getattr(config, k, None) for k in ("max_position_embeddings", "model_type", "pad_token_id")}
    positions = values.get("max_position_embeddings")
    if not isinstance(positions, int) or positions <= 0:
        return None
    if values.get("model_type") in PADDING_OFFSET_POSITIONS:
        pad = values.get("pad_token_id")
        positions -= (pad if isinstance(pad, int) else 1) + 1
    return positions


def fit_tokenizer_to_model(tokenizer, config, name: str | None = None):
    """Lower ``tokenizer.model_max_length`` (in place) to :func:`model_position_limit` of ``config`` (or a model)
    when it has none or a larger one (transformers' convention: ``bert-base-uncased`` says 512 =
    ``max_position_embeddings``). ``name``: where the tokenizer came from, for the warning. Returns ``tokenizer``."""
    from transformers.tokenization_utils_base import VERY_LARGE_INTEGER

    limit = model_position_limit(config)
    current = getattr(tokenizer, "model_max_length", None)
    if limit is None or (current is not None and current <= limit):
        return tokenizer
    if name is not None:
        said = "no limit" if current is None or current >= VERY_LARGE_INTEGER else f"{current}"
        logger.warning(
            "the tokenizer of %s has model_max_length=%s (%s) but the model has %d positions; using and "
            "saving model_max_length=%d",
            name,
            current,
            said,
            limit,
            limit,
        )
    tokenizer.model_max_length = limit
    return tokenizer


def save_tokenizer_for_model(tokenizer, output_dir: str, config) -> None:
    """``tokenizer.save_pretrained(output_dir)`` with ``model_max_length`` fitted to ``config`` in the files only."""
    before = tokenizer.model_max_length
    try:
        fit_tokenizer_to_model(tokenizer, config)
        tokenizer.save_pretrained(output_dir)
    finally:
        tokenizer.model_max_length = before


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(
    texts, vocab_size: int = 8000, lowercase: bool = True, min_frequency: int = 1, model_max_length: int | None = None
):
    """Train a BERT-style WordPiece tokenizer (``##`` continuation pieces) on ``texts``, the same vocabulary every run
    (huggingface/tokenizers#1794: docs/design.md, "utils/tokenizers.py: a deterministic vocabulary").

    Args:
        texts: an iterable of strings, or a zero-argument callable returning a fresh one (read twice: alphabet, then
            training; a one-shot iterator is read into memory first).
        vocab_size: target size including the 5 special tokens (can come out smaller for a small corpus).
        lowercase: uncased BERT (lower-case and strip accents), as ``bert-base-uncased``.
        min_frequency: minimum pair frequency for a merge.
        model_max_length: the model's positions; ``None`` leaves ``1e30`` until :func:`fit_tokenizer_to_model`.

    Returns:
        A ``BertTokenizerFast`` with ``[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4`` and the ``[CLS] A [SEP] B [SEP]``
        post-processor (``token_type_ids`` 0 for A, 1 for B).
    """
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from tokenizers.trainers import WordPieceTrainer
    from transformers import BertTokenizerFast

    if not callable(texts) and iter(texts) is texts:
        texts = list(texts)  # a one-shot iterator
    fresh = texts if callable(texts) else lambda: texts
    normalizer = normalizers.BertNormalizer(lowercase=lowercase)  # cleans text, spaces CJK, accents follow lowercase
    raw = set(chain.from_iterable(fresh()))  # chain/map/filterfalse over C callables: no Python frame per character
    alphabet = sorted(set(filterfalse(str.isspace, "".join(map(normalizer.normalize_str, raw)))))

    trained = Tokenizer(WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    trained.normalizer, trained.pre_tokenizer = normalizer, pre_tokenizers.BertPreTokenizer()
    trained.train_from_iterator(
        fresh(),
        trainer=WordPieceTrainer(
            vocab_size=vocab_size,
            min_frequency=min_frequency,
            continuing_subword_prefix="##",
            special_tokens=SPECIAL_TOKENS + list(map("##".__add__, alphabet)),
        ),
    )
    tok = Tokenizer(WordPiece(vocab=trained.get_vocab(with_added_tokens=False)))  # [UNK], 100 chars, "##": defaults
    tok.normalizer, tok.pre_tokenizer = normalizer, pre_tokenizers.BertPreTokenizer()
    tok.add_special_tokens(SPECIAL_TOKENS)
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    limit = {"model_max_length": model_max_length} if model_max_length is not None else {}
    return BertTokenizerFast(tokenizer_object=tok, do_lower_case=lowercase, **limit)  # [UNK] [SEP] ...: its defaults


@dataclass(frozen=True)
class PairTemplate:
    """Where a tokenizer puts its special tokens around one segment or a pair, read from the tokenizer itself
    (:func:`pair_template`): BERT ``[CLS] A [SEP] B [SEP]`` (types 0 0 0 1 1), RoBERTa ``<s> A </s></s> B </s>``
    (no ``token_type_ids``). ``prefix``/``middle``/``suffix``: special-token ids before A, between A and B, after B;
    ``*_types``: their ``token_type_ids``; ``type_a``/``type_b``: the type id of A's and B's tokens; ``with_types``:
    whether the model takes ``token_type_ids`` (the tokenizer's ``model_input_names``)."""

    prefix: tuple[int, ...]
    middle: tuple[int, ...]
    suffix: tuple[int, ...]
    prefix_types: tuple[int, ...]
    middle_types: tuple[int, ...]
    suffix_types: tuple[int, ...]
    type_a: int
    type_b: int
    with_types: bool
    #: special tokens a pair adds (BERT 3, RoBERTa 4): counted once, read per batch
    n_special: int = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "n_special", len(self.prefix) + len(self.middle) + len(self.suffix))

    def build(self, a: list[int], b: list[int]) -> dict[str, list[int]]:
        """``input_ids``, ``attention_mask`` (and ``token_type_ids`` when :attr:`with_types`) of the pair ``a``, ``b``
        (token ids without special tokens, already truncated)."""
        ids = [*self.prefix, *a, *self.middle, *b, *self.suffix]
        out = {"input_ids": ids, "attention_mask": [1] * len(ids)}
        if self.with_types:
            out["token_type_ids"] = [
                *self.prefix_types,
                *[self.type_a] * len(a),
                *self.middle_types,
                *[self.type_b] * len(b),
                *self.suffix_types,
            ]
        return out

    def build_batch(self, pairs) -> dict[str, list[list[int]]]:
        """:meth:`build` of every ``(a, b)`` of ``pairs`` in one call (a dataset map's batch): ``input_ids``,
        ``attention_mask`` (and ``token_type_ids`` when :attr:`with_types`), one list per pair."""
        keys = (
            ("input_ids", "token_type_ids", "attention_mask") if self.with_types else ("input_ids", "attention_mask")
        )
        out: dict[str, list] = {k: [] for k in keys}
        for a, b in pairs:
            for key, value in self.build(a, b).items():
                out[key].append(value)
        return out


def pair_template(tokenizer) -> PairTemplate:
    """The :class:`PairTemplate` of a fast ``tokenizer``: one pair encoded by the tokenizer (its post-processor adds
    the special tokens), split by the encoding's ``sequence_ids`` (``None`` = special token). Raises ``ValueError``
    for a slow tokenizer (no ``sequence_ids``) or one whose pair encoding does not keep A before B."""
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{type(tokenizer).__name__} is not a fast tokenizer; pair features need one (use_fast=True)")
    enc = tokenizer("a", "b", return_token_type_ids=True)
    ids, types, seq = enc["input_ids"], enc["token_type_ids"], enc.sequence_ids(0)
    a_at = [i for i, s in enumerate(seq) if s == 0]
    b_at = [i for i, s in enumerate(seq) if s == 1]
    if not a_at or not b_at or a_at[-1] >= b_at[0]:
        raise ValueError(f"{type(tokenizer).__name__}: its pair encoding {seq} does not put segment A before B")

    def part(lo, hi):
        return tuple(ids[lo:hi]), tuple(types[lo:hi])

    (prefix, prefix_types), (middle, middle_types) = part(0, a_at[0]), part(a_at[-1] + 1, b_at[0])
    suffix, suffix_types = part(b_at[-1] + 1, len(ids))
    return PairTemplate(
        prefix,
        middle,
        suffix,
        prefix_types,
        middle_types,
        suffix_types,
        types[a_at[0]],
        types[b_at[0]],
        "token_type_ids" in getattr(tokenizer, "model_input_names", ()),
    )
