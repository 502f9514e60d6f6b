"""SWAG accuracy of hf_bert_tasks as an ``evaluate`` module (loads offline from the installed package).

    swag = evaluate.load(hf_bert_tasks.metric_path("swag"))
    swag.compute(predictions=[0, 3, 1], references=[0, 3, 2])   # {"accuracy": 0.666...}

Results: ``get_task("swag").compute_metrics``, accuracy of the chosen ending (0-3) over rows with a gold choice.
"""

import datasets
import evaluate
import numpy

from hf_bert_tasks import get_task


class Swag(evaluate.Metric):
    """SWAG multiple-choice accuracy (paper §4.4)."""

    def _info(self):
        return evaluate.MetricInfo(
            description="SWAG accuracy (hf_bert_tasks, 0-1 scale)",
            citation="Zellers et al., 2018, SWAG: A Large-Scale Adversarial Dataset for Grounded Commonsense Inference",
            inputs_description="predictions, references: index of the chosen / gold ending per example",
            features=datasets.Features(
                {"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}
            ),
        )

    def _compute(self, predictions, references):
        return get_task("swag").compute_metrics(numpy.asarray(predictions), numpy.asarray(references))
