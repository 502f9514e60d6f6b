"""Feature-based mode: layer strategies, heads, gradients, the feature cache, save/load (paper §5.3, Table 7)."""

import json
import os

import numpy as np
import pytest
import torch

from hf_bert_tasks.modes.feature_based.mode import (
    STRATEGIES,
    BertFeatureBasedConfig,
    BertFeatureBasedModel,
    FeatureCacheCollator,
    LayerCombiner,
    ScalarMix,
    build_feature_cache,
    get_strategy,
)
from tests.conftest import REPO, tiny_run_argv

L, H = 4, 8  # a 4-layer, hidden-8 encoder: hidden_states has 5 entries (index 0 = embeddings)


def encoder_config(**kw):
    from transformers import BertConfig

    cfg = {
        "vocab_size": 40,
        "hidden_size": H,
        "num_hidden_layers": L,
        "num_attention_heads": 2,
        "intermediate_size": 16,
        "max_position_embeddings": 64,
        "hidden_dropout_prob": 0.0,
        "attention_probs_dropout_prob": 0.0,
    }
    cfg.update(kw)
    return BertConfig(**cfg).to_dict()


def make_model(problem_type="single_label_classification", strategy="concat_last_four", seed=0, **kw):
    torch.manual_seed(seed)
    kw.setdefault("num_labels", 3)
    config = BertFeatureBasedConfig(
        encoder_config=encoder_config(),
        task_problem_type=problem_type,
        feature_strategy=strategy,
        head_hidden_size=6,
        **kw,
    )
    return BertFeatureBasedModel(config).eval()


IDS = torch.tensor([[2, 5, 7, 9, 3, 0], [2, 6, 8, 3, 0, 0]])
MASK = (IDS != 0).long()


def hidden_states(model):
    with torch.no_grad():
        return model.encoder(input_ids=IDS, attention_mask=MASK, output_hidden_states=True).hidden_states


# ------------------------------------------------------------------------------------------- strategies
def test_strategy_layers_for_a_12_layer_encoder():
    got = {name: s.layers(12) for name, s in STRATEGIES.items()}
    assert got == {
        "embeddings": [0],
        "second_to_last": [11],
        "last": [12],
        "sum_last_four": [9, 10, 11, 12],
        "concat_last_four": [9, 10, 11, 12],
        "sum_all": list(range(1, 13)),
        "scalar_mix": list(range(13)),
    }


def test_strategies_carry_the_papers_table7_numbers():
    assert {n: s.paper_f1 for n, s in STRATEGIES.items()} == {
        "embeddings": 91.0,
        "second_to_last": 95.6,
        "last": 94.9,
        "sum_last_four": 95.9,
        "concat_last_four": 96.1,
        "sum_all": 95.5,
        "scalar_mix": None,
    }


def test_unknown_strategy_is_a_value_error():
    with pytest.raises(ValueError, match="unknown feature strategy 'top'"):
        get_strategy("top")


def test_combiner_exact_values_on_a_literal_stack():
    stacked = torch.tensor([[[1.0, 2.0], [10.0, 20.0], [100.0, 200.0]]])  # [1, 3 layers, 2]
    assert LayerCombiner("last", 2)(stacked, [0, 1, 2]).tolist() == [[100.0, 200.0]]
    assert LayerCombiner("second_to_last", 2)(stacked, [0, 1, 2]).tolist() == [[10.0, 20.0]]
    assert LayerCombiner("embeddings", 2)(stacked, [0, 1, 2]).tolist() == [[1.0, 2.0]]
    assert LayerCombiner("sum_all", 2)(stacked, [0, 1, 2]).tolist() == [[110.0, 220.0]]
    assert LayerCombiner("concat_last_four", 2)(stacked, [0, 1, 2]).tolist() == [[1.0, 2.0, 10.0, 20.0, 100.0, 200.0]]
    mixed = LayerCombiner("scalar_mix", 2)(stacked, [0, 1, 2])
    assert mixed.tolist() == [pytest.approx([37.0, 74.0])]  # equal weights 1/3, gamma 1


def test_scalar_mix_is_softmax_weighted_and_scaled():
    mix = ScalarMix(2)
    with torch.no_grad():
        mix.weights.copy_(torch.tensor([0.0, torch.log(torch.tensor(3.0))]))  # softmax -> [0.25, 0.75]
        mix.gamma.fill_(2.0)
    out = mix(torch.tensor([[4.0], [8.0]]))
    assert out.tolist() == pytest.approx([2.0 * (0.25 * 4.0 + 0.75 * 8.0)])


