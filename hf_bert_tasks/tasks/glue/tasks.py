"""The nine GLUE tasks (§4.1, Table 1) and their two problem types, registered at import time: columns, label names
and their coding in the files, metrics (:data:`GLUE_METRICS`), the paper's BERT-base/large test scores and each test
split's GLUE-server file. Reading, features and predictions: :class:`~hf_bert_tasks.tasks.glue.GlueTask`."""

from __future__ import annotations

from ..base import MetricSpec, PaperDefaults, register_task
from ..metrics import best_constant_class, constant_correlation
from ..problems import ProblemType, register_problem_type
from . import GlueTask

#: the cards' "How to use" code: a label for one sentence or a pair; a pair's raw score
_CLASSIFY_USAGE = """from transformers import pipeline

classifier = pipeline("text-classification", model="{{ target }}"{{ remote }})
{% if task.text_columns | length == 2 -%}
print(classifier({"text": "The cat sat on the mat.", "text_pair": "A cat was sitting on a mat."}))
{%- else -%}
print(classifier("A warm, funny and clever film."))
{%- endif %}"""
_SCORE_USAGE = """from transformers import pipeline

scorer = pipeline("text-classification", model="{{ target }}", function_to_apply="none"{{ remote }})
print(scorer({"text": "A man is playing a guitar.", "text_pair": "A man plays guitar."}))  # score 0-5"""
# GLUE's two problem types (``PretrainedConfig.problem_type`` values): one label or one score per sentence (pair).
# Both train on random batches, as transformers' run_glue.py does: length-grouped batches left MRPC and CoLA at the
# constant prediction at 1 epoch (CoLA MCC 0.00 in 3 seeds against run_glue's 8.96 +- 6.16, which the recipe
# matched exactly at seed 42 with random batches: docs/parity.md) and scored below random at 3 epochs (MRPC F1
# 83.0 +- 0.7 vs 83.5 +- 0.9; STS-B Spearman 81.77 +- 0.76 vs 82.36 +- 0.57: docs/results.md)
_SEQUENCE_CLASSIFICATION = {
    "model_head": "AutoModelForSequenceClassification",
    "hub_task": "text-classification",
    "pipeline": "text-classification",
}
register_problem_type(
    ProblemType(
        "single_label_classification",
        "labels",
        "SEQ_CLS",
        sentence_level=True,
        train_sampling_strategy="random",
        **_SEQUENCE_CLASSIFICATION,
        pipeline_options=(("truncation", True),),
        baseline=best_constant_class,
        card_usage=_CLASSIFY_USAGE,
        chance_over="classes",
    )
)
#: the pipeline returns the raw score (``function_to_apply="none"``), not a sigmoid of it. Label smoothing is refused
#: rather than ignored: a smoothed one-hot over one real output means nothing and Trainer's label smoother would
#: index the float scores; a user must not believe it was applied.
_NO_LABEL_SMOOTHING = (
    "--label_smoothing_factor {value}: task {task!r} is a regression (one real-valued output, mean squared error); "
    "label smoothing applies to class labels; expected 0"
)
register_problem_type(
    ProblemType(
        "regression",
        "examples",
        "SEQ_CLS",
        sentence_level=True,
        train_sampling_strategy="random",
        **_SEQUENCE_CLASSIFICATION,
        pipeline_options=(("truncation", True), ("function_to_apply", "none")),
        baseline=constant_correlation,
        card_usage=_SCORE_USAGE,
        label_text="a number (float score)",
        refused_flags=(("label_smoothing_factor", _NO_LABEL_SMOOTHING),),
    )
)

_PAIR = ("sentence1", "sentence2")
_GLUE_FILES = {"train": ("train.tsv",), "validation": ("dev.tsv",), "test": ("test.tsv",)}
#: GLUE metric declarations by key (values as computed by ``metrics.py``, 0-1; correlations in [-1, 1]).
GLUE_METRICS = {
    spec.key: spec
    for spec in (
        MetricSpec("accuracy", "accuracy", "Accuracy"),
        MetricSpec("f1", "f1", "F1"),
        MetricSpec("matthews_correlation", "matthews_correlation", "Matthews correlation"),
        MetricSpec("pearson", "pearsonr", "Pearson"),
        MetricSpec("spearmanr", "spearmanr", "Spearman"),
    )
}


