"""Problem types are declared by the task family that introduces them (``tasks/problems.py``): what the fine-tune
Trainer's loss and the LoRA mode read comes from the registered ``ProblemType``, not from tables of their own."""

import dataclasses
import importlib
import re
import types

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


#: where a problem type's models are served: (Auto class, Hub task, pipeline); transformers 5 has no
#: question-answering or multiple-choice pipeline (the package registers extractive-question-answering)
SERVED = {
    "single_label_classification": (
        "AutoModelForSequenceClassification",
        "text-classification",
        "text-classification",
    ),
    "regression": ("AutoModelForSequenceClassification", "text-classification", "text-classification"),
    "multiple_choice": ("AutoModelForMultipleChoice", "multiple-choice", None),
    "token_classification": ("AutoModelForTokenClassification", "token-classification", "token-classification"),
    "question_answering": ("AutoModelForQuestionAnswering", "question-answering", "extractive-question-answering"),
}
#: a sequence-level score head served by the text-classification pipeline returning the raw score
SCORE_HEAD = {
    "model_head": "AutoModelForSequenceClassification",
    "hub_task": "text-classification",
    "pipeline": "text-classification",
    "pipeline_options": (("function_to_apply", "none"),),
}


@pytest.fixture
def registries():
    """Both registries as they were before the test, whatever it registered or replaced (also on failure)."""
    problems, tasks = dict(PROBLEM_TYPES), dict(TASK_REGISTRY)
    yield
    PROBLEM_TYPES.clear()
    PROBLEM_TYPES.update(problems)
    TASK_REGISTRY.clear()
    TASK_REGISTRY.update(tasks)


@pytest.fixture
def ordinal_problem():
    """A problem type no built-in family has, registered as a family folder would (removed afterwards)."""
    problem = register_problem_type(
        ProblemType("ordinal_regression", "examples", "SEQ_CLS", sentence_level=True, **SCORE_HEAD)
    )
    yield problem
    PROBLEM_TYPES.pop(problem.name)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_builtin_family_registers_its_problem_type(name):
    problem = get_problem_type(name)
    assert (problem.loss_unit, problem.peft_task_type) == EXPECTED[name]


@pytest.mark.parametrize("name", sorted(SERVED))
def test_each_builtin_problem_type_names_its_model_head_hub_task_and_pipeline(name):
    problem = get_problem_type(name)
    assert (problem.model_head, problem.hub_task, problem.pipeline) == SERVED[name]


@pytest.mark.parametrize("name", sorted(PROBLEM_TYPES))
def test_each_problem_types_pipeline_is_served_by_the_installed_transformers(name):
    from transformers.pipelines import PIPELINE_REGISTRY

    problem = get_problem_type(name)
    if problem.pipeline_module:
        importlib.import_module(problem.pipeline_module)
    assert problem.pipeline is None or problem.pipeline in PIPELINE_REGISTRY.get_supported_tasks()


@pytest.mark.parametrize("name", sorted(PROBLEM_TYPES))
def test_each_problem_types_model_head_is_a_transformers_auto_class(name):
    import transformers

    assert getattr(transformers, get_problem_type(name).model_head).__name__.startswith("AutoModelFor")


@pytest.mark.parametrize("name", sorted(TASK_REGISTRY))
def test_a_tasks_model_head_and_hub_task_are_its_problem_types(name):
    task = get_task(name)
    assert (task.model_head, task.pipeline_tag) == SERVED[task.problem_type][:2]


def test_a_task_of_a_problem_type_no_longer_registered_says_so(registries):
    PROBLEM_TYPES.pop("regression")
    with pytest.raises(ValueError, match="task 'stsb': problem type 'regression' is not registered"):
        get_task("stsb").model_head  # noqa: B018 - the property raises


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


def test_a_different_problem_type_under_a_taken_name_is_refused_naming_what_differs():
    with pytest.raises(ValueError, match="'regression' is already registered, with other loss_unit, peft_task_type"):
        register_problem_type(ProblemType("regression", "labels", **SCORE_HEAD))


def test_registering_an_equal_problem_type_again_is_a_no_op():
    again = dataclasses.replace(get_problem_type("regression"))
    assert register_problem_type(again) == again and PROBLEM_TYPES["regression"] is not again


def test_a_problem_type_hashes_by_name_even_with_a_dict_in_its_pipeline_options():
    problem = ProblemType("span_tagging", "labels", **(SCORE_HEAD | {"pipeline_options": (("kw", {"a": 1}),)}))
    assert hash(problem) == hash("span_tagging")


