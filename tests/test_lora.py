"""LoRA mode: adapters on query/value, the task head trainable for every problem type, merge for saving."""

import os

import pytest
import torch

from hf_bert_tasks.modes.lora.mode import apply_lora, head_module_names, trainable_parameter_counts

HEADS = {
    "single_label_classification": ("AutoModelForSequenceClassification", "classifier"),
    "token_classification": ("AutoModelForTokenClassification", "classifier"),
    "question_answering": ("AutoModelForQuestionAnswering", "qa_outputs"),
    "multiple_choice": ("AutoModelForMultipleChoice", "classifier"),
}


def task_model(problem_type, seed=0):
    import transformers
    from transformers import BertConfig

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=40,
        hidden_size=8,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=16,
        max_position_embeddings=32,
        num_labels=2 if problem_type == "question_answering" else 3,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return getattr(transformers, HEADS[problem_type][0]).from_config(config)


IDS = torch.tensor([[2, 5, 7, 9, 3], [2, 6, 8, 3, 0]])


def inputs(problem_type):
    if problem_type == "multiple_choice":
        ids = torch.stack([IDS, IDS.flip(0)])
        return {"input_ids": ids, "attention_mask": (ids != 0).long(), "labels": torch.tensor([0, 1])}
    batch = {"input_ids": IDS, "attention_mask": (IDS != 0).long()}
    if problem_type == "token_classification":
        batch["labels"] = torch.tensor([[-100, 1, 2, 0, -100], [-100, 0, 1, -100, -100]])
    elif problem_type == "question_answering":
        batch["start_positions"], batch["end_positions"] = torch.tensor([1, 2]), torch.tensor([2, 2])
    else:
        batch["labels"] = torch.tensor([0, 2])
    return batch


def test_head_module_names_finds_the_classifier():
    assert head_module_names(task_model("single_label_classification")) == ["classifier"]
    assert head_module_names(task_model("question_answering")) == ["qa_outputs"]


@pytest.mark.parametrize("problem_type", list(HEADS))
def test_adapters_and_head_train_and_nothing_else(problem_type):
    model = apply_lora(task_model(problem_type), problem_type, r=2, alpha=4, dropout=0.0)
    head = HEADS[problem_type][1]
    model(**inputs(problem_type)).loss.backward()
    trainable = {n for n, p in model.named_parameters() if p.requires_grad}
    assert trainable, "nothing trainable"
    for name, p in model.named_parameters():
        is_adapter = "lora_A" in name or "lora_B" in name
        is_head = f".{head}." in name and "modules_to_save" in name
        assert p.requires_grad == (is_adapter or is_head), name
        if p.requires_grad and "lora_A" not in name:  # lora_A gets zero grad at step 0 because B starts at 0
            assert p.grad is not None, name
        if not p.requires_grad:
            assert p.grad is None, name
    assert any("query" in n and "lora_B" in n for n in trainable)
    assert any("value" in n and "lora_B" in n for n in trainable)
    assert not any("key" in n for n in trainable)


def test_lora_with_gradient_checkpointing_still_reaches_the_adapters():
    model = apply_lora(task_model("single_label_classification"), "single_label_classification", r=2, dropout=0.0)
    base = model.base_model.model
    enable = getattr(base, "activation_checkpointing_enable", None) or base.gradient_checkpointing_enable
    enable()
    model.enable_input_require_grads()
    model.train()
    model(**inputs("single_label_classification")).loss.backward()
    grads = [p.grad for n, p in model.named_parameters() if "lora_B" in n]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)


def test_trainable_fraction_is_small():
    model = apply_lora(task_model("single_label_classification"), "single_label_classification", r=2)
    trainable, total = trainable_parameter_counts(model)
    # 2 layers x (query + value) x (A [2, 8] + B [8, 2]) = 128 adapter weights; classifier copy 8*3+3 = 27
    assert trainable == 2 * 2 * (16 + 16) + 27
    assert total > trainable


def test_merged_model_predicts_like_the_adapter_model():
    model = apply_lora(task_model("token_classification"), "token_classification", r=2, dropout=0.0)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lora_B" in name:
                p.normal_()
    model.eval()
    before = model(input_ids=IDS).logits
    merged = model.merge_and_unload().eval()
    assert torch.allclose(before, merged(input_ids=IDS).logits, atol=1e-5)


def test_bad_rank_is_a_value_error():
    with pytest.raises(ValueError, match="--lora_r must be >= 1"):
        apply_lora(task_model("single_label_classification"), "single_label_classification", r=0)


def test_recipe_lora_saves_adapter_and_a_loadable_merged_model(tmp_path, tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    from hf_bert_tasks.finetune import recipe as finetune
    from tests.conftest import SAMPLES, tiny_run_argv

    out = tmp_path / "lora"
    metrics = finetune.main(
        tiny_run_argv(
            "mrpc",
            tiny_bert_dir,
            out,
            "--mode",
            "lora",
            "--do_train",
            "--do_eval",
            num_train_epochs=1,
            max_train_samples=32,
            max_eval_samples=16,
        )
    )
    assert os.path.isfile(out / "lora_adapter" / "adapter_config.json")
    model = AutoModelForSequenceClassification.from_pretrained(out)
    assert not any("lora" in n for n, _ in model.named_parameters())
    # the merged model predicts like the adapter model that was evaluated: its F1 on the 16 dev pairs is the reported
    from sklearn.metrics import f1_score

    from tests.conftest import predict_labels

    with open(os.path.join(SAMPLES, "MRPC", "dev.tsv"), encoding="utf-8") as f:
        rows = [line.split("\t") for line in f.read().splitlines()[1:17]]
    predicted = predict_labels(str(out), [(r[3], r[4]) for r in rows])
    assert metrics["eval_f1"] == pytest.approx(f1_score([int(r[0]) for r in rows], predicted, zero_division=0.0))
