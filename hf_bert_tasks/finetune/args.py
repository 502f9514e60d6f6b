"""The fine-tune recipe's own flags, light (no transformers import): :class:`ModelArguments`, :class:`DataArguments`,
:class:`FinetuneOptions` (the package's training flags and changed ``TrainingArguments`` defaults, which
:class:`hf_bert_tasks.finetune.config.FinetuneTrainingArguments` inherits) and :func:`parse_finetune_argv`, the one
parse of a ``finetune`` command line (:mod:`hf_bert_tasks.flags.parser`), with the selected mode's flags
(:func:`selected_mode`, a first pass). As
``pretraining/args.py`` for the pretrain recipe. Defaults: docs/design.md, "Fine-tuning defaults"."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..flags.parser import CommandLine, UsageError, build_parser, parse_flags
from ..modes import DEFAULT_TRAINING_MODE, TRAINING_MODES
from ..tasks import get_task, list_tasks


@dataclass
class ModelArguments:
    """Which checkpoint to fine-tune."""

    model_name_or_path: str = field(
        default="bert-base-uncased",
        metadata={"help": "Hub id (bert-base-uncased, org/name of a pushed run) or local folder of a checkpoint."},
    )
    tokenizer_name: str | None = field(default=None, metadata={"help": "Tokenizer id/folder if not the model's."})
    model_revision: str = field(default="main", metadata={"help": "Hub revision (branch, tag or commit)."})
    cache_dir: str | None = field(default=None, metadata={"help": "Where Hub downloads are cached."})
    attn_implementation: str | None = field(
        default=None,
        metadata={
            "help": "Attention: sdpa (torch scaled_dot_product_attention), eager, flash_attention_2, flex_attention "
            "(default: what transformers picks for the architecture, sdpa where it has it, else eager).",
            "choices": ["sdpa", "eager", "flash_attention_2", "flex_attention"],
        },
    )
    reinit_pooler: bool = field(
        default=False,
        metadata={
            "help": "Re-initialise the pooler (trained for NSP) before fine-tuning (Zhang et al. 2021, 'Revisiting "
            "Few-sample BERT Fine-tuning', §5; --mode finetune only)."
        },
    )
    reinit_layers: int = field(
        default=0,
        metadata={
            "help": "Re-initialise the top N encoder layers (Zhang et al. 2021, §5; --mode finetune only); 0 keeps all."
        },
    )


@dataclass
class DataArguments:
    """Which task and data, and how to tokenize it."""

    task: str = field(
        default=None,
        metadata={
            "help": "Registered task name (required; `hf-bert-tasks tasks` lists them with their metrics).",
            "metavar": "{" + ",".join(list_tasks()) + "}",
        },
    )
    data_dir: str | None = field(
        default=None, metadata={"help": "Folder with the original task files (e.g. glue_data/MRPC); else the Hub."}
    )
    train_file: str | None = field(
        default=None,
        metadata={
            "help": "Your own training file: .csv, .tsv, .jsonl; SQuAD .json, CoNLL .txt (`hf-bert-tasks tasks`)."
        },
    )
    validation_file: str | None = field(default=None, metadata={"help": "Your own dev file (as --train_file)."})
    test_file: str | None = field(default=None, metadata={"help": "Your own test file (label column optional)."})
    text_column_names: str | None = field(
        default=None,
        metadata={
            "help": "Your files' text columns, comma-separated in the task's order (default: the task's names)."
        },
    )
    label_column_name: str | None = field(
        default=None, metadata={"help": "Your files' label column (default: the task's, e.g. label)."}
    )
    label_list: str | None = field(default=None, metadata={"help": "Labels in id order: a,b (default: train's)."})
    dataset_name: str | None = field(default=None, metadata={"help": "Hub dataset id overriding the task's."})
    dataset_config_name: str | None = field(default=None, metadata={"help": "Hub dataset config, not the task's."})
    dataset_revision: str | None = field(default=None, metadata={"help": "Hub dataset revision."})
    max_seq_length: int | None = field(
        default=None,
        metadata={"help": "Max WordPieces per sequence incl. [CLS]/[SEP] (default: the task's, 128 for GLUE)."},
    )
    pad_to_max_length: bool = field(
        default=False,
        metadata={"help": "Pad every batch to max_seq_length (run_glue.py's default) instead of dynamically."},
    )
    max_train_samples: int | None = field(default=None, metadata={"help": "Keep only the first N training examples."})
    max_eval_samples: int | None = field(
        default=None, metadata={"help": "Keep only the first N examples per eval split."}
    )
    max_predict_samples: int | None = field(default=None, metadata={"help": "Keep only the first N test examples."})
    # Question answering (SQuAD; paper §4.2-4.3, google-research/bert run_squad.py flags)
    doc_stride: int = field(default=128, metadata={"help": "SQuAD: tokens between the starts of two context windows."})
    max_query_length: int = field(default=64, metadata={"help": "SQuAD: questions are cut to this many tokens."})
    n_best_size: int = field(default=20, metadata={"help": "SQuAD: start/end candidates kept per window (n-best)."})
    max_answer_length: int = field(default=30, metadata={"help": "SQuAD: longest answer span in tokens."})
    null_score_diff_threshold: float | None = field(
        default=None, metadata={"help": "SQuAD v2: predict no answer when null - best non-null score > this (tau)."}
    )
    # Token classification (CoNLL-2003 NER; paper §5.3)
    label_all_tokens: bool = field(
        default=False,
        metadata={"help": "NER: label every WordPiece (later pieces of B-X get I-X), not only the first."},
    )
    document_context: bool = field(
        default=False, metadata={"help": "NER: fill each window with neighbouring sentences of the same document."}
    )
    # Tokenized-features cache (hf_bert_tasks/finetune/data.py)
    cache_tokenized: bool = field(
        default=True,
        metadata={
            "help": "Cache tokenized features on disk by fingerprint (data, tokenizer, max_seq_length, task options, "
            "preprocessing code): a second run skips tokenization. Opt out: --no_cache_tokenized."
        },
    )
    tokenized_cache_dir: str | None = field(
        default=None,
        metadata={"help": "Folder of the tokenized-features cache (default: <datasets cache>/hf_bert_tasks)."},
    )
    overwrite_cache: bool = field(default=False, metadata={"help": "Re-tokenize and replace cached features."})

    def __post_init__(self):
        if self.task is None:
            raise ValueError("--task is required (see `hf-bert-tasks tasks` for the list)")
        self._looked_up = (self.task, get_task(self.task))  # an unknown name fails here, suggesting close names

    def registered_task(self):
        """The registered :class:`~hf_bert_tasks.tasks.base.Task` :attr:`task` names (looked up again if it changed
        since the arguments were made: ``UnknownTaskError`` for an unknown name)."""
        name, task = self._looked_up
        return task if name == self.task else get_task(self.task)


@dataclass
class FinetuneOptions:
    """The fine-tune recipe's training flags and changed ``TrainingArguments`` defaults (each field's help):
    ``lr_grid`` x ``seeds`` (:mod:`hf_bert_tasks.finetune.grid`), length-aware batches (:mod:`hf_bert_tasks.finetune.trainer`)
    and ``mode`` (:mod:`hf_bert_tasks.modes`; a mode's own flags come from its registered arguments dataclass)."""

    output_dir: str | None = field(default=None, metadata={"help": "Where the model, metrics and predictions go."})
    learning_rate: float | None = field(default=None, metadata={"help": "Peak learning rate (default: the task's)."})
    per_device_train_batch_size: int | None = field(
        default=None, metadata={"help": "Batch size (default: the task's)."}
    )
    num_train_epochs: float | None = field(default=None, metadata={"help": "Epochs (default: the task's)."})
    per_device_eval_batch_size: int = field(default=64, metadata={"help": "Batch size for evaluation."})
    warmup_steps: float = field(default=0.1, metadata={"help": "Warmup: a float < 1 is a fraction of total steps."})
    weight_decay: float = field(default=0.01, metadata={"help": "AdamW weight decay (the paper's 0.01)."})
    eval_strategy: str = field(default="epoch", metadata={"help": "When to evaluate: no, steps, epoch."})
    save_strategy: str = field(default="epoch", metadata={"help": "When to save checkpoints: no, steps, epoch."})
    save_total_limit: int | None = field(default=1, metadata={"help": "Checkpoints kept in output_dir."})
    logging_steps: float = field(default=50, metadata={"help": "Log every N steps."})
    lr_grid: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated learning rates, e.g. '5e-5,4e-5,3e-5,2e-5'; best on dev kept. A bare --lr_grid (or "
            "'paper') searches the task's paper grid (GLUE: 5e-5,4e-5,3e-5,2e-5, §4.1).",
            "nargs": "?",
            "const": "paper",
        },
    )
    seeds: str | None = field(
        default=None,
        metadata={
            "help": "Comma-separated seeds, e.g. '1,2,3': one run per seed (random restarts, paper §4.1); with "
            "--lr_grid the best lr is chosen by the mean dev metric over seeds."
        },
    )
    group_by_length: bool = field(
        default=True,
        metadata={
            "help": "Length-grouped training batches (less padding, faster). Neither this nor "
            "--train_sampling_strategy given: the task family's sampler, random batches for GLUE and SQuAD (as "
            "transformers' run_glue.py and run_qa.py: grouped batches cost accuracy there, docs/parity.md), "
            "length-grouped for CoNLL-2003 and SWAG. --no_group_by_length: random batches."
        },
    )
    train_sampling_strategy: str | None = field(
        default=None,
        metadata={
            "help": "Training sampler: group_by_length, random, sequential, batch_rebalance (default: see "
            "--group_by_length). An explicit value wins over --group_by_length.",
            "choices": ["random", "sequential", "group_by_length", "batch_rebalance"],
        },
    )
    sort_eval_by_length: bool = field(
        default=True,
        metadata={
            "help": "Evaluate/predict longest-first (less padding); predictions are put back in the input order, so "
            "metrics and prediction files do not change. Opt out: --no_sort_eval_by_length."
        },
    )
    overwrite_output_dir: bool = field(
        default=False, metadata={"help": "Write into an output_dir that already holds all_results.json."}
    )
    padding_free: bool = field(
        default=False,
        metadata={
            "help": "Padding-free batches: each batch flattened to its real tokens (cu_seq_lens, no attention mask), "
            "variable-length attention where available; same loss (docs/design.md, 'padding_free'). Not with "
            "--mode feature_based."
        },
    )
    mode: str = field(
        default=DEFAULT_TRAINING_MODE,
        metadata={
            "help": "How the model is trained, one of the registered training modes (hf_bert_tasks.modes): all weights "
            "(paper §3.2), peft LoRA adapters, or a frozen encoder with a trained head (paper §5.3).",
            "choices": TRAINING_MODES.names(),
        },
    )


