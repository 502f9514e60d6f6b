"""SQuAD v1.1 and v2.0 (§4.2-4.3, Tables 2-3), registered at import time: metrics (v2.0 adds the best-threshold,
answerable / unanswerable scores and the thresholds), the paper's hyperparameters and dev scores, local file names.
Reading, features and scoring: :class:`~hf_bert_tasks.tasks.squad.SquadTask`."""

from __future__ import annotations

import dataclasses

from ..base import MetricSpec, PaperDefaults, not_a_metric, register_task
from . import SquadTask

#: SQuAD scores are on 0-100, as the official scripts compute them.
_V1_SPECS = (
    MetricSpec("f1", "f1", "F1", scale=100.0),
    MetricSpec("exact_match", "exact_match", "Exact match", scale=100.0),
)
#: v2.0: the scores at the applied threshold, on answerable / unanswerable questions, at the best threshold, and the
#: thresholds themselves (differences of null and best span scores: not metrics).
_V2_SPECS = _V1_SPECS + (
    *(
        dataclasses.replace(m, key=f"best_{m.key}", display=f"{m.display} (best threshold)", config="best threshold")
        for m in _V1_SPECS
    ),
    not_a_metric("best_f1_thresh", "Null-score threshold of the best F1"),
    not_a_metric("best_exact_match_thresh", "Null-score threshold of the best exact match"),
    not_a_metric("null_score_diff_threshold", "Null-score threshold applied"),
    *(
        dataclasses.replace(m, key=f"{config}_{m.key}", display=f"{m.display} ({what})", config=config)
        for config, what in (("HasAns", "answerable"), ("NoAns", "unanswerable"))
        for m in _V1_SPECS
    ),
)


def _squad(name: str, description: str, v2: bool, specs, batch: int, epochs: float, paper: dict, source: str):
    files = {"train": "train-{}.json", "validation": "dev-{}.json", "test": "test-{}.json"}
    return register_task(
        SquadTask(
            name=name,
            description=description,
            hub_dataset=f"rajpurkar/{'squad_v2' if v2 else 'squad'}",
            hub_config=None,
            problem_type="question_answering",
            text_columns=("question", "context"),
            label_names=None,
            label_column="answers",
            metric_names=tuple(m.key for m in specs if m.is_metric),
            primary_metric="f1",
            metrics=specs,
            paper_defaults=PaperDefaults(
                learning_rate=5e-5,
                per_device_train_batch_size=batch,
                num_train_epochs=epochs,
                max_seq_length=384,
                lr_grid=(5e-5,),
            ),
            paper_results=paper,
            paper_source=source,
            version_2_with_negative=v2,
            local_files={split: (f.format("v2.0" if v2 else "v1.1"),) for split, f in files.items()},
        )
    )


_squad(
    "squad_v1",
    "SQuAD v1.1: extract the answer span to a question from a Wikipedia paragraph (EM, F1)",
    False,
    _V1_SPECS,
    32,
    3.0,
    {"BERT-base": {"exact_match": 80.8, "f1": 88.5}, "BERT-large": {"exact_match": 84.1, "f1": 90.9}},
    "BERT paper Table 2 (SQuAD 1.1 dev, single model, no TriviaQA; x100)",
)
_squad(
    "squad_v2",
    "SQuAD v2.0: extract the answer span or abstain (no-answer threshold tuned on dev; EM, F1)",
    True,
    _V2_SPECS,
    48,
    2.0,
    {"BERT-large": {"exact_match": 78.7, "f1": 81.9}},
    "BERT paper Table 3 (SQuAD 2.0 dev, single model, BERT-large only; x100)",
)
