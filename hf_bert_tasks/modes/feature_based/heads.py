"""Task heads of the feature-based model, in a registry keyed by problem type (paper §5.3 and §4). Each head owns
its ``view`` of the encoder, its pooling and its loss, and returns the matching ``BertFor...`` output. Built as
``Head(in_size, config)`` (a :class:`~.modeling.BertFeatureBasedConfig`), called as ``head(x, row_mask, labels=None,
start_positions=None, end_positions=None)``: ``x`` float ``[batch, R, in_size]`` (the combined layers), ``row_mask``
bool ``[batch, R]``. View ``"tokens"``: one row per WordPiece (``R = seq``); ``"pooled"``: row 0 the [CLS] vector,
row 1 the mean over unmasked tokens (``R = 2``, ``2 * choices`` for multiple choice), one picked by
``config.pooling``. Heads by problem type (the first is ``--head auto``); loss:

* ``token_classification``: ``bilstm`` (paper), ``linear``; cross-entropy, ``-100`` ignored
* ``question_answering``: ``linear``; mean of the start and end cross-entropies
* ``multiple_choice``: ``linear``; cross-entropy over choices
* ``single_label_classification`` / ``regression``: ``linear``, ``mlp``; cross-entropy / mean squared error

A new head: a :class:`FeatureHead` subclass decorated with ``@register_head(problem_type, name)``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn
from transformers.modeling_outputs import (
    MultipleChoiceModelOutput,
    QuestionAnsweringModelOutput,
    SequenceClassifierOutput,
    TokenClassifierOutput,
)

#: ``--pooling`` choices, in the order of the pooled view's rows.
POOLINGS = ("cls", "mean")

#: problem type -> head name -> head class; the first name registered for a problem type is its ``auto`` head.
HEAD_REGISTRY: dict[str, dict[str, type[FeatureHead]]] = {}


def register_head(problem_type: str, name: str) -> Callable[[type], type]:
    """Class decorator: register a :class:`FeatureHead` as ``--head name`` for ``problem_type``; ``ValueError`` when
    the name is already registered for it."""

    def decorate(cls: type) -> type:
        heads = HEAD_REGISTRY.setdefault(problem_type, {})
        if name in heads:
            raise ValueError(f"head {name!r} is already registered for {problem_type!r}")
        heads[name] = cls
        return cls

    return decorate


def head_class(problem_type: str, name: str) -> type[FeatureHead]:
    """The head class for ``problem_type`` and ``--head name`` (``auto``: the problem type's first head);
    ``ValueError`` for an unknown problem type or a head that does not fit it (listing those that do)."""
    if problem_type not in HEAD_REGISTRY:
        raise ValueError(f"unknown task_problem_type {problem_type!r}; expected one of {list(HEAD_REGISTRY)}")
    heads = HEAD_REGISTRY[problem_type]
    if name == "auto":
        return next(iter(heads.values()))
    if name not in heads:
        sentence_level = problem_type in ("single_label_classification", "regression")
        what = "a sentence-level task" if sentence_level else problem_type.replace("_", " ")
        raise ValueError(f"--head {name!r} does not fit {what}; expected {' or '.join(repr(n) for n in heads)}")
    return heads[name]


class FeatureHead(nn.Module):
    """Base class: ``view`` (``"tokens"`` or ``"pooled"``) and ``forward(x, row_mask, **targets) -> ModelOutput``."""

    view = "pooled"

    def pool(self, x: torch.Tensor) -> torch.Tensor:
        """Pooled view ``[batch, 2 * k, d]`` -> ``[batch, k, d]``: the ``cls`` or ``mean`` row of each sequence."""
        return x.reshape(x.shape[0], -1, len(POOLINGS), x.shape[-1])[:, :, self.pooling_index]


@register_head("token_classification", "bilstm")
class TokenBiLSTMHead(FeatureHead):
    """The paper's NER head (§5.3): a two-layer BiLSTM (``head_hidden_size`` per direction, 768 in the paper) + Linear,
    on sequences packed by length (padding never enters the recurrence). Logits ``[batch, seq, num_labels]``."""

    view = "tokens"

    def __init__(self, in_size: int, config):
        super().__init__()
        layers, dropout = config.head_num_layers, config.head_dropout
        self.lstm = nn.LSTM(
            in_size,
            config.head_hidden_size,
            num_layers=layers,
            batch_first=True,
            bidirectional=True,
            dropout=dropout if layers > 1 else 0.0,
        )
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(2 * config.head_hidden_size, config.num_labels)

    def forward(self, x, row_mask, labels=None, **_):
        lengths = row_mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return _token_output(self.classifier(self.dropout(out)), labels)


@register_head("token_classification", "linear")
class TokenLinearHead(FeatureHead):
    """Token head without recurrence: dropout + Linear per position. Logits ``[batch, seq, num_labels]``."""

    view = "tokens"

    def __init__(self, in_size: int, config):
        super().__init__()
        self.net = nn.Sequential(nn.Dropout(config.head_dropout), nn.Linear(in_size, config.num_labels))

    def forward(self, x, row_mask, labels=None, **_):
        return _token_output(self.net(x), labels)


def _token_output(logits: torch.Tensor, labels: torch.Tensor | None) -> TokenClassifierOutput:
    loss = (
        None
        if labels is None
        else nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), labels[:, : logits.shape[1]].reshape(-1), ignore_index=-100
        )
    )
    return TokenClassifierOutput(loss=loss, logits=logits)


@register_head("question_answering", "linear")
class SpanHead(FeatureHead):
    """SQuAD head (§4.2): one Linear to a start and an end logit per token, ``[batch, seq]`` each, ``-1e4`` at padded
    positions; targets outside the sequence are clamped to ``seq`` and ignored (as ``BertForQuestionAnswering``)."""

    view = "tokens"

    def __init__(self, in_size: int, config):
        super().__init__()
        self.qa_outputs = nn.Linear(in_size, 2)

    def forward(self, x, row_mask, start_positions=None, end_positions=None, **_):
        start, end = self.qa_outputs(x).masked_fill(~row_mask[..., None], -1e4).unbind(-1)
        loss, n = None, start.shape[1]
        if start_positions is not None and end_positions is not None:
            loss = (
                nn.functional.cross_entropy(start, start_positions.reshape(-1).clamp(0, n), ignore_index=n)
                + nn.functional.cross_entropy(end, end_positions.reshape(-1).clamp(0, n), ignore_index=n)
            ) / 2
        return QuestionAnsweringModelOutput(loss=loss, start_logits=start, end_logits=end)


class SequenceHead(FeatureHead):
    """Sentence / sentence-pair head over the pooled row: ``linear`` (dropout + Linear) or ``mlp``
    (Linear-tanh-dropout-Linear, ``head_hidden_size`` wide). Logits ``[batch, num_labels]`` (regression: ``[batch, 1]``).
    """

    kind = "linear"

    def __init__(self, in_size: int, config):
        super().__init__()
        self.pooling_index = POOLINGS.index(config.pooling)
        self.regression = config.task_problem_type == "regression"
        out = 1 if self.regression or config.task_problem_type == "multiple_choice" else config.num_labels
        p = config.head_dropout
        if self.kind == "linear":
            self.net = nn.Sequential(nn.Dropout(p), nn.Linear(in_size, out))
        else:
            self.net = nn.Sequential(
                nn.Dropout(p),
                nn.Linear(in_size, config.head_hidden_size),
                nn.Tanh(),
                nn.Dropout(p),
                nn.Linear(config.head_hidden_size, out),
            )

    def forward(self, x, row_mask, labels=None, **_):
        logits = self.net(self.pool(x)[:, 0])
        loss = (
            None
            if labels is None
            else (
                nn.functional.mse_loss(logits.squeeze(-1), labels.to(logits.dtype).reshape(-1))
                if self.regression
                else nn.functional.cross_entropy(logits, labels.reshape(-1))
            )
        )
        return SequenceClassifierOutput(loss=loss, logits=logits)


@register_head("multiple_choice", "linear")
class ChoiceHead(SequenceHead):
    """SWAG head (§4.4): the ``linear`` sequence head as a scorer (one output) of each choice's pooled row. Logits
    ``[batch, choices]``."""

    def forward(self, x, row_mask, labels=None, **_):
        logits = self.net(self.pool(x)).squeeze(-1)
        loss = None if labels is None else nn.functional.cross_entropy(logits, labels.reshape(-1))
        return MultipleChoiceModelOutput(loss=loss, logits=logits)


class SequenceMLPHead(SequenceHead):
    kind = "mlp"


for _ptype in ("single_label_classification", "regression"):  # the sentence-level problem types
    register_head(_ptype, "linear")(SequenceHead)
    register_head(_ptype, "mlp")(SequenceMLPHead)

#: every ``--head`` value: ``auto`` then each registered name once
HEADS = ("auto", *dict.fromkeys(n for heads in HEAD_REGISTRY.values() for n in heads))
