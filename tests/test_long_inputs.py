"""Saved models serve any input: every folder the package saves carries ``model_max_length`` = the model's positions.

The reported fault: a model pretrained with ``hf-bert-tasks pretrain`` (``max_position_embeddings=64``) saved its
tokenizer with ``model_max_length = 1e30``, so ``AutoTokenizer.from_pretrained(dir)(long, truncation=True)`` kept
every piece and ``pipeline("text-classification", model=dir)(long, truncation=True)`` crashed; every fine-tune
started from it inherited the value. One test per saved-model kind (pretrain, fine-tune, feature-based, merged LoRA,
token classification, ``build_random_bert``) with an input longer than the model; plus the NER pipeline's grouping
(per word, first WordPiece, as the recipe scores NER).
"""

import json
import logging
import os

import pytest

from tests.conftest import tiny_run_argv

POSITIONS = 64
LONG = "the cat sat on the mat . " * 40  # the input: far more than 64 WordPieces
CORPUS_DOCS = [
    [f"{n} took the {w} to the {p} ." for w in ("cat", "dog", "mat", "rug", "kite")]
    for n in ("anna", "oskar", "rosa", "maria")
    for p in ("mill", "barn", "quay")
]


def _saved_limit(folder) -> int:
    with open(os.path.join(folder, "tokenizer_config.json"), encoding="utf-8") as f:
        return json.load(f)["model_max_length"]


def _truncated_length(folder) -> tuple[int, int]:
    """``(len without truncation, len with truncation=True)`` of :data:`LONG` with the folder's tokenizer."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    return len(tokenizer(LONG, verbose=False)["input_ids"]), len(tokenizer(LONG, truncation=True)["input_ids"])


@pytest.fixture(scope="module")
def limitless_checkpoint(sample_tokenizer, tmp_path_factory):
    """A 64-position BERT whose saved tokenizer has no limit (1e30): what the pretrain recipe used to write."""
    import torch
    from transformers import BertForPreTraining

    from hf_bert_tasks.utils.modeling import bert_config

    out = str(tmp_path_factory.mktemp("limitless"))
    config = bert_config(
        "tiny",
        vocab_size=len(sample_tokenizer),
        pad_token_id=sample_tokenizer.pad_token_id,
        max_position_embeddings=POSITIONS,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
    )
    torch.manual_seed(0)
    BertForPreTraining(config).save_pretrained(out)
    sample_tokenizer.save_pretrained(out)  # the session tokenizer: model_max_length 1e30
    assert _saved_limit(out) > 1e29
    return out


def _finetune(model, out, *extra):
    from hf_bert_tasks.finetune import recipe as finetune

    finetune.main(
        tiny_run_argv(
            "sst2",
            model,
            out,
            "--do_train",
            "--do_eval",
            *extra,
            max_train_samples=16,
            max_eval_samples=8,
            per_device_train_batch_size=8,
            max_steps=1,
            learning_rate="1e-3",
            max_seq_length=32,
            eval_strategy="no",
            disable_tqdm="true",
        )
    )
    return str(out)


def _classify_long(folder):
    from transformers import pipeline

    return pipeline("text-classification", model=folder)(LONG, truncation=True)


# ------------------------------------------------------------------------------------ the pretrain recipe
def test_pretrained_folder_truncates_to_its_positions_and_serves_a_pipeline(tmp_path):
    """The issue's reproduction, through ``hf-bert-tasks pretrain`` with a WordPiece vocabulary trained on the corpus."""
    from transformers import pipeline

    from hf_bert_tasks.pretraining import recipe as pretrain

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in CORPUS_DOCS) + "\n", encoding="utf-8")
    out = str(tmp_path / "pretrained")
    pretrain.main(
        [
            "--train_files",
            str(corpus),
            "--output_dir",
            out,
            "--vocab_size",
            "200",
            "--hidden_size",
            "32",
            "--num_attention_heads",
            "2",
            "--intermediate_size",
            "64",
            "--max_seq_length",
            "32",
            "--max_position_embeddings",
            str(POSITIONS),
            "--max_steps",
            "2",
            "--save_steps",
            "1",
            "--validation_split_percentage",
            "0",
            "--per_device_train_batch_size",
            "4",
            "--report_to",
            "none",
            "--disable_tqdm",
            "True",
        ]
    )
    assert _saved_limit(out) == POSITIONS
    assert _saved_limit(os.path.join(out, "checkpoint-2")) == POSITIONS  # checkpoints too
    full, cut = _truncated_length(out)
    assert full > POSITIONS and cut == POSITIONS
    assert _classify_long(out)[0]["label"] in ("LABEL_0", "LABEL_1")  # random head: any label, but no crash
    filled = pipeline("fill-mask", model=out)("[MASK] " + LONG, tokenizer_kwargs={"truncation": True})
    assert len(filled) == 5


