"""The GLUE tasks of the paper's Table 1 (§4.1): CoLA, SST-2, MRPC, STS-B, QQP, MNLI, QNLI, RTE (+ WNLI); this module
reads, tokenizes and predicts them (:class:`GlueTask`), :mod:`.glue_tasks` registers each one.

Hub source: ``nyu-mll/glue`` (one config per task). Local source: the original GLUE folders (``MRPC/train.tsv``,
``dev.tsv``, ``test.tsv``; MNLI ``dev_matched.tsv``/``dev_mismatched.tsv`` or ``.jsonl``) read with quoting off.
Labels map **by name** to the Hub's ids (MNLI ``entailment=0, neutral=1, contradiction=2``; files coding ``0``/``1``
use the Hub's ids). STS-B is regression (float score in [0, 5], ``num_labels=1``, MSE loss)."""

from __future__ import annotations

import functools
import itertools
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ...console import close_names
from ...utils.tokenizers import PairTemplate, pair_template
from .. import metrics as M
from ..base import Task
from ..files import line_of, text_lines

logger = logging.getLogger(__name__)


def load_rows(builder: str, path: str, check: Callable[[], None], **config):
    """``datasets.load_dataset(builder, data_files=path, **config)`` as a ``pyarrow.Table`` (memory-mapped from the
    datasets cache, as ``run_glue.py`` reads its files). When the loader fails, ``check()`` scans the file to raise a
    ``ValueError`` naming file, line and field; else the loader's error is raised."""
    import datasets

    try:
        return datasets.load_dataset(builder, data_files=path, split="train", **config).data.table
    except Exception:  # replaced by the line-level error where check() finds one
        check()
        raise