def test_a_loss_unit_other_than_labels_or_examples_is_refused():
    with pytest.raises(ValueError, match="loss_unit 'tokens'; expected 'labels' or 'examples'"):
        ProblemType("span_tagging", "tokens", **SCORE_HEAD)


@pytest.mark.parametrize(
    ("field", "value", "what"),
    [
        ("label_text", "{labels} as {'text': ...}", "label_text"),
        ("label_text", "{labels} up to {last}", "label_text"),
        ("refused_flags", (("fp16", "--fp16 on {task_name}"),), "refused_flags['fp16']"),
    ],
)
def test_a_label_text_or_refusal_line_str_format_cannot_fill_is_refused(field, value, what):
    with pytest.raises(ValueError, match=rf"problem type 'span_tagging': {re.escape(what)} .* is not a str.format"):
        ProblemType("span_tagging", "labels", **SCORE_HEAD, **{field: value})


def test_a_model_head_that_is_not_an_auto_class_name_is_refused():
    with pytest.raises(ValueError, match="model_head 'BertModel'; expected a transformers Auto class name"):
        ProblemType("span_tagging", "labels", **(SCORE_HEAD | {"model_head": "BertModel"}))


def test_a_pipeline_module_without_a_pipeline_is_refused():
    with pytest.raises(ValueError, match="pipeline_module 'my_pipes' without a pipeline"):
        ProblemType("span_tagging", "labels", **(SCORE_HEAD | {"pipeline": None, "pipeline_module": "my_pipes"}))


@pytest.mark.parametrize(
    ("architecture", "problem_type", "expected"),
    [
        ("BertForSequenceClassification", None, "single_label_classification"),
        ("BertForSequenceClassification", "single_label_classification", "single_label_classification"),
        ("BertForSequenceClassification", "regression", "regression"),
        ("BertForTokenClassification", None, "token_classification"),
        ("BertForQuestionAnswering", None, "question_answering"),
        ("BertForMultipleChoice", None, "multiple_choice"),
        ("BertModel", None, None),
    ],
)
def test_a_saved_models_problem_type_is_found_from_its_architecture(architecture, problem_type, expected):
    from hf_bert_tasks.hub.push import problem_type_of

    config = types.SimpleNamespace(model_type="bert", architectures=[architecture], problem_type=problem_type)
    assert getattr(problem_type_of(config), "name", None) == expected


def test_a_newly_registered_problem_types_models_are_found_without_a_table_to_edit(registries):
    """A problem type whose model head no other has: ``pipeline_for`` serves its models by its pipeline and options
    (``problem_type_of``), with nothing to add to ``hub/push.py``; a feature-based model by its
    ``task_problem_type``."""
    from hf_bert_tasks.hub.push import problem_type_of

    head = SCORE_HEAD | {"model_head": "AutoModelForNextSentencePrediction"}
    problem = register_problem_type(ProblemType("pair_order", "labels", **head))
    config = types.SimpleNamespace(model_type="bert", architectures=["BertForNextSentencePrediction"])
    assert problem_type_of(config) is problem
    frozen = types.SimpleNamespace(model_type="bert_feature_based", task_problem_type="pair_order")
    assert problem_type_of(frozen) is problem


def test_a_model_the_recipe_saved_is_served_by_the_problem_type_it_recorded(ordinal_problem, tiny_bert_dir, tmp_path):
    """A plug-in problem type sharing the sequence-classification head with GLUE's: the recipe's model loader
    (``load_task_model``) records it in the config (``task_problem_type``, which ``AutoConfig.from_pretrained`` alone
    would drop), so ``problem_type_of`` finds it after a save and a load (``config.problem_type`` could not:
    transformers 5.13 accepts only its own three names there)."""
    from transformers import AutoConfig

    from hf_bert_tasks.hub.push import problem_type_of
    from hf_bert_tasks.modes import load_task_model

    task = dataclasses.replace(get_task("stsb"), name="ordinal_stsb", problem_type="ordinal_regression")
    args = types.SimpleNamespace(model_name_or_path=tiny_bert_dir, model_revision=None, cache_dir=None)
    load_task_model(task, args).save_pretrained(tmp_path)
    assert problem_type_of(AutoConfig.from_pretrained(tmp_path)) is ordinal_problem


