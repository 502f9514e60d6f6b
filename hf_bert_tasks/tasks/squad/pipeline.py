"""An extractive question-answering ``pipeline()`` for fine-tuned SQuAD models (transformers 5 removed
``"question-answering"``). Importing this module registers :class:`ExtractiveQuestionAnsweringPipeline` as the task
``"extractive-question-answering"``, on the recipe's features and post-processing, so a saved or pushed SQuAD model
answers the way it was scored::

    import hf_bert_tasks.tasks.squad.pipeline  # registers the task
    from transformers import pipeline

    qa = pipeline("extractive-question-answering", model="runs/squad_v1")
    qa(question="what does the mill grind ?", context="the old mill grinds wheat .")
    # {"score": 0.93, "start": 19, "end": 24, "answer": "wheat"}   (old pipeline's keys; start/end are characters)
"""

from __future__ import annotations

import numpy as np
from transformers import AutoModelForQuestionAnswering, Pipeline
from transformers.pipelines import PIPELINE_REGISTRY

from . import features as qa
from .postprocess import pad_2d, postprocess_qa_predictions

TASK = "extractive-question-answering"


class ExtractiveQuestionAnsweringPipeline(Pipeline):
    """Answer a question from a context with a model that has a QA head (start/end logits); call with ``question=``
    and ``context=`` (or a dict with both). Options (defaults: the trained values the model config records, else the
    recipe's): ``max_seq_len`` 384 (at most the tokenizer's ``model_max_length``), ``doc_stride`` 128,
    ``max_question_len`` 64 (at most half of ``max_seq_len``), ``max_answer_len`` 30, ``top_k`` 1 (answers returned; a list when > 1),
    ``handle_impossible_answer`` (SQuAD 2.0: answer ``""`` when ``null - best > null_score_diff_threshold``) and
    ``null_score_diff_threshold``, by default the model config's ``version_2_with_negative`` and
    ``null_score_diff_threshold`` (``SquadTask.record_serving_config``), else ``False`` and 0.0. Returns
    ``{"score": probability among the n-best, "start": char, "end": char, "answer": text}``.
    """

    def _sanitize_parameters(self, **kwargs):
        given = {k: v for k, v in kwargs.items() if v is not None}
        return (
            {k: v for k, v in given.items() if k in ("max_seq_len", "doc_stride", "max_question_len")},
            {},
            {
                k: v
                for k, v in given.items()
                if k in ("max_answer_len", "top_k", "handle_impossible_answer", "null_score_diff_threshold")
            },
        )

    def __call__(self, inputs=None, question: str | None = None, context: str | None = None, **kwargs):
        if inputs is None:
            if question is None or context is None:
                raise ValueError("give question= and context= (or a dict with both)")
            inputs = {"question": question, "context": context}
        return super().__call__(inputs, **kwargs)

    def _trained(self, name: str, default: int) -> int:
        """The window setting ``name`` recorded in the model config at training (``SquadTask.record_serving_config``),
        else ``default`` (the recipe's)."""
        value = getattr(self.model.config, name, None)
        return int(value) if isinstance(value, int) and not isinstance(value, bool) else default

    def preprocess(self, inputs, max_seq_len=None, doc_stride=None, max_question_len=None):
        import torch

        if not isinstance(inputs, dict) or not {"question", "context"} <= set(inputs):
            raise ValueError(f"expected a dict with 'question' and 'context', got {type(inputs).__name__}")
        max_seq_len = max_seq_len or self._trained("max_seq_length", 384)  # as trained, when the config says
        doc_stride = doc_stride or self._trained("doc_stride", 128)
        max_question_len = max_question_len or self._trained("max_query_length", 64)
        max_seq_len = min(max_seq_len, self.tokenizer.model_max_length)  # a smaller model: its limit, and at most
        max_question_len = min(max_question_len, max_seq_len // 2)  # half of it for the question
        config = qa.WindowConfig(max_seq_len, min(doc_stride, max_seq_len - max_question_len - 3), max_question_len)
        feats = qa.create_features(
            [inputs["question"]], [inputs["context"]], self.tokenizer, config, example_ids=["q"]
        )
        width = max(len(ids) for ids in feats["input_ids"])
        pad = {"input_ids": self.tokenizer.pad_token_id or 0}  # RoBERTa's <pad> is 1: its positions skip it
        model_inputs = {
            k: torch.tensor(pad_2d(feats[k], width, pad.get(k, 0), np.int64))
            for k in qa.MODEL_INPUT_COLUMNS
            if k in feats
        }
        model_inputs["offsets"] = pad_2d(feats["offset_mapping"], width, -1, np.int64)
        model_inputs["max_context"] = pad_2d(feats["token_is_max_context"], width, False, bool)
        model_inputs["context"] = inputs["context"]
        return model_inputs

    def _forward(self, model_inputs):
        extra = {k: model_inputs.pop(k) for k in ("offsets", "max_context", "context")}
        out = self.model(**model_inputs)
        return {"start_logits": out.start_logits, "end_logits": out.end_logits, **extra}

    def postprocess(
        self,
        model_outputs,
        max_answer_len=None,
        top_k=1,
        handle_impossible_answer=None,
        null_score_diff_threshold=None,
    ):
        max_answer_len = max_answer_len or self._trained("max_answer_length", 30)
        if handle_impossible_answer is None:
            handle_impossible_answer = bool(getattr(self.model.config, "version_2_with_negative", False))
        if null_score_diff_threshold is None:
            null_score_diff_threshold = float(getattr(self.model.config, "null_score_diff_threshold", 0.0))
        start = model_outputs["start_logits"].float().cpu().numpy()
        result = postprocess_qa_predictions(
            ["q"],
            [model_outputs["context"]],
            np.zeros(len(start), np.int64),
            start,
            model_outputs["end_logits"].float().cpu().numpy(),
            model_outputs["offsets"],
            model_outputs["max_context"],
            n_best_size=max(20, top_k),
            max_answer_length=max_answer_len,
            version_2_with_negative=handle_impossible_answer,
            null_score_diff_threshold=null_score_diff_threshold,
        )
        entries = result.nbest["q"]
        if handle_impossible_answer:  # the thresholded decision comes first, as in the recipe's predictions.json
            null, spans = [e for e in entries if not e["text"]], [e for e in entries if e["text"]]
            if result.predictions["q"] == "":  # abstain, also when the null answer ranks below the n-best spans
                null = null or [{"text": "", "probability": 0.0, "offsets": (0, 0)}]
            entries = null + spans if result.predictions["q"] == "" else spans + null
        answers = [
            {"score": e["probability"], "start": e["offsets"][0], "end": e["offsets"][1], "answer": e["text"]}
            for e in entries[:top_k]
        ]
        return answers[0] if top_k == 1 else answers


PIPELINE_REGISTRY.register_pipeline(
    TASK, pipeline_class=ExtractiveQuestionAnsweringPipeline, pt_model=AutoModelForQuestionAnswering
)