def test_combiner_names_a_missing_layer():
    with pytest.raises(ValueError, match=r"needs hidden_states \[4\]"):
        LayerCombiner("last", 4)(torch.zeros(1, 2, 3), [2, 3])


@pytest.mark.parametrize("name", list(STRATEGIES))
def test_each_strategy_on_a_tiny_model_matches_hidden_states(name):
    model = make_model("token_classification", name, head="linear")
    hs = hidden_states(model)
    rows, _mask = model.encode(IDS, MASK)
    got = model.combiner(rows, model.combiner.layers)
    expected = {
        "embeddings": hs[0],
        "second_to_last": hs[3],
        "last": hs[4],
        "sum_last_four": hs[1] + hs[2] + hs[3] + hs[4],
        "concat_last_four": torch.cat(hs[1:5], dim=-1),
        "sum_all": hs[1] + hs[2] + hs[3] + hs[4],
        "scalar_mix": sum(hs) / 5,
    }[name]
    assert got.shape == (2, 6, 4 * H if name == "concat_last_four" else H)
    assert torch.allclose(got, expected, atol=1e-6)


def test_pooled_rows_are_cls_and_masked_mean():
    model = make_model("single_label_classification", "last")
    hs = hidden_states(model)
    rows, mask = model.encode(IDS, MASK)
    assert rows.shape == (2, 2, 1, H) and mask.all()
    assert torch.allclose(rows[1, 0, 0], hs[4][1, 0])
    assert torch.allclose(rows[1, 1, 0], hs[4][1, :4].mean(0), atol=1e-6)


# ------------------------------------------------------------------------------------------------ heads
def test_token_head_output_does_not_depend_on_padding():
    model = make_model("token_classification", "last", num_labels=4)
    short = model(input_ids=IDS[1:, :4], attention_mask=MASK[1:, :4]).logits
    padded = model(input_ids=IDS[1:], attention_mask=MASK[1:]).logits
    assert torch.allclose(short[0], padded[0, :4], atol=1e-6)


def test_question_answering_head_masks_padding_and_takes_positions():
    model = make_model("question_answering", "last")
    out = model(
        input_ids=IDS, attention_mask=MASK, start_positions=torch.tensor([1, 2]), end_positions=torch.tensor([2, 2])
    )
    assert out.start_logits.shape == (2, 6) and out.end_logits.shape == (2, 6)
    assert out.start_logits[1, 4:].tolist() == [-1e4, -1e4]
    assert torch.isfinite(out.loss)


def test_multiple_choice_head_scores_each_choice():
    model = make_model("multiple_choice", "concat_last_four")
    ids = torch.stack([IDS, IDS.flip(0)])  # [2 examples, 2 choices, 6]
    out = model(input_ids=ids, attention_mask=(ids != 0).long(), labels=torch.tensor([0, 1]))
    assert out.logits.shape == (2, 2)
    assert torch.allclose(out.logits[0], out.logits[1].flip(0), atol=1e-6)


def test_regression_head_has_one_output():
    model = make_model("regression", "last", num_labels=1)
    out = model(input_ids=IDS, attention_mask=MASK, labels=torch.tensor([0.5, 4.0]))
    assert out.logits.shape == (2, 1) and torch.isfinite(out.loss)


def test_bilstm_head_is_rejected_for_sentence_tasks():
    with pytest.raises(ValueError, match="does not fit a sentence-level task"):
        make_model("single_label_classification", "last", head="bilstm")


# ------------------------------------------------------------------------------------------- gradients
@pytest.mark.parametrize("checkpointing", [False, True])
@pytest.mark.parametrize("problem_type", ["token_classification", "single_label_classification"])
def test_only_head_and_mix_get_gradients(problem_type, checkpointing):
    model = make_model(problem_type, "scalar_mix", num_labels=3)
    if checkpointing:
        enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
        enable()
        assert getattr(model, "is_activation_checkpointing", None) or model.is_gradient_checkpointing
    model.train()
    labels = (
        torch.tensor([[0, 1, 2, 1, 0, -100], [1, 1, 0, -100, -100, -100]])
        if problem_type == "token_classification"
        else torch.tensor([0, 2])
    )
    model(input_ids=IDS, attention_mask=MASK, labels=labels).loss.backward()
    for name, p in model.named_parameters():
        if name.startswith("encoder."):
            assert not p.requires_grad and p.grad is None, name
        else:
            assert p.requires_grad and p.grad is not None and p.grad.abs().sum() > 0, name
    assert not model.encoder.training  # the frozen encoder never uses dropout