#: (title, class) of the recipe's own argument groups, in ``--help`` order; modes' flags follow (the registry's)
GROUPS = (
    ("model arguments", ModelArguments),
    ("data arguments", DataArguments),
    ("training arguments (the package's own and changed defaults)", FinetuneOptions),
)


#: a parsed ``finetune`` command line (:func:`parse_finetune_argv`)
FinetuneCommandLine = CommandLine


def mode_groups(mode: str | None = None) -> list[tuple[str, type]]:
    """``(title, flags dataclass)`` of ``mode`` (a registered ``--mode`` value; ``[]`` for a mode without flags or a
    name no mode has) or, with ``None``, of every registered mode with flags (``--help``, ``compare``), checked
    against the recipe's own flags (:func:`hf_bert_tasks.modes.mode_groups`; ``ValueError`` for a clash, naming both
    owners). Only the light flags modules of those modes are imported."""
    from ..modes import mode_groups

    return mode_groups({name for _, cls in GROUPS for name in cls.__dataclass_fields__}, mode)


def finetune_parser(prog: str = "hf-bert-tasks finetune", groups=None):
    """The ``finetune`` flags as one :class:`FlagParser` (no transformers import): the
    recipe's dataclasses, the modes' flags (``groups``: default :func:`mode_groups` of every registered mode), then
    ``TrainingArguments``' other fields (the static table :data:`hf_bert_tasks.flags.trainer_fields.TRAINER_FIELDS`)."""
    return build_parser([*GROUPS, *(mode_groups() if groups is None else groups)], prog)


