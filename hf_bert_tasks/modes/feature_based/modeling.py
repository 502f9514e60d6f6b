"""The feature-based model (paper §5.3): a frozen BERT encoder, a layer strategy and a trained head.

Imports only torch, transformers and its sibling modules :mod:`.heads` and :mod:`.strategies` (relative imports):
:meth:`BertFeatureBasedModel.save_pretrained` writes these three files as they are beside ``config.json`` with an
``auto_map``, so ``pipeline(task, model=folder, trust_remote_code=True)`` loads a saved model without hf_bert_tasks
(transformers' remote-code mechanism; one source of truth, no second copy). Importing :mod:`hf_bert_tasks.modes.feature_based.mode`
registers the classes with the ``Auto`` classes (``model_type="bert_feature_based"``), so in the package
``AutoModel.from_pretrained(dir)`` (or ``AutoModelFor...``) loads them without remote code."""

from __future__ import annotations

import typing

import torch
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
from transformers.dynamic_module_utils import custom_object_save

from .heads import HEADS, POOLINGS, head_class
from .strategies import LayerCombiner, ScalarMix, get_strategy

#: ``task_problem_type`` -> the task ``Auto`` class (so the ``pipeline()`` task) a saved model's ``auto_map`` names
AUTO_CLASSES = {
    "single_label_classification": "AutoModelForSequenceClassification",
    "regression": "AutoModelForSequenceClassification",
    "token_classification": "AutoModelForTokenClassification",
    "question_answering": "AutoModelForQuestionAnswering",
    "multiple_choice": "AutoModelForMultipleChoice",
}


