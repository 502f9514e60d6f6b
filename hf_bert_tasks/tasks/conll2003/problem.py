"""The problem type CoNLL-2003 introduces, ``token_classification``: a label per word, on its first WordPiece (paper
§5.3), registered when the family is imported (:func:`hf_bert_tasks.tasks.problems.register_problem_type`): its loss
unit, peft task type, sampler, serving, trivial baseline, card usage and user-file label text."""

from __future__ import annotations

from ..problems import ProblemType, register_problem_type
from .metrics import all_outside_scores

#: what a user file's label column holds (``label_text``; ``{labels}``: the task's tag names)
LABEL_TEXT = (
    "a list of tags per row (JSON Lines), or 'token tag' lines (CoNLL text); your own tags (IOB1/IOB2/BIOES: the "
    "train file's, or --label_list), else {labels}"
)
#: the card's "How to use" code: the pipeline with the aggregation the model was scored with
CARD_USAGE = """from transformers import pipeline

ner = pipeline("token-classification", model="{{ target }}", aggregation_strategy="first"{{ remote }})
# 'first': each word takes its first WordPiece's label, as the model was evaluated
print(ner("George Washington went to Washington."))"""

#: a label per (first) WordPiece; random batches, as transformers' run_ner.py (length-grouped ones scored 2.8 F1
#: below run_ner over 3 seeds where random ones matched it: docs/parity.md)
#: served by transformers' token-classification pipeline with ``aggregation_strategy="first"``: a word's label is its
#: first sub-token's, as the model was trained (paper §5.3;
#: docs/design.md, 'pipeline_for uses aggregation_strategy="first"')
register_problem_type(
    ProblemType(
        "token_classification",
        "labels",
        "TOKEN_CLS",
        train_sampling_strategy="random",
        model_head="AutoModelForTokenClassification",
        hub_task="token-classification",
        pipeline="token-classification",
        pipeline_options=(("aggregation_strategy", "first"),),
        baseline=all_outside_scores,
        baseline_answer="every word tagged O",
        label_text=LABEL_TEXT,
        card_usage=CARD_USAGE,
    )
)