# ------------------------------------------------------------------------------------------------ cache
def token_features(labels_offset=0):
    import datasets

    return datasets.Dataset.from_dict(
        {
            "input_ids": [[2, 5, 7, 9, 3], [2, 6, 8, 3], [2, 5, 3]],
            "attention_mask": [[1] * 5, [1] * 4, [1] * 3],
            "labels": [[-100, 1, 2, 0, -100], [-100, 0, 1 + labels_offset, -100], [-100, 2, -100]],
            "word_index": [[-1, 0, 1, 2, -1], [-1, 0, 1, -1], [-1, 0, -1]],
        }
    )


def token_collator():
    from transformers import DataCollatorForTokenClassification

    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    tok = train_wordpiece_tokenizer(["a b c d e f g h"], vocab_size=40)
    return DataCollatorForTokenClassification(tok)


@pytest.fixture(scope="module")
def collator():
    return token_collator()


def cache_collator(model, layers, dtype="float32", fallback=None):
    return FeatureCacheCollator(layers, model.layers, H, dtype=dtype, fallback=fallback)


def test_cache_miss_then_hit(tmp_path, collator):
    model = make_model("token_classification", "last")
    cache, layers, hit = build_feature_cache(model, token_features(), collator, str(tmp_path), 16, dtype="float32")
    assert not hit and len(cache) == 3 and layers == [4]
    again, _, hit2 = build_feature_cache(model, token_features(), collator, str(tmp_path), 16, dtype="float32")
    assert hit2 and again.cache_files == cache.cache_files


def test_cache_is_a_memory_mapped_arrow_file_with_lengths_and_unpadded_labels(tmp_path, collator):
    model = make_model("token_classification", "last")
    cache, _, _ = build_feature_cache(model, token_features(), collator, str(tmp_path), 16)
    assert cache.cache_files[0]["filename"].endswith(".arrow")
    assert cache.column_names == ["labels", "features", "length"] or set(cache.column_names) == {
        "labels",
        "features",
        "length",
    }
    assert cache["length"][:] == [5, 4, 3]
    assert cache["labels"][:] == [[-100, 1, 2, 0, -100], [-100, 0, 1, -100], [-100, 2, -100]]
    assert len(cache[1]["features"]) == 4 * 1 * H * 2  # 4 rows x 1 layer x hidden 8, float16 (2 bytes)


def test_collator_pads_cached_rows_equal_to_the_encoder_output(tmp_path, collator):
    model = make_model("token_classification", "last")
    cache, layers, _ = build_feature_cache(model, token_features(), collator, str(tmp_path), 16, dtype="float32")
    batch = cache_collator(model, layers)([cache[i] for i in range(3)])
    rows, _ = model.encode(torch.tensor([[2, 6, 8, 3]]), torch.tensor([[1, 1, 1, 1]]))
    assert batch["features"].shape == (3, 5, 1, H)
    # float32 cache: same kernels and inputs in one process, but the encoder ran on a batch padded to 5 there
    torch.testing.assert_close(batch["features"][1, :4], rows[0], atol=1e-6, rtol=1e-5)
    assert batch["features"][1, 4].abs().sum() == 0  # padding row
    assert batch["attention_mask"].tolist() == [[1, 1, 1, 1, 1], [1, 1, 1, 1, 0], [1, 1, 1, 0, 0]]
    assert batch["labels"].tolist() == [[-100, 1, 2, 0, -100], [-100, 0, 1, -100, -100], [-100, 2, -100, -100, -100]]


def test_collator_picks_the_models_layers_from_a_cache_of_all_layers():
    feats = np.arange(2 * 3 * 2, dtype=np.float16).reshape(2, 3, 2)  # 2 rows, cached layers [0, 2, 4], hidden 2
    coll = FeatureCacheCollator([0, 2, 4], [4, 2], 2)
    batch = coll([{"features": feats.tobytes(), "length": 2, "label": 1}])
    assert batch["features"][0].tolist() == [[[4.0, 5.0], [2.0, 3.0]], [[10.0, 11.0], [8.0, 9.0]]]
    assert batch["labels"].tolist() == [1]


def test_collator_hands_token_batches_to_the_fallback(collator):
    model = make_model("token_classification", "last")
    batch = cache_collator(model, [4], fallback=collator)([{"input_ids": [2, 5, 3], "labels": [-100, 1, -100]}])
    assert batch["input_ids"].tolist() == [[2, 5, 3]]


