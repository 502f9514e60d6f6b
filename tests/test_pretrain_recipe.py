"""The pretrain recipe end to end on a written corpus (tiny BERT built in code), and the masked-only MLM head."""

import json
import os

import pytest
import torch

SIZE = ["--num_hidden_layers", "1", "--hidden_size", "32", "--num_attention_heads", "2", "--intermediate_size", "64"]
FAST = [
    "--per_device_train_batch_size",
    "8",
    "--per_device_eval_batch_size",
    "16",
    "--logging_steps",
    "2",
    "--eval_steps",
    "2",
    "--save_steps",
    "2",
    "--disable_tqdm",
    "True",
    "--report_to",
    "none",
    "--seed",
    "3",
]

NAMES = ["mara", "oleg", "pia", "ravi", "sanne", "tomas"]
THINGS = ["a lamp", "the ferry", "two pears", "a red kite", "the old piano", "some rope"]
PLACES = ["the quay", "a barn", "the square", "the dunes", "an attic", "the mill"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """12 documents of 8 sentences (written for this test), one sentence per line, blank line between documents."""
    docs = []
    for d in range(12):
        name = NAMES[d % len(NAMES)]
        docs.append([f"{name} took {THINGS[(d + k) % 6]} to {PLACES[(d * k + 1) % 6]} ." for k in range(8)])
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n\n".join("\n".join(doc) for doc in docs) + "\n", encoding="utf-8")
    return str(path)


def _pretrain(corpus, out, *extra):
    from hf_bert_tasks.scripts.pretrain import main

    return main(
        [
            "--train_files",
            corpus,
            "--output_dir",
            str(out),
            "--vocab_size",
            "120",
            "--max_seq_length",
            "32",
            "--validation_split_percentage",
            "20",
            *SIZE,
            *FAST,
            *extra,
        ]
    )


@pytest.fixture(scope="module")
def pretrained(corpus, tmp_path_factory):
    out = tmp_path_factory.mktemp("pretrain") / "run"
    summary = _pretrain(corpus, out, "--max_steps", "4", "--whole_word_mask")
    return out, summary


def test_summary_reports_corpus_masking_steps_and_accuracies(pretrained):
    out, summary = pretrained
    with open(os.path.join(out, "pretraining_summary.json"), encoding="utf-8") as f:
        saved = json.load(f)
    assert saved == json.loads(json.dumps(summary))
    assert saved["steps"] == 4
    assert saved["corpus"]["documents"] == 12 and saved["corpus"]["eval_documents"] >= 2
    assert saved["masking_recipe"]["whole_word_mask"] is True and saved["masking_recipe"]["selection"] == "exact"
    assert 0.0 <= saved["final_mlm_accuracy"] <= 1.0 and 0.0 <= saved["final_nsp_accuracy"] <= 1.0


def test_mlm_and_nsp_are_logged_separately(pretrained):
    _out, summary = pretrained
    train_logs = [h for h in summary["phases"][0]["history"] if "mlm_accuracy" in h]
    eval_logs = [h for h in summary["phases"][0]["history"] if "eval_mlm_accuracy" in h]
    assert [h["step"] for h in train_logs] == [2, 4] and [h["step"] for h in eval_logs] == [2, 4]
    for h in train_logs:
        assert {"mlm_loss", "nsp_loss", "mlm_accuracy", "nsp_accuracy"} <= set(h)
        assert h["loss"] == pytest.approx(h["mlm_loss"] + h["nsp_loss"], abs=2e-3)
    assert {"eval_mlm_loss", "eval_nsp_loss", "eval_nsp_accuracy"} <= set(eval_logs[0])


def test_checkpoint_loads_as_bert_for_pretraining_and_for_classification(pretrained):
    from transformers import AutoModelForPreTraining, AutoModelForSequenceClassification, BertForPreTraining

    out, _ = pretrained
    with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
        assert json.load(f)["architectures"] == ["BertForPreTraining"]
    full = AutoModelForPreTraining.from_pretrained(out)
    assert type(full) is BertForPreTraining
    clf = AutoModelForSequenceClassification.from_pretrained(out, num_labels=2)
    assert torch.equal(clf.bert.embeddings.word_embeddings.weight, full.bert.embeddings.word_embeddings.weight)


def test_finished_output_dir_is_not_overwritten(pretrained, corpus):
    out, _ = pretrained
    with pytest.raises(FileExistsError, match="already holds a finished pretraining run"):
        _pretrain(corpus, out, "--max_steps", "4")


def test_pretrained_checkpoint_fine_tunes_with_the_finetune_recipe(pretrained, tmp_path):
    from hf_bert_tasks.scripts import finetune

    out, _ = pretrained
    mrpc = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hf_bert_tasks", "samples", "MRPC"
    )
    metrics = finetune.main(
        [
            "--task",
            "mrpc",
            "--data_dir",
            mrpc,
            "--model_name_or_path",
            str(out),
            "--output_dir",
            str(tmp_path / "ft"),
            "--max_train_samples",
            "16",
            "--max_eval_samples",
            "16",
            "--max_predict_samples",
            "4",
            "--num_train_epochs",
            "1",
            "--save_strategy",
            "no",
            "--report_to",
            "none",
            "--disable_tqdm",
            "True",
        ]
    )
    assert "eval_f1" in metrics and "eval_accuracy" in metrics


