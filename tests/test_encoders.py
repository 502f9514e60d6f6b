"""Any encoder (issue 56 item 5): tiny BERT, RoBERTa, ELECTRA, ModernBERT and DeBERTa-v2 (:mod:`tests.encoders`)
fine-tune every task family (GLUE MRPC, SQuAD v1.1, SWAG, CoNLL-2003) through the recipe, LoRA on MRPC and the
feature-based head on CoNLL-2003, 2 steps each, the run ending with its metrics; the pieces that made them work are
checked against independent sources: the tokenizer's own pair encoding, transformers' attention-support flags, the
layer names of the modeling files.

Each tiny model is built once per session. Data: MRPC's bundled sample (8 train / 8 dev examples used), the other
families the contract test's tiny literal files (:func:`tests.test_contract_task_mode.write_tiny_data`).
"""

from __future__ import annotations

import json
import math

import pytest

from tests.conftest import tiny_run_argv
from tests.encoders import ARCHITECTURES, build_tiny_encoder

FAMILIES = ("mrpc", "squad_v1", "swag", "conll2003")
STEPS = [
    "--max_steps",
    "2",
    "--per_device_train_batch_size",
    "4",
    "--per_device_eval_batch_size",
    "8",
    "--max_train_samples",
    "8",
    "--max_eval_samples",
    "8",
    "--max_seq_length",
    "48",
    "--max_query_length",
    "16",
    "--doc_stride",
    "16",
    "--learning_rate",
    "1e-3",
    "--eval_strategy",
    "no",
    "--disable_tqdm",
    "true",
    "--no_cache_tokenized",
    "--seed",
    "0",
]


@pytest.fixture(scope="session")
def encoders(tmp_path_factory):
    """``{model_type: folder}`` of the five tiny encoders, built on first use (once per session)."""
    from hf_bert_tasks.utils.resources import sample_texts

    root, texts, built = tmp_path_factory.mktemp("encoders"), list(sample_texts()), {}

    def get(model_type: str) -> str:
        if model_type not in built:
            built[model_type] = build_tiny_encoder(model_type, str(root / model_type), texts)
        return built[model_type]

    return get


@pytest.fixture(scope="module")
def family_data(tmp_path_factory):
    """``{task: data folder}``: MRPC's bundled sample (``None``: :func:`tiny_run_argv`'s default), else tiny files."""
    from hf_bert_tasks.tasks import TASK_REGISTRY
    from tests.test_contract_task_mode import write_tiny_data

    root = tmp_path_factory.mktemp("encoder-data")
    return {name: None if name == "mrpc" else write_tiny_data(TASK_REGISTRY[name], root / name) for name in FAMILIES}


@pytest.fixture(scope="module", autouse=True)
def _frozen_heap():
    """Speed only, as in test_contract_task_mode: objects alive before the runs leave the collector's view."""
    import gc

    gc.collect()
    gc.freeze()
    yield
    gc.unfreeze()


def _run(model_dir, task, out, data_dir, *extra):
    from hf_bert_tasks.finetune import recipe

    return recipe.main(tiny_run_argv(task, model_dir, out, *STEPS, *extra, data_dir=data_dir))


