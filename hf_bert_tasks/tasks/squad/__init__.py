"""SQuAD v1.1 and v2.0 (paper §4.2, §4.3; Tables 2 and 3): extractive question answering (:class:`SquadTask`;
registered in :mod:`.squad_tasks`).

Hub sources: ``rajpurkar/squad`` and ``rajpurkar/squad_v2`` (``answers = {"text": [...], "answer_start": [...]}``,
empty for an unanswerable v2 question). Local source: the official JSON files (``train-v1.1.json``, ``dev-v1.1.json``,
v2.0 alike, optional unlabelled ``test-v*.json``) read into the Hub's columns. Features: :mod:`hf_bert_tasks.tasks.squad.features`;
post-processing: :mod:`hf_bert_tasks.tasks.squad.postprocess`; scores: :mod:`hf_bert_tasks.tasks.squad.metrics` (the official
scripts' rules; recomputing them: docs/design.md, 'tasks/squad/: recomputing SQuAD scores')."""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..base import Task
from ..files import write_json
from ..problems import ProblemType, register_problem_type
from . import features as qa
from . import metrics as SM
from .postprocess import QAPredictions, features_to_arrays, postprocess_qa_predictions

#: the cards' "How to use" code: the package's pipeline (transformers 5 has no question-answering one)
_CARD_USAGE = """# registers "extractive-question-answering": the recipe's windows, n-best and null-answer rules
import hf_bert_tasks.tasks.squad.pipeline
from transformers import pipeline

qa = pipeline("extractive-question-answering", model="{{ target }}"{{ remote }})  # windows as trained (config.json)
print(qa(question="Who wrote the letter?", context="The letter was written by Jane in May."))"""
# a start and an end position per window (one loss term: (start CE + end CE) / 2 per example); random batches, as
# transformers' run_qa.py trains: length-grouped ones put one paragraph's windows together (its questions make
# windows of nearly one length), 21 paragraphs per batch of 32 instead of 30 (issue 59, docs/parity-squad.md).
# Transformers 5 removed the question-answering pipeline: the package's ``extractive-question-answering``
# (``squad/pipeline.py``: the recipe's windows, n-best and null-answer rules) serves it. Its evaluation windows carry
# no answer positions: no loss (``--prediction_loss_only`` refused), and its scores need predictions.
_NO_LOSS = (
    "--prediction_loss_only: task {task!r} evaluates post-processed answers; its evaluation windows carry no answer "
    "positions, so there is no loss to report; expected the flag left out"
)
register_problem_type(
    ProblemType(
        "question_answering",
        "examples",
        "QUESTION_ANS",
        train_sampling_strategy="random",
        model_head="AutoModelForQuestionAnswering",
        hub_task="question-answering",
        pipeline="extractive-question-answering",
        pipeline_module="hf_bert_tasks.tasks.squad.pipeline",
        baseline=SM.empty_answer_scores,
        eval_loss=False,
        card_usage=_CARD_USAGE,
        label_text="{{'text': [...], 'answer_start': [...]}} per question (JSON Lines; [] = no answer)",
        baseline_answer="the empty answer to every question",
        refused_flags=(("prediction_loss_only", _NO_LOSS),),
    )
)


