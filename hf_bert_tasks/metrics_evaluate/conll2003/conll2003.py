"""CoNLL-2003 entity-level metrics of hf_bert_tasks as an ``evaluate`` module (seqeval; offline).

    conll = evaluate.load(hf_bert_tasks.metric_path("conll2003"))
    conll.compute(predictions=[["B-PER", "I-PER", "O"]], references=[["B-PER", "I-PER", "O"]], mode="strict")

Inputs: tag names per word and sentence (as the Hub's ``seqeval``). Results: ``ner_metrics.entity_metrics`` (0-1),
``mode="strict"`` the recipe's ``eval_f1`` …, ``mode="conlleval"`` its ``eval_conlleval_*`` (the script's rule).
"""

import datasets
import evaluate

from hf_bert_tasks.tasks.conll2003 import metrics as ner_metrics


class Conll2003(evaluate.Metric):
    """Entity-level precision / recall / F1 (paper §5.3, CoNLL-2003 NER)."""

    def _info(self):
        return evaluate.MetricInfo(
            description="CoNLL-2003 NER: entity-level micro P/R/F1 and word accuracy (seqeval, 0-1 scale)",
            citation="Tjong Kim Sang and De Meulder, 2003; seqeval (Nakayama, 2018)",
            inputs_description="predictions, references: lists of IOB2 tag names per sentence",
            features=datasets.Features(
                {
                    "predictions": datasets.Sequence(datasets.Value("string")),
                    "references": datasets.Sequence(datasets.Value("string")),
                }
            ),
        )

    def _compute(self, predictions, references, mode="strict"):
        return ner_metrics.entity_metrics(references, predictions, mode=mode)