@dataclass
class GlueTask(Task):
    """A GLUE sentence or sentence-pair task with a sequence-classification (or regression) head.

    Attributes (besides :class:`Task`'s):
        file_columns, file_label_column: canonical text column -> TSV header name; the label's header name.
        raw_label_map: raw label string in the files -> label name (``None`` for STS-B's float scores).
        positional: for headerless files (CoLA train/dev): canonical column (``"label"`` too) -> field index.
        jsonl_columns: canonical column -> candidate keys in a ``.jsonl`` file (MNLI exports).
        submission_files, submission_labels: test split -> GLUE-server file name (``"MRPC.tsv"``); the labels it
            expects: ``"id"`` (0/1), ``"name"`` (MNLI/QNLI/RTE) or ``"float"``.
    """

    file_columns: dict[str, str] = field(default_factory=dict)
    file_label_column: str | None = "label"
    raw_label_map: dict[str, str] | None = None
    positional: dict[str, int] | None = None
    jsonl_columns: dict[str, tuple[str, ...]] = field(default_factory=dict)
    submission_files: dict[str, str] = field(default_factory=dict)
    submission_labels: str = "id"

    def _read_tsv(self, path: str):
        """``(columns, label field, has header)`` of one TSV (``csv`` loader, quoting **off** as ``run_glue.py``; tabs
        counted: docs/design.md, 'tasks/glue/ and tasks/swag/'). Columns: Arrow arrays of the text columns, raw
        labels and ``idx`` (``None`` if the file has none)."""
        import csv

        import datasets

        with open(path, "rb") as f:
            data = f.read()
        if not data:
            raise ValueError(f"{path}: the file is empty; expected a header line and data rows")
        try:
            header = data.partition(b"\n")[0].decode("utf-8-sig").rstrip("\r").split("\t")
        except UnicodeDecodeError:
            next(text_lines(path))  # raises the line-level error
            raise
        headerless = self.positional is not None and header[0] != "index"  # CoLA train/dev; its test has a header
        width = max(self.positional.values()) + 1 if headerless else len(header)
        names = [str(i) for i in range(width)] if headerless else header

        def check():  # the line-level error the loader cannot give
            lines = itertools.islice(text_lines(path), not headerless, None)
            rows = [(n, text.split("\t")) for n, text in lines if text]
            if not rows:
                raise ValueError(f"{path}: no data rows; expected at least one example")
            for line, fields in rows:
                if len(fields) != width and headerless:
                    raise ValueError(
                        f"{path}, line {line}: found {len(fields)} field(s); expected {width} "
                        "tab-separated fields (source, label, note, sentence)"
                    )
                if len(fields) != width:
                    raise ValueError(
                        f"{path}, line {line}: found {len(fields)} field(s), the header has {width}; "
                        f"expected columns {header}"
                    )

        table = load_rows(
            "csv",
            path,
            check,
            delimiter="\t",
            quoting=csv.QUOTE_NONE,
            na_filter=False,
            features=datasets.Features({n: datasets.Value("string") for n in names}),
            **({"header": None, "column_names": names} if headerless else {}),
        )
        if data.count(b"\t") != (width - 1) * (table.num_rows + (not headerless)):
            check()
        if blank := data.count(b"\n") + (not data.endswith(b"\n")) - table.num_rows - (not headerless):
            logger.info("%s: skipped %d empty line(s)", path, blank)
        where = (
            {c: str(i) for c, i in self.positional.items()}
            if headerless
            else {c: self.file_columns.get(c, c) for c in self.text_columns}
        )
        label = where.pop(self.label_column) if headerless else self.file_label_column or self.label_column
        if missing := [n for n in where.values() if n not in names]:
            raise ValueError(
                f"{path}, line 1: header {header} lacks column(s) {missing}"
                f"{close_names(missing, [n for n in names if n not in where.values()])}; "
                f"expected columns {list(where.values())}"
            )
        cols = {c: table.column(n) for c, n in where.items()}
        cols[self.label_column] = table.column(label) if label in names else None
        index = next((k for k in ("index", "id") if k in names and not headerless), None)
        cols["idx"] = table.column(index).cast("int32") if index else None
        return cols, label, not headerless

    def _read_jsonl(self, path: str):
        """As :meth:`_read_tsv` for a JSON-lines export (MNLI, keys from ``jsonl_columns``; ``json`` loader); a
        ``null`` / ``-1`` label is "unlabelled"."""
        import json

        import pyarrow as pa
        import pyarrow.compute as pc

        def check():  # the line-level error the loader cannot give
            lines = [(line, text) for line, text in text_lines(path) if text.strip()]
            if not lines:
                raise ValueError(f"{path}: no data rows; expected at least one example")
            for line, text in lines:
                try:
                    obj = json.loads(text)
                except json.JSONDecodeError as err:
                    raise ValueError(
                        f"{path}, line {line}: not valid JSON ({err.msg}); expected one JSON object per line"
                    ) from None
                if not isinstance(obj, dict):
                    raise ValueError(f"{path}, line {line}: expected a JSON object, got {type(obj).__name__}")

        table, cols = load_rows("json", path, check), {"idx": None}
        for col in (*self.text_columns, self.label_column):
            keys = self.jsonl_columns.get(col, (col,))
            key = next((k for k in keys if k in table.column_names), None)
            cols[col] = values = None if key is None else table.column(key)
            if col != self.label_column and (key is None or values.null_count or values.type != pa.string()):
                check()  # a line that is no object reads as a column of its own
                row = pc.index(pc.is_null(values), True).as_py() if key and values.null_count else 0
                raise ValueError(
                    f"{path}, line {line_of(path, row, False)}: missing text field for {col!r}; "
                    f"expected one of {list(keys)}"
                )
        if cols[self.label_column] is not None:
            label = cols[self.label_column].cast(pa.string())
            cols[self.label_column] = pc.if_else(pc.equal(label, "-1"), None, label)
        return cols, self.jsonl_columns.get(self.label_column, ("label",))[0], False

    def _label_ids(self, raw, path: str, column: str, header: bool, unlabelled_ok: bool):
        """Raw labels (strings) -> the Hub's ids by name (``int64``), or float32 scores (STS-B); a missing label
        (null) is -1 where ``unlabelled_ok``. Raises ``ValueError`` naming file, line, field and the allowed values."""
        import pyarrow as pa
        import pyarrow.compute as pc

        if self.problem_type == "regression":
            try:
                return pc.fill_null(pc.cast(pc.cast(raw, pa.float64()), pa.float32()), -1.0)
            except pa.ArrowInvalid:
                for row, text in enumerate(raw.to_pylist()):
                    try:
                        float(text)
                    except ValueError:
                        raise ValueError(
                            f"{path}, line {line_of(path, row, header)}: field {column!r} = {text!r} "
                            "is not a number; expected a float score"
                        ) from None
                raise
        keys = list(self.raw_label_map)
        at = pc.index_in(raw, value_set=pa.array(keys))
        unknown = pc.is_null(at) if not unlabelled_ok else pc.and_(pc.is_null(at), pc.is_valid(raw))
        if pc.any(unknown).as_py():
            row = pc.index(unknown, True).as_py()
            raise ValueError(
                f"{path}, line {line_of(path, row, header)}: field {column!r} = {raw[row].as_py()!r} "
                f"is not a known label; expected one of {sorted(keys)}"
            )
        ids = pa.array([self.label_names.index(self.raw_label_map[k]) for k in keys], pa.int64())
        return pc.fill_null(pc.take(ids, at), -1)

    def read_file(self, path: str, split: str | None = None):
        """One GLUE file (``.tsv``, or ``.jsonl`` for the MNLI export) as a ``datasets.Dataset`` in :meth:`features`.

        Raises:
            FileNotFoundError: no such file.
            ValueError: empty file, no data rows, a row with another number of fields, a header without a column,
                an unknown label, a score that is not a number, bad JSON, non-UTF-8 bytes (file and line named).
        """
        import datasets
        import pyarrow as pa
        import pyarrow.compute as pc

        jsonl = path.endswith(".jsonl")
        cols, label_column, header = self._read_jsonl(path) if jsonl else self._read_tsv(path)
        n = len(cols[self.text_columns[0]])
        raw = cols[self.label_column]
        unlabelled_ok = jsonl or raw is None
        if raw is None:  # a file without a label column (a test split): every label is -1
            raw = pa.nulls(n, pa.string())
        cols[self.label_column] = self._label_ids(raw, path, label_column, header, unlabelled_ok)
        if cols["idx"] is None:
            cols["idx"] = pa.array(np.arange(n, dtype=np.int32))
        empty = functools.reduce(pc.or_, [pc.equal(pc.utf8_trim_whitespace(cols[c]), "") for c in self.text_columns])
        if pc.any(empty).as_py():  # kept, as the Hub keeps them: row counts stay the official ones
            logger.warning(
                "%s: %d example(s) with an empty text field (first: data row %d); kept as [CLS] [SEP] input",
                path,
                pc.sum(empty).as_py(),
                pc.index(empty, True).as_py() + 1,
            )
        table = pa.table({c: cols[c] for c in self.features()})
        return datasets.Dataset(table, info=datasets.DatasetInfo(features=self.features()))

    def _label_ids_by_text(self) -> dict[str, int]:
        """A user file's label text -> id: the label names, the GLUE files' raw values (MRPC ``1``) and the ids
        (``"0"`` .. ``"num_labels - 1"``)."""
        return {
            **{n: i for i, n in enumerate(self.label_names or ())},
            **{k: self.label_names.index(v) for k, v in (self.raw_label_map or {}).items() if v in self.label_names},
            **{str(i): i for i in range(self.num_labels)},
        }

    def labels_from_records(self, records) -> None:
        """The label set of a classification task from the user's train file where its labels are not all the
        task's (names, raw values or ids): the file's distinct labels, **sorted** (``run_glue.py``'s
        ``label_list.sort()``), become :attr:`label_names` of this copy (:meth:`Task.configure` made it), so
        ``config.json``'s ``id2label``, the metrics and the pipeline use them; ``--label_list`` (:attr:`user_labels`)
        gives them in id order instead. Regression, and files whose labels are all the task's, keep the task's.

        Raises:
            ValueError: a task scored with binary F1 (MRPC, QQP) given other than 2 labels; ``--label_list`` naming a
                label twice.
        """
        if self.problem_type == "regression":
            return
        train = records.get(self.train_split)
        texts = [] if train is None or self.label_column not in train.rows else train.rows[self.label_column]
        seen = dict.fromkeys(t for t in ("" if v is None else str(v).strip() for v in texts) if t not in ("", "-1"))
        known = self._label_ids_by_text()
        if self.user_labels:
            names = list(self.user_labels)
        elif all(t in known or t.endswith(".0") and t[:-2] in known for t in seen):
            return
        else:
            names = sorted(seen)
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"--label_list {','.join(names)}: expected distinct label names, at least one")
        if "f1" in self.metric_names and len(names) != 2:
            raise ValueError(
                f"{train.path if train else '--label_list'}: labels {names}; task {self.name!r} is scored with "
                "binary F1 (label id 1 positive), expected 2 labels"
            )
        logger.info("%s: labels from the data, in id order: %s", self.name, names)
        self.label_names, self.raw_label_map = tuple(names), {n: n for n in names}

    def from_user_columns(self, records, split: str):
        """A user file's records (:meth:`Task.read_records`) in :meth:`features`: texts as strings, a label given
        by name (``positive``), by the GLUE files' raw value (MRPC ``1``) or by id (``0`` .. ``num_labels - 1``;
        ``1.0`` read as ``1``); empty or ``-1`` = unlabelled (test split only); STS-B: a float. ``idx`` kept if the
        file has it, else the row.

        Raises:
            ValueError: a missing label outside a test file, a label not in the task's label set, a score that is
                not a number (names file, line and value).
        """
        import datasets

        n = len(records)
        cols = {c: ["" if v is None else str(v) for v in records.rows[c]] for c in self.text_columns}
        raws = records.rows.get(self.label_column, [None] * n)
        by_name = self._label_ids_by_text()
        labels = []
        for row, raw in enumerate(raws):
            text = "" if raw is None else str(raw).strip()
            if text in ("", "-1"):
                if split not in self.test_splits:
                    raise ValueError(
                        f"{records.where(row)}: no label in column "
                        f"{self.user_columns.get(self.label_column, self.label_column)!r}; expected "
                        f"{self.label_description()}"
                    )
                labels.append(-1)
            elif self.problem_type == "regression":
                try:
                    labels.append(float(text))
                except ValueError:
                    raise ValueError(
                        f"{records.where(row)}: label {text!r} is not a number; expected a float score"
                    ) from None
            elif text in by_name or text.endswith(".0") and text[:-2] in by_name:
                labels.append(by_name.get(text, by_name.get(text[:-2])))
            else:
                raise ValueError(
                    f"{records.where(row)}: label {text!r} is not one of task {self.name!r}'s labels; "
                    f"expected {self.label_description()}"
                )
        cols[self.label_column] = labels
        cols["idx"] = list(range(n))
        for row, value in enumerate(records.rows.get("idx", ())):
            try:
                cols["idx"][row] = int(str(value).strip())
            except ValueError:
                raise ValueError(f"{records.where(row)}: idx {value!r} is not an integer; expected a row id") from None
        return datasets.Dataset.from_dict(cols, features=self.features())

    def features(self):
        """The ``datasets.Features`` of the Hub dataset (``ClassLabel`` with the Hub's names, ``idx`` int32)."""
        import datasets

        feats = {c: datasets.Value("string") for c in self.text_columns}
        feats[self.label_column] = (
            datasets.Value("float32")
            if self.problem_type == "regression"
            else datasets.ClassLabel(names=list(self.label_names))
        )
        return datasets.Features({**feats, "idx": datasets.Value("int32")})

    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Tokenize segment A (and B) to at most ``max_seq_length`` tokens (BERT: ``[CLS] A [SEP] B [SEP]``; the
        tokenizer's own special tokens; pairs truncated by google-research/bert's ``_truncate_seq_pair``:
        :func:`encode_pairs`). Output columns: ``input_ids``, ``token_type_ids`` (when the tokenizer's
        ``model_input_names`` hold them), ``attention_mask`` (unpadded lists) and ``label``, dropped when the first 1000 labels are
        all -1 (an unlabelled test split)."""
        labelled = (
            self.label_column in dataset.column_names
            and len(dataset) > 0
            and bool(np.any(np.asarray(dataset[self.label_column][: min(len(dataset), 1000)]) != -1))
        )

        pairs = len(self.text_columns) == 2
        template = checked_pair_template(tokenizer, max_seq_length) if pairs else None  # once per split

        def tokenize(batch):
            if not pairs:  # one segment: cut at the end, as google's and the tokenizer's rule
                return tokenizer(list(batch[self.text_columns[0]]), truncation=True, max_length=max_seq_length)
            texts_a, texts_b = list(batch[self.text_columns[0]]), list(batch[self.text_columns[1]])
            return encode_pairs(tokenizer, texts_a, texts_b, max_seq_length, template)

        drop = [c for c in dataset.column_names if c != self.label_column or not labelled]
        return dataset.map(tokenize, batched=True, remove_columns=drop, desc=f"Tokenizing {self.name}/{split}")

    #: the functions of :mod:`hf_bert_tasks.tasks.metrics` named by :attr:`metric_names` (MRPC ``f1``, ``accuracy`` …)
    compute_metrics = M.compute_task_metrics

    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Write the GLUE-server file of an unlabelled split (:attr:`submission_files`): ``index\tprediction``, then
        ``idx`` and label (:attr:`submission_labels`; STS-B: 3 decimals **clipped to [0, 5]**, the server's range;
        dev metrics keep raw scores) per example. Raises ``RuntimeError``: predictions and examples differ in number."""
        output = trainer.predict(features, metric_key_prefix="predict")
        preds = self.logits_to_predictions(output.predictions)
        if len(preds) != len(raw):  # e.g. a distributed gather that kept padding duplicates
            raise RuntimeError(f"{self.name}/{split}: got {len(preds)} predictions for {len(raw)} examples")
        path = os.path.join(output_dir, self.submission_files.get(split, f"{self.name}_{split}.tsv"))
        if self.submission_labels == "float":
            values = np.char.mod("%.3f", np.clip(preds.astype(np.float64), 0.0, 5.0))
        elif self.submission_labels == "name":
            values = np.asarray(self.label_names)[preds.astype(np.int64)]
        else:
            values = preds.astype(np.int64)
        if trainer.is_world_process_zero():
            with open(path, "w", encoding="utf-8") as f:
                f.write("index\tprediction\n" + "".join(map("{}\t{}\n".format, raw["idx"][:], values)))
        return [path]