@dataclass
class SquadTask(Task):
    """SQuAD v1.1 / v2.0 with an ``AutoModelForQuestionAnswering`` head (start/end logits over tokens).

    Attributes (besides :class:`Task`'s; all but the first are :attr:`data_options`):
        version_2_with_negative: SQuAD 2.0 (unanswerable questions, null answer from ``[CLS]``).
        doc_stride, max_query_length: window settings (see :class:`hf_bert_tasks.tasks.squad.features.WindowConfig`).
        n_best_size, max_answer_length: post-processing settings (20 and 30, google's ``run_squad.py``).
        null_score_diff_threshold: tau for v2 predictions (``None`` = 0.0); metrics always include the best tau.
    """

    #: the official files (``{"data": [...]}``, :meth:`read_file`) and ``run_qa.py``'s JSON Lines; no CSV (its
    #: ``answers`` cell would be text, not the ``{"text", "answer_start"}`` mapping)
    user_file_formats: ClassVar[dict[str, str]] = {
        ".json": "official SQuAD JSON, or JSON Lines",
        ".jsonl": "JSON Lines",
    }

    version_2_with_negative: bool = False
    doc_stride: int = 128
    max_query_length: int = 64
    n_best_size: int = 20
    max_answer_length: int = 30
    null_score_diff_threshold: float | None = None
    #: the trained window (``--max_seq_length``), recorded for serving (:meth:`record_serving_config`)
    max_seq_length: int | None = None
    data_options = (
        "doc_stride",
        "max_query_length",
        "n_best_size",
        "max_answer_length",
        "null_score_diff_threshold",
        "max_seq_length",
    )

    @property
    def tau(self) -> float:
        """The null-score threshold applied to predictions (0.0 unless ``--null_score_diff_threshold`` is given)."""
        return 0.0 if self.null_score_diff_threshold is None else float(self.null_score_diff_threshold)

    def features(self):
        """The Hub dataset's ``datasets.Features``."""
        import datasets

        text = datasets.Value("string")
        answers = {"text": datasets.List(text), "answer_start": datasets.List(datasets.Value("int32"))}
        return datasets.Features({"id": text, "title": text, "context": text, "question": text, "answers": answers})

    def read_json(self, path: str, labelled: bool = True) -> dict[str, list]:
        """One official SQuAD JSON file (``data -> paragraphs -> qas``) as Hub-style columns; ``labelled``: every
        answerable question must carry an answer (train/dev; ``False`` for a test file).

        Raises:
            FileNotFoundError: no such file.
            ValueError: not JSON (line and column named), a missing field, a duplicate id, an answer text not in the
                context at ``answer_start``, an answerable question without answer, or an unanswerable one in v1.1.
        """
        with open(path, encoding="utf-8-sig") as f:
            try:
                obj = json.load(f)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{path}, line {err.lineno}, column {err.colno}: not valid JSON ({err.msg})"
                ) from None
        return self.columns_of(obj, path, labelled)

    def columns_of(self, obj, path: str, labelled: bool = True) -> dict[str, list]:
        """:meth:`read_json`'s columns and checks of the parsed file ``obj`` (``path`` names it in errors)."""
        cols: dict[str, list] = {k: [] for k in ("id", "title", "context", "question", "answers")}
        seen: set[str] = set()
        for a, article in enumerate(_field(obj, "data", list, path)):
            for p, paragraph in enumerate(_field(article, "paragraphs", list, f"{path}, article {a}")):
                where = f"{path}, article {a}, paragraph {p}"
                context = _field(paragraph, "context", str, where)
                for q, item in enumerate(_field(paragraph, "qas", list, where)):
                    qid = _field(item, "id", str, f"{where}, question {q}")
                    here = f"{path}, question id {qid!r}"
                    answers, impossible = _field(item, "answers", list, here, []), bool(item.get("is_impossible"))
                    checks = (
                        (qid in seen, "duplicate question id; expected unique ids"),
                        (
                            impossible and not self.version_2_with_negative,
                            (
                                "is_impossible is true, but SQuAD "
                                "v1.1 has no unanswerable questions; use --task squad_v2 for a v2.0 file"
                            ),
                        ),
                        (impossible and answers, "is_impossible is true but 'answers' is not empty; expected []"),
                        (
                            labelled and not impossible and not answers,
                            (
                                "no answer for an answerable question; "
                                "expected 'answers' with text and answer_start (or is_impossible: true in SQuAD 2.0)"
                            ),
                        ),
                    )
                    if problem := next((message for bad, message in checks if bad), None):
                        raise ValueError(f"{here}: {problem}")
                    seen.add(qid)
                    texts = [_field(ans, "text", str, f"{here}, answer {n}") for n, ans in enumerate(answers)]
                    starts = [_field(ans, "answer_start", int, f"{here}, answer {n}") for n, ans in enumerate(answers)]
                    for n, (text, start) in enumerate(zip(texts, starts)):
                        if (found := context[start : start + len(text)]) != text:
                            raise ValueError(
                                f"{here}, answer {n}: text {text!r} does not match the context at "
                                f"answer_start {start} (context has {found!r} there)"
                            )
                    question = _field(item, "question", str, here)
                    for key, value in zip(
                        cols,
                        (qid, article.get("title", ""), context, question, {"text": texts, "answer_start": starts}),
                    ):
                        cols[key].append(value)
        if not cols["id"]:
            raise ValueError(f"{path}: no questions found; expected data -> paragraphs -> qas")
        return cols

    def read_file(self, path: str, split: str | None = None):
        """One official JSON file (:meth:`read_json`, unlabelled for a test split) as a ``datasets.Dataset``."""
        import datasets

        cols = self.read_json(path, labelled=split not in self.test_splits)
        return datasets.Dataset.from_dict(cols, features=self.features())

    def read_records(self, path: str, split: str):
        """An official SQuAD JSON file (``{"data": [...]}``: :meth:`read_json`, unlabelled for a test split) as
        :class:`~hf_bert_tasks.tasks.files.Records` (a question's place: its number), else
        :meth:`Task.read_records` (JSON Lines / CSV as ``run_qa.py``: ``id``, ``question``, ``context``,
        ``answers``)."""
        from ..files import Records

        if path.lower().endswith(".json") and os.path.isfile(path):
            with open(path, encoding="utf-8-sig") as f:
                try:
                    official = "data" in json.load(f)
                except (json.JSONDecodeError, TypeError):  # JSON Lines, or not an object
                    official = False
            if official:
                cols = self.read_json(path, labelled=split not in self.test_splits)
                return Records(path, list(cols), cols, [0] * len(cols["id"]))
        return super().read_records(path, split)

    def from_user_columns(self, records, split: str):
        """A user file's records (``question``, ``context``, ``answers`` = ``{"text": [...], "answer_start": [...]}``;
        ``id`` and ``title`` optional; JSON Lines) checked as :meth:`read_json` checks the official files.

        Raises:
            ValueError: an answer that is not such a mapping or does not match its context (file and line named).
        """
        import datasets

        n = len(records)
        answers = records.rows.get(self.label_column) or [None] * n
        answers = [{"text": [], "answer_start": []} if a is None else a for a in answers]
        ids = [str(i) for i in records.rows["id"]] if "id" in records.rows else [str(i) for i in range(n)]
        titles = ["" if t is None else str(t) for t in records.rows.get("title", [""] * n)]
        article = {
            "data": [
                {
                    "title": t,
                    "paragraphs": [
                        {
                            "context": c,
                            "qas": [
                                {
                                    "id": i,
                                    "question": q,
                                    "answers": [
                                        {"text": x, "answer_start": a}
                                        for x, a in zip(ans["text"], ans["answer_start"])
                                    ],
                                    "is_impossible": self.version_2_with_negative and not ans["text"],
                                }
                            ],
                        }
                    ],
                }
                for row, (i, t, q, c, ans) in enumerate(
                    zip(ids, titles, records.rows["question"], records.rows["context"], answers)
                )
                if self._answers_ok(ans, records.where(row))
            ]
        }
        cols = self.columns_of(article, records.path, labelled=split not in self.test_splits)
        return datasets.Dataset.from_dict(cols, features=self.features())

    @staticmethod
    def _answers_ok(ans, where: str) -> bool:
        """``True`` for a ``{"text": [str], "answer_start": [int]}`` mapping of equal lengths, else ``ValueError``."""
        if not (
            isinstance(ans, dict)
            and isinstance(ans.get("text"), list)
            and isinstance(ans.get("answer_start"), list)
            and len(ans["text"]) == len(ans["answer_start"])
        ):
            raise ValueError(
                f'{where}: answers {ans!r}; expected {{"text": ["..."], "answer_start": [0]}} '
                "(lists of equal length; empty lists for no answer)"
            )
        return True

    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Windowed features (:func:`hf_bert_tasks.tasks.squad.features.create_features`; training features for :attr:`train_split`).

        Raises:
            ValueError: window settings that leave no room (e.g. ``doc_stride`` too large), slow tokenizer.
        """
        config = qa.WindowConfig(max_seq_length, self.doc_stride, self.max_query_length)
        config.validate()
        training = split == self.train_split

        def make(batch):
            return qa.create_features(
                list(batch["question"]),
                list(batch["context"]),
                tokenizer,
                config,
                answers=list(batch["answers"]) if training else None,
                example_ids=None if training else list(batch["id"]),
            )

        return dataset.map(
            make, batched=True, remove_columns=dataset.column_names, desc=f"Windowing {self.name}/{split}"
        )

    def trainer_compute_metrics(self):
        """``None``: QA scores need post-processing over whole examples, done in :meth:`evaluate`."""
        return

    def compute_metrics(self, predictions, references) -> dict[str, float]:
        """Official SQuAD scores (x100) of ``predictions`` ``{id: text}`` vs ``references`` ``{id: [gold texts]}``:
        ``f1``, ``exact_match`` (v1.1: no prediction scores 0); v2.0 also ``HasAns_*``/``NoAns_*`` (``""`` = no answer).

        Raises:
            ValueError: v2.0 and a question of ``references`` without a prediction (names the count and first ids).
        """
        if not self.version_2_with_negative:
            scores = SM.squad_v1(references, predictions)
            return {"f1": scores["f1"], "exact_match": scores["exact_match"]}
        return _v2_keys(SM.squad_v2(references, predictions))

    def score(self, raw, result: QAPredictions) -> dict[str, float]:
        """Metrics (no ``eval_`` prefix) of post-processed predictions on a labelled split: :meth:`compute_metrics`'
        keys at the applied tau, and for v2.0 ``best_*`` with their thresholds (the official search over
        ``null_odds`` with the best non-null answers)."""
        refs = SM.references_from_rows(raw["id"], raw["answers"])
        if not self.version_2_with_negative:
            return self.compute_metrics(result.predictions, refs)
        scores = SM.squad_v2(refs, result.best_non_null, result.null_odds, na_prob_thresh=self.tau)
        return {**_v2_keys(scores), "null_score_diff_threshold": self.tau}

    def run_postprocess(self, trainer, raw, features, tau: float | None = None) -> QAPredictions:
        """Predict start/end logits for ``features`` (model inputs only) and post-process them over ``raw``."""
        keep = [c for c in qa.MODEL_INPUT_COLUMNS if c in features.column_names]
        output = trainer.predict(features.select_columns(keep), metric_key_prefix="eval")
        return self.postprocess_logits(raw, features, output.predictions, tau)

    def postprocess_logits(self, raw, features, predictions, tau: float | None = None) -> QAPredictions:
        """Answers of ``raw``'s examples from ``predictions`` = ``(start_logits, end_logits)``, float ``[F, L]`` each
        for the windows ``features`` in order (``L``: Trainer's width, padded with -100 across batches), at
        ``tau`` (default :attr:`tau`): :func:`hf_bert_tasks.tasks.squad.postprocess.postprocess_qa_predictions`."""
        start_logits, end_logits = (np.array(x, dtype=np.float32) for x in predictions[:2])
        # padding logits as Trainer's cross-batch pad value (docs/design.md, 'logits past a feature's own tokens')
        from ...finetune.trainer import feature_lengths

        lengths = feature_lengths(features)
        if lengths is not None:
            padding = np.arange(start_logits.shape[1])[None, :] >= lengths[:, None]
            start_logits[padding] = end_logits[padding] = -100.0
        ids = list(raw["id"][:])
        index, offsets, max_ctx = features_to_arrays(features, ids)
        width = start_logits.shape[1]
        pad = ((0, 0), (0, max(0, width - offsets.shape[1])))  # Trainer pads logits across batches
        offsets = np.pad(offsets, (*pad, (0, 0)), constant_values=-1)  # offsets of padding are -1
        max_ctx = np.pad(max_ctx, pad)
        return postprocess_qa_predictions(
            ids,
            list(raw["context"][:]),
            index,
            start_logits,
            end_logits,
            offsets[:, :width],
            max_ctx[:, :width],
            n_best_size=self.n_best_size,
            max_answer_length=self.max_answer_length,
            version_2_with_negative=self.version_2_with_negative,
            null_score_diff_threshold=self.tau if tau is None else tau,
        )

    def trainer_post_process(self, examples, features, predictions) -> tuple[QAPredictions, dict[str, float]]:
        """``QuestionAnsweringTrainer(post_process=...)``: :meth:`postprocess_logits` then :meth:`score` (no prefix),
        for the evaluation inside the training loop (``eval_f1`` during training, best-checkpoint selection)."""
        result = self.postprocess_logits(examples, features, predictions)
        return result, self.score(examples, result)

    def build_trainer(self, trainer_class, eval_raw=None, eval_features=None, **kwargs):
        """The recipe's Trainer for SQuAD: :class:`hf_bert_tasks.tasks.squad.trainer.QuestionAnsweringTrainer` (a subclass of
        the recipe's) evaluating with :meth:`trainer_post_process` over ``eval_raw`` and its windows
        ``eval_features``."""
        from .trainer import QuestionAnsweringTrainer

        return QuestionAnsweringTrainer(
            eval_examples=eval_raw, eval_features=eval_features, post_process=self.trainer_post_process, **kwargs
        )

    def write_predictions(self, result: QAPredictions, output_dir: str, prefix: str = "") -> list[str]:
        """Write (and return the paths of) ``{prefix}`` + ``predictions.json``, ``nbest_predictions.json`` and for v2
        ``null_odds.json``, ``best_non_null_predictions.json`` (what ``evaluate-v2.0.py`` needs for each score)."""
        files = {"predictions.json": result.predictions, "nbest_predictions.json": result.nbest}
        if self.version_2_with_negative:
            files.update({"null_odds.json": result.null_odds, "best_non_null_predictions.json": result.best_non_null})
        paths = [os.path.join(output_dir, f"{prefix}{name}") for name in files]
        for path, obj in zip(paths, files.values()):
            write_json(path, obj)
        return paths

    def record_serving_config(self, trainer, output_dir: str) -> dict:
        """Record (and return) ``version_2_with_negative``, v2.0's applied ``null_score_diff_threshold`` and the
        trained window (``max_seq_length``, ``doc_stride``, ``max_query_length``, ``max_answer_length``) in the model
        config and the ``config.json`` of ``output_dir`` and its ``checkpoint-*``: served as it was scored
        (:mod:`hf_bert_tasks.tasks.squad.pipeline` reads them back)."""
        v2 = self.version_2_with_negative
        values = {
            "version_2_with_negative": v2,
            **({"null_score_diff_threshold": self.tau} if v2 else {}),
            **{
                k: getattr(self, k)
                for k in ("max_seq_length", "doc_stride", "max_query_length", "max_answer_length")
                if getattr(self, k) is not None
            },
        }
        trainer.model.config.update(values)
        for folder in [output_dir, *glob.glob(os.path.join(output_dir, "checkpoint-*"))]:
            path = os.path.join(folder, "config.json")
            if os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    config = json.load(f)
                write_json(path, {**config, **values})
        return values

    def evaluate(self, trainer, raw, features, split: str, output_dir: str | None = None) -> dict[str, float]:
        """Predict, post-process, write :meth:`write_predictions` (``<split>_`` prefix but for the first eval split)
        and :meth:`record_serving_config`; returns :meth:`score` as ``eval_`` keys (split suffix for extra splits)."""
        result = self.run_postprocess(trainer, raw, features)
        if output_dir and trainer.is_world_process_zero():
            self.write_predictions(result, output_dir, "" if split == self.eval_splits[0] else f"{split}_")
            self.record_serving_config(trainer, output_dir)
        suffix = self.split_metric_suffix(split)
        metrics = {f"eval_{k}{suffix}": v for k, v in self.score(raw, result).items()}
        trainer.log(metrics)  # once, as Trainer's evaluate logs (history, console); an extra split's keys suffixed
        return metrics

    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Predict a split (no answers needed) at tau = ``--null_score_diff_threshold``, write :meth:`write_predictions`
        with a ``<split>_`` prefix (v2's odds let another tau be applied later) and :meth:`record_serving_config`."""
        result = self.run_postprocess(trainer, raw, features)
        if not trainer.is_world_process_zero():
            return []
        self.record_serving_config(trainer, output_dir)
        return self.write_predictions(result, output_dir, f"{split}_")


def _v2_keys(scores: dict) -> dict[str, float]:
    """Official v2 keys -> ours (``exact`` -> ``exact_match``; ``total`` counts dropped)."""
    return {key.replace("exact", "exact_match"): value for key, value in scores.items() if not key.endswith("total")}


def _field(obj, name: str, kind, where: str, default=None):
    """``obj[name]``, checked to be a ``kind`` (``default`` when given and the field is absent); errors name it."""
    if not isinstance(obj, dict) or (name not in obj and default is None):
        raise ValueError(f"{where}: missing field {name!r}; expected the official SQuAD JSON layout")
    value = obj.get(name, default)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ValueError(f"{where}: field {name!r} = {value!r} must be a {kind.__name__}")
    return value
