"""Feature-based mode (paper §5.3, Table 7): a frozen BERT encoder, chosen layers, and a small trained head.

The BERT paper compares fine-tuning with an ELMo-style *feature-based* approach on CoNLL-2003 NER: the pretrained
encoder is frozen, the activations of one or more layers are extracted, and only a task head (a randomly initialised
two-layer BiLSTM before the classifier) is trained. This module provides:

* **Layer strategies** (:data:`STRATEGIES`) defined on ``hidden_states`` as returned by ``output_hidden_states=True``:
  a tuple of ``L + 1`` tensors ``[batch, seq, hidden]`` where **index 0 is the embedding output** and index ``i``
  the output of transformer layer ``i``. Each strategy lists the paper's Table 7 dev F1 (BERT-BASE, CoNLL-2003):

  ==================  ==========================  ==================  ==========
  strategy            hidden_states used          combination         paper F1
  ==================  ==========================  ==================  ==========
  ``embeddings``      ``[0]``                     as is               91.0
  ``second_to_last``  ``[L-1]``                   as is               95.6
  ``last``            ``[L]``                     as is               94.9
  ``sum_last_four``   ``[L-3 .. L]``              sum                 95.9
  ``concat_last_four`` ``[L-3 .. L]``             concatenation (4H)  96.1
  ``sum_all``         ``[1 .. L]``                sum                 95.5
  ``scalar_mix``      ``[0 .. L]``                ELMo scalar mix     (none)
  ==================  ==========================  ==================  ==========

  The paper calls its sums "weighted sum"; it does not give the weights, so ``sum_last_four`` / ``sum_all`` use equal
  weights (a plain sum) and ``scalar_mix`` is the learned version of ELMo (Peters et al., 2018, eq. 1):
  ``gamma * sum_j softmax(w)_j * h_j`` with ``w`` initialised to zeros (equal weights) and ``gamma`` to 1.
  ``sum_all`` uses the ``L`` transformer layers ("all 12 layers" of BERT-BASE), not the embeddings.

* **Heads** (:class:`TokenBiLSTMHead`, :class:`SequenceHead`, :class:`SpanHead`, :class:`ChoiceHead`): NER uses the
  paper's two-layer BiLSTM (768 per direction by default) + a linear classifier; sentence(-pair) tasks a linear layer
  or a small MLP over the [CLS] vector or the mean over tokens; SQuAD a start/end linear layer; SWAG a linear scorer
  per choice.

* :class:`BertFeatureBasedModel`, a ``PreTrainedModel`` holding the frozen encoder and the head, registered with the
  ``Auto`` classes when this module is imported (``model_type="bert_feature_based"``), so a saved model loads back with
  ``AutoModel.from_pretrained(dir)`` (or ``AutoModelForSequenceClassification`` / ``...ForTokenClassification`` …)
  after ``import hf_bert_tasks.feature_based`` and predicts (its encoder frozen again).

* The **feature cache** (:class:`FeatureCache`, :func:`train_head_from_cache`): the frozen encoder runs once per split
  and writes the chosen layers' features to safetensors shards under a key that fingerprints the encoder weights and
  config, the tokenized data, the maximum length and the layers; the head then trains for many epochs by streaming
  the shards (one shard in memory at a time), without running the encoder again.

Token-level tasks run the BiLSTM over every WordPiece of the window and are scored where the task's labels are not
-100, which is the first sub-token of each word for CoNLL-2003 (the paper's §5.3 choice); the same code serves the
end-to-end model and the cache, so a head trained from the cache predicts identically inside the saved model.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import random
import shutil
import time
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np
import torch
from torch import nn
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
from transformers.modeling_outputs import (
    MultipleChoiceModelOutput,
    QuestionAnsweringModelOutput,
    SequenceClassifierOutput,
    TokenClassifierOutput,
)

logger = logging.getLogger(__name__)

# ------------------------------------------------------------------------------------------------ strategies


@dataclass(frozen=True)
class Strategy:
    """One row of the paper's Table 7 (feature-based approach, BERT-BASE, CoNLL-2003 dev F1).

    Attributes:
        name: the ``--feature_strategy`` value.
        paper_name: the row label in Table 7.
        paper_f1: the paper's dev F1 (x100), ``None`` where the paper has no row (``scalar_mix``).
        combine: ``"single"``, ``"sum"``, ``"concat"`` or ``"scalar_mix"``.
    """

    name: str
    paper_name: str
    paper_f1: float | None
    combine: str

    def layers(self, num_hidden_layers: int) -> list[int]:
        """Indices into ``hidden_states`` (0 = embeddings, ``L`` = last layer) used by this strategy.

        Raises:
            ValueError: ``second_to_last`` on an encoder without layers (``L = 0``). With ``L < 3`` the "last four"
                strategies use the ``L + 1`` states there are (embeddings included).
        """
        L = num_hidden_layers
        need = 1 if self.name == "second_to_last" else 0
        if L < need:
            raise ValueError(f"feature strategy {self.name!r} needs an encoder with at least {need} layer(s); it has {L}")
        return {
            "embeddings": [0],
            "last": [L],
            "second_to_last": [L - 1],
            # With fewer than four layers the "last four" of hidden_states reach into the embeddings (index 0).
            "sum_last_four": list(range(max(L - 3, 0), L + 1)),
            "concat_last_four": list(range(max(L - 3, 0), L + 1)),
            "sum_all": list(range(1, L + 1)) or [0],
            "scalar_mix": list(range(0, L + 1)),
        }[self.name]

    def output_size(self, hidden_size: int, num_hidden_layers: int) -> int:
        """Feature width fed to the head: ``hidden_size``, or ``len(layers) * hidden_size`` for concatenation."""
        return hidden_size * (len(self.layers(num_hidden_layers)) if self.combine == "concat" else 1)


#: ``--feature_strategy`` choices in Table 7's order, then the learned ELMo mix.
STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("embeddings", "Embeddings", 91.0, "single"),
        Strategy("second_to_last", "Second-to-Last Hidden", 95.6, "single"),
        Strategy("last", "Last Hidden", 94.9, "single"),
        Strategy("sum_last_four", "Weighted Sum Last Four Hidden", 95.9, "sum"),
        Strategy("concat_last_four", "Concat Last Four Hidden", 96.1, "concat"),
        Strategy("sum_all", "Weighted Sum All 12 Layers", 95.5, "sum"),
        Strategy("scalar_mix", "Learned scalar mix, all layers (ELMo; not in the paper)", None, "scalar_mix"),
    )
}

#: Table 7's fine-tuning rows (CoNLL-2003 dev F1, x100).
PAPER_FINETUNE_F1 = {"BERT-LARGE": 96.6, "BERT-BASE": 96.4}

HEADS = ("auto", "linear", "mlp", "bilstm")
POOLINGS = ("cls", "mean")


def get_strategy(name: str) -> Strategy:
    """The :class:`Strategy` called ``name``.

    Raises:
        ValueError: for an unknown name (lists the known ones).
    """
    if name not in STRATEGIES:
        raise ValueError(f"unknown feature strategy {name!r}; expected one of {', '.join(STRATEGIES)}")
    return STRATEGIES[name]


class ScalarMix(nn.Module):
    """ELMo's learned layer mix (Peters et al., 2018, eq. 1): ``gamma * sum_j softmax(w)_j * h_j``.

    ``w`` starts at zeros (every layer weighted ``1/n``) and ``gamma`` at 1.
    """

    def __init__(self, num_layers: int):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(num_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.weights.zero_()
            self.gamma.fill_(1.0)

    def forward(self, stacked: torch.Tensor) -> torch.Tensor:
        """``stacked``: float ``[..., num_layers, hidden]`` -> ``[..., hidden]``."""
        w = torch.softmax(self.weights, dim=0).to(stacked.dtype)
        return self.gamma.to(stacked.dtype) * torch.einsum("...nh,n->...h", stacked, w)


class LayerCombiner(nn.Module):
    """Combine a stack of layers into one feature vector per position, as a :class:`Strategy` says.

    ``forward(stacked, available)`` takes ``stacked``: float ``[..., n_available, hidden]`` holding the hidden states
    whose indices are ``available`` (e.g. a cache holding all layers) and picks this strategy's layers from it.

    Raises (forward):
        ValueError: when a needed layer is not among ``available``.
    """

    def __init__(self, strategy: str, num_hidden_layers: int):
        super().__init__()
        self.strategy = get_strategy(strategy)
        self.layers = self.strategy.layers(num_hidden_layers)
        self.mix = ScalarMix(len(self.layers)) if self.strategy.combine == "scalar_mix" else None

    def forward(self, stacked: torch.Tensor, available: list[int]) -> torch.Tensor:
        missing = [i for i in self.layers if i not in available]
        if missing:
            raise ValueError(f"strategy {self.strategy.name!r} needs hidden_states {missing}; only {available} were given")
        if list(available) != self.layers:
            stacked = stacked[..., [available.index(i) for i in self.layers], :]
        combine = self.strategy.combine
        if combine == "single":
            return stacked[..., 0, :]
        if combine == "sum":
            return stacked.sum(dim=-2)
        if combine == "concat":
            return stacked.flatten(-2)
        return self.mix(stacked)


# ------------------------------------------------------------------------------------------------------ heads


class SequenceHead(nn.Module):
    """Sentence / sentence-pair head: ``linear`` (dropout + Linear) or ``mlp`` (Linear-tanh-dropout-Linear).

    Input float ``[batch, in_size]`` (the pooled feature), output ``[batch, num_labels]``.
    """

    def __init__(self, in_size: int, num_labels: int, kind: str = "linear", hidden_size: int = 256, dropout: float = 0.1):
        super().__init__()
        if kind == "linear":
            self.net = nn.Sequential(nn.Dropout(dropout), nn.Linear(in_size, num_labels))
        elif kind == "mlp":
            self.net = nn.Sequential(
                nn.Dropout(dropout), nn.Linear(in_size, hidden_size), nn.Tanh(), nn.Dropout(dropout),
                nn.Linear(hidden_size, num_labels),
            )
        else:
            raise ValueError(f"--head {kind!r} does not fit a sentence-level task; expected 'linear' or 'mlp'")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class TokenBiLSTMHead(nn.Module):
    """The paper's NER head (§5.3): a two-layer BiLSTM (``hidden_size`` per direction, 768 in the paper) + Linear.

    Padding never leaks into the recurrence (sequences are packed by length), so the output of a position does not
    depend on how much the batch was padded. Input ``[batch, seq, in_size]`` and lengths ``[batch]``; output
    ``[batch, seq, num_labels]`` (zeros-based logits at padded positions).
    """

    def __init__(self, in_size: int, num_labels: int, hidden_size: int = 768, num_layers: int = 2, dropout: float = 0.1):
        super().__init__()
        self.lstm = nn.LSTM(in_size, hidden_size, num_layers=num_layers, batch_first=True, bidirectional=True,
                            dropout=dropout if num_layers > 1 else 0.0)
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(2 * hidden_size, num_labels)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths.clamp(min=1).cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return self.classifier(self.dropout(out))


class TokenLinearHead(nn.Module):
    """Token head without recurrence (``--head linear``): dropout + Linear per position. ``[b, s, in] -> [b, s, n]``."""

    def __init__(self, in_size: int, num_labels: int, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Dropout(dropout), nn.Linear(in_size, num_labels))

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class SpanHead(nn.Module):
    """SQuAD head (§4.2): one Linear to a start and an end logit per token. ``[b, s, in] -> ([b, s], [b, s])``."""

    def __init__(self, in_size: int):
        super().__init__()
        self.qa_outputs = nn.Linear(in_size, 2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        start, end = self.qa_outputs(x).unbind(-1)
        return start, end


class ChoiceHead(nn.Module):
    """SWAG head (§4.4): a Linear scorer per choice. ``[b, choices, in] -> [b, choices]``."""

    def __init__(self, in_size: int, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Dropout(dropout), nn.Linear(in_size, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


# ------------------------------------------------------------------------------------------- model and config

#: what the encoder hands to the head, per problem type: per-token rows or two pooled rows ([CLS], mean)
_TOKEN_VIEW = ("token_classification", "question_answering")


class BertFeatureBasedConfig(PretrainedConfig):
    """Config of :class:`BertFeatureBasedModel`: the encoder's config plus the head's settings.

    Args:
        encoder_config: the frozen encoder's config as a dict (``BertConfig.to_dict()``).
        task_problem_type: one of :data:`hf_bert_tasks.tasks.base.PROBLEM_TYPES`.
        feature_strategy: a :data:`STRATEGIES` key.
        head: ``auto`` (BiLSTM for tokens, linear otherwise), ``linear``, ``mlp`` or ``bilstm``.
        pooling: ``cls`` or ``mean`` (sentence-level and multiple-choice tasks).
        head_hidden_size: BiLSTM units per direction (paper: 768) or MLP width.
        head_num_layers: BiLSTM layers (paper: 2).
        head_dropout: dropout inside the head.
        num_labels, id2label, label2id: as for any ``PretrainedConfig``.
    """

    model_type = "bert_feature_based"

    def __init__(
        self,
        encoder_config: dict | None = None,
        task_problem_type: str = "single_label_classification",
        feature_strategy: str = "concat_last_four",
        head: str = "auto",
        pooling: str = "cls",
        head_hidden_size: int = 768,
        head_num_layers: int = 2,
        head_dropout: float = 0.1,
        **kwargs,
    ):
        self.encoder_config = encoder_config or {}
        self.task_problem_type = task_problem_type
        self.feature_strategy = feature_strategy
        self.head = head
        self.pooling = pooling
        self.head_hidden_size = head_hidden_size
        self.head_num_layers = head_num_layers
        self.head_dropout = head_dropout
        super().__init__(**kwargs)
        if encoder_config:
            get_strategy(feature_strategy)
            if head not in HEADS:
                raise ValueError(f"--head {head!r}: expected one of {HEADS}")
            if pooling not in POOLINGS:
                raise ValueError(f"--pooling {pooling!r}: expected one of {POOLINGS}")

    def build_encoder_config(self) -> PretrainedConfig:
        """The encoder's ``PretrainedConfig`` rebuilt from :attr:`encoder_config` (``model_type`` picks the class)."""
        cfg = dict(self.encoder_config)
        return AutoConfig.for_model(cfg.pop("model_type", "bert"), **cfg)