def truncate_seq_pair(len_a: int, len_b: int, budget: int) -> tuple[int, int]:
    """Lengths kept of two segments of ``len_a`` and ``len_b`` tokens so that they fit ``budget`` tokens: the rule of
    google-research/bert ``run_classifier.py`` ``_truncate_seq_pair`` (pop one token off the end of the longer
    segment until the pair fits; at equal lengths pop from segment B), in closed form. Raises ``ValueError`` for a
    negative length or budget."""
    if min(len_a, len_b, budget) < 0:
        raise ValueError(f"truncate_seq_pair({len_a}, {len_b}, {budget}): expected lengths and budget >= 0")
    excess = len_a + len_b - budget
    if excess <= 0:
        return len_a, len_b
    gap = abs(len_a - len_b)
    if excess <= gap:  # only the longer segment loses tokens
        return (len_a - excess, len_b) if len_a > len_b else (len_a, len_b - excess)
    rest = excess - gap  # then both are equal; B loses first, they alternate
    even = min(len_a, len_b)
    return even - rest // 2, even - (rest + 1) // 2


def checked_pair_template(tokenizer, max_seq_length: int) -> PairTemplate:
    """The :func:`~hf_bert_tasks.utils.tokenizers.pair_template` of ``tokenizer`` (read once per split), checked
    against ``max_seq_length``: ``ValueError`` for a ``max_seq_length`` below the pair's special tokens (BERT 3) or
    a slow tokenizer."""
    template = pair_template(tokenizer)
    if max_seq_length < template.n_special:
        raise ValueError(
            f"--max_seq_length {max_seq_length}: a sentence pair needs at least {template.n_special} (the special "
            f"tokens of {type(tokenizer).__name__})"
        )
    return template


