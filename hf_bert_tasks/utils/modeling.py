"""BERT sizes and the locally built tiny checkpoints of the quickstart and the tests. ``base`` is the paper's BERT-BASE
(§3: L=12, H=768, A=12); the small ones follow Turc et al. (2019, "Well-Read Students Learn Better")'s names."""

from __future__ import annotations

#: preset name -> BertConfig sizes (L = num_hidden_layers, H = hidden_size, A = num_attention_heads, 4H feed-forward).
BERT_PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"num_hidden_layers": 2, "hidden_size": 128, "num_attention_heads": 2, "intermediate_size": 512},
    "mini": {"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4, "intermediate_size": 1024},
    "small": {"num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8, "intermediate_size": 2048},
    "base": {"num_hidden_layers": 12, "hidden_size": 768, "num_attention_heads": 12, "intermediate_size": 3072},
}

#: fine-tuning learning rate of a small BERT (hidden size <= :data:`SMALL_HIDDEN`), measured for the ``tiny`` preset:
#: SST-2 from the README's pretrained tiny model 77.0 % at 1e-3 against 51.6 % at the task's default (issue 54); the
#: CPU learning-rate curve of docs/design.md (random tiny arms mostly select 1e-3 of {3e-4, 1e-3, 3e-3, 1e-2})
SMALL_MODEL_LEARNING_RATE = 1e-3
SMALL_HIDDEN = 256


def suggested_learning_rate(hidden_size: int) -> float | None:
    """The fine-tuning learning rate a BERT of ``hidden_size`` learns with: :data:`SMALL_MODEL_LEARNING_RATE` for a
    small one (hidden <= :data:`SMALL_HIDDEN`: ``tiny``, ``mini``), ``None`` for larger ones (the paper's grid,
    5e-5..2e-5, §4 / Appendix A.3, is for BERT-BASE and larger)."""
    return SMALL_MODEL_LEARNING_RATE if hidden_size <= SMALL_HIDDEN else None


def bert_config(preset: str = "tiny", vocab_size: int = 30522, max_position_embeddings: int = 512, **overrides):
    """A ``BertConfig`` for ``preset`` (:data:`BERT_PRESETS`), ``overrides`` applied last. Raises ``ValueError`` for an
    unknown preset."""
    from transformers import BertConfig

    if preset not in BERT_PRESETS:
        raise ValueError(f"unknown BERT preset {preset!r}; known presets: {', '.join(BERT_PRESETS)}")
    return BertConfig(
        **{
            **BERT_PRESETS[preset],
            "vocab_size": vocab_size,
            "max_position_embeddings": max_position_embeddings,
            **overrides,
        }
    )


def build_random_bert(output_dir: str, tokenizer, preset: str = "tiny", seed: int = 0, **overrides) -> str:
    """Save a randomly initialised ``BertForPreTraining`` (loadable with any ``AutoModelFor...``) and ``tokenizer``
    (saved ``model_max_length`` = the model's positions) to ``output_dir``; returns ``output_dir``."""
    import torch
    from transformers import BertForPreTraining

    from .tokenizers import save_tokenizer_for_model

    config = bert_config(preset, vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **overrides)
    torch.manual_seed(seed)
    BertForPreTraining(config).save_pretrained(output_dir)
    save_tokenizer_for_model(tokenizer, output_dir, config)
    return output_dir