@pytest.mark.parametrize("task", FAMILIES)
@pytest.mark.parametrize("model_type", ARCHITECTURES)
def test_finetune_runs_two_steps_and_reports_metrics(model_type, task, encoders, family_data, tmp_path):
    from hf_bert_tasks.tasks import TASK_REGISTRY

    results = _run(encoders(model_type), task, tmp_path, family_data[task], "--mode", "finetune")
    with open(tmp_path / "trainer_state.json", encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 2
    assert math.isfinite(results["train_loss"])
    assert isinstance(results[f"eval_{TASK_REGISTRY[task].primary_metric}"], float), sorted(results)


#: LoRA's target modules per architecture, read from the transformers modeling files (the attention's query and
#: value Linear layers; ModernBERT fuses query, key and value in ``Wqkv``).
LORA_TARGETS = {
    "bert": {"query", "value"},
    "roberta": {"query", "value"},
    "electra": {"query", "value"},
    "modernbert": {"Wqkv"},
    "deberta-v2": {"query_proj", "value_proj"},
}


@pytest.mark.parametrize("model_type", ARCHITECTURES)
def test_lora_adapts_the_architectures_attention_by_default(model_type, encoders, family_data, tmp_path):
    results = _run(
        encoders(model_type), "mrpc", tmp_path, None, "--mode", "lora", "--lora_r", "2", "--lora_alpha", "4"
    )
    assert math.isfinite(results["train_loss"]) and isinstance(results["eval_accuracy"], float)
    with open(tmp_path / "lora_adapter" / "adapter_config.json", encoding="utf-8") as f:
        assert set(json.load(f)["target_modules"]) == LORA_TARGETS[model_type]


@pytest.mark.parametrize("model_type", ARCHITECTURES)
def test_feature_based_trains_a_head_on_each_architecture(model_type, encoders, family_data, tmp_path):
    results = _run(
        encoders(model_type), "conll2003", tmp_path, family_data["conll2003"], "--mode", "feature_based",
        "--head_hidden_size", "16",
    )  # fmt: skip
    with open(tmp_path / "trainer_state.json", encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 2
    assert math.isfinite(results["train_loss"]) and isinstance(results["eval_f1"], float)


def test_lora_refuses_an_architecture_without_default_targets():
    from types import SimpleNamespace

    from hf_bert_tasks.modes.lora.mode import default_target_modules

    with pytest.raises(ValueError, match="model_type 'my-encoder'.*--lora_target_modules"):
        default_target_modules(SimpleNamespace(config=SimpleNamespace(model_type="my-encoder")))


# ------------------------------------------------------------------------------------------------ attention
@pytest.mark.parametrize(
    ("model_type", "expected"), [("bert", "sdpa"), ("modernbert", "sdpa"), ("deberta-v2", "eager")]
)
def test_attention_defaults_to_one_the_architecture_supports(model_type, expected, encoders):
    from hf_bert_tasks.finetune.args import ModelArguments
    from hf_bert_tasks.modes import load_task_model
    from hf_bert_tasks.tasks import get_task

    model = load_task_model(get_task("mrpc"), ModelArguments(model_name_or_path=encoders(model_type)))
    assert model.config._attn_implementation == expected


def test_attention_the_architecture_lacks_is_refused_in_one_line(encoders):
    from hf_bert_tasks.finetune.args import ModelArguments
    from hf_bert_tasks.modes import load_task_model
    from hf_bert_tasks.tasks import get_task

    args = ModelArguments(model_name_or_path=encoders("deberta-v2"), attn_implementation="sdpa")
    with pytest.raises(ValueError) as err:
        load_task_model(get_task("mrpc"), args)
    message = str(err.value)
    assert "\n" not in message
    assert "'deberta-v2'" in message and "expected one of eager " in message


# ------------------------------------------------------------------------------------------------ features
PAIRS = [("the cat sat on the mat .", "a dog ran to the park ."), ("he was good", "she was not")]


@pytest.mark.parametrize("model_type", ARCHITECTURES)
def test_glue_pairs_are_the_tokenizers_own_pair_encoding(model_type, encoders):
    """Pairs that fit need no truncation: the features must equal what the tokenizer itself makes of the pair
    (its post-processor: RoBERTa ``<s> A </s></s> B </s>`` without ``token_type_ids``)."""
    from transformers import AutoTokenizer

    from hf_bert_tasks.tasks.glue import encode_pairs

    tokenizer = AutoTokenizer.from_pretrained(encoders(model_type))
    ours = encode_pairs(tokenizer, [a for a, _ in PAIRS], [b for _, b in PAIRS], max_seq_length=64)
    theirs = tokenizer([a for a, _ in PAIRS], [b for _, b in PAIRS])
    assert set(ours) == set(theirs.keys())
    for key in ours:
        assert ours[key] == theirs[key], key


def test_glue_pair_truncation_leaves_room_for_robertas_four_special_tokens(encoders):
    from transformers import AutoTokenizer

    from hf_bert_tasks.tasks.glue import encode_pairs

    tokenizer = AutoTokenizer.from_pretrained(encoders("roberta"))
    out = encode_pairs(tokenizer, [PAIRS[0][0] * 3], [PAIRS[0][1] * 3], max_seq_length=20)
    ids = out["input_ids"][0]
    assert len(ids) == 20
    assert ids[0] == tokenizer.bos_token_id and ids[-1] == tokenizer.eos_token_id
    assert ids.count(tokenizer.sep_token_id) == 3  # </s></s> between the segments, </s> at the end


@pytest.mark.parametrize("model_type", ["roberta", "modernbert"])
def test_squad_window_holds_the_answer_without_token_type_ids(model_type, encoders):
    from transformers import AutoTokenizer

    from hf_bert_tasks.tasks.squad.features import WindowConfig, create_features

    tokenizer = AutoTokenizer.from_pretrained(encoders(model_type))
    context = "the cat sat on the mat . a dog ran to a park ."
    answer = {"text": ["a park"], "answer_start": [context.index("a park")]}
    feats = create_features(
        ["where did the dog run ?"], [context], tokenizer, WindowConfig(64, 16, 16), answers=[answer]
    )
    assert "token_type_ids" not in feats
    ids, s, e = feats["input_ids"][0], feats["start_positions"][0], feats["end_positions"][0]
    assert ids[0] == tokenizer.cls_token_id and ids[-1] == tokenizer.sep_token_id
    assert tokenizer.decode(ids[s : e + 1]).strip() == "a park"


def test_conll_words_get_the_pieces_of_running_text_with_byte_level_bpe(encoders):
    """RoBERTa: a word inside a sentence is encoded with its leading space (``Ġ``), as in running text."""
    from transformers import AutoTokenizer

    from hf_bert_tasks.tasks.conll2003.features import tokenize_and_align

    tokenizer = AutoTokenizer.from_pretrained(encoders("roberta"))
    out = tokenize_and_align([["nadia", "met", "hiro"]], tokenizer, 32, tags=[[1, 0, 1]], label_names=["O", "B-PER"])
    running = tokenizer(" met", add_special_tokens=False)["input_ids"]
    ids, index = out["input_ids"][0], out["word_index"][0]
    start = index.index(1)
    assert ids[start : start + len(running)] == running
    assert "token_type_ids" not in out
