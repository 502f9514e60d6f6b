"""SQuAD windowed features, as google-research/bert ``run_squad.py`` (paper §4.2-4.3; post-processing:
:mod:`hf_bert_tasks.tasks.squad.postprocess`): question and context are tokenized apart, the question cut to
``max_query_length`` WordPieces, the context into windows of at most ``max_seq_length - len(question) - 3`` tokens
whose starts are ``doc_stride`` apart (google's meaning; the tokenizer's ``stride`` is the *overlap*), each ``[CLS]
question [SEP] window [SEP]`` (``token_type_ids`` 0 / 1). Other tokenizers: their own special tokens
(:func:`hf_bert_tasks.utils.tokenizers.pair_template`; RoBERTa ``<s> q </s></s> w </s>``, 4 of them, no
``token_type_ids``). Training labels: the answer's first and last WordPiece,
``[CLS]`` (0, 0) for a window without the whole answer and an unanswerable question."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...utils.tokenizers import pair_template

#: Columns the model receives at evaluation time.
MODEL_INPUT_COLUMNS = ("input_ids", "token_type_ids", "attention_mask")


@dataclass(frozen=True)
class WindowConfig:
    """How a (question, context) pair is cut into features (defaults: the paper's and google's)."""

    max_seq_length: int = 384  #: WordPieces per feature including ``[CLS]`` and two ``[SEP]``
    doc_stride: int = 128  #: context tokens between the starts of two consecutive windows (google's ``doc_stride``)
    max_query_length: int = 64  #: question WordPieces kept; longer questions are cut

    def validate(self) -> None:
        """Raise ``ValueError`` when the settings leave no room for context or would skip context tokens."""
        if self.max_query_length < 1:
            raise ValueError(f"max_query_length must be >= 1, got {self.max_query_length}")
        room = self.max_seq_length - self.max_query_length - 3
        if room < 1:
            raise ValueError(
                f"max_seq_length {self.max_seq_length} leaves no room for context: it must exceed "
                f"max_query_length ({self.max_query_length}) + 3 special tokens"
            )
        if not 1 <= self.doc_stride <= room:
            raise ValueError(
                f"doc_stride {self.doc_stride} must be between 1 and {room} (= max_seq_length "
                f"{self.max_seq_length} - max_query_length {self.max_query_length} - 3) so that "
                "consecutive windows leave no context token out"
            )


def window_spans(n_tokens: int, window: int, stride: int) -> list[tuple[int, int]]:
    """Context windows ``(start, length)`` over ``n_tokens`` tokens (google ``run_squad.py``'s ``doc_spans``):
    starts 0, ``stride``, ``2*stride`` …, the last window ending at the last token; an empty context gives ``(0, 0)``.

    Example: ``window_spans(10, 4, 3)`` -> ``[(0, 4), (3, 4), (6, 4)]``.
    """
    spans, start = [], 0
    while True:
        length = min(window, n_tokens - start)
        spans.append((start, length))
        if start + length >= n_tokens:
            return spans
        start += min(length, stride)


def max_context_mask(spans: list[tuple[int, int]]) -> list[list[bool]]:
    """For each window, ``length`` booleans: whether each of its tokens has its maximum context there (google
    ``_check_is_max_context``: token ``t`` of window ``(start, length)`` scores ``min(t - start, start + length - 1
    - t) + 0.01 * length``; the first window with the highest score wins)."""
    start, length = np.array([*spans, (0, 0)], dtype=np.int64).T  # (0, 0): an empty window never wins
    t = np.arange(int((start + length).max()))[:, None]
    inside = (start <= t) & (t < start + length)
    best = np.where(inside, np.minimum(t - start, start + length - 1 - t) + 0.01 * length, -np.inf).argmax(axis=1)
    return [(best[s : s + n] == j).tolist() for j, (s, n) in enumerate(spans)]  # argmax: ties go to the first


def create_features(
    questions: list[str],
    contexts: list[str],
    tokenizer,
    config: WindowConfig,
    answers: list[dict] | None = None,
    example_ids: list[str] | None = None,
) -> dict[str, list]:
    """Cut ``n_examples`` (question, context) pairs into windowed features with a *fast* BERT tokenizer (character
    offsets) and ``config`` (validated here). ``answers``: for training features, one ``{"text": [...],
    "answer_start": [...]}`` per example (the first answer is the label; ``[]``: unanswerable, SQuAD 2.0);
    ``example_ids``: for evaluation features. Returns columns of ``n_features`` unpadded lists: ``input_ids``,
    ``token_type_ids``, ``attention_mask``; with ``answers`` ``start_positions``/``end_positions`` (token indices, 0 =
    ``[CLS]``); with ``example_ids`` ``example_id``, ``offset_mapping`` (``[seq_len, 2]`` character spans into the
    context, ``[-1, -1]`` outside it) and ``token_is_max_context`` (``[seq_len]`` bool).

    Raises:
        ValueError: bad window settings; a slow tokenizer or one with no special token before the question; an answer text that
            does not match the context at its ``answer_start`` (the message gives the example index).
    """
    config.validate()
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError("SQuAD features need a fast tokenizer (character offsets); load it with use_fast=True")
    # the tokenizer's own special tokens: [CLS] q [SEP] w [SEP], RoBERTa <s> q </s></s> w </s>
    template = pair_template(tokenizer)
    if not template.prefix:
        raise ValueError(
            f"{type(tokenizer).__name__} puts no special token before the question; SQuAD's null answer is that "
            "first token ([CLS] / <s>)"
        )
    q_ids = tokenizer(list(questions), add_special_tokens=False)["input_ids"]
    # whole contexts may exceed 512 positions before windowing: verbose=False silences the length warning
    ctx = tokenizer(list(contexts), add_special_tokens=False, return_offsets_mapping=True, verbose=False)
    keys = (
        *(c for c in MODEL_INPUT_COLUMNS if template.with_types or c != "token_type_ids"),
        *(("start_positions", "end_positions") if answers is not None else ()),
        *(("example_id", "offset_mapping", "token_is_max_context") if example_ids is not None else ()),
    )
    out: dict[str, list] = {k: [] for k in keys}
    for i, question_ids in enumerate(q_ids):
        question_ids = question_ids[: config.max_query_length]
        doc_ids, doc_offsets = ctx["input_ids"][i], ctx["offset_mapping"][i]
        spans = window_spans(
            len(doc_ids), config.max_seq_length - len(question_ids) - template.n_special, config.doc_stride
        )
        answer_tokens = None
        if answers is not None and answers[i]["text"]:
            text, start = answers[i]["text"][0], int(answers[i]["answer_start"][0])
            if contexts[i][start : start + len(text)] != text:
                raise ValueError(
                    f"example {i}: answer {text!r} does not match the context at answer_start {start} "
                    f"(found {contexts[i][start : start + len(text)]!r})"
                )
            # the first and last (non-empty) context token overlapping the answer's characters
            hits = [t for t, (s, e) in enumerate(doc_offsets) if s < e and e > start and s < start + len(text)]
            answer_tokens = (hits[0], hits[-1]) if hits else None
        is_max = max_context_mask(spans) if example_ids is not None else None
        prefix, n_suffix = [*template.prefix, *question_ids, *template.middle], len(template.suffix)
        for w, (start, length) in enumerate(spans):
            for key, value in template.build(question_ids, doc_ids[start : start + length]).items():
                out[key].append(value)
            if answers is not None:
                s = e = 0
                if answer_tokens is not None and start <= answer_tokens[0] and answer_tokens[1] < start + length:
                    s, e = answer_tokens[0] - start + len(prefix), answer_tokens[1] - start + len(prefix)
                out["start_positions"].append(s)
                out["end_positions"].append(e)
            if example_ids is not None:
                out["example_id"].append(example_ids[i])
                window_offsets = [list(o) for o in doc_offsets[start : start + length]]
                out["offset_mapping"].append([[-1, -1]] * len(prefix) + window_offsets + [[-1, -1]] * n_suffix)
                out["token_is_max_context"].append([False] * len(prefix) + is_max[w] + [False] * n_suffix)
    return out
