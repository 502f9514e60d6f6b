"""The pretrain recipe's own argument dataclasses, importable without transformers: :class:`PretrainModelArguments`,
:class:`PretrainDataArguments` and :class:`PretrainOptions` (the recipe's training flags and changed
``TrainingArguments`` defaults; ``pretraining_config.PretrainTrainingArguments`` inherits them), and the one parse
of a ``pretrain`` command line (:func:`parse_pretrain_argv`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..utils.modeling import BERT_PRESETS


@dataclass
class PretrainModelArguments:
    """Model and tokenizer: a preset size (``hf_bert_tasks.utils.modeling.BERT_PRESETS``) or a checkpoint to continue.
    Raises ``ValueError`` for an unknown preset or a dropout outside ``[0, 1)``. Small-budget options (``--dropout 0``,
    ``--mlm_probability``, ``--no_next_sentence_prediction``): docs/design.md, "pretraining/args.py: small-budget
    options"."""

    preset: str = field(
        default="tiny",
        metadata={
            "help": "BERT size: tiny, mini, small, base (paper's BERT-BASE).",
            "choices": ["tiny", "mini", "small", "base"],
        },
    )
    model_name_or_path: str | None = field(default=None, metadata={"help": "Checkpoint to continue (e.g. phase 1)."})
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer folder/id (default: train one)."})
    vocab_size: int = field(default=8000, metadata={"help": "WordPiece vocabulary size to train (paper: 30522)."})
    lowercase: bool = field(default=True, metadata={"help": "Uncased vocabulary when training one."})
    num_hidden_layers: int | None = field(default=None, metadata={"help": "Override the preset's L."})
    hidden_size: int | None = field(default=None, metadata={"help": "Override the preset's H."})
    num_attention_heads: int | None = field(default=None, metadata={"help": "Override the preset's A."})
    intermediate_size: int | None = field(default=None, metadata={"help": "Override the preset's feed-forward size."})
    max_position_embeddings: int = field(default=512, metadata={"help": "Positions (512 in the paper)."})
    dropout: float | None = field(
        default=None,
        metadata={
            "help": "Hidden and attention dropout (default: the config's 0.1; 0 as Cramming, Geiping & Goldstein 2022)."
        },
    )

    def __post_init__(self):
        if self.preset not in BERT_PRESETS:
            raise ValueError(f"--preset: unknown BERT preset {self.preset!r}; known: {', '.join(BERT_PRESETS)}")
        if self.dropout is not None and not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"--dropout must be in [0, 1), got {self.dropout}")

    def config_overrides(self) -> dict:
        """``BertConfig`` keys given on the command line (size overrides, and dropout as two keys)."""
        keys = ("num_hidden_layers", "hidden_size", "num_attention_heads", "intermediate_size")
        overrides = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        if self.dropout is not None:
            overrides.update(hidden_dropout_prob=self.dropout, attention_probs_dropout_prob=self.dropout)
        return overrides


