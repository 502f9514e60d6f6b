"""The pretrain recipe end to end on a written corpus (tiny BERT built in code), and the masked-only MLM head."""

import json
import os

import pytest
import torch

from tests.conftest import tiny_run_argv

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
    from hf_bert_tasks.pretraining.recipe import main

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
    summary = _pretrain(corpus, out, "--max_steps", "4", "--whole_word_mask", "--mlm_probability", "0.2")
    return out, summary


def _trainer_log(out) -> list[dict]:
    """Trainer's own log history (trainer_state.json, written by Trainer.save_state, not by the summary code)."""
    with open(os.path.join(out, "trainer_state.json"), encoding="utf-8") as f:
        return json.load(f)["log_history"]


def test_summary_reports_corpus_masking_steps_and_accuracies(pretrained):
    out, _summary = pretrained
    with open(os.path.join(out, "pretraining_summary.json"), encoding="utf-8") as f:
        saved = json.load(f)
    # the fixture wrote 12 documents x 8 sentences; 20 % held out: round(12 * 0.2) = 2 eval documents
    assert saved["corpus"]["documents"] == 12 and saved["corpus"]["sentences"] == 96
    assert saved["corpus"]["eval_documents"] == 2 and saved["corpus"]["train_documents"] == 10
    assert saved["steps"] == 4  # --max_steps 4
    # flags given (--whole_word_mask, --mlm_probability 0.2) and the documented defaults (exact selection, cap 20,
    # the collator's 80/10/10)
    assert saved["masking_recipe"] == {
        "masking": "dynamic",
        "mlm_probability": 0.2,
        "selection": "exact",
        "max_predictions_per_seq": 20,
        "whole_word_mask": True,
        "mask/random/keep": [0.8, 0.1, 0.1],
        "next_sentence_prediction": True,
        "nsp_probability": 0.5,
        "short_seq_prob": 0.1,
        "dupe_factor": 1,
    }
    last_eval = [h for h in _trainer_log(out) if "eval_mlm_accuracy" in h][-1]
    assert last_eval["step"] == 4
    assert saved["final_mlm_accuracy"] == last_eval["eval_mlm_accuracy"]
    assert saved["final_nsp_accuracy"] == last_eval["eval_nsp_accuracy"]


def test_the_run_writes_its_card_whose_model_index_is_the_summarys_accuracies(pretrained):
    from huggingface_hub import ModelCard

    out, _summary = pretrained
    with open(os.path.join(out, "pretraining_summary.json"), encoding="utf-8") as f:
        summary = json.load(f)
    card = ModelCard.load(os.path.join(out, "README.md"))
    assert [(r.metric_config, r.dataset_split, r.metric_value) for r in card.data.eval_results] == [
        ("mlm", "held-out documents", round(summary["final_mlm_accuracy"], 6)),
        ("nsp", "held-out documents", round(summary["final_nsp_accuracy"], 6)),
    ]
    assert card.data.pipeline_tag == "fill-mask"


def test_masking_recipe_reads_the_collator_that_drew_the_masks(vocab_tokenizer):
    """The summary's masking settings come from the collator instance (here non-default: 60/30/10, bernoulli 0.3,
    cap 7), not from constants; instance settings (NSP off) from the data arguments."""
    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining
    from hf_bert_tasks.pretraining.config import PretrainDataArguments
    from hf_bert_tasks.pretraining.recipe import masking_recipe

    collator = DataCollatorForBertPretraining(
        vocab_tokenizer,
        mlm_probability=0.3,
        mask_replace_prob=0.6,
        random_replace_prob=0.3,
        selection="bernoulli",
        max_predictions_per_seq=7,
        seed=0,
    )
    data_args = PretrainDataArguments(dataset_name="x", next_sentence_prediction=False, dupe_factor=3)
    assert masking_recipe(data_args, collator) == {
        "masking": "dynamic",
        "mlm_probability": 0.3,
        "selection": "bernoulli",
        "max_predictions_per_seq": 7,
        "whole_word_mask": False,
        "mask/random/keep": [0.6, 0.3, 0.1],
        "next_sentence_prediction": False,
        "nsp_probability": None,
        "short_seq_prob": 0.1,
        "dupe_factor": 3,
    }


