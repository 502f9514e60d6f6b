"""Problem types are declared by the task family that introduces them (``tasks/problems.py``): what the fine-tune
Trainer's loss and the LoRA mode read comes from the registered ``ProblemType``, not from tables of their own."""

import dataclasses

import pytest

from hf_bert_tasks import get_task, register_task
from hf_bert_tasks.finetune.trainer import loss_unit
from hf_bert_tasks.tasks import PROBLEM_TYPES, ProblemType, get_problem_type, register_problem_type
from hf_bert_tasks.tasks.base import TASK_REGISTRY

#: the paper's problem types, each with its loss unit and peft task type (docs/design.md, "Loss normalisation";
#: peft's TaskType names)
EXPECTED = {
    "single_label_classification": ("labels", "SEQ_CLS"),
    "regression": ("examples", "SEQ_CLS"),
    "multiple_choice": ("labels", None),
    "token_classification": ("labels", "TOKEN_CLS"),
    "question_answering": ("examples", "QUESTION_ANS"),
}


@pytest.fixture
def ordinal_problem():
    """A problem type no built-in family has, registered as a family folder would (removed afterwards)."""
    problem = register_problem_type(ProblemType("ordinal_regression", "examples", "SEQ_CLS", sentence_level=True))
    yield problem
    PROBLEM_TYPES.pop(problem.name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_builtin_family_registers_its_problem_type(name):
    problem = get_problem_type(name)
    assert (problem.loss_unit, problem.peft_task_type) == EXPECTED[name]


def test_every_registered_task_has_a_registered_problem_type():
    assert {task.problem_type for task in TASK_REGISTRY.values()} <= set(PROBLEM_TYPES)


def test_the_loss_unit_is_read_from_the_problem_type(ordinal_problem):
    assert loss_unit("ordinal_regression") == "examples"


def test_lora_reads_the_peft_task_type_from_the_problem_type(ordinal_problem):
    from transformers import BertConfig, BertForSequenceClassification

    from hf_bert_tasks.modes.lora.mode import lora_config

    config = BertConfig(
        vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
    )
    assert lora_config(BertForSequenceClassification(config), "ordinal_regression").task_type == "SEQ_CLS"


def test_a_task_of_a_newly_registered_problem_type_registers(ordinal_problem):
    task = register_task(dataclasses.replace(get_task("stsb"), name="ordinal_stsb", problem_type="ordinal_regression"))
    try:
        assert task.problem is ordinal_problem
    finally:
        TASK_REGISTRY.pop(task.name)


def test_a_task_of_an_unregistered_problem_type_is_refused():
    with pytest.raises(ValueError, match="problem_type 'ranking' is not one of"):
        register_task(dataclasses.replace(get_task("stsb"), name="ranking_task", problem_type="ranking"))


def test_a_different_problem_type_under_a_taken_name_is_refused():
    with pytest.raises(ValueError, match="'regression' is already registered"):
        register_problem_type(ProblemType("regression", "labels"))


def test_a_loss_unit_other_than_labels_or_examples_is_refused():
    with pytest.raises(ValueError, match="loss_unit 'tokens'; expected 'labels' or 'examples'"):
        ProblemType("span_tagging", "tokens")