def _last_value(argv: list[str], flag: str) -> str | None:
    """The value of the last ``flag VALUE`` or ``flag=VALUE`` in ``argv`` (``None``: not given)."""
    value = None
    for i, token in enumerate(argv):
        if token == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif token.startswith(flag + "="):
            value = token.split("=", 1)[1]
    return value


def selected_mode(argv: list[str]) -> str:
    """The first, light pass over a ``finetune`` command line: the ``--mode`` it selects (the last one given, else
    the ``mode`` key of its ``--config`` file, else :data:`~hf_bert_tasks.modes.DEFAULT_TRAINING_MODE`), so that the
    one parse is built with that mode's flags only (as trl's scripts read a first dataclass before the others).
    A name no mode has is returned as given: the parse refuses it, listing ``--mode``'s choices.
    ``FileNotFoundError`` / ``ValueError``: an unreadable ``--config`` file."""
    mode, config = _last_value(argv, "--mode"), _last_value(argv, "--config")
    if mode is None and config is not None:
        from ..flags.config_file import read_config

        mode = read_config(config).get("mode")
    return DEFAULT_TRAINING_MODE if mode is None else str(mode)


def _other_modes_flag(argv: list[str], mode: str) -> UsageError | None:
    """A :class:`UsageError` naming the mode that owns a flag of ``argv`` (or of its ``--config`` file) other than
    ``mode``, e.g. ``--lora_r`` in a ``--mode finetune`` run; ``None`` when no flag is another mode's. Called only
    when the parse failed: it imports every registered mode's light flags module."""
    from ..flags.config_file import read_config
    from ..flags.parser import given_flags
    from ..modes import mode_arguments_classes

    config = _last_value(argv, "--config")
    names = set(given_flags(argv)) | set(read_config(config) if config else ())
    for other, cls in mode_arguments_classes().items():
        owned = sorted(names.intersection(cls.__dataclass_fields__))
        if other != mode and owned:
            return UsageError(
                f"--{owned[0]}: a flag of --mode {other}, and this run is --mode {mode}; expected --mode {other} "
                "or the flag left out"
            )
    return None


