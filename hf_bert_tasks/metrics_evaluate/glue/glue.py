"""GLUE metrics of hf_bert_tasks as an ``evaluate`` module (loads offline from the installed package).

    import evaluate, hf_bert_tasks
    glue = evaluate.load(hf_bert_tasks.metric_path("glue"), "mrpc")
    glue.compute(predictions=[1, 0, 1], references=[1, 1, 1])   # {"f1": 0.8, "accuracy": 0.666...}

The configuration is a GLUE task name (the Hub's ``mnli_matched``/``mnli_mismatched`` mean ``mnli``). Results:
``get_task(config).compute_metrics(predictions, references)``, the recipe's ``eval_<metric>`` (0-1 scale).
"""

import datasets
import evaluate
import numpy

from hf_bert_tasks import get_task, list_tasks
from hf_bert_tasks.tasks.glue import GlueTask

ALIASES = {"mnli_matched": "mnli", "mnli_mismatched": "mnli"}


class Glue(evaluate.Metric):
    """GLUE task metrics (see the module docstring)."""

    def _task(self):
        name = ALIASES.get(self.config_name, self.config_name)
        glue_tasks = [known for known in list_tasks() if isinstance(get_task(known), GlueTask)]
        if name not in glue_tasks:
            raise KeyError(f"glue metric: unknown configuration {self.config_name!r}; expected one of {glue_tasks}")
        return get_task(name)

    def _info(self):
        task = self._task()
        dtype = "float64" if task.problem_type == "regression" else "int64"
        return evaluate.MetricInfo(
            description=f"GLUE {task.name}: {', '.join(task.metric_names)} (hf_bert_tasks.tasks.metrics, 0-1 scale)",
            citation="Wang et al., 2018, GLUE: A Multi-Task Benchmark and Analysis Platform for NLU",
            inputs_description="predictions, references: one label id (float score for stsb) per example",
            features=datasets.Features({"predictions": datasets.Value(dtype), "references": datasets.Value(dtype)}),
        )

    def _compute(self, predictions, references):
        return self._task().compute_metrics(numpy.asarray(predictions), numpy.asarray(references))