@pytest.mark.parametrize("change", ["data", "weights", "max_length"])
def test_cache_is_invalidated_by_a_changed_input(tmp_path, collator, change):
    model = make_model("token_classification", "last")
    first, _, _ = build_feature_cache(model, token_features(), collator, str(tmp_path), 16, dtype="float32")
    data, max_len = token_features(), 16
    if change == "data":
        data = token_features(labels_offset=1)
    elif change == "weights":
        with torch.no_grad():
            model.encoder.embeddings.word_embeddings.weight[5, 0] += 1.0
    else:
        max_len = 32
    second, _, hit = build_feature_cache(model, data, collator, str(tmp_path), max_len, dtype="float32")
    assert not hit and second.cache_files != first.cache_files


def test_fingerprints_do_not_depend_on_the_process(tmp_path):
    """The cache key must be equal in another process (a second run, another torchrun rank)."""
    import subprocess
    import sys

    code = (
        "import datasets, torch; from transformers import BertConfig, BertModel;"
        "from hf_bert_tasks.modes.feature_based.mode import data_fingerprint, encoder_fingerprint;"
        "torch.manual_seed(0); m = BertModel(BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1,"
        " num_attention_heads=2, intermediate_size=16));"
        "d = datasets.Dataset.from_dict({'input_ids': [[2, 5, 3], [2, 6, 7, 3]]});"
        "print(encoder_fingerprint(m), data_fingerprint(d, ['input_ids']))"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO, os.environ.get("PYTHONPATH", "")]))
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    import datasets
    from transformers import BertConfig, BertModel

    from hf_bert_tasks.modes.feature_based.mode import data_fingerprint, encoder_fingerprint

    torch.manual_seed(0)  # the same model and data as in the subprocess
    m = BertModel(
        BertConfig(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16)
    )
    d = datasets.Dataset.from_dict({"input_ids": [[2, 5, 3], [2, 6, 7, 3]]})
    assert other.split() == [encoder_fingerprint(m), data_fingerprint(d, ["input_ids"])]


def test_cache_with_all_layers_serves_every_strategy(tmp_path, collator):
    model = make_model("token_classification", "last")
    build_feature_cache(model, token_features(), collator, str(tmp_path), 16, layers=list(range(L + 1)))
    other = make_model("token_classification", "sum_last_four")
    other.encoder.load_state_dict(model.encoder.state_dict())
    _, layers, hit = build_feature_cache(other, token_features(), collator, str(tmp_path), 16)
    assert hit and layers == [0, 1, 2, 3, 4]


def test_a_temporary_file_of_an_interrupted_write_is_never_used(tmp_path, collator):
    model = make_model("token_classification", "last")
    cache, _, _ = build_feature_cache(model, token_features(), collator, str(tmp_path), 16)
    path = cache.cache_files[0]["filename"]
    del cache
    os.replace(path, os.path.join(os.path.dirname(path), "tmpabc123"))  # as Dataset.map leaves a crashed write
    _, _, hit = build_feature_cache(model, token_features(), collator, str(tmp_path), 16)
    assert not hit


def test_trainer_trains_the_head_on_the_cache_and_the_model_predicts_the_same_end_to_end(tmp_path, collator):
    from transformers import Trainer, TrainingArguments

    model = make_model("token_classification", "concat_last_four", num_labels=3)
    cache, layers, _ = build_feature_cache(model, token_features(), collator, str(tmp_path), 16, dtype="float32")
    args = TrainingArguments(
        output_dir=str(tmp_path / "out"),
        max_steps=3,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
    )
    before = [p.detach().clone() for p in model.head.parameters()]
    trainer = Trainer(model=model, args=args, train_dataset=cache, data_collator=cache_collator(model, layers))
    assert trainer.train().global_step == 3
    assert any(not torch.equal(a, b) for a, b in zip(before, model.head.parameters()))
    model.eval()
    batch = cache_collator(model, layers)([cache[i] for i in range(3)])
    from_cache = model(**{k: batch[k] for k in ("features", "attention_mask")}).logits
    direct = model(input_ids=torch.tensor([[2, 6, 8, 3]]), attention_mask=torch.ones(1, 4, dtype=torch.long)).logits
    # float32 cache; the encoder saw the row padded to 5 tokens when the cache was built: float rounding only
    torch.testing.assert_close(from_cache[1, :4], direct[0], atol=1e-5, rtol=1e-5)