def test_two_phases_and_resume_from_checkpoint(corpus, tmp_path):
    out = tmp_path / "two"
    summary = _pretrain(
        corpus,
        out,
        "--max_steps",
        "2",
        "--phase2_max_steps",
        "2",
        "--phase2_max_seq_length",
        "64",
        "--phase2_per_device_train_batch_size",
        "4",
        "--eval_strategy",
        "no",
    )
    assert [p["max_seq_length"] for p in summary["phases"]] == [32, 64]
    assert os.path.isfile(out / "phase1" / "model.safetensors") and os.path.isfile(out / "model.safetensors")
    assert summary["steps"] == 4
    # resume phase 2 from its checkpoint at step 2 and train to step 4
    resumed = _pretrain(
        corpus,
        out,
        "--max_steps",
        "2",
        "--phase2_max_steps",
        "4",
        "--phase2_max_seq_length",
        "64",
        "--phase2_per_device_train_batch_size",
        "4",
        "--eval_strategy",
        "no",
        "--resume_from_checkpoint",
        str(out / "checkpoint-2"),
        "--overwrite_output_dir",
        "True",
    )
    assert resumed["phases"][-1]["steps"] == 4
    assert resumed["phases"][0] == summary["phases"][0]  # phase 1 finished: kept, not trained again
    with open(out / "trainer_state.json", encoding="utf-8") as f:
        assert json.load(f)["global_step"] == 4


def test_masked_only_head_gives_the_same_loss_and_state_dict():
    from transformers import BertConfig, BertForPreTraining

    from hf_bert_tasks.pretraining import BertForPreTrainingMaskedOnly

    config = BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    torch.manual_seed(0)
    full = BertForPreTraining(config).eval()
    masked = BertForPreTrainingMaskedOnly(config).eval()
    masked.load_state_dict(full.state_dict())
    assert list(masked.state_dict()) == list(full.state_dict())
    ids = torch.tensor([[2, 7, 8, 9, 3, 10, 11, 3], [2, 12, 13, 3, 14, 3, 0, 0]])
    attention = (ids != 0).long()
    labels = torch.full_like(ids, -100)
    labels[0, 2], labels[0, 6], labels[1, 1] = 8, 11, 12
    nsp = torch.tensor([0, 1])
    a = full(input_ids=ids, attention_mask=attention, labels=labels, next_sentence_label=nsp)
    b = masked(input_ids=ids, attention_mask=attention, labels=labels, next_sentence_label=nsp)
    assert torch.allclose(a.loss, b.loss, atol=1e-6)
    assert b.prediction_logits.shape == (3, 50)
    assert torch.allclose(a.prediction_logits[labels != -100], b.prediction_logits, atol=1e-5)
    assert torch.allclose(a.seq_relationship_logits, b.seq_relationship_logits)


def test_missing_train_file_is_named(tmp_path):
    from hf_bert_tasks.scripts.pretrain import main

    with pytest.raises(FileNotFoundError, match="nope.txt does not exist"):
        main(["--train_files", str(tmp_path / "nope.txt"), "--output_dir", str(tmp_path / "o")])


def test_one_document_corpus_is_rejected(tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("a first line .\na second line .\n", encoding="utf-8")
    with pytest.raises(ValueError, match="found 1 document"):
        _pretrain(str(one), tmp_path / "o", "--max_steps", "2")


def test_static_masks_with_dupe_factor(corpus, tmp_path):
    summary = _pretrain(
        corpus,
        tmp_path / "static",
        "--max_steps",
        "2",
        "--masking",
        "static",
        "--dupe_factor",
        "2",
        "--selection",
        "bernoulli",
        "--eval_strategy",
        "no",
    )
    one = _pretrain(corpus, tmp_path / "dynamic", "--max_steps", "2", "--eval_strategy", "no")
    assert summary["masking_recipe"]["masking"] == "static" and summary["masking_recipe"]["dupe_factor"] == 2
    assert summary["phases"][0]["train_instances"] > one["phases"][0]["train_instances"]
