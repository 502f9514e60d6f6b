"""Training a BERT WordPiece vocabulary locally with the ``tokenizers`` library.

Trap in transformers 5 (see docs/design.md): ``BertTokenizerFast(vocab_file=...)`` silently ignores the file; we wrap
the trained ``tokenizers.Tokenizer`` with ``BertTokenizerFast(tokenizer_object=...)`` instead.
"""

from __future__ import annotations

from typing import Iterable

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece_tokenizer(texts: Iterable[str], vocab_size: int = 8000, lowercase: bool = True, min_frequency: int = 1):
    """Train a BERT-style WordPiece tokenizer (``##`` continuation pieces) on ``texts``.

    Args:
        texts: an iterable of strings (sentences or lines).
        vocab_size: target vocabulary size including the 5 special tokens (the trained size can be smaller for a
            small corpus).
        lowercase: uncased BERT (lower-case and strip accents), as ``bert-base-uncased``.
        min_frequency: minimum pair frequency for a merge.

    Returns:
        A ``transformers.BertTokenizerFast`` with ``[PAD]=0, [UNK]=1, [CLS]=2, [SEP]=3, [MASK]=4`` and the
        ``[CLS] A [SEP] B [SEP]`` post-processor (``token_type_ids`` 0 for A, 1 for B).
    """
    from tokenizers import Tokenizer, decoders, normalizers, pre_tokenizers, processors
    from tokenizers.models import WordPiece
    from tokenizers.trainers import WordPieceTrainer
    from transformers import BertTokenizerFast

    tok = Tokenizer(WordPiece(unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(clean_text=True, handle_chinese_chars=True, strip_accents=None, lowercase=lowercase)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    trainer = WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=SPECIAL_TOKENS, continuing_subword_prefix="##"
    )
    tok.train_from_iterator(texts, trainer=trainer)
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS]:0 $A:0 [SEP]:0",
        pair="[CLS]:0 $A:0 [SEP]:0 $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    tok.decoder = decoders.WordPiece(prefix="##")
    return BertTokenizerFast(
        tokenizer_object=tok, do_lower_case=lowercase,
        unk_token="[UNK]", sep_token="[SEP]", pad_token="[PAD]", cls_token="[CLS]", mask_token="[MASK]",
    )