# ------------------------------------------------------------------------------------ fine-tune recipe, each mode
def test_finetuned_from_a_limitless_checkpoint_saves_the_model_limit(limitless_checkpoint, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.finetune.data"):
        out = _finetune(limitless_checkpoint, tmp_path / "finetune")
    assert "model_max_length=1000000000000000019884624838656 (no limit)" in caplog.text
    assert _saved_limit(out) == POSITIONS
    assert _truncated_length(out)[1] == POSITIONS
    assert _classify_long(out)[0]["label"] in ("negative", "positive")


def test_feature_based_folder_serves_long_inputs(limitless_checkpoint, tmp_path):
    out = _finetune(
        limitless_checkpoint,
        tmp_path / "feature_based",
        "--mode",
        "feature_based",
        "--feature_cache_dir",
        str(tmp_path / "cache"),
    )
    assert _saved_limit(out) == POSITIONS
    assert _classify_long(out)[0]["label"] in ("negative", "positive")


def test_merged_lora_folder_serves_long_inputs(limitless_checkpoint, tmp_path):
    out = _finetune(limitless_checkpoint, tmp_path / "lora", "--mode", "lora")
    assert _saved_limit(out) == POSITIONS
    assert _classify_long(out)[0]["label"] in ("negative", "positive")


def test_token_classification_folder_serves_long_inputs(limitless_checkpoint, tmp_path):
    from transformers import pipeline

    from hf_bert_tasks.finetune import recipe as finetune

    data = tmp_path / "conll"
    data.mkdir()
    sentence = "anna NNP B-NP B-PER\ntook VBD B-VP O\nthe DT B-NP O\ncat NN I-NP O\n. . O O\n"
    for name in ("train.txt", "valid.txt", "test.txt"):
        (data / name).write_text("-DOCSTART- -X- -X- O\n\n" + "\n".join([sentence] * 4), encoding="utf-8")
    out = str(tmp_path / "ner")
    finetune.main(
        tiny_run_argv(
            "conll2003",
            limitless_checkpoint,
            out,
            "--do_train",
            data_dir=data,
            max_steps=1,
            per_device_train_batch_size=4,
            max_seq_length=32,
            eval_strategy="no",
            disable_tqdm="true",
        )
    )
    assert _saved_limit(out) == POSITIONS
    entities = pipeline("token-classification", model=out, aggregation_strategy="first")(LONG)
    assert all(e["end"] <= len(LONG) for e in entities)  # ran on the first 64 pieces instead of crashing


# ------------------------------------------------------------------------------------ built in code
def test_build_random_bert_saves_the_limit_and_leaves_the_tokenizer_alone(sample_tokenizer, tmp_path):
    from hf_bert_tasks.utils.modeling import build_random_bert

    before = sample_tokenizer.model_max_length
    out = build_random_bert(
        str(tmp_path / "rand"),
        sample_tokenizer,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=POSITIONS,
    )
    assert _saved_limit(out) == POSITIONS
    assert sample_tokenizer.model_max_length == before


def test_train_wordpiece_tokenizer_takes_the_limit():
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    tokenizer = train_wordpiece_tokenizer(["the cat sat on the mat ."] * 3, vocab_size=60, model_max_length=8)
    assert len(tokenizer(LONG, truncation=True)["input_ids"]) == 8


@pytest.mark.parametrize("current, expected", [(10**30, 64), (512, 64), (32, 32), (64, 64)])
def test_fit_lowers_a_missing_or_larger_limit_and_keeps_a_smaller_one(sample_tokenizer, current, expected):
    import copy

    from transformers import BertConfig

    from hf_bert_tasks.utils.tokenizers import fit_tokenizer_to_model

    tokenizer = copy.deepcopy(sample_tokenizer)
    tokenizer.model_max_length = current
    fit_tokenizer_to_model(tokenizer, BertConfig(max_position_embeddings=64))
    assert tokenizer.model_max_length == expected


def test_position_limit_of_bert_roberta_and_feature_based_configs():
    from transformers import BertConfig, RobertaConfig

    from hf_bert_tasks.modes.feature_based.mode import BertFeatureBasedConfig
    from hf_bert_tasks.utils.tokenizers import model_position_limit

    assert model_position_limit(BertConfig(max_position_embeddings=512)) == 512
    # RoBERTa's positions start after padding_idx=1: 514 embeddings, 512 usable (roberta-base's model_max_length)
    assert model_position_limit(RobertaConfig(max_position_embeddings=514, pad_token_id=1)) == 512
    wrapped = BertFeatureBasedConfig(encoder_config=BertConfig(max_position_embeddings=64).to_dict())
    assert model_position_limit(wrapped) == 64


# ------------------------------------------------------------------------------------ NER grouping
NER_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "jim", "hen", "##son", "met", "the", "cat", "."]