class BertFeatureBasedModel(PreTrainedModel):
    """A frozen encoder + a trained head, for every problem type (paper §5.3).

    ``forward`` takes the inputs of the matching ``BertFor...`` model — ``input_ids``/``attention_mask``/
    ``token_type_ids`` of shape ``[batch, seq]`` (``[batch, choices, seq]`` for multiple choice) and ``labels``
    (``[batch]``, or ``[batch, seq]`` with -100 for token classification) or ``start_positions``/``end_positions``
    — and returns the matching ``transformers`` output (``logits``, or ``start_logits``/``end_logits``).

    The encoder is frozen (``requires_grad=False``), always runs in eval mode (no dropout, so its features equal the
    cached ones) and without autograd, so only the head (and the scalar mix) learn. Padded positions get logit
    ``-1e4`` for question answering. Build one from a checkpoint with :meth:`from_encoder`; load a saved one with
    ``AutoModel.from_pretrained``.
    """

    config_class = BertFeatureBasedConfig
    base_model_prefix = "feature_based"
    supports_gradient_checkpointing = True
    _no_split_modules = []

    def __init__(self, config: BertFeatureBasedConfig):
        super().__init__(config)
        enc_config = config.build_encoder_config()
        self.encoder = AutoModel.from_config(enc_config)
        self.num_hidden_layers = enc_config.num_hidden_layers
        self.combiner = LayerCombiner(config.feature_strategy, self.num_hidden_layers)
        in_size = self.combiner.strategy.output_size(enc_config.hidden_size, self.num_hidden_layers)
        ptype, head = config.task_problem_type, config.head
        if ptype == "token_classification":
            if head in ("auto", "bilstm"):
                self.head = TokenBiLSTMHead(in_size, config.num_labels, config.head_hidden_size, config.head_num_layers,
                                            config.head_dropout)
            elif head == "linear":
                self.head = TokenLinearHead(in_size, config.num_labels, config.head_dropout)
            else:
                raise ValueError(f"--head {head!r} does not fit token classification; expected bilstm or linear")
        elif ptype == "question_answering":
            if head not in ("auto", "linear"):
                raise ValueError(f"--head {head!r} does not fit question answering; the SQuAD head is linear")
            self.head = SpanHead(in_size)
        elif ptype == "multiple_choice":
            if head not in ("auto", "linear"):
                raise ValueError(f"--head {head!r} does not fit multiple choice; the SWAG head is a linear scorer")
            self.head = ChoiceHead(in_size, config.head_dropout)
        elif ptype in ("single_label_classification", "regression"):
            num = 1 if ptype == "regression" else config.num_labels
            self.head = SequenceHead(in_size, num, "linear" if head == "auto" else head, config.head_hidden_size,
                                     config.head_dropout)
        else:
            raise ValueError(f"unknown task_problem_type {ptype!r}")
        self.post_init()
        self.freeze_encoder()

    # -------------------------------------------------------------- construction
    @classmethod
    def from_encoder(cls, model_name_or_path: str, task_problem_type: str, feature_strategy: str, **kwargs):
        """Build a model around the pretrained encoder in ``model_name_or_path`` (the head is new).

        ``kwargs`` are :class:`BertFeatureBasedConfig` fields (``head``, ``pooling``, ``num_labels``, ``id2label`` …)
        and ``revision`` / ``cache_dir`` for the encoder download.
        """
        load_kw = {k: kwargs.pop(k) for k in ("revision", "cache_dir") if k in kwargs}
        encoder = AutoModel.from_pretrained(model_name_or_path, **load_kw)
        enc_cfg = encoder.config.to_dict()
        config = BertFeatureBasedConfig(encoder_config=enc_cfg, task_problem_type=task_problem_type,
                                        feature_strategy=feature_strategy, **kwargs)
        model = cls(config)
        missing, unexpected = model.encoder.load_state_dict(encoder.state_dict(), strict=False)
        if missing:
            raise ValueError(f"{model_name_or_path}: encoder weights missing {missing[:5]}")
        model.freeze_encoder()
        return model

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """``PreTrainedModel.from_pretrained``, then the encoder is frozen again (loading makes fresh parameters)."""
        model = super().from_pretrained(*args, **kwargs)
        model.freeze_encoder()
        return model

    def get_input_embeddings(self):
        return self.encoder.get_input_embeddings()

    def _init_weights(self, module):
        if isinstance(module, ScalarMix):
            module.reset_parameters()
        else:
            super()._init_weights(module)

    def freeze_encoder(self) -> None:
        """Set ``requires_grad=False`` on every encoder parameter and put the encoder in eval mode."""
        for p in self.encoder.parameters():
            p.requires_grad_(False)
        self.encoder.eval()

    def train(self, mode: bool = True):
        """Like ``nn.Module.train`` but the frozen encoder stays in eval mode (no dropout in the features)."""
        super().train(mode)
        self.encoder.eval()
        return self

    @property
    def view(self) -> str:
        """``"tokens"`` (one row per WordPiece) or ``"pooled"`` (rows ``[CLS]`` and mean) handed to the head."""
        return "tokens" if self.config.task_problem_type in _TOKEN_VIEW else "pooled"

    # ------------------------------------------------------------------ encoding
    def encode(self, input_ids, attention_mask=None, token_type_ids=None, layers: list[int] | None = None):
        """Run the frozen encoder and return what the head reads, for ``layers`` (default: the strategy's).

        Returns:
            ``(rows, row_mask)``: ``rows`` float ``[batch, R, n_layers, hidden]`` and ``row_mask`` bool
            ``[batch, R]``. ``R = seq`` (token view; mask = attention mask) or ``R = 2`` (pooled view: row 0 the
            [CLS] vector, row 1 the mean over unmasked tokens) or ``R = 2 * choices`` for multiple choice.
            Pooling before combining layers is exact because every strategy is linear in the layers.
        """
        layers = self.combiner.layers if layers is None else layers
        shape = input_ids.shape
        if self.config.task_problem_type == "multiple_choice":
            input_ids = input_ids.reshape(-1, shape[-1])
            attention_mask = None if attention_mask is None else attention_mask.reshape(-1, shape[-1])
            token_type_ids = None if token_type_ids is None else token_type_ids.reshape(-1, shape[-1])
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        with torch.no_grad():
            out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
                               output_hidden_states=True, return_dict=True)
        stacked = torch.stack([out.hidden_states[i] for i in layers], dim=2)  # [b, s, n, h]
        mask = attention_mask.bool()
        if self.view == "tokens":
            return stacked, mask
        cls_row = stacked[:, 0]
        m = mask[:, :, None, None].to(stacked.dtype)
        mean_row = (stacked * m).sum(1) / m.sum(1).clamp(min=1.0)
        rows = torch.stack([cls_row, mean_row], dim=1)  # [b, 2, n, h]
        if self.config.task_problem_type == "multiple_choice":
            rows = rows.reshape(shape[0], shape[1] * 2, *rows.shape[2:])
        return rows, torch.ones(rows.shape[:2], dtype=torch.bool, device=rows.device)

    # ---------------------------------------------------------------------- head
    def head_forward(self, rows, row_mask, layers: list[int] | None = None, labels=None, start_positions=None,
                     end_positions=None, return_dict: bool = True):
        """Apply the strategy and the head to encoder rows (from :meth:`encode` or the feature cache).

        Args:
            rows: float ``[batch, R, n_layers, hidden]``; ``layers`` names the hidden_states index of each of the
                ``n_layers`` (default: the strategy's).
            row_mask: bool ``[batch, R]``.
            labels / start_positions / end_positions: as for the matching ``BertFor...`` model.
        """
        layers = self.combiner.layers if layers is None else list(layers)
        x = self.combiner(rows.float(), layers)  # [b, R, d]
        ptype = self.config.task_problem_type
        loss = None
        if ptype == "token_classification":
            logits = self.head(x, row_mask.sum(1))
            if labels is not None:
                labels = labels[:, : logits.shape[1]]
                loss = nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                                                   ignore_index=-100)
            return TokenClassifierOutput(loss=loss, logits=logits)
        if ptype == "question_answering":
            start, end = self.head(x)
            start = start.masked_fill(~row_mask, -1e4)
            end = end.masked_fill(~row_mask, -1e4)
            if start_positions is not None and end_positions is not None:
                ignored = start.shape[1]
                s = start_positions.reshape(-1).clamp(0, ignored)
                e = end_positions.reshape(-1).clamp(0, ignored)
                loss = (nn.functional.cross_entropy(start, s, ignore_index=ignored)
                        + nn.functional.cross_entropy(end, e, ignore_index=ignored)) / 2
            return QuestionAnsweringModelOutput(loss=loss, start_logits=start, end_logits=end)
        pool = POOLINGS.index(self.config.pooling)
        if ptype == "multiple_choice":
            x = x.reshape(x.shape[0], -1, 2, x.shape[-1])[:, :, pool]  # [b, choices, d]
            logits = self.head(x)
            if labels is not None:
                loss = nn.functional.cross_entropy(logits, labels.reshape(-1))
            return MultipleChoiceModelOutput(loss=loss, logits=logits)
        logits = self.head(x[:, pool])
        if labels is not None:
            if ptype == "regression":
                loss = nn.functional.mse_loss(logits.squeeze(-1), labels.float().reshape(-1))
            else:
                loss = nn.functional.cross_entropy(logits, labels.reshape(-1))
        return SequenceClassifierOutput(loss=loss, logits=logits)

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, start_positions=None,
                end_positions=None, return_dict: bool | None = None, **kwargs):
        """Encoder (frozen, no autograd) then :meth:`head_forward`; see the class docstring for shapes."""
        rows, row_mask = self.encode(input_ids, attention_mask, token_type_ids)
        return self.head_forward(rows, row_mask, labels=labels, start_positions=start_positions,
                                 end_positions=end_positions)