@dataclass
class PretrainDataArguments:
    """Corpus, instance creation (google's ``create_pretraining_data.py`` flags) and masking.

    Raises:
        ValueError: neither or both of ``train_files`` / ``dataset_name``; a validation percentage not in ``[0, 100)``.
    """

    train_files: list[str] = field(
        default=None,
        metadata={
            "help": "Local corpus files or globs: text (one sentence per line, blank line between documents), .jsonl or "
            ".parquet (a 'sentences' list or a 'text' string per document).",
            "nargs": "+",
        },
    )
    validation_files: list[str] = field(
        default=None,
        metadata={
            "nargs": "+",
            "help": "Held-out documents (files as "
            "--train_files); every --train_files document is then trained on (no --validation_split_percentage).",
        },
    )
    dataset_name: str | None = field(default=None, metadata={"help": "Hub dataset id (one document per row)."})
    dataset_config_name: str | None = field(default=None, metadata={"help": "Configuration of --dataset_name."})
    dataset_split: str = field(default="train", metadata={"help": "Split of --dataset_name."})
    text_column: str = field(default="text", metadata={"help": "Row column of documents (one sentence per line)."})
    streaming: bool = field(default=False, metadata={"help": "Stream the corpus (no cache; eval: first documents)."})
    streaming_eval_documents: int = field(
        default=100, metadata={"help": "With --streaming: the first N documents are the eval set (0: none)."}
    )
    dataset_cache_dir: str | None = field(
        default=None, metadata={"help": "datasets cache folder (default: HF_DATASETS_CACHE)."}
    )
    preprocessing_num_workers: int | None = field(default=None, metadata={"help": "Processes creating the instances."})
    validation_split_percentage: float = field(
        default=5.0, metadata={"help": "Percent of documents held out (seeded) for evaluation (0: none)."}
    )
    document_boundary: str = field(
        default="auto",
        metadata={
            "choices": ["auto", "blank_line", "heading"],
            "help": "blank_line (google's format), heading (WikiText ' = Title = ' starts a document), auto (per file).",
        },
    )
    split_sentences: bool = field(default=False, metadata={"help": "Split lines into sentences after . ! ?"})
    max_train_documents: int | None = field(default=None, metadata={"help": "Keep the first N training documents."})
    max_seq_length: int = field(default=128, metadata={"help": "WordPieces per instance incl. [CLS], [SEP]."})
    short_seq_prob: float = field(default=0.1, metadata={"help": "Probability of a shorter target length."})
    next_sentence_prediction: bool = field(
        default=True,
        metadata={
            "help": "NSP objective (A/B pairs). --no_next_sentence_prediction: MLM only on full-length single segments "
            "(RoBERTa, Liu et al. 2019 §4.2)."
        },
    )
    nsp_probability: float = field(default=0.5, metadata={"help": "Probability of a NotNext pair."})
    dupe_factor: int = field(default=1, metadata={"help": "Passes over the corpus (google: 10 with static masks)."})
    masking: str = field(
        default="dynamic",
        metadata={"help": "dynamic (new masks every batch) or static (stored).", "choices": ["dynamic", "static"]},
    )
    mlm_probability: float = field(
        default=0.15,
        metadata={
            "help": "Fraction of tokens to predict (paper: 0.15; higher rates such as 0.4 can be better: Wettig et al. "
            "2022, on masking rates)."
        },
    )
    selection: str = field(
        default="exact",
        metadata={
            "choices": ["exact", "bernoulli"],
            "help": "exact (google's count per sequence) or bernoulli (transformers' per-token draw).",
        },
    )
    max_predictions_per_seq: int = field(default=20, metadata={"help": "Cap of exact selection (google: 20 at 128)."})
    whole_word_mask: bool = field(default=False, metadata={"help": "Mask whole words (all WordPieces of a word)."})
    preprocessing_batch_size: int = field(default=1000, metadata={"help": "Documents per map batch (NotNext pool)."})

    def __post_init__(self):
        if bool(self.train_files) == bool(self.dataset_name):
            raise ValueError(
                "give exactly one of --train_files (text files, one sentence per line, blank line "
                "between documents; jsonl; parquet) and --dataset_name"
            )
        percentage = self.validation_split_percentage
        if not 0 <= percentage < 100:
            raise ValueError(f"--validation_split_percentage must be in [0, 100), got {percentage}")