def test_curves_png_plots_the_logged_history(pretrained):
    from hf_bert_tasks.pretraining.card import plot_pretraining_curves, pretraining_curves

    out, summary = pretrained
    with open(os.path.join(out, "pretraining_curves.png"), "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    curves = pretraining_curves(summary)
    log = _trainer_log(out)
    for metric in ("mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy"):
        train = [(h["step"], h[metric]) for h in log if metric in h]
        evals = [(h["step"], h[f"eval_{metric}"]) for h in log if f"eval_{metric}" in h]
        # --logging_steps 2 --eval_steps 2 --max_steps 4
        assert [s for s, _ in train] == [2, 4] and [s for s, _ in evals] == [2, 4]
        assert list(zip(*curves[metric]["train"])) == train
        assert list(zip(*curves[metric]["eval"])) == evals
    fig = plot_pretraining_curves(curves, os.path.join(out, "again.png"))
    ax = fig.axes[0]  # MLM loss
    assert ax.lines[0].get_xdata().tolist() == [2, 4]
    assert ax.lines[0].get_ydata().tolist() == [
        v for _, v in [(h["step"], h["mlm_loss"]) for h in log if "mlm_loss" in h]
    ]


def test_curves_of_two_phases_continue_the_step_axis():
    from hf_bert_tasks.pretraining.card import pretraining_curves

    summary = {
        "phases": [
            {
                "steps": 10,
                "history": [
                    {
                        "step": 5,
                        "mlm_loss": 7.0,
                        "mlm_accuracy": 0.1,
                        "nsp_loss": 0.7,
                        "nsp_accuracy": 0.5,
                        "loss": 7.7,
                    },
                    {
                        "step": 10,
                        "eval_mlm_loss": 6.5,
                        "eval_mlm_accuracy": 0.2,
                        "eval_nsp_loss": 0.69,
                        "eval_nsp_accuracy": 0.55,
                    },
                ],
            },
            {
                "steps": 4,
                "history": [
                    {
                        "step": 2,
                        "mlm_loss": 6.0,
                        "mlm_accuracy": 0.3,
                        "nsp_loss": 0.6,
                        "nsp_accuracy": 0.6,
                        "loss": 6.6,
                    }
                ],
            },
        ]
    }
    curves = pretraining_curves(summary)
    assert curves["mlm_loss"]["train"] == ([5, 12], [7.0, 6.0])
    assert curves["mlm_loss"]["eval"] == ([10], [6.5])
    assert curves["nsp_accuracy"]["train"] == ([5, 12], [0.5, 0.6])


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
    from hf_bert_tasks.finetune import recipe as finetune

    out, _ = pretrained
    mrpc = os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hf_bert_tasks", "samples", "MRPC"
    )
    metrics = finetune.main(
        tiny_run_argv(
            "mrpc",
            out,
            tmp_path / "ft",
            data_dir=mrpc,
            max_train_samples=16,
            max_eval_samples=16,
            max_predict_samples=4,
            num_train_epochs=1,
            disable_tqdm="True",
        )
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
        "--dropout",
        "0",
    )
    assert [p["max_seq_length"] for p in summary["phases"]] == [32, 64]
    # --dropout 0 (Cramming) reaches the random init of phase 1 and the checkpoint phase 2 continues from
    for folder in (out / "phase1", out):
        with open(folder / "config.json", encoding="utf-8") as f:
            config = json.load(f)
        assert (config["hidden_dropout_prob"], config["attention_probs_dropout_prob"]) == (0.0, 0.0), folder
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

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

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
    from hf_bert_tasks.pretraining.recipe import main

    with pytest.raises(FileNotFoundError, match="nope.txt does not exist"):
        main(["--train_files", str(tmp_path / "nope.txt"), "--output_dir", str(tmp_path / "o")])


def test_one_document_corpus_is_rejected(tmp_path):
    one = tmp_path / "one.txt"
    one.write_text("a first line .\na second line .\n", encoding="utf-8")
    with pytest.raises(ValueError, match="found 1 document"):
        _pretrain(str(one), tmp_path / "o", "--max_steps", "2")


