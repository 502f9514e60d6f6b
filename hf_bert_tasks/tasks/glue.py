"""The GLUE tasks of the paper's Table 1 (§4.1): CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE (+ WNLI).

Hub source: ``nyu-mll/glue`` (one config per task). Local source: the original GLUE folders (``MRPC/train.tsv``,
``dev.tsv``, ``test.tsv``; MNLI ``dev_matched.tsv``/``dev_mismatched.tsv`` or ``.jsonl``) read with quoting off.

Labels are mapped **by name** to the Hub dataset's ids: e.g. MNLI ``entailment=0, neutral=1, contradiction=2``,
RTE/QNLI ``entailment=0, not_entailment=1``; files that code labels as ``0``/``1`` (CoLA, SST-2, MRPC, QQP, WNLI)
use the same ids as the Hub. STS-B is regression (float score in [0, 5], ``num_labels=1``, MSE loss).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field

import numpy as np

from .. import metrics as M
from ..io import read_jsonl, read_tsv
from .base import MetricSpec, PaperDefaults, Task
from .registry import register_task

logger = logging.getLogger(__name__)


@dataclass
class GlueTask(Task):
    """A GLUE sentence or sentence-pair task with a sequence-classification (or regression) head.

    Attributes (besides :class:`Task`'s):
        file_columns: canonical text column -> column name in the original TSV header.
        file_label_column: label column name in the TSV header (``None``: positional, see ``positional``).
        raw_label_map: raw label string in the files -> label name (``None`` for STS-B's float scores).
        positional: for headerless files (CoLA train/dev): canonical column -> field index; ``"label"`` included.
        jsonl_columns: canonical column -> candidate keys in a ``.jsonl`` file (MNLI exports).
        submission_files: test split -> GLUE-server file name (``"MRPC.tsv"``).
        submission_labels: ``"id"`` (GLUE expects 0/1), ``"name"`` (MNLI/QNLI/RTE expect label names) or
            ``"float"`` (STS-B).
    """

    file_columns: dict[str, str] = field(default_factory=dict)
    file_label_column: str | None = "label"
    raw_label_map: dict[str, str] | None = None
    positional: dict[str, int] | None = None
    jsonl_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    submission_files: dict[str, str] = field(default_factory=dict)
    submission_labels: str = "id"

    # ---------------------------------------------------------------- reading
    def _label_value(self, raw: str, path: str, line: int, column: str):
        if self.problem_type == "regression":
            try:
                return float(raw)
            except ValueError:
                raise ValueError(
                    f"{path}, line {line}: field {column!r} = {raw!r} is not a number; expected a float score"
                ) from None
        name = raw if self.raw_label_map is None else self.raw_label_map.get(raw)
        if name is None or name not in self.label_names:
            allowed = sorted(self.raw_label_map) if self.raw_label_map else list(self.label_names)
            raise ValueError(f"{path}, line {line}: field {column!r} = {raw!r} is not a known label; expected one of {allowed}")
        return self.label_names.index(name)

    def _read_tsv(self, path: str) -> dict[str, list]:
        """Read one GLUE TSV into columns ``{text columns..., "label", "idx"}`` (label ``-1`` when the file has none)."""
        cols: dict[str, list] = {c: [] for c in (*self.text_columns, self.label_column, "idx")}
        with open(path, "rb") as f:
            first = f.readline().decode("utf-8", errors="replace").lstrip("\ufeff").split("\t")[0].strip()
        # CoLA train/dev have no header; its test file starts with "index\tsentence".
        headerless = self.positional is not None and first != "index"
        header, rows = read_tsv(path, has_header=not headerless)
        if headerless:
            where = dict(self.positional)
            label_at = where.pop(self.label_column)
            expected = f"{max(self.positional.values()) + 1} tab-separated fields (source, label, note, sentence)"
            for row in rows:
                if len(row.fields) != max(self.positional.values()) + 1:
                    raise ValueError(f"{path}, line {row.line}: found {len(row.fields)} field(s); expected {expected}")
                for col, i in where.items():
                    cols[col].append(row.fields[i])
                cols[self.label_column].append(self._label_value(row.fields[label_at], path, row.line, "label"))
                cols["idx"].append(len(cols["idx"]))
            return cols
        names = {c: self.file_columns.get(c, c) for c in self.text_columns}
        missing = [n for n in names.values() if n not in header]
        if missing:
            raise ValueError(f"{path}, line 1: header {header} lacks column(s) {missing}; expected columns {list(names.values())}")
        index = {n: header.index(n) for n in names.values()}
        label_name = self.file_label_column or self.label_column
        label_at = header.index(label_name) if label_name in header else None
        # MNLI's GLUE TSV has label1..label5 before gold_label; use the position from the end when rows are short.
        id_at = next((header.index(k) for k in ("index", "id") if k in header), None)
        for row in rows:
            if len(row.fields) != len(header):
                # More fields than the header: a tab inside a text would silently cut the text; fewer: a short row.
                raise ValueError(
                    f"{path}, line {row.line}: found {len(row.fields)} field(s), the header has {len(header)}; "
                    f"expected columns {header}"
                )
            for col, name in names.items():
                cols[col].append(row.fields[index[name]])
            if label_at is None:
                cols[self.label_column].append(-1.0 if self.problem_type == "regression" else -1)
            else:
                cols[self.label_column].append(self._label_value(row.fields[label_at], path, row.line, label_name))
            cols["idx"].append(int(row.fields[id_at]) if id_at is not None else len(cols["idx"]))
        return cols

    def _read_jsonl(self, path: str) -> dict[str, list]:
        cols: dict[str, list] = {c: [] for c in (*self.text_columns, self.label_column, "idx")}
        label_keys = self.jsonl_columns.get(self.label_column, ("label", "gold_label"))
        for line, obj in read_jsonl(path):
            for col in self.text_columns:
                key = next((k for k in self.jsonl_columns.get(col, (col,)) if k in obj), None)
                if key is None or not isinstance(obj[key], str):
                    raise ValueError(
                        f"{path}, line {line}: missing text field for {col!r}; expected one of "
                        f"{list(self.jsonl_columns.get(col, (col,)))}"
                    )
                cols[col].append(obj[key])
            key = next((k for k in label_keys if k in obj), None)
            raw = obj.get(key) if key else None
            if raw is None or raw == -1:
                cols[self.label_column].append(-1)
            else:
                cols[self.label_column].append(self._label_value(str(raw), path, line, key))
            cols["idx"].append(len(cols["idx"]))
        return cols

    def features(self):
        """The ``datasets.Features`` of the Hub dataset (``ClassLabel`` with the Hub's names, ``idx`` int32)."""
        import datasets

        feats = {c: datasets.Value("string") for c in self.text_columns}
        if self.problem_type == "regression":
            feats[self.label_column] = datasets.Value("float32")
        else:
            feats[self.label_column] = datasets.ClassLabel(names=list(self.label_names))
        feats["idx"] = datasets.Value("int32")
        return datasets.Features(feats)

    def read_local(self, data_dir: str):
        """Read the original GLUE files in ``data_dir`` (see :attr:`Task.local_files`) into a ``DatasetDict``.

        Raises:
            FileNotFoundError: ``data_dir`` missing, or none of the task's files in it.
            ValueError: malformed row, unknown label, non-UTF-8 bytes (file and line named).
        """
        import datasets

        def read_file(path: str, split: str):
            cols = self._read_jsonl(path) if path.endswith(".jsonl") else self._read_tsv(path)
            if not cols["idx"]:
                raise ValueError(f"{path}: no data rows; expected at least one example")
            _warn_empty_texts(path, cols, self.text_columns)
            return datasets.Dataset.from_dict(cols, features=self.features())

        return self.read_local_splits(data_dir, read_file, self.name)

    # ----------------------------------------------------------- features
    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Tokenize segment A (and B) to at most ``max_seq_length`` WordPieces (``[CLS] A [SEP] B [SEP]``).

        Pairs are truncated longest-first, as google-research/bert's ``_truncate_seq_pair``. Keeps ``label`` for
        labelled splits (``labels`` after the collator); drops it when every label is -1 (unlabelled test split).
        Output columns: ``input_ids``, ``token_type_ids``, ``attention_mask`` (lists, unpadded) [+ ``label``].
        """
        labelled = _is_labelled(dataset, self.label_column)

        def tokenize(batch):
            texts = [list(batch[c]) for c in self.text_columns]
            return tokenizer(*texts, truncation=True, max_length=max_seq_length)

        drop = [c for c in dataset.column_names if c != self.label_column or not labelled]
        return dataset.map(tokenize, batched=True, remove_columns=drop, desc=f"Tokenizing {self.name}/{split}")

    # ------------------------------------------------------------ metrics
    def compute_metrics(self, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
        """GLUE metrics (see :mod:`hf_bert_tasks.metrics`): e.g. MRPC ``{"accuracy", "f1"}``, CoLA MCC."""
        return M.compute(self.metric_names, predictions, references)

    # ---------------------------------------------------------- predictions
    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Write the GLUE-server submission file ``<TASK>.tsv`` (``index\\tprediction``) for an unlabeled split."""
        output = trainer.predict(features, metric_key_prefix="predict")
        preds = self.logits_to_predictions(output.predictions)
        if len(preds) != len(raw):  # e.g. a distributed gather that kept padding duplicates
            raise RuntimeError(f"{self.name}/{split}: got {len(preds)} predictions for {len(raw)} examples")
        name = self.submission_files.get(split, f"{self.name}_{split}.tsv")
        path = os.path.join(output_dir, name)
        if trainer.is_world_process_zero():
            with open(path, "w", encoding="utf-8") as f:
                f.write("index\tprediction\n")
                for idx, pred in zip(raw["idx"], preds):
                    if self.submission_labels == "float":
                        value = f"{float(pred):.3f}"
                    elif self.submission_labels == "name":
                        value = self.label_names[int(pred)]
                    else:
                        value = str(int(pred))
                    f.write(f"{idx}\t{value}\n")
        return [path]


def _warn_empty_texts(path: str, cols: dict[str, list], text_columns) -> int:
    """Log (warning) how many examples have an empty text field; they are kept (encoded as ``[CLS] [SEP]``), as the
    Hub dataset keeps them, so row counts stay the official ones. Returns the count (docs/bad_inputs.md)."""
    empty = [i for i in range(len(cols["idx"])) if any(not str(cols[c][i]).strip() for c in text_columns)]
    if empty:
        logger.warning("%s: %d example(s) with an empty text field (first: data row %d); kept as [CLS] [SEP] input",
                       path, len(empty), empty[0] + 1)
    return len(empty)


def _is_labelled(dataset, column: str) -> bool:
    if column not in dataset.column_names or len(dataset) == 0:
        return False
    return bool(np.any(np.asarray(dataset[column][: min(len(dataset), 1000)]) != -1))


_PAIR = ("sentence1", "sentence2")
_GLUE_FILES = {"train": ("train.tsv",), "validation": ("dev.tsv",), "test": ("test.tsv",)}


#: GLUE metric declarations (values as computed by ``metrics.py``, 0-1; correlations in [-1, 1]).
GLUE_METRICS = {
    "accuracy": MetricSpec("accuracy", "accuracy", "Accuracy"),
    "f1": MetricSpec("f1", "f1", "F1"),
    "matthews_correlation": MetricSpec("matthews_correlation", "matthews_correlation", "Matthews correlation"),
    "pearson": MetricSpec("pearson", "pearsonr", "Pearson"),
    "spearmanr": MetricSpec("spearmanr", "spearmanr", "Spearman"),
}


def _glue(name, config, description, text_columns, label_names, metric_names, primary, paper, **kw) -> GlueTask:
    raw_map = kw.pop("raw_label_map", "ids")
    if raw_map == "ids" and label_names:
        raw_map = {str(i): n for i, n in enumerate(label_names)}
    elif raw_map == "names":
        raw_map = {n: n for n in label_names}
    return register_task(
        GlueTask(
            name=name,
            description=description,
            hub_dataset="nyu-mll/glue",
            hub_config=config,
            problem_type=kw.pop("problem_type", "single_label_classification"),
            text_columns=text_columns,
            label_names=label_names,
            metric_names=metric_names,
            primary_metric=primary,
            metrics=tuple(GLUE_METRICS[m] for m in metric_names),
            model_head="AutoModelForSequenceClassification",
            pipeline_tag="text-classification",
            paper_defaults=PaperDefaults(),
            paper_results=paper,
            paper_source="BERT paper Table 1 (GLUE test server; x100)",
            local_files=kw.pop("local_files", _GLUE_FILES),
            raw_label_map=raw_map,
            **kw,
        )
    )


_glue(
    "cola", "cola", "CoLA: grammatical acceptability of one sentence (Matthews corr.)",
    ("sentence",), ("unacceptable", "acceptable"), ("matthews_correlation",), "matthews_correlation",
    {"BERT-base": {"matthews_correlation": 52.1}, "BERT-large": {"matthews_correlation": 60.5}},
    positional={"sentence": 3, "label": 1}, submission_files={"test": "CoLA.tsv"},
)
_glue(
    "sst2", "sst2", "SST-2: binary sentiment of one movie-review sentence (accuracy)",
    ("sentence",), ("negative", "positive"), ("accuracy",), "accuracy",
    {"BERT-base": {"accuracy": 93.5}, "BERT-large": {"accuracy": 94.9}},
    submission_files={"test": "SST-2.tsv"},
)
_glue(
    "mrpc", "mrpc", "MRPC: are two news sentences paraphrases (F1, accuracy)",
    _PAIR, ("not_equivalent", "equivalent"), ("f1", "accuracy"), "f1",
    {"BERT-base": {"f1": 88.9}, "BERT-large": {"f1": 89.3}},
    file_columns={"sentence1": "#1 String", "sentence2": "#2 String"}, file_label_column="Quality",
    submission_files={"test": "MRPC.tsv"},
)
_glue(
    "stsb", "stsb", "STS-B: semantic similarity score 0-5 of a sentence pair (Pearson, Spearman; regression)",
    _PAIR, None, ("spearmanr", "pearson"), "spearmanr",
    {"BERT-base": {"spearmanr": 85.8}, "BERT-large": {"spearmanr": 86.5}},
    problem_type="regression", raw_label_map=None, file_label_column="score",
    submission_files={"test": "STS-B.tsv"}, submission_labels="float",
)
_glue(
    "qqp", "qqp", "QQP: are two Quora questions duplicates (F1, accuracy)",
    ("question1", "question2"), ("not_duplicate", "duplicate"), ("f1", "accuracy"), "f1",
    {"BERT-base": {"f1": 71.2}, "BERT-large": {"f1": 72.1}},
    file_label_column="is_duplicate", submission_files={"test": "QQP.tsv"},
)
_glue(
    "mnli", "mnli", "MNLI: entailment / neutral / contradiction (matched and mismatched accuracy)",
    ("premise", "hypothesis"), ("entailment", "neutral", "contradiction"), ("accuracy",), "accuracy",
    {"BERT-base": {"accuracy": 84.6, "accuracy_mm": 83.4}, "BERT-large": {"accuracy": 86.7, "accuracy_mm": 85.9}},
    raw_label_map="names", file_columns={"premise": "sentence1", "hypothesis": "sentence2"},
    file_label_column="gold_label",
    jsonl_columns={"premise": ("premise", "sentence1"), "hypothesis": ("hypothesis", "sentence2"),
                   "label": ("label", "gold_label")},
    eval_splits=("validation_matched", "validation_mismatched"), test_splits=("test_matched", "test_mismatched"),
    metric_suffixes={"validation_mismatched": "_mm"},
    local_files={
        "train": ("train.tsv", "train.jsonl"),
        "validation_matched": ("dev_matched.tsv", "dev_matched.jsonl"),
        "validation_mismatched": ("dev_mismatched.tsv", "dev_mismatched.jsonl"),
        "test_matched": ("test_matched.tsv",),
        "test_mismatched": ("test_mismatched.tsv",),
    },
    submission_files={"test_matched": "MNLI-m.tsv", "test_mismatched": "MNLI-mm.tsv"}, submission_labels="name",
)
_glue(
    "qnli", "qnli", "QNLI: does the sentence answer the question (accuracy)",
    ("question", "sentence"), ("entailment", "not_entailment"), ("accuracy",), "accuracy",
    {"BERT-base": {"accuracy": 90.5}, "BERT-large": {"accuracy": 92.7}},
    raw_label_map="names", submission_files={"test": "QNLI.tsv"}, submission_labels="name",
)
_glue(
    "rte", "rte", "RTE: textual entailment, 2 classes (accuracy)",
    _PAIR, ("entailment", "not_entailment"), ("accuracy",), "accuracy",
    {"BERT-base": {"accuracy": 66.4}, "BERT-large": {"accuracy": 70.1}},
    raw_label_map="names", submission_files={"test": "RTE.tsv"}, submission_labels="name",
)
_glue(
    "wnli", "wnli", "WNLI: Winograd NLI (accuracy; the paper excludes it from Table 1)",
    _PAIR, ("not_entailment", "entailment"), ("accuracy",), "accuracy",
    {}, submission_files={"test": "WNLI.tsv"},
)