@dataclass
class PretrainOptions:
    """The pretrain recipe's training flags and its changed ``TrainingArguments`` defaults (paper §A.2: lr 1e-4, 1 %
    warmup, weight decay 0.01; google's Adam epsilon 1e-6; scaled to a CPU: batch 32, 1000 steps), the two phases."""

    output_dir: str | None = field(default=None, metadata={"help": "Where the model, tokenizer and summary go."})
    learning_rate: float = field(default=1e-4, metadata={"help": "Peak learning rate (paper: 1e-4)."})
    per_device_train_batch_size: int = field(default=32, metadata={"help": "Sequences per step (paper: 256)."})
    per_device_eval_batch_size: int = field(default=64, metadata={"help": "Batch size for evaluation."})
    max_steps: int = field(default=1000, metadata={"help": "Training steps of phase 1."})
    warmup_steps: float = field(default=0.01, metadata={"help": "Warmup (float < 1: fraction of steps)."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay."})
    adam_epsilon: float = field(default=1e-6, metadata={"help": "AdamW epsilon (google's 1e-6)."})
    eval_strategy: str = field(default="steps", metadata={"help": "no, steps or epoch."})
    eval_steps: float | None = field(default=200, metadata={"help": "Evaluate every N steps."})
    logging_steps: float = field(default=50, metadata={"help": "Log every N steps."})
    save_steps: float = field(default=500, metadata={"help": "Checkpoint every N steps (for resume_from_checkpoint)."})
    save_total_limit: int | None = field(default=2, metadata={"help": "Checkpoints kept."})
    remove_unused_columns: bool = field(default=False, metadata={"help": "Keep word_ids for whole-word masking."})
    prediction_loss_only: bool = field(default=True, metadata={"help": "Evaluation collects no logits."})
    masked_only_decoder: bool = field(
        default=True,
        metadata={
            "help": "Run the MLM vocabulary projection only on masked positions (same loss and weights, faster)."
        },
    )
    phase2_max_steps: int = field(default=0, metadata={"help": "Steps of phase 2 (0: one phase only)."})
    phase2_max_seq_length: int = field(default=512, metadata={"help": "Sequence length of phase 2 (paper: 512)."})
    phase2_max_predictions_per_seq: int = field(
        default=80, metadata={"help": "Exact-selection cap in phase 2 (google: 80)."}
    )
    phase2_per_device_train_batch_size: int | None = field(
        default=None, metadata={"help": "Batch of phase 2 (default: phase 1's)."}
    )
    overwrite_output_dir: bool = field(default=False, metadata={"help": "Replace a finished run in output_dir."})
    padding_free: bool = field(
        default=False,
        metadata={
            "help": "Padding-free batches: MLM/NSP masks drawn as padded, then each batch flattened to its real "
            "tokens (variable-length attention where available; docs/design.md, 'padding_free')."
        },
    )


#: (title, class) of the recipe's argument groups, in ``--help`` order
GROUPS = (
    ("model arguments", PretrainModelArguments),
    ("data arguments", PretrainDataArguments),
    ("training arguments (the package's own and changed defaults)", PretrainOptions),
)


def parse_pretrain_argv(argv: list[str], prog: str = "hf-bert-tasks pretrain"):
    """Parse a ``pretrain`` command line once (``--config FILE`` values below the flags), before transformers is
    imported: a :class:`hf_bert_tasks.flags.parser.CommandLine` with the model and data arguments built.

    Raises:
        hf_bert_tasks.flags.parser.UsageError: an unknown flag (with the closest known one) or a value argparse
            refuses.
        ValueError: a bad preset, dropout or corpus choice (the dataclasses' checks), a bad ``--config`` file or key.
        FileNotFoundError: a missing ``--config`` file."""
    from ..flags.parser import CommandLine, build_parser, parse_flags

    values, given = parse_flags(build_parser(list(GROUPS), prog), argv)
    model = PretrainModelArguments(**{k: values.pop(k) for k in PretrainModelArguments.__dataclass_fields__})
    data = PretrainDataArguments(**{k: values.pop(k) for k in PretrainDataArguments.__dataclass_fields__})
    from ..flags.trainer_fields import TRAINER_FIELDS

    table = frozenset(TRAINER_FIELDS).difference(*(c.__dataclass_fields__ for _, c in GROUPS))
    return CommandLine(model, data, values, given, table_fields=table)