def parse_finetune_argv(argv: list[str], prog: str = "hf-bert-tasks finetune") -> FinetuneCommandLine:
    """Parse a ``finetune`` command line once (``--config FILE`` values below the flags), before transformers is
    imported, with the flags of the selected mode only (:func:`selected_mode`: no other mode's module is imported);
    ``--task`` is looked up (``DataArguments``).

    Raises:
        UsageError: an unknown flag (with the closest known one, or the mode that owns it) or a value argparse
            refuses (one line, as argparse words it).
        ValueError: ``--task`` missing or unknown, a bad ``--config`` file or key, a mode flag that clashes.
        FileNotFoundError: a missing ``--config`` file."""
    from ..flags.trainer_fields import TRAINER_FIELDS

    mode = selected_mode(argv)
    groups = [*GROUPS, *mode_groups(mode)]  # the recipe's flags and the selected mode's, checked for clashes
    try:
        values, given = parse_flags(build_parser(groups, prog), argv)
    except ValueError as err:  # UsageError, or a --config key no flag takes
        raise _other_modes_flag(argv, mode) or err
    classes = [cls for _, cls in groups]
    table = frozenset(TRAINER_FIELDS).difference(*[cls.__dataclass_fields__ for cls in classes])
    model = ModelArguments(**{k: values.pop(k) for k in ModelArguments.__dataclass_fields__})
    data = DataArguments(**{k: values.pop(k) for k in DataArguments.__dataclass_fields__})  # --task looked up: last
    modes = tuple(classes[len(GROUPS) :])
    return CommandLine(model, data, values, given, modes, table, task=data.registered_task())