@pytest.mark.parametrize("masking,same_masks", [("static", True), ("dynamic", False)])
def test_static_masks_repeat_across_epochs_and_dynamic_masks_do_not(
    corpus, tmp_path, monkeypatch, masking, same_masks
):
    """One step per epoch (batch 512 > instances), 2 steps: the rows the model sees in epoch 0 and epoch 1 (masked
    input_ids + labels, padding stripped) are the same multiset with static masks and not with dynamic masks."""
    from hf_bert_tasks.pretraining.trainer import PretrainingTrainer

    seen = []
    original = PretrainingTrainer.compute_loss

    def recording(self, model, inputs, *args, **kwargs):
        if model.training:
            rows = []
            for ids, labels, mask in zip(inputs["input_ids"], inputs["labels"], inputs["attention_mask"]):
                n = int(mask.sum())
                rows.append((tuple(ids[:n].tolist()), tuple(labels[:n].tolist())))
            seen.append(sorted(rows))
        return original(self, model, inputs, *args, **kwargs)

    monkeypatch.setattr(PretrainingTrainer, "compute_loss", recording)
    summary = _pretrain(
        corpus,
        tmp_path / masking,
        "--max_steps",
        "2",
        "--masking",
        masking,
        "--per_device_train_batch_size",
        "512",
        "--eval_strategy",
        "no",
    )
    assert len(seen) == 2 and len(seen[0]) == summary["phases"][0]["train_instances"] < 512
    assert (seen[0] == seen[1]) is same_masks

    # the unmasked text is the same in both epochs either way (labels restore the original ids)
    def originals(rows):
        return sorted(tuple(l if l != -100 else i for i, l in zip(ids, labels)) for ids, labels in rows)

    assert originals(seen[0]) == originals(seen[1])


def test_jsonl_glob_and_streaming_corpus(tmp_path):
    """The corpus as two jsonl shards given by a glob, read into the datasets cache or streamed."""
    docs = [
        [f"{NAMES[d % 6]} took {THINGS[(d + k) % 6]} to {PLACES[(d * k + 1) % 6]} ." for k in range(8)]
        for d in range(12)
    ]
    shards = tmp_path / "shards"
    shards.mkdir()
    for part in range(2):
        with open(shards / f"part-{part}.jsonl", "w", encoding="utf-8") as f:
            f.writelines(json.dumps({"text": "\n".join(doc)}) + "\n" for doc in docs[part * 6 : part * 6 + 6])
    glob = str(shards / "part-*.jsonl")
    cached = _pretrain(
        glob,
        tmp_path / "cached",
        "--max_steps",
        "2",
        "--eval_strategy",
        "no",
        "--dataset_cache_dir",
        str(tmp_path / "cache"),
    )
    assert cached["corpus"]["files"] == [str(shards / "part-0.jsonl"), str(shards / "part-1.jsonl")]
    assert cached["corpus"]["documents"] == 12 and cached["corpus"]["sentences"] == 96
    streamed = _pretrain(
        glob, tmp_path / "streamed", "--max_steps", "2", "--streaming", "True", "--streaming_eval_documents", "3"
    )
    assert streamed["steps"] == 2 and streamed["corpus"]["eval_documents"] == 3
    assert streamed["phases"][0]["eval_instances"] > 0
    assert 0.0 <= streamed["final_nsp_accuracy"] <= 1.0 and streamed["phases"][0]["train_instances"] is None


@pytest.mark.parametrize("flag,message", [("--preset", "unknown BERT preset 'huge'"), ("--dropout", "must be in")])
def test_bad_model_arguments_are_named(flag, message):
    from hf_bert_tasks.pretraining.config import PretrainModelArguments

    with pytest.raises(ValueError, match=message):
        PretrainModelArguments(**{flag[2:]: "huge" if flag == "--preset" else 1.0})


def test_mlm_only_run_has_no_nsp_labels_loss_or_metrics(corpus, tmp_path, monkeypatch):
    """--no_next_sentence_prediction (RoBERTa's MLM-only objective): batches carry no next_sentence_label, the logged
    loss is the MLM loss, and no NSP metric is logged or summarised."""
    from hf_bert_tasks.pretraining.trainer import PretrainingTrainer

    keys, original = [], PretrainingTrainer.compute_loss
    monkeypatch.setattr(
        PretrainingTrainer,
        "compute_loss",
        lambda self, model, inputs, *a, **k: keys.append(set(inputs)) or original(self, model, inputs, *a, **k),
    )
    summary = _pretrain(corpus, tmp_path / "mlm", "--max_steps", "2", "--no_next_sentence_prediction")
    assert len(keys) == 2 and all("labels" in k and "next_sentence_label" not in k for k in keys)
    assert summary["objective"].startswith("MLM only")
    assert summary["masking_recipe"]["next_sentence_prediction"] is False
    assert summary["final_nsp_accuracy"] is None and summary["final_mlm_accuracy"] is not None
    history = summary["phases"][0]["history"]
    assert history and not any("nsp" in key for h in history for key in h)
    assert all(h["loss"] == pytest.approx(h["mlm_loss"], abs=2e-3) for h in history if "loss" in h)