@pytest.fixture(scope="module")
def continuation_predicts_o(tmp_path_factory):
    """A CoNLL-2003 token classifier whose logits are fixed by construction: ``jim`` -> B-PER, ``hen`` -> I-PER,
    every other piece (``##son`` included) -> O. No encoder layer; embedding row ``e`` of a piece is
    ``u_c - u_{c+4}`` for its class ``c`` (0: B-PER, 1: I-PER, 2: O), LayerNorm turns it into ``2 e``, and the
    classifier row of class ``c`` is ``u_c - u_{c+4}``: logit 4 for the piece's class, 0 for the eight others."""
    import torch
    from transformers import BertConfig, BertForTokenClassification, BertTokenizer

    from hf_bert_tasks.tasks.conll2003 import NER_LABELS
    from hf_bert_tasks.utils.tokenizers import save_tokenizer_for_model

    out = tmp_path_factory.mktemp("ner-continuation-o")
    (out / "vocab.txt").write_text("\n".join(NER_VOCAB) + "\n", encoding="utf-8")
    tokenizer = BertTokenizer(vocab=str(out / "vocab.txt"), do_lower_case=True)
    config = BertConfig(
        vocab_size=len(NER_VOCAB),
        hidden_size=8,
        num_hidden_layers=0,
        num_attention_heads=1,
        intermediate_size=8,
        max_position_embeddings=16,
        num_labels=len(NER_LABELS),
        id2label=dict(enumerate(NER_LABELS)),
        label2id={n: i for i, n in enumerate(NER_LABELS)},
    )
    model = BertForTokenClassification(config)
    classes = {"B-PER": 0, "I-PER": 1, "O": 2}

    def row(label):
        v = torch.zeros(8)
        v[classes[label]], v[classes[label] + 4] = 1.0, -1.0
        return v

    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.bert.embeddings.LayerNorm.weight.fill_(1.0)
        for i, piece in enumerate(NER_VOCAB):
            model.bert.embeddings.word_embeddings.weight[i] = row({"jim": "B-PER", "hen": "I-PER"}.get(piece, "O"))
        for label in classes:
            model.classifier.weight[NER_LABELS.index(label)] = row(label)
    model.save_pretrained(out)
    save_tokenizer_for_model(tokenizer, str(out), config)
    return str(out)


def test_simple_grouping_cuts_a_word_whose_continuation_predicts_o(continuation_predicts_o):
    """The fault, shown with transformers' "simple" grouping: the entity stops inside the word."""
    from transformers import pipeline

    tagger = pipeline("token-classification", model=continuation_predicts_o, aggregation_strategy="simple")
    assert [(e["entity_group"], e["word"]) for e in tagger("Jim Henson met the cat .")] == [("PER", "jim hen")]


def test_the_package_pipeline_groups_per_word_by_first_piece(continuation_predicts_o):
    from hf_bert_tasks.hub.push import pipeline_for

    tagger = pipeline_for(continuation_predicts_o)
    entities = tagger("Jim Henson met the cat .")
    assert [(e["entity_group"], e["word"], e["start"], e["end"]) for e in entities] == [("PER", "jim henson", 0, 10)]


def test_the_package_pipeline_cuts_long_ner_inputs_at_the_model_limit(continuation_predicts_o):
    from hf_bert_tasks.hub.push import pipeline_for

    entities = pipeline_for(continuation_predicts_o)("Jim Henson met the cat . " * 10)
    # 16 positions: [CLS] + 14 pieces + [SEP] = the first 2 of the 10 sentences (7 pieces each)
    assert [e["word"] for e in entities] == ["jim henson", "jim henson"]
