"""SQuAD v2.0 scores of hf_bert_tasks as an ``evaluate`` module (loads offline from the installed package).

    squad_v2 = evaluate.load(hf_bert_tasks.metric_path("squad_v2"))
    squad_v2.compute(predictions=[{"id": "q1", "prediction_text": "", "no_answer_probability": 2.5}],
                     references=[{"id": "q1", "answers": {"text": [], "answer_start": []}}], no_answer_threshold=1.0)

Inputs and keys as the Hub's ``squad_v2`` (0-100); ``no_answer_probability``: each question's no-answer odds (the
recipe's ``null_odds.json``), unanswered above ``no_answer_threshold``. Results: ``squad_metrics.squad_v2``
(``evaluate-v2.0.py``'s port).
"""

import datasets
import evaluate

from hf_bert_tasks.tasks.squad import metrics as squad_metrics


class SquadV2(evaluate.Metric):
    """Official SQuAD v2.0 exact match / F1 with the no-answer threshold and its best-threshold search (§4.3)."""

    def _info(self):
        return evaluate.MetricInfo(
            description="SQuAD v2.0 exact match and F1 with no-answer odds (official script rules, 0-100 scale)",
            citation="Rajpurkar et al., 2018, Know What You Don't Know: Unanswerable Questions for SQuAD",
            inputs_description="predictions: {id, prediction_text, no_answer_probability}; references: {id, answers}",
            features=datasets.Features(
                {
                    "predictions": {
                        "id": datasets.Value("string"),
                        "prediction_text": datasets.Value("string"),
                        "no_answer_probability": datasets.Value("float64"),
                    },
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": datasets.Sequence(
                            {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
                        ),
                    },
                }
            ),
        )

    def _compute(self, predictions, references, no_answer_threshold=1.0):
        preds = {p["id"]: p["prediction_text"] for p in predictions}
        odds = {p["id"]: p["no_answer_probability"] for p in predictions}
        refs = {r["id"]: list(r["answers"]["text"]) for r in references}
        return squad_metrics.squad_v2(refs, preds, odds, na_prob_thresh=no_answer_threshold)
