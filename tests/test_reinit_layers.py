"""``--reinit_pooler`` / ``--reinit_layers N`` (Zhang et al. 2021, §5): the pooler / the top N encoder layers are
re-initialised before fine-tuning."""

import pytest
import torch
from transformers import BertForSequenceClassification

from hf_bert_tasks import get_task
from hf_bert_tasks.finetune.args import ModelArguments
from hf_bert_tasks.finetune.config import finetune_arguments_class
from hf_bert_tasks.finetune.recipe import build_model


def _saved(tiny_bert_dir):
    return BertForSequenceClassification.from_pretrained(tiny_bert_dir).state_dict()


def test_reinit_1_changes_pooler_and_top_layer_only(tiny_bert_dir):
    saved = _saved(tiny_bert_dir)
    torch.manual_seed(0)
    model = build_model(
        get_task("sst2"), ModelArguments(model_name_or_path=tiny_bert_dir, reinit_layers=1, reinit_pooler=True)
    )
    state = model.state_dict()
    # the checkpoint's layer 0 and embeddings come back bit for bit (a copy of the same tensors)
    for key in ("bert.embeddings.word_embeddings.weight", "bert.encoder.layer.0.attention.self.query.weight"):
        assert torch.equal(state[key], saved[key]), key
    for key in (
        "bert.encoder.layer.1.attention.self.query.weight",
        "bert.encoder.layer.1.output.dense.weight",
        "bert.pooler.dense.weight",
    ):
        assert not torch.equal(state[key], saved[key]), key
    # BERT's init: normal(0, initializer_range = 0.02) weights; 32x32 = 1024 draws, so the sample std is within 10 %
    std = state["bert.pooler.dense.weight"].std().item()
    assert 0.018 < std < 0.022, std
    assert torch.equal(state["bert.pooler.dense.bias"], torch.zeros(32))


def test_reinit_pooler_alone_keeps_every_layer(tiny_bert_dir):
    saved = _saved(tiny_bert_dir)
    state = build_model(
        get_task("sst2"), ModelArguments(model_name_or_path=tiny_bert_dir, reinit_pooler=True)
    ).state_dict()
    assert not torch.equal(state["bert.pooler.dense.weight"], saved["bert.pooler.dense.weight"])
    for key, value in state.items():
        if key.startswith("bert.") and "pooler" not in key:
            assert torch.equal(value, saved[key]), key


def test_reinit_0_keeps_every_encoder_tensor(tiny_bert_dir):
    saved = _saved(tiny_bert_dir)
    state = build_model(get_task("sst2"), ModelArguments(model_name_or_path=tiny_bert_dir)).state_dict()
    for key, value in state.items():
        if key.startswith("bert."):
            assert torch.equal(value, saved[key]), key


def test_reinit_more_layers_than_the_model_has_is_an_error(tiny_bert_dir):
    with pytest.raises(ValueError, match=r"--reinit_layers 3: expected 0 <= N <= 2"):
        build_model(get_task("sst2"), ModelArguments(model_name_or_path=tiny_bert_dir, reinit_layers=3))


def test_reinit_with_lora_is_an_error(tiny_bert_dir, tmp_path):
    args = finetune_arguments_class("lora")(output_dir=str(tmp_path), mode="lora", report_to="none")
    with pytest.raises(ValueError, match="--reinit_layers/--reinit_pooler .* --mode lora"):
        build_model(get_task("sst2"), ModelArguments(model_name_or_path=tiny_bert_dir, reinit_layers=1), args)