class BertFeatureBasedConfig(PretrainedConfig):
    """Config of :class:`BertFeatureBasedModel`: the encoder's config plus the head's settings.

    Args:
        encoder_config: the frozen encoder's config as a dict (``BertConfig.to_dict()``).
        task_problem_type: one of :data:`hf_bert_tasks.tasks.base.PROBLEM_TYPES`.
        feature_strategy, head, pooling, head_hidden_size: as ``--feature_strategy`` ... ``--head_hidden_size``
            (:class:`~hf_bert_tasks.modes.feature_based.arguments.FeatureBasedArguments`).
        head_num_layers, head_dropout: BiLSTM layers (paper: 2); dropout inside the head.

    Raises:
        ValueError: an unknown strategy, head or pooling (checked when ``encoder_config`` is given).
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


class BertFeatureBasedModel(PreTrainedModel):
    """A frozen encoder + a trained head, for every problem type (paper §5.3). The encoder is frozen
    (``requires_grad=False``), always in eval mode (no dropout: its features equal the cached ones) and runs without
    autograd, so only the head (and the scalar mix) learn. Build one with :meth:`from_encoder`; load a saved one with
    ``AutoModel.from_pretrained``."""

    config_class = BertFeatureBasedConfig
    base_model_prefix = "feature_based"
    supports_gradient_checkpointing = True
    _no_split_modules: typing.ClassVar[list[str]] = []

    def __init__(self, config: BertFeatureBasedConfig):
        super().__init__(config)
        encoder_kwargs = dict(config.encoder_config)  # the encoder's config; its model_type picks the class
        enc_config = AutoConfig.for_model(encoder_kwargs.pop("model_type", "bert"), **encoder_kwargs)
        self.encoder = AutoModel.from_config(enc_config)
        self.num_hidden_layers = enc_config.num_hidden_layers
        self.combiner = LayerCombiner(config.feature_strategy, self.num_hidden_layers)
        in_size = self.combiner.strategy.output_size(enc_config.hidden_size, self.num_hidden_layers)
        self.head = head_class(config.task_problem_type, config.head)(in_size, config)
        self.post_init()
        self.freeze_encoder()

    @classmethod
    def from_encoder(cls, model_name_or_path: str, task_problem_type: str, feature_strategy: str, **kwargs):
        """A model around the pretrained encoder in ``model_name_or_path`` (a new head); ``kwargs``: config fields and
        ``revision`` / ``cache_dir`` for the download. ``ValueError`` when the checkpoint lacks encoder weights."""
        load_kw = {k: kwargs.pop(k) for k in ("revision", "cache_dir") if k in kwargs}
        encoder = AutoModel.from_pretrained(model_name_or_path, **load_kw)
        config = BertFeatureBasedConfig(
            encoder_config=encoder.config.to_dict(),
            task_problem_type=task_problem_type,
            feature_strategy=feature_strategy,
            **kwargs,
        )
        model = cls(config)
        missing, _ = model.encoder.load_state_dict(encoder.state_dict(), strict=False)
        if missing:
            raise ValueError(f"{model_name_or_path}: encoder weights missing {missing[:5]}")
        return model

    @classmethod
    def from_pretrained(cls, *args, **kwargs):
        """``PreTrainedModel.from_pretrained``, then the encoder is frozen again (loading makes fresh parameters)."""
        model = super().from_pretrained(*args, **kwargs)
        model.freeze_encoder()
        return model

    def save_pretrained(self, save_directory, *args, is_main_process: bool = True, **kwargs):
        """``PreTrainedModel.save_pretrained``, plus the remote code: ``config.json`` gets an ``auto_map`` naming this
        module's classes for ``AutoConfig``, ``AutoModel`` and the task's class (:data:`AUTO_CLASSES`), and this
        module's file with the files it imports relatively (``heads.py``, ``strategies.py``) is copied beside it, as is
        (transformers' ``custom_object_save``, on the main process only). So ``pipeline(task, model=folder,
        trust_remote_code=True)`` and ``AutoModelFor...from_pretrained(folder, trust_remote_code=True)`` load the
        model in an interpreter without hf_bert_tasks (transformers' "custom models" mechanism). Arguments: as
        ``PreTrainedModel.save_pretrained``."""
        module = type(self).__module__.rpartition(".")[2]
        auto_map = {
            "AutoConfig": f"{module}.{type(self.config).__name__}",
            "AutoModel": f"{module}.{type(self).__name__}",
        }
        if self.config.task_problem_type in AUTO_CLASSES:
            auto_map[AUTO_CLASSES[self.config.task_problem_type]] = auto_map["AutoModel"]
        self.config.auto_map = auto_map
        super().save_pretrained(save_directory, *args, is_main_process=is_main_process, **kwargs)
        if is_main_process:
            custom_object_save(self, save_directory)

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
        """Like ``nn.Module.train`` but the frozen encoder stays in eval mode; only the head's modules are walked.
        Why: docs/design.md, "train() and pooled rows"."""
        self.training = mode
        for name, child in self.named_children():
            if name != "encoder":
                child.train(mode)
            elif child.training:
                child.eval()
        return self

    @property
    def view(self) -> str:
        """``"tokens"`` (one row per WordPiece) or ``"pooled"`` (rows [CLS] and mean), as the head declares."""
        return self.head.view

    @property
    def layers(self) -> list[int]:
        """``hidden_states`` indices this model's strategy reads (0 = embeddings)."""
        return list(self.combiner.layers)

    def encode(self, input_ids, attention_mask=None, token_type_ids=None, layers: list[int] | None = None):
        """Run the frozen encoder (no autograd) on ``[batch, seq]`` inputs (``[batch, choices, seq]`` for multiple
        choice); returns what the head reads of ``layers`` (default: the strategy's), ``(rows, row_mask)``: float
        ``[batch, R, n_layers, hidden]``, bool ``[batch, R]``; ``R = seq`` (token view) or the pooled view's ``2``
        ([CLS], mean over unmasked tokens), ``2 * choices`` for multiple choice."""
        layers = self.combiner.layers if layers is None else layers
        shape = input_ids.shape
        multiple_choice = self.config.task_problem_type == "multiple_choice"
        if multiple_choice:
            input_ids, attention_mask, token_type_ids = (
                None if t is None else t.reshape(-1, shape[-1]) for t in (input_ids, attention_mask, token_type_ids)
            )
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        with torch.no_grad():
            out = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                output_hidden_states=True,
                return_dict=True,
            )
        stacked = torch.stack([out.hidden_states[i] for i in layers], dim=2)  # [b, s, n, h]
        mask = attention_mask.bool()
        if self.view == "tokens":
            return stacked, mask
        cls_row = stacked[:, 0]
        m = mask[:, :, None, None].to(stacked.dtype)
        mean_row = (stacked * m).sum(1) / m.sum(1).clamp(min=1.0)
        rows = torch.stack([cls_row, mean_row], dim=1)  # [b, 2, n, h]
        if multiple_choice:
            rows = rows.reshape(shape[0], shape[1] * 2, *rows.shape[2:])
        return rows, torch.ones(rows.shape[:2], dtype=torch.bool, device=rows.device)

    def forward(
        self,
        input_ids=None,
        attention_mask=None,
        token_type_ids=None,
        features=None,
        labels=None,
        start_positions=None,
        end_positions=None,
        length=None,
        return_dict: bool | None = None,
        **kwargs,
    ):
        """Token inputs through :meth:`encode`, or cached ``features`` (float ``[batch, R, n_layers, hidden]`` of
        :attr:`layers`; ``attention_mask`` ``[batch, R]`` their row mask, default all rows), then the strategy and the
        head (in its dtype). ``labels``: ``[batch]``, or ``[batch, seq]`` with -100 for tokens; ``start/end_positions``
        ``[batch]``. ``length`` is unused: a parameter so ``Trainer`` keeps the cache's column for ``group_by_length``.

        Returns the matching ``transformers`` output; ``ValueError`` without ``input_ids`` or ``features``.
        """
        if features is not None:
            rows, row_mask = (
                features,
                attention_mask
                if attention_mask is not None
                else torch.ones(features.shape[:2], dtype=torch.bool, device=features.device),
            )
        elif input_ids is not None:
            rows, row_mask = self.encode(input_ids, attention_mask, token_type_ids)
        else:
            raise ValueError("BertFeatureBasedModel.forward needs input_ids or cached features")
        x = self.combiner(rows.to(next(self.head.parameters()).dtype), self.combiner.layers)  # [b, R, d]
        return self.head(
            x, row_mask.bool(), labels=labels, start_positions=start_positions, end_positions=end_positions
        )


def build_feature_based_model(task, model_args, training_args=None) -> BertFeatureBasedModel:
    """The recipe's ``build_model`` for ``--mode feature_based``: frozen ``model_name_or_path`` + the task's head, from
    ``training_args``' ``feature_strategy``, ``head``, ``pooling``, ``head_hidden_size`` (defaults:
    ``concat_last_four``, ``auto``, ``cls``, 768) and ``task.model_config_kwargs()``'s labels."""
    kwargs = {k: v for k, v in task.model_config_kwargs().items() if k in ("num_labels", "id2label", "label2id")}
    if task.problem_type == "regression":
        kwargs["num_labels"] = 1
    for name in ("head", "pooling", "head_hidden_size"):
        value = getattr(training_args, name, None)
        if value is not None:
            kwargs[name] = value
    return BertFeatureBasedModel.from_encoder(
        model_args.model_name_or_path,
        task.problem_type,
        getattr(training_args, "feature_strategy", None) or "concat_last_four",
        revision=model_args.model_revision,
        cache_dir=model_args.cache_dir,
        **kwargs,
    )