def _register_auto_classes() -> None:
    """Register the config and model with ``AutoConfig``/``AutoModel`` and the task Auto classes (idempotent)."""
    import transformers

    try:
        AutoConfig.register(BertFeatureBasedConfig.model_type, BertFeatureBasedConfig)
    except ValueError:  # already registered (module reloaded)
        pass
    for name in ("AutoModel", "AutoModelForSequenceClassification", "AutoModelForTokenClassification",
                 "AutoModelForQuestionAnswering", "AutoModelForMultipleChoice"):
        try:
            getattr(transformers, name).register(BertFeatureBasedConfig, BertFeatureBasedModel)
        except ValueError:
            pass


_register_auto_classes()


def build_feature_based_model(task, model_args, training_args=None) -> BertFeatureBasedModel:
    """The recipe's ``build_model`` for ``--mode feature_based``: frozen ``model_name_or_path`` + the task's head.

    Reads ``feature_strategy``, ``head``, ``pooling``, ``head_hidden_size`` from ``training_args`` (defaults:
    ``concat_last_four``, ``auto``, ``cls``, 768). Label names come from ``task.model_config_kwargs()``.
    """
    kwargs = {k: v for k, v in task.model_config_kwargs().items() if k in ("num_labels", "id2label", "label2id")}
    if task.problem_type == "regression":
        kwargs["num_labels"] = 1
    for name in ("head", "pooling", "head_hidden_size"):
        value = getattr(training_args, name, None)
        if value is not None:
            kwargs[name] = value
    return BertFeatureBasedModel.from_encoder(
        model_args.model_name_or_path, task.problem_type,
        getattr(training_args, "feature_strategy", None) or "concat_last_four",
        revision=model_args.model_revision, cache_dir=model_args.cache_dir, **kwargs,
    )