def encode_pairs(
    tokenizer, texts_a: list[str], texts_b: list[str], max_seq_length: int, template: PairTemplate | None = None
) -> dict[str, list]:
    """Features of sentence pairs within ``max_seq_length`` tokens, the special tokens where ``tokenizer`` puts them
    (:func:`hf_bert_tasks.utils.tokenizers.pair_template`: BERT ``[CLS] A [SEP] B [SEP]``, RoBERTa
    ``<s> A </s></s> B </s>``), the pair truncated by :func:`truncate_seq_pair` (google's order; the tokenizer's
    ``longest_first`` keeps B longer at an odd excess). Returns ``input_ids``, ``attention_mask`` and, when the
    tokenizer's ``model_input_names`` hold them, ``token_type_ids`` (BERT: 0 for ``[CLS] A [SEP]``, 1 for
    ``B [SEP]``): lists of ints per pair. ``template``: :func:`checked_pair_template` of ``tokenizer`` (made here
    when ``None``: ``ValueError`` for a ``max_seq_length`` below the pair's special tokens or a slow tokenizer)."""
    template = template or checked_pair_template(tokenizer, max_seq_length)
    ids_a = tokenizer(texts_a, add_special_tokens=False)["input_ids"]
    ids_b = tokenizer(texts_b, add_special_tokens=False)["input_ids"]
    budget = max_seq_length - template.n_special
    kept = [truncate_seq_pair(len(a), len(b), budget) for a, b in zip(ids_a, ids_b)]
    return template.build_batch([(a[:ka], b[:kb]) for (a, b), (ka, kb) in zip(zip(ids_a, ids_b), kept)])
