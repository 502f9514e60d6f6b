"""SQuAD v1.1 EM/F1 of hf_bert_tasks as an ``evaluate`` module (loads offline from the installed package).

    squad = evaluate.load(hf_bert_tasks.metric_path("squad"))
    squad.compute(predictions=[{"id": "q1", "prediction_text": "Denver Broncos"}],
                  references=[{"id": "q1", "answers": {"text": ["Denver Broncos"], "answer_start": [177]}}])
    # {"f1": 100.0, "exact_match": 100.0}

Inputs as the Hub's ``squad``. Results: ``get_task("squad_v1").compute_metrics`` (``evaluate-v1.1.py``'s port, 0-100).
"""

import datasets
import evaluate

from hf_bert_tasks import get_task


class Squad(evaluate.Metric):
    """Official SQuAD v1.1 exact match and F1 (paper §4.2)."""

    def _info(self):
        return evaluate.MetricInfo(
            description="SQuAD v1.1 exact match and F1 (official script rules, 0-100 scale)",
            citation="Rajpurkar et al., 2016, SQuAD: 100,000+ Questions for Machine Comprehension of Text",
            inputs_description="predictions: {id, prediction_text}; references: {id, answers: {text, answer_start}}",
            features=datasets.Features(
                {
                    "predictions": {"id": datasets.Value("string"), "prediction_text": datasets.Value("string")},
                    "references": {
                        "id": datasets.Value("string"),
                        "answers": datasets.Sequence(
                            {"text": datasets.Value("string"), "answer_start": datasets.Value("int32")}
                        ),
                    },
                }
            ),
        )

    def _compute(self, predictions, references):
        preds = {p["id"]: p["prediction_text"] for p in predictions}
        refs = {r["id"]: list(r["answers"]["text"]) for r in references}
        return get_task("squad_v1").compute_metrics(preds, refs)
