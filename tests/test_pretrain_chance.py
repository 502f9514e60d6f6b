"""Pretraining names chance (hf_bert_tasks.pretraining.chance: ``chance_levels``, ``warn_at_chance``): held-out MLM
accuracy against the most frequent masked token's share, NSP against 0.5; the warning suggests what helps the model
at hand; the card's "fine-tune it" command carries a learning rate a small model learns with."""

import logging

import pytest
from datasets import Dataset

from hf_bert_tasks.pretraining.chance import chance_levels, warn_at_chance


def test_chance_levels_are_the_most_frequent_target_and_nsp_label(vocab_tokenizer):
    eval_ds = Dataset.from_dict(
        {"labels": [[-100, 5, 5, -100], [7, -100], [5, 8], [-100]], "next_sentence_label": [0, 1, 1, 1]}
    )
    levels = chance_levels(eval_ds, vocab_tokenizer)
    assert levels["mlm_accuracy"] == pytest.approx(3 / 5)
    assert levels["mlm_most_frequent_token"] == vocab_tokenizer.convert_ids_to_tokens(5)
    assert levels["nsp_accuracy"] == pytest.approx(3 / 4)


def test_nsp_chance_is_at_least_one_half(vocab_tokenizer):
    eval_ds = Dataset.from_dict({"labels": [[4]], "next_sentence_label": [0]})
    assert chance_levels(eval_ds, vocab_tokenizer)["nsp_accuracy"] == 1.0  # one example: its label
    balanced = Dataset.from_dict({"labels": [[4], [4]], "next_sentence_label": [0, 1]})
    assert chance_levels(balanced, vocab_tokenizer)["nsp_accuracy"] == 0.5


SUMMARY = {
    "final_mlm_accuracy": 0.10,
    "final_nsp_accuracy": 0.508,
    "steps": 400,
    "chance": {"mlm_accuracy": 0.12, "mlm_most_frequent_token": "the", "nsp_accuracy": 0.5},
}


def test_a_tiny_model_at_chance_is_told_its_learning_rate_and_more_steps(caplog):
    with caplog.at_level(logging.WARNING):
        message = warn_at_chance(SUMMARY, hidden_size=128, learning_rate=1e-4)
    assert message == (
        "held-out MLM accuracy 0.100 against the most frequent token 'the''s share 0.120; held-out NSP accuracy "
        "0.508 against chance 0.500: pretraining has learnt next to nothing. What can help: --learning_rate 0.001 "
        "for this small model (hidden size 128; it ran at 0.0001); more steps (--max_steps; this run: 400)."
    )
    assert [r.getMessage() for r in caplog.records] == [message]


def test_a_base_model_at_chance_is_told_more_steps_only():
    message = warn_at_chance(SUMMARY, hidden_size=768, learning_rate=1e-4)
    assert "--learning_rate" not in message and "more steps" in message


def test_above_both_chance_levels_no_warning():
    summary = {**SUMMARY, "final_mlm_accuracy": 0.30, "final_nsp_accuracy": 0.80}
    assert warn_at_chance(summary, hidden_size=128, learning_rate=1e-4) is None


def test_mlm_only_run_is_judged_on_mlm_alone():
    summary = {**SUMMARY, "final_mlm_accuracy": 0.30, "final_nsp_accuracy": None}
    assert warn_at_chance(summary, hidden_size=128, learning_rate=1e-4) is None


def test_a_short_pretraining_run_warns_and_its_card_fine_tunes_at_1e_3(tmp_path, caplog):
    from tests.test_pretrain_recipe import NAMES, PLACES, THINGS, _pretrain

    docs = [
        [f"{NAMES[d % 6]} took {THINGS[(d + k) % 6]} to {PLACES[(d * k + 1) % 6]} ." for k in range(8)]
        for d in range(12)
    ]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n\n".join("\n".join(doc) for doc in docs) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.pretraining.chance"):
        summary = _pretrain(str(corpus), tmp_path / "run", "--max_steps", "2", "--learning_rate", "1e-6")
    assert 0 < summary["chance"]["mlm_accuracy"] < 1 and summary["chance"]["nsp_accuracy"] >= 0.5
    warnings = [r.getMessage() for r in caplog.records if "learnt next to nothing" in r.getMessage()]
    assert len(warnings) == 1 and "--learning_rate 0.001 for this small model (hidden size 32" in warnings[0]
    card = (tmp_path / "run" / "README.md").read_text(encoding="utf-8")
    assert "--model_name_or_path" in card and " --learning_rate 0.001 ..." in card