@pytest.mark.parametrize("name", sorted(SERVED))
def test_each_builtin_problem_type_declares_its_trivial_baseline(name):
    assert callable(get_problem_type(name).baseline)


def test_the_trivial_baseline_is_the_problem_types_rule(registries):
    """A new problem type's baseline is its own rule (here: always 0.25), read by ``constant_scores``; without a rule
    no baseline is reported."""
    import datasets

    from hf_bert_tasks.tasks.metrics import constant_scores

    quarter = {"baseline": lambda task, raw: dict.fromkeys(task.metric_names, 0.25)}
    problem = register_problem_type(ProblemType("graded_pairs", "examples", "SEQ_CLS", **SCORE_HEAD, **quarter))
    task = register_task(dataclasses.replace(get_task("stsb"), name="graded_stsb", problem_type="graded_pairs"))
    raw = datasets.Dataset.from_dict({"sentence1": ["a", "b"], "sentence2": ["c", "d"], "label": [1.0, 3.0]})
    assert constant_scores(task, raw) == {"pearson": 0.25, "spearmanr": 0.25}
    PROBLEM_TYPES["graded_pairs"] = dataclasses.replace(problem, baseline=None)
    assert constant_scores(task, raw) == {}


@pytest.mark.parametrize("name", sorted(PROBLEM_TYPES))
def test_each_problem_types_refused_flags_are_training_arguments_fields(name):
    from transformers import TrainingArguments

    fields = {f.name for f in dataclasses.fields(TrainingArguments)}
    assert {flag for flag, _ in get_problem_type(name).refused_flags} <= fields


def test_a_new_problem_types_refused_flag_is_refused_with_its_line(tmp_path, registries):
    """Its tasks refuse the flag with the problem type's own line, before any data is loaded
    (``finalize_arguments``); the other problem types' tasks take it."""
    from hf_bert_tasks.finetune.args import DataArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments, finalize_arguments

    line = "--label_smoothing_factor {value}: task {task!r} grades pairs; expected 0"
    register_problem_type(
        ProblemType(
            "graded_pairs", "examples", "SEQ_CLS", **SCORE_HEAD, refused_flags=(("label_smoothing_factor", line),)
        )
    )
    task = register_task(dataclasses.replace(get_task("stsb"), name="graded_stsb", problem_type="graded_pairs"))
    args = FinetuneTrainingArguments(output_dir=str(tmp_path), label_smoothing_factor=0.1)
    with pytest.raises(ValueError, match=r"^--label_smoothing_factor 0.1: task 'graded_stsb' grades pairs"):
        finalize_arguments(task, DataArguments(task="graded_stsb"), args)
    finalize_arguments(get_task("mrpc"), DataArguments(task="mrpc"), args)  # classification: taken


#: the constant answer's words and what a uniform guess spreads over (None: no known chance loss), per problem type
CHANCE = {
    "single_label_classification": ("the best constant answer", "classes"),
    "regression": ("the best constant answer", None),
    "multiple_choice": ("the most frequent position", "choices"),
    "token_classification": ("every word tagged O", None),
    "question_answering": ("the empty answer to every question", None),
}


@pytest.mark.parametrize("name", sorted(CHANCE))
def test_each_builtin_problem_type_names_its_constant_answer_and_chance(name):
    problem = get_problem_type(name)
    assert (problem.baseline_answer, problem.chance_over) == CHANCE[name]


@pytest.mark.parametrize(
    ("task_name", "score", "words"),
    [("conll2003", 0.5, "every word tagged O"), ("squad_v2", 50.0, "the empty answer")],  # F1 on 0-1 / 0-100
)
def test_the_near_baseline_warning_names_the_problem_types_constant_answer(task_name, score, words):
    from hf_bert_tasks.tasks.metrics import near_baseline

    task = get_task(task_name)
    key = task.primary_metric
    message = near_baseline(task, {f"eval_{key}": score, f"baseline_{key}": score})
    assert f"against the trivial baseline 50.00 ({words}" in message


def test_a_chance_over_other_than_classes_or_choices_is_refused():
    with pytest.raises(ValueError, match="chance_over 'labels'; expected 'classes', 'choices' or None"):
        ProblemType("span_tagging", "labels", **SCORE_HEAD, chance_over="labels")


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("mrpc", "not_equivalent, equivalent (names or ids 0-1)"),
        ("stsb", "a number (float score)"),
        ("squad_v2", "{'text': [...], 'answer_start': [...]} per question (JSON Lines; [] = no answer)"),
        ("swag", "0, 1, 2, 3 (names or ids 0-3)"),
    ],
)
def test_a_tasks_label_description_is_its_problem_types_label_text(name, text):
    assert get_task(name).label_description() == text


