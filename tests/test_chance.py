"""Chance is named in every family: multiple choice (SWAG) against ``1/k`` and its dev loss against ``ln k``
(hf_bert_tasks.tasks.metrics: ``chance_loss``, ``near_baseline``), the advice fitted to the model at hand
(``chance_advice``: a small model's learning rate, not a grid that cannot reach it), and a SWAG run at chance warned
end to end."""

import logging
import math

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.metrics import chance_advice, chance_loss, near_baseline
from tests.conftest import tiny_run_argv


def test_chance_loss_is_ln_k_of_the_choices():
    assert chance_loss(get_task("swag")) == (pytest.approx(1.3862944), 4)
    assert chance_loss(get_task("mnli")) == (pytest.approx(math.log(3)), 3)
    assert chance_loss(get_task("squad_v1")) is None and chance_loss(get_task("stsb")) is None


def test_swag_above_the_most_frequent_position_but_at_ln_4_is_warned():
    """The issue's run: 35 % against the dev set's most frequent position 31.5 %, loss ln 4."""
    message = near_baseline(get_task("swag"), {"eval_accuracy": 0.35, "baseline_accuracy": 0.315, "eval_loss": 1.3863})
    assert "dev accuracy 35.00 against the trivial baseline 31.50 (the most frequent position" in message
    assert "chance 1/4 = 25.00" in message
    assert "dev loss 1.3863 is a uniform guess's (ln 4 = 1.3863 over 4 choices)" in message


def test_swag_that_learnt_is_not_warned():
    assert (
        near_baseline(get_task("swag"), {"eval_accuracy": 0.35, "baseline_accuracy": 0.315, "eval_loss": 1.30}) is None
    )


def test_a_loss_at_ln_k_is_warned_without_accuracies():
    assert "ln 2 = 0.6931 over 2 classes" in near_baseline(get_task("mrpc"), {"eval_loss": 0.6931})


def test_advice_for_a_tiny_model_is_its_learning_rate_not_the_grid():
    advice = chance_advice(hidden_size=128, learning_rates=[2e-5], steps=40)
    assert "--learning_rate 0.001" in advice and "(it ran at 2e-05;" in advice
    assert "--lr_grid for" not in advice and "this run: 40" in advice


def test_advice_for_a_base_model_is_the_grid():
    advice = chance_advice(hidden_size=768, learning_rates=[2e-5])
    assert "--lr_grid for BERT-base sizes" in advice and "--learning_rate 0.001" not in advice


def test_a_tiny_model_already_at_its_rate_gets_no_rate_advice():
    assert "learning rate" not in chance_advice(hidden_size=128, learning_rates=[1e-3])


def test_a_swag_run_at_chance_ends_with_the_warning(capsys, tmp_path, tiny_bert_dir, caplog):
    from tests.test_swag import _swag_dir

    (tmp_path / "swag").mkdir()
    data = _swag_dir(tmp_path / "swag")
    argv = tiny_run_argv(
        "swag",
        tiny_bert_dir,
        tmp_path / "out",
        data_dir=data,
        learning_rate="1e-9",  # nothing learnt: the random head's near-flat logits
        num_train_epochs=1,
        per_device_train_batch_size=8,
        max_seq_length=48,
    )
    with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.tasks.metrics"):
        assert cli.main(["finetune", *argv]) == 0, capsys.readouterr().err[-2000:]
    warnings = [r.getMessage() for r in caplog.records if "learnt next to nothing" in r.getMessage()]
    assert len(warnings) == 1
    assert "over 4 choices" in warnings[0] and "chance 1/4 = 25.00" in warnings[0]
    assert "--learning_rate 0.001" in warnings[0]  # the fixture model: hidden size 32