# ----------------------------------------------------------------------------------------- save / load
@pytest.mark.parametrize("auto_class", ["AutoModel", "AutoModelForTokenClassification"])
def test_saved_model_loads_with_auto_classes_and_predicts_identically(tmp_path, auto_class):
    import transformers

    model = make_model("token_classification", "scalar_mix", num_labels=3)
    with torch.no_grad():
        model.combiner.mix.weights.copy_(torch.tensor([0.1, 0.2, 0.3, 0.4, 0.5]))
    model.save_pretrained(tmp_path)
    loaded = getattr(transformers, auto_class).from_pretrained(tmp_path).eval()
    assert type(loaded) is BertFeatureBasedModel
    for name, tensor in model.state_dict().items():  # the weights are copied bit for bit ...
        assert torch.equal(loaded.state_dict()[name], tensor), name
    # ... but the outputs only to float32 rounding: the reloaded tensors sit at other addresses, and BLAS picks
    # alignment-dependent kernels (4.7e-10 apart with OMP_NUM_THREADS=1 on an AMD EPYC). Default float32 tolerance.
    torch.testing.assert_close(
        loaded(input_ids=IDS, attention_mask=MASK).logits,
        model(input_ids=IDS, attention_mask=MASK).logits,
        rtol=1.3e-6,
        atol=1e-5,
    )
    assert all(not p.requires_grad for p in loaded.encoder.parameters())


def test_from_encoder_keeps_the_pretrained_weights(tiny_bert_dir):
    from transformers import AutoModel

    model = BertFeatureBasedModel.from_encoder(tiny_bert_dir, "single_label_classification", "last", num_labels=2)
    ref = AutoModel.from_pretrained(tiny_bert_dir)
    for name, tensor in ref.state_dict().items():
        assert torch.equal(model.encoder.state_dict()[name], tensor), name


# ------------------------------------------------------------------------------------------- the recipe
def dev_f1(out, n: int) -> float:
    """Binary F1 of the model saved in ``out`` on the first ``n`` pairs of the MRPC sample's dev.tsv, recomputed with
    scikit-learn outside the recipe."""
    from sklearn.metrics import f1_score

    from tests.conftest import SAMPLES, predict_labels

    with open(os.path.join(SAMPLES, "MRPC", "dev.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1 : n + 1]]
    predicted = predict_labels(str(out), [(r[3], r[4]) for r in rows])
    return f1_score([int(r[0]) for r in rows], predicted, zero_division=0.0)


def test_recipe_feature_based_on_the_mrpc_sample_reuses_the_cache(tmp_path, tiny_bert_dir):
    from hf_bert_tasks.finetune import recipe as finetune

    flags = ["--mode", "feature_based", "--feature_strategy", "last", "--do_train", "--do_eval"]
    flags += ["--feature_cache_dir", str(tmp_path / "cache")]
    sizes = {"num_train_epochs": 2, "max_train_samples": 64, "max_eval_samples": 32}
    first = finetune.main(tiny_run_argv("mrpc", tiny_bert_dir, tmp_path / "a", *flags, **sizes))
    second = finetune.main(tiny_run_argv("mrpc", tiny_bert_dir, tmp_path / "b", *flags, **sizes))
    assert first["feature_cache_hit"] is False and second["feature_cache_hit"] is True
    # the same cached rows, seed and head training: the same dev results (floats to rounding, see the save/load test)
    assert second["eval_f1"] == first["eval_f1"] and second["eval_loss"] == pytest.approx(first["eval_loss"], rel=1e-5)
    assert second["eval_f1"] == pytest.approx(dev_f1(tmp_path / "b", 32))
    with open(tmp_path / "a" / "config.json") as f:
        assert json.load(f)["model_type"] == "bert_feature_based"


def test_bad_mode_is_a_value_error(tmp_path):
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    with pytest.raises(ValueError, match="--mode 'frozen'"):
        FinetuneTrainingArguments(output_dir=str(tmp_path), mode="frozen")


def test_recipe_without_cache_trains_the_head_with_trainer_and_serves_a_pipeline(tmp_path, tiny_bert_dir):
    from transformers import pipeline

    from hf_bert_tasks.finetune import recipe as finetune

    out = tmp_path / "nocache"
    metrics = finetune.main(
        tiny_run_argv(
            "mrpc",
            tiny_bert_dir,
            out,
            "--mode",
            "feature_based",
            "--feature_cache",
            "false",
            "--head",
            "mlp",
            "--pooling",
            "mean",
            "--feature_strategy",
            "sum_all",
            "--do_train",
            "--do_eval",
            num_train_epochs=1,
            max_train_samples=16,
            max_eval_samples=8,
        )
    )
    assert "feature_cache_hit" not in metrics
    assert metrics["eval_f1"] == pytest.approx(dev_f1(out, 8))  # the saved model's F1 on the 8 dev pairs
    assert not (tmp_path / "feature_cache").exists()
    pred = pipeline("text-classification", model=str(out))({"text": "the cat sat", "text_pair": "a cat sat"})
    assert pred["label"] in ("equivalent", "not_equivalent")