# ------------------------------------------------------------------------------------------------- the cache

#: feature columns passed to the encoder; every other kept column is stored as a target
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
TARGETS = ("labels", "label", "label_ids", "start_positions", "end_positions")


def encoder_fingerprint(encoder: nn.Module) -> str:
    """SHA-256 over the encoder's config and every weight (name, dtype, shape, bytes): changes when any weight does."""
    h = hashlib.sha256()
    config = getattr(encoder, "config", None)
    if config is not None:
        h.update(config.to_json_string(use_diff=False).encode())
    for name, tensor in sorted(encoder.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}".encode())
        h.update(t.view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def dataset_fingerprint(dataset, columns: list[str]) -> str:
    """SHA-256 of the values of ``columns`` in ``dataset`` (row order included): changes when the data does."""
    h = hashlib.sha256()
    h.update(repr((len(dataset), sorted(columns))).encode())
    for batch in dataset.select_columns(columns).iter(batch_size=1000):
        for col in sorted(columns):
            for value in batch[col]:
                h.update(np.asarray(value).tobytes())
                h.update(b"|")
    return h.hexdigest()


class FeatureCache:
    """Frozen-encoder features of one split on disk: safetensors shards + ``meta.json`` (written atomically).

    Layout of ``<root>/<key>/``: ``meta.json`` (fingerprints, layers, counts, shard names) and
    ``shard-00000.safetensors`` … each holding ``rows`` float ``[total_rows, n_layers, hidden]`` (``float16`` by
    default), ``offsets`` int64 ``[n_examples + 1]`` (example ``i`` owns rows ``offsets[i]:offsets[i+1]``) and, per
    target column, ``target.<name>``: ``[n_examples]`` (scalar targets) or ``[total_rows]`` (per-token labels).

    The key is the SHA-256 of the encoder fingerprint (weights + config), the data fingerprint (the tokenized
    columns), the maximum sequence length, the layers, the view and the storage dtype, so a changed model or dataset
    never meets a stale cache; :meth:`lookup` also accepts an entry holding a superset of the layers.
    """

    def __init__(self, path: str):
        self.path = path
        with open(os.path.join(path, "meta.json"), encoding="utf-8") as f:
            self.meta = json.load(f)

    @property
    def layers(self) -> list[int]:
        return list(self.meta["layers"])

    def __len__(self) -> int:
        return int(self.meta["num_examples"])

    @staticmethod
    def base_key(encoder_fp: str, data_fp: str, max_seq_length: int | None, view: str, dtype: str) -> str:
        return hashlib.sha256(json.dumps([encoder_fp, data_fp, max_seq_length, view, dtype]).encode()).hexdigest()

    @staticmethod
    def lookup(root: str, base_key: str, layers: list[int]) -> "FeatureCache | None":
        """A complete entry under ``root`` with ``base_key`` whose layers include ``layers``, else ``None``."""
        if not os.path.isdir(root):
            return None
        for name in sorted(os.listdir(root)):
            meta_path = os.path.join(root, name, "meta.json")
            if not os.path.isfile(meta_path):
                continue
            try:
                with open(meta_path, encoding="utf-8") as f:
                    meta = json.load(f)
            except (OSError, json.JSONDecodeError):
                continue
            if meta.get("base_key") == base_key and set(layers) <= set(meta.get("layers", [])):
                return FeatureCache(os.path.join(root, name))
        return None

    def shards(self) -> list[str]:
        return [os.path.join(self.path, s) for s in self.meta["shards"]]

    def iter_batches(self, batch_size: int, shuffle: bool = True, seed: int = 0) -> Iterator[dict[str, torch.Tensor]]:
        """Yield padded batches streamed shard by shard (one shard in memory at a time).

        Each batch: ``rows`` float32 ``[b, R_max, n_layers, hidden]``, ``row_mask`` bool ``[b, R_max]`` and the
        targets (per-token ones padded with -100, as ``labels`` of token classification).
        """
        from safetensors.torch import load_file

        rng = random.Random(seed)
        shards = self.shards()
        if shuffle:
            rng.shuffle(shards)
        for shard in shards:
            data = load_file(shard)
            offsets = data["offsets"]
            n = offsets.numel() - 1
            order = list(range(n))
            if shuffle:
                rng.shuffle(order)
            for start in range(0, n, batch_size):
                yield self._collate(data, [order[i] for i in range(start, min(start + batch_size, n))])
            del data

    def _collate(self, data, idx: list[int]) -> dict[str, torch.Tensor]:
        offsets = data["offsets"]
        spans = [(int(offsets[i]), int(offsets[i + 1])) for i in idx]
        r_max = max(b - a for a, b in spans)
        feat = data["rows"]
        rows = torch.zeros((len(idx), r_max, *feat.shape[1:]), dtype=torch.float32)
        mask = torch.zeros((len(idx), r_max), dtype=torch.bool)
        for j, (a, b) in enumerate(spans):
            rows[j, : b - a] = feat[a:b].float()
            mask[j, : b - a] = True
        batch = {"rows": rows, "row_mask": mask}
        for key in data:
            if not key.startswith("target."):
                continue
            name, values = key[len("target."):], data[key]
            if self.meta["per_row_targets"].get(name):
                out = torch.full((len(idx), r_max), -100, dtype=values.dtype)
                for j, (a, b) in enumerate(spans):
                    out[j, : b - a] = values[a:b]
                batch[name] = out
            else:
                batch[name] = values[idx]
        return batch


def build_feature_cache(model: BertFeatureBasedModel, features, collator, root: str, max_seq_length: int | None,
                        layers: list[int] | None = None, batch_size: int = 64, shard_examples: int = 2048,
                        dtype: str = "float16") -> tuple[FeatureCache, bool]:
    """Return the cache of ``features`` (a tokenized split) for ``model``'s encoder, computing it on a miss.

    Args:
        model: the feature-based model (its encoder is run in eval mode, no autograd).
        features: a ``datasets.Dataset`` from ``task.preprocess``; only :data:`MODEL_INPUTS` and :data:`TARGETS`
            columns are used.
        collator: the task's data collator (pads a list of feature dicts into tensors).
        root: folder holding cache entries (one sub-folder per key).
        max_seq_length: part of the key.
        layers: hidden_states indices to store (default: the strategy's; pass ``range(L+1)`` to serve every
            strategy from one entry).
        shard_examples: examples per shard (bounds the memory of streaming).
        dtype: ``float16`` (half the disk; the head upcasts) or ``float32``.

    Returns:
        ``(cache, hit)``: ``hit`` is True when an existing entry was reused.
    """
    from safetensors.torch import save_file

    layers = sorted(model.combiner.layers if layers is None else layers)
    columns = [c for c in features.column_names if c in MODEL_INPUTS or c in TARGETS]
    if "input_ids" not in columns:
        raise ValueError(f"features have no input_ids column (columns: {features.column_names})")
    base = FeatureCache.base_key(encoder_fingerprint(model.encoder), dataset_fingerprint(features, columns),
                                 max_seq_length, model.view + ":" + model.config.task_problem_type, dtype)
    found = FeatureCache.lookup(root, base, layers)
    if found is not None:
        return found, True
    key = hashlib.sha256(f"{base}|{layers}".encode()).hexdigest()[:32]
    final = os.path.join(root, key)
    tmp = os.path.join(root, f".tmp-{key}-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    torch_dtype = {"float16": torch.float16, "float32": torch.float32}[dtype]
    was_training = model.training
    model.eval()
    shards, per_row, total = [], {}, 0
    started = time.time()
    data = features.select_columns(columns)
    for s_start in range(0, len(data), shard_examples):
        part = data.select(range(s_start, min(s_start + shard_examples, len(data))))
        rows_all, offsets, targets = [], [0], {}
        for b_start in range(0, len(part), batch_size):
            batch = collator([part[i] for i in range(b_start, min(b_start + batch_size, len(part)))])
            rows, mask = model.encode(batch["input_ids"], batch.get("attention_mask"), batch.get("token_type_ids"),
                                      layers=layers)
            for j in range(rows.shape[0]):
                n = int(mask[j].sum())
                rows_all.append(rows[j, :n].to(torch_dtype))
                offsets.append(offsets[-1] + n)
                for name in TARGETS:
                    if name not in batch:
                        continue
                    value = batch[name][j]
                    is_row = value.dim() >= 1 and model.view == "tokens" and value.numel() == mask.shape[1]
                    per_row[name] = is_row
                    targets.setdefault(name, []).append(value[:n] if is_row else value.reshape(()))
        tensors = {"rows": torch.cat(rows_all).contiguous(), "offsets": torch.tensor(offsets, dtype=torch.int64)}
        for name, values in targets.items():
            tensors[f"target.{'labels' if name in ('label', 'label_ids') else name}"] = (
                torch.cat(values) if per_row[name] else torch.stack(values)).contiguous()
        name = f"shard-{len(shards):05d}.safetensors"
        save_file(tensors, os.path.join(tmp, name))
        shards.append(name)
        total += len(part)
    meta = {
        "base_key": base, "layers": layers, "num_examples": total, "shards": shards, "dtype": dtype,
        "view": model.view, "task_problem_type": model.config.task_problem_type, "max_seq_length": max_seq_length,
        "per_row_targets": {("labels" if k in ("label", "label_ids") else k): v for k, v in per_row.items()},
        "hidden_size": model.encoder.config.hidden_size, "seconds": round(time.time() - started, 3),
    }
    with open(os.path.join(tmp, "meta.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f, indent=2)
    if os.path.isdir(final):  # a stale or concurrent entry with the same key: replace it whole
        shutil.rmtree(final)
    os.replace(tmp, final)
    model.train(was_training)
    return FeatureCache(final), False


@dataclass
class HeadTrainOutput:
    """Like ``transformers.trainer_utils.TrainOutput``: ``global_step``, ``training_loss``, ``metrics``; plus
    ``log_history``, one Trainer-style entry per epoch (``loss``, ``learning_rate``, ``epoch``, ``step``)."""

    global_step: int
    training_loss: float
    metrics: dict[str, Any]
    log_history: list = None


def train_head_from_cache(model: BertFeatureBasedModel, cache: FeatureCache, args, extraction_seconds: float = 0.0,
                          cache_hit: bool = False, num_threads: int | None = 1) -> HeadTrainOutput:
    """Train ``model``'s head (and scalar mix) on cached features for ``args.num_train_epochs`` epochs.

    AdamW (``args.learning_rate``, ``args.weight_decay``; no decay on biases), linear warm-up
    (``args.warmup_steps``: a float < 1 is a ratio) and linear decay, batches of ``args.per_device_train_batch_size``
    reshuffled each epoch with ``args.seed``, gradient clipping at ``args.max_grad_norm``. The encoder never runs.

    The loop runs with ``num_threads`` torch threads (default 1, restored afterwards; ``None`` keeps the current
    setting): the head's ops are small and sequential (a BiLSTM steps token by token), and on a busy 2-core machine
    multi-threaded kernels spent most of their time waiting -- a 2-layer BiLSTM step measured 0.12 s with one
    thread against 5.9 s with two (torch 2.13 CPU, load average 13).

    Returns:
        :class:`HeadTrainOutput` with Trainer-style metrics (``train_runtime`` in seconds, ``train_loss``,
        ``epoch``) plus ``feature_cache_hit`` and ``feature_extraction_runtime``.
    """

    previous_threads = torch.get_num_threads()
    if num_threads:
        torch.set_num_threads(num_threads)
    try:
        return _train_head(model, cache, args, extraction_seconds, cache_hit)
    finally:
        torch.set_num_threads(previous_threads)


def _train_head(model, cache, args, extraction_seconds, cache_hit) -> HeadTrainOutput:
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(args.seed)
    params = [p for p in model.parameters() if p.requires_grad]
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.dim() < 2]
    if not params:
        raise ValueError("the model has no trainable parameter (is the head frozen?)")
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=args.learning_rate)
    bs = args.per_device_train_batch_size
    epochs = max(1, int(math.ceil(args.num_train_epochs)))
    steps = epochs * sum(math.ceil((len(s_offsets) - 1) / bs) for s_offsets in _shard_sizes(cache))
    warm = args.warmup_steps
    warm = int(warm * steps) if isinstance(warm, float) and warm < 1 else int(warm)
    scheduler = get_linear_schedule_with_warmup(optimizer, warm, steps)
    model.train()
    started, step, loss_sum, history = time.time(), 0, 0.0, []
    for epoch in range(epochs):
        epoch_loss, n = 0.0, 0
        for batch in cache.iter_batches(bs, shuffle=True, seed=args.seed + epoch):
            out = model.head_forward(batch["rows"], batch["row_mask"], layers=cache.layers,
                                     labels=batch.get("labels"), start_positions=batch.get("start_positions"),
                                     end_positions=batch.get("end_positions"))
            out.loss.backward()
            if args.max_grad_norm:
                torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            epoch_loss += float(out.loss.detach())
            n += 1
        loss_sum += epoch_loss
        history.append({"loss": epoch_loss / max(n, 1), "learning_rate": scheduler.get_last_lr()[0],
                        "epoch": float(epoch + 1), "step": step})
        logger.info("feature-based head: epoch %d/%d, mean loss %.4f", epoch + 1, epochs, epoch_loss / max(n, 1))
    runtime = time.time() - started
    model.eval()
    metrics = {
        "train_runtime": round(runtime, 4),
        "train_samples_per_second": round(len(cache) * epochs / max(runtime, 1e-9), 3),
        "train_loss": loss_sum / max(step, 1),
        "epoch": float(epochs),
        "feature_cache_hit": bool(cache_hit),
        "feature_extraction_runtime": round(extraction_seconds, 4),
    }
    return HeadTrainOutput(global_step=step, training_loss=metrics["train_loss"], metrics=metrics, log_history=history)


def _shard_sizes(cache: FeatureCache) -> list[list[int]]:
    from safetensors import safe_open

    sizes = []
    for shard in cache.shards():
        with safe_open(shard, framework="pt") as f:
            sizes.append(f.get_tensor("offsets").tolist())
    return sizes


def train_with_cache(trainer, train_features, data_args, training_args) -> HeadTrainOutput:
    """The recipe's training step for ``--mode feature_based`` with the cache on (the default).

    Builds or reuses the cache of ``train_features`` under ``training_args.feature_cache_dir`` (default
    ``<output_dir>/../feature_cache``) and trains the head with :func:`train_head_from_cache`.
    """
    model = trainer.model
    root = getattr(training_args, "feature_cache_dir", None) or os.path.join(
        os.path.dirname(os.path.abspath(training_args.output_dir)), "feature_cache")
    layers = None
    if getattr(training_args, "feature_cache_layers", "strategy") == "all":
        layers = list(range(model.num_hidden_layers + 1))
    started = time.time()
    cache, hit = build_feature_cache(model, train_features, trainer.data_collator, root, data_args.max_seq_length,
                                     layers=layers, batch_size=training_args.per_device_eval_batch_size)
    extraction = time.time() - started
    logger.info("feature cache %s (%s, %.1f s)", cache.path, "hit" if hit else "built", extraction)
    out = train_head_from_cache(model, cache, training_args, extraction_seconds=extraction, cache_hit=hit)
    trainer.state.log_history.extend(out.log_history)  # trainer_state.json -> training_curves.png
    trainer.state.global_step, trainer.state.epoch = out.global_step, out.metrics["epoch"]
    return out


def apply_mode_defaults(training_args) -> None:
    """Learning-rate default per ``--mode`` when none was given: 1e-3 for a feature-based head, 5e-4 for LoRA.

    A randomly initialised head on frozen features (and LoRA's low-rank updates) need a much larger step than the
    paper's fine-tuning grid {5e-5 … 2e-5}; an explicit ``--learning_rate`` always wins.
    """
    mode = getattr(training_args, "mode", "finetune")
    if "learning_rate" in getattr(training_args, "_unset", []) and mode in ("feature_based", "lora"):
        training_args.learning_rate = 1e-3 if mode == "feature_based" else 5e-4


__all__ = [
    "STRATEGIES", "Strategy", "get_strategy", "ScalarMix", "LayerCombiner", "SequenceHead", "TokenBiLSTMHead",
    "TokenLinearHead", "SpanHead", "ChoiceHead", "BertFeatureBasedConfig", "BertFeatureBasedModel",
    "build_feature_based_model", "FeatureCache", "build_feature_cache", "train_head_from_cache", "train_with_cache",
    "encoder_fingerprint", "dataset_fingerprint", "apply_mode_defaults", "PAPER_FINETUNE_F1",
]