def test_the_conll_label_description_ends_with_its_tag_names():
    assert (
        get_task("conll2003")
        .label_description()
        .endswith("--label_list), else O, B-PER, I-PER, B-ORG, I-ORG, B-LOC, I-LOC, B-MISC, I-MISC")
    )


@pytest.mark.parametrize("name", sorted(TASK_REGISTRY))
@pytest.mark.parametrize("remote", ["", ", trust_remote_code=True"])
def test_each_tasks_card_usage_renders_to_python_naming_the_target(name, remote):
    """Every registered task's "How to use" code (its problem type's ``card_usage``) renders and compiles, loads the
    target and passes ``remote`` on; ``tests/test_serving.py`` runs it on saved models."""
    import jinja2

    task = get_task(name)
    usage = jinja2.Template(task.problem.card_usage, undefined=jinja2.StrictUndefined)
    code = usage.render(target="org/model", remote=remote, task=task)
    compile(code, f"<{name} card usage>", "exec")
    loads = [line for line in code.splitlines() if '"org/model"' in line]
    assert loads and all(line.count('"org/model"') == line.count(remote or '"org/model"') for line in loads)
    assert ("trust_remote_code" in code) == bool(remote)


def test_a_problem_type_without_card_usage_loads_its_model_head():
    import jinja2

    from hf_bert_tasks.tasks.problems import GENERIC_CARD_USAGE

    problem = ProblemType(
        "pair_order", "labels", **(SCORE_HEAD | {"model_head": "AutoModelForNextSentencePrediction"})
    )
    assert problem.card_usage == GENERIC_CARD_USAGE
    task = types.SimpleNamespace(model_head=problem.model_head)  # what the template reads of the task
    code = jinja2.Template(problem.card_usage, undefined=jinja2.StrictUndefined).render(
        target="org/m", remote="", task=task
    )
    assert code.splitlines()[0] == "from transformers import AutoTokenizer, AutoModelForNextSentencePrediction"
    assert 'model = AutoModelForNextSentencePrediction.from_pretrained("org/m")' in code


_TRUNCATE = {"truncation": True}


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"architectures": ["BertForSequenceClassification"]}, ("text-classification", _TRUNCATE)),
        (
            {"architectures": ["BertForSequenceClassification"], "problem_type": "regression"},
            ("text-classification", _TRUNCATE | {"function_to_apply": "none"}),
        ),
        (
            {"architectures": ["BertForTokenClassification"]},
            ("token-classification", {"aggregation_strategy": "first"}),
        ),
        ({"architectures": ["BertForQuestionAnswering"]}, ("extractive-question-answering", {})),
        ({"architectures": ["BertForPreTraining"]}, ("fill-mask", {"tokenizer_kwargs": _TRUNCATE})),
        (
            {"model_type": "bert_feature_based", "architectures": ["X"], "task_problem_type": "regression"},
            ("text-classification", _TRUNCATE | {"function_to_apply": "none"}),
        ),
    ],
)
def test_pipeline_for_builds_the_problem_types_pipeline_with_its_options(monkeypatch, config, expected):
    """What ``pipeline_for`` asks ``transformers.pipeline`` for, per saved architecture (stubs for the config and the
    pipeline: no model is loaded)."""
    import transformers

    from hf_bert_tasks.hub.push import pipeline_for

    saved = types.SimpleNamespace(**({"model_type": "bert", "problem_type": None} | config))
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", lambda *args, **kwargs: saved)
    monkeypatch.setattr(transformers, "pipeline", lambda task, model, revision, token, **options: (task, options))
    assert pipeline_for("org/m") == expected


def test_pipeline_for_refuses_a_multiple_choice_model_naming_its_auto_class(monkeypatch):
    import transformers

    from hf_bert_tasks.hub.push import pipeline_for

    saved = types.SimpleNamespace(
        model_type="bert_feature_based", architectures=["X"], task_problem_type="multiple_choice"
    )
    monkeypatch.setattr(transformers.AutoConfig, "from_pretrained", lambda *args, **kwargs: saved)
    with pytest.raises(ValueError, match="no transformers pipeline serves multiple_choice models; load it with Auto"):
        pipeline_for("org/m")
