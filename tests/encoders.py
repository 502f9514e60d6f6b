"""Tiny encoders of every architecture the package serves, built in code (issue 56 item 5): BERT, RoBERTa, ELECTRA,
ModernBERT and DeBERTa-v2, hidden 32, 2 layers, 2 heads, each saved with a tokenizer of its own kind.

Tokenizers: BERT and ELECTRA a WordPiece vocabulary trained on the package's sample texts (``[CLS] A [SEP] B [SEP]``,
``token_type_ids``); RoBERTa a byte-level BPE trained on the same texts (``<s> A </s></s> B </s>``, no
``token_type_ids``: ``RobertaTokenizer.model_input_names``, the model's ``type_vocab_size`` 1); ModernBERT the
WordPiece vocabulary without ``token_type_ids`` (as ``answerdotai/ModernBERT-base``'s tokenizer: its
``model_input_names`` are ``input_ids``, ``attention_mask``; the model's forward takes no ``token_type_ids``);
DeBERTa-v2 the WordPiece vocabulary with ``type_vocab_size`` 0 and relative attention (``microsoft/deberta-v3``'s
config: no token-type embedding, ``position_biased_input`` false), which supports no SDPA attention.
"""

from __future__ import annotations

import os

#: The architectures :func:`build_tiny_encoder` builds (``config.model_type`` values).
ARCHITECTURES = ("bert", "roberta", "electra", "modernbert", "deberta-v2")

SIZE = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
POSITIONS = 128


def wordpiece_tokenizer(texts):
    """A WordPiece tokenizer (BERT's special tokens) trained on ``texts``."""
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    return train_wordpiece_tokenizer(texts, vocab_size=1000)


def bpe_tokenizer(texts, folder: str):
    """A RoBERTa byte-level BPE tokenizer (``<s>``, ``<pad>``, ``</s>``, ``<unk>``, ``<mask>`` = ids 0-4) trained on
    ``texts``, its ``vocab.json`` / ``merges.txt`` written to ``folder``."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts, vocab_size=600, min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    )
    os.makedirs(folder, exist_ok=True)
    bpe.save_model(folder)
    return RobertaTokenizer.from_pretrained(folder)


def build_tiny_encoder(model_type: str, output_dir: str, texts, seed: int = 0) -> str:
    """Save a random ``<Arch>ForMaskedLM`` of ``model_type`` (one of :data:`ARCHITECTURES`; loadable with any
    ``AutoModelFor...``) and its tokenizer to ``output_dir``; returns ``output_dir``. ValueError for another type."""
    import torch
    from transformers import (
        AutoModelForMaskedLM,
        BertConfig,
        DebertaV2Config,
        ElectraConfig,
        ModernBertConfig,
        RobertaConfig,
    )

    if model_type == "roberta":
        tokenizer = bpe_tokenizer(texts, os.path.join(output_dir + "-bpe"))
    else:
        tokenizer = wordpiece_tokenizer(texts)
    ids = {"vocab_size": len(tokenizer), "pad_token_id": tokenizer.pad_token_id}
    if model_type == "bert":
        config = BertConfig(**SIZE, **ids, max_position_embeddings=POSITIONS)
    elif model_type == "electra":
        config = ElectraConfig(**SIZE, **ids, embedding_size=16, max_position_embeddings=POSITIONS)
    elif model_type == "roberta":
        ids.update(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
        config = RobertaConfig(**SIZE, **ids, type_vocab_size=1, max_position_embeddings=POSITIONS + 2)
    elif model_type == "modernbert":
        tokenizer.model_input_names = ["input_ids", "attention_mask"]
        ids.update(
            cls_token_id=tokenizer.cls_token_id,
            sep_token_id=tokenizer.sep_token_id,
            bos_token_id=tokenizer.cls_token_id,
            eos_token_id=tokenizer.sep_token_id,
        )
        config = ModernBertConfig(
            **SIZE, **ids, max_position_embeddings=POSITIONS, local_attention=16, global_attn_every_n_layers=2
        )
    elif model_type == "deberta-v2":
        config = DebertaV2Config(
            **SIZE,
            **ids,
            max_position_embeddings=POSITIONS,
            type_vocab_size=0,
            relative_attention=True,
            position_buckets=32,
            pos_att_type=["p2c", "c2p"],
            position_biased_input=False,
            norm_rel_ebd="layer_norm",
            share_att_key=True,
        )
    else:
        raise ValueError(f"build_tiny_encoder: model_type {model_type!r} is not one of {ARCHITECTURES}")
    torch.manual_seed(seed)
    AutoModelForMaskedLM.from_config(config).save_pretrained(output_dir)
    tokenizer.model_max_length = POSITIONS
    tokenizer.save_pretrained(output_dir)
    return output_dir