def _glue(name, description, text_columns, label_names, metric_names, paper, server_file, **kw) -> GlueTask:
    """Register a GLUE task; its primary metric is the first of ``metric_names``, ``paper`` its BERT-base and
    BERT-large scores, ``server_file`` the GLUE-server file of the test split."""
    raw_map = kw.pop("raw_label_map", "ids")
    if raw_map == "ids" and label_names:
        raw_map = {str(i): n for i, n in enumerate(label_names)}
    elif raw_map == "names":
        raw_map = {n: n for n in label_names}
    paper_results = {model: {metric_names[0]: score} for model, score in zip(("BERT-base", "BERT-large"), paper)}
    return register_task(
        GlueTask(
            name=name,
            description=description,
            hub_dataset="nyu-mll/glue",
            hub_config=name,
            problem_type=kw.pop("problem_type", "single_label_classification"),
            text_columns=text_columns,
            label_names=label_names,
            metric_names=metric_names,
            primary_metric=metric_names[0],
            metrics=tuple(GLUE_METRICS[m] for m in metric_names),
            paper_defaults=PaperDefaults(),
            paper_results=kw.pop("paper_results", paper_results),
            paper_source="BERT paper Table 1 (GLUE test server; x100)",
            local_files=kw.pop("local_files", _GLUE_FILES),
            raw_label_map=raw_map,
            submission_files=kw.pop("submission_files", {"test": server_file}),
            **kw,
        )
    )


_glue(
    "cola",
    "CoLA: grammatical acceptability of one sentence (Matthews corr.)",
    ("sentence",),
    ("unacceptable", "acceptable"),
    ("matthews_correlation",),
    (52.1, 60.5),
    "CoLA.tsv",
    positional={"sentence": 3, "label": 1},
)
_glue(
    "sst2",
    "SST-2: binary sentiment of one movie-review sentence (accuracy)",
    ("sentence",),
    ("negative", "positive"),
    ("accuracy",),
    (93.5, 94.9),
    "SST-2.tsv",
)
_glue(
    "mrpc",
    "MRPC: are two news sentences paraphrases (F1, accuracy)",
    _PAIR,
    ("not_equivalent", "equivalent"),
    ("f1", "accuracy"),
    (88.9, 89.3),
    "MRPC.tsv",
    file_columns={"sentence1": "#1 String", "sentence2": "#2 String"},
    file_label_column="Quality",
)
_glue(
    "stsb",
    "STS-B: semantic similarity score 0-5 of a sentence pair (Pearson, Spearman; regression)",
    _PAIR,
    None,
    ("spearmanr", "pearson"),
    (85.8, 86.5),
    "STS-B.tsv",
    problem_type="regression",
    raw_label_map=None,
    file_label_column="score",
    submission_labels="float",
)
_glue(
    "qqp",
    "QQP: are two Quora questions duplicates (F1, accuracy)",
    ("question1", "question2"),
    ("not_duplicate", "duplicate"),
    ("f1", "accuracy"),
    (71.2, 72.1),
    "QQP.tsv",
    file_label_column="is_duplicate",
)
_glue(
    "mnli",
    "MNLI: entailment / neutral / contradiction (matched and mismatched accuracy)",
    ("premise", "hypothesis"),
    ("entailment", "neutral", "contradiction"),
    ("accuracy",),
    (),
    None,  # matched + mismatched, given below
    paper_results={
        "BERT-base": {"accuracy": 84.6, "accuracy_mm": 83.4},
        "BERT-large": {"accuracy": 86.7, "accuracy_mm": 85.9},
    },
    raw_label_map="names",
    file_columns={"premise": "sentence1", "hypothesis": "sentence2"},
    file_label_column="gold_label",
    jsonl_columns={
        "premise": ("premise", "sentence1"),
        "hypothesis": ("hypothesis", "sentence2"),
        "label": ("label", "gold_label"),
    },
    eval_splits=("validation_matched", "validation_mismatched"),
    # the diagnostic set (AX): the GLUE server scores it with the MNLI model's predictions; locally
    # glue_data/diagnostic/diagnostic.tsv copied into the MNLI folder, from the Hub nyu-mll/glue's "ax" config
    test_splits=("test_matched", "test_mismatched", "test_ax"),
    metric_suffixes={"validation_mismatched": "_mm"},
    local_files={
        "train": ("train.tsv", "train.jsonl"),
        "validation_matched": ("dev_matched.tsv", "dev_matched.jsonl"),
        "validation_mismatched": ("dev_mismatched.tsv", "dev_mismatched.jsonl"),
        "test_matched": ("test_matched.tsv",),
        "test_mismatched": ("test_mismatched.tsv",),
        "test_ax": ("diagnostic.tsv",),
    },
    hub_test_configs={"test_ax": "ax"},
    submission_files={"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv", "test_ax": "AX.tsv"},
    submission_labels="name",
)
_glue(
    "qnli",
    "QNLI: does the sentence answer the question (accuracy)",
    ("question", "sentence"),
    ("entailment", "not_entailment"),
    ("accuracy",),
    (90.5, 92.7),
    "QNLI.tsv",
    raw_label_map="names",
    submission_labels="name",
)
_glue(
    "rte",
    "RTE: textual entailment, 2 classes (accuracy)",
    _PAIR,
    ("entailment", "not_entailment"),
    ("accuracy",),
    (66.4, 70.1),
    "RTE.tsv",
    raw_label_map="names",
    submission_labels="name",
)
_glue(
    "wnli",
    "WNLI: Winograd NLI (accuracy; the paper excludes it from Table 1)",
    _PAIR,
    ("not_entailment", "entailment"),
    ("accuracy",),
    (),
    "WNLI.tsv",
)
