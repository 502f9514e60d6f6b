"""SWAG: grounded commonsense inference as 4-way multiple choice (BERT paper §4.4, Table 4).

Hub source: ``allenai/swag``, config ``regular`` (the test split's label is ``-1``). Local source: the original
swagaf CSV files ``train.csv``, ``val.csv``, ``test.csv`` (rowanz/swagaf ``data/``; a leading unnamed index column
is allowed, ``test.csv`` has no ``label``): real CSV with quoting (endings contain commas).
``AutoModelForMultipleChoice`` scores each of the ``(batch, 4, L)`` choices from ``[CLS]``, softmax over the four."""

from __future__ import annotations

import contextlib
import csv
import itertools
import os
import re
from dataclasses import dataclass

import numpy as np

from ...console import close_names
from .. import metrics as M
from ..base import MetricSpec, PaperDefaults, Task, register_task
from ..glue import load_rows
from ..problems import ProblemType, register_problem_type

#: one gold ending of k (a label per example); peft has no multiple-choice task type (the head: modules_to_save)
#: no ``transformers.pipeline`` serves multiple choice: its cards name no pipeline tag and run the model directly
_CARD_USAGE = """import torch
from transformers import AutoModelForMultipleChoice, AutoTokenizer

model = AutoModelForMultipleChoice.from_pretrained("{{ target }}"{{ remote }}).eval()
tokenizer = AutoTokenizer.from_pretrained("{{ target }}"{{ remote }})
context, start = "A man sits down at the piano.", "He"
endings = ["plays a slow tune.", "eats the piano.", "flies out of the window.", "sinks into the floor."]
enc = tokenizer([context] * 4, [f"{start} {e}" for e in endings], padding=True, return_tensors="pt")
with torch.no_grad():  # (1, 4, seq_len) inputs -> (1, 4) logits, one per ending
    logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits
print(endings[int(logits.argmax(-1))])"""
register_problem_type(
    ProblemType(
        "multiple_choice",
        "labels",
        None,
        model_head="AutoModelForMultipleChoice",
        hub_task="multiple-choice",
        pipeline=None,
        baseline=M.best_constant_class,
        baseline_answer="the most frequent position",
        chance_over="choices",
        card_usage=_CARD_USAGE,
    )
)

NUM_CHOICES = 4
ENDINGS = tuple(f"ending{i}" for i in range(NUM_CHOICES))
SWAG_COLUMNS = ("video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source", *ENDINGS)
#: Columns a file must have to be usable (the others default to "").
REQUIRED_COLUMNS = ("sent1", "sent2", *ENDINGS)
#: The values of a ``label`` field (stripped): a choice, or empty / ``-1`` for "no label".
LABELS = ("", "-1", *map(str, range(NUM_CHOICES)))


def swag_features():
    """The ``datasets.Features`` of ``allenai/swag`` (``regular``): strings and ``label`` ``ClassLabel('0'..'3')``."""
    import datasets

    return datasets.Features(
        {
            **{c: datasets.Value("string") for c in SWAG_COLUMNS},
            "label": datasets.ClassLabel(names=[str(i) for i in range(NUM_CHOICES)]),
        }
    )


def _records(path: str):
    """``(where, fields)`` of each record of ``path`` read by ``csv`` (``where``: file and line(s))."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader, start = csv.reader(f), 1
            for row in reader:
                end, first, start = reader.line_num, start, reader.line_num + 1  # a quoted field may span lines
                yield (f"{path}, line {first}" if end == first else f"{path}, lines {first}-{end}"), row
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: bytes that are not UTF-8 at byte {err.start}; expected a UTF-8 CSV file") from None
    except csv.Error as err:
        raise ValueError(f'{path}: CSV error ({err}); expected comma-separated fields with "-quoting') from None


def read_swag_table(path: str):
    """One swagaf CSV (``csv`` loader; commas counted to catch what it pads or skips: docs/design.md, 'tasks/glue/
    and tasks/swag/') as a ``pyarrow.Table``: :data:`SWAG_COLUMNS` (``""`` if absent) + ``label`` (int64, -1 = none).

    Raises:
        FileNotFoundError: ``path`` missing.
        ValueError: a header without :data:`REQUIRED_COLUMNS`, a row with another number of fields, a label not
            0-3, non-UTF-8 bytes, or no data row; the message names the file and line.
    """
    import datasets
    import pyarrow as pa
    import pyarrow.compute as pc

    with contextlib.closing(_records(path)) as records:  # closed here, not by a later garbage collection
        header = next(records, (None, []))[1]
        if not header:
            raise ValueError(f"{path}: the file is empty; expected a header with columns {list(REQUIRED_COLUMNS)}")
        if missing := [c for c in REQUIRED_COLUMNS if c not in header]:
            raise ValueError(
                f"{path}, line 1: header lacks column(s) {missing}"
                f"{close_names(missing, [c for c in header if c not in REQUIRED_COLUMNS])}; "
                f"expected {list(REQUIRED_COLUMNS)}, found {header}"
            )
        first = next((row for _, row in records if row), [])

    def check():  # the line-level error the loader cannot give
        rows = [(where, row) for where, row in itertools.islice(_records(path), 1, None) if row]
        for where, row in rows:
            if len(row) != len(header):
                raise ValueError(
                    f"{where}: found {len(row)} field(s), the header has {len(header)}; expected {header}"
                )
            if (raw := dict(zip(header, row)).get("label", "").strip()) not in LABELS:
                raise ValueError(f"{where}: field 'label' = {raw!r}; expected 0, 1, 2, 3 (or empty / -1 if unknown)")
        if not rows:
            raise ValueError(f"{path}: no data rows; expected at least one example")

    if len(first) != len(header):  # a first row longer than the header: the loader would take it for an index
        check()
    names = [c or f"_{i}" for i, c in enumerate(header)]  # the unnamed index column
    table = load_rows(
        "csv",
        path,
        check,
        header=0,
        column_names=names,
        na_filter=False,
        encoding="utf-8-sig",
        features=datasets.Features({c: datasets.Value("string") for c in names}),
    )
    with open(path, "rb") as f:
        data = f.read()
    inside = sum(pc.sum(pc.count_substring(table.column(c), ",")).as_py() or 0 for c in names)
    empty = pa.array([""] * table.num_rows)
    label = pc.utf8_trim_whitespace(table.column("label")) if "label" in names else empty
    if (
        data.count(b",") != ",".join(header).count(",") + (len(names) - 1) * table.num_rows + inside
        or re.search(rb"(?m)^[ \t]+\r?$", data)
        or not pc.all(pc.is_in(label, pa.array(LABELS))).as_py()
    ):
        check()
    cols = {c: table.column(c) if c in names else empty for c in SWAG_COLUMNS}
    return pa.table({**cols, "label": pc.cast(pc.if_else(pc.equal(label, ""), "-1", label), pa.int64())})


def read_swag_csv(path: str) -> dict[str, list]:
    """:func:`read_swag_table` as Python lists: columns :data:`SWAG_COLUMNS` + ``label`` (``-1`` = no label)."""
    return read_swag_table(path).to_pydict()


@dataclass
class MultipleChoiceCollator:
    """transformers' ``DataCollatorForMultipleChoice`` that also takes batches without ``label`` (the stock one raises
    ``KeyError``): ``[C, L_i]`` lists of input ids / token types / mask (``C`` = 4 choices) -> ``(B, C, L)`` int64
    tensors padded to the longest choice (or ``max_length``), plus ``labels`` ``(B,)`` (``-100`` = unknown) if given.
    A module-level class, so DataLoader workers started with ``spawn`` / ``forkserver`` can pickle it (a class
    defined inside a function cannot be)."""

    tokenizer: object
    pad_to_multiple_of: int | None = None
    max_length: int | None = None

    def __call__(self, examples: list[dict]) -> dict:
        from transformers import DataCollatorForMultipleChoice

        if self.max_length is not None:
            inner = DataCollatorForMultipleChoice(self.tokenizer, padding="max_length", max_length=self.max_length)
        else:
            inner = DataCollatorForMultipleChoice(self.tokenizer, pad_to_multiple_of=self.pad_to_multiple_of)
        if "label" in examples[0] or "labels" in examples[0]:
            return inner(examples)
        batch = inner([dict(e, label=0) for e in examples])
        batch.pop("labels")
        return batch


def multiple_choice_collator(tokenizer, pad_to_multiple_of: int | None = None, max_length: int | None = None):
    """A :class:`MultipleChoiceCollator` (the arguments of :meth:`Task.data_collator`)."""
    return MultipleChoiceCollator(tokenizer, pad_to_multiple_of, max_length)


@dataclass
class SwagTask(Task):
    """SWAG with ``AutoModelForMultipleChoice``; accuracy over labelled rows."""

    def read_file(self, path: str, split: str | None = None):
        """One swagaf CSV (``train.csv``, ``val.csv``, ``test.csv``) as a ``datasets.Dataset`` (:func:`read_swag_table`)."""
        import datasets

        return datasets.Dataset(read_swag_table(path), info=datasets.DatasetInfo(features=swag_features()))

    def from_user_columns(self, records, split: str):
        """A user file's records (:meth:`Task.read_records`: ``sent1``, ``sent2``, ``ending0``-``ending3``,
        ``label`` 0-3; empty / ``-1`` = unlabelled, test split only) in :func:`swag_features` (other columns ``""``).

        Raises:
            ValueError: a label not 0-3 (names file and line).
        """
        import datasets

        n = len(records)
        cols = {
            c: [("" if v is None else str(v)) for v in records.rows[c]] if c in records.rows else [""] * n
            for c in SWAG_COLUMNS
        }
        raws = records.rows.get("label", [None] * n)
        allowed = LABELS if split in self.test_splits else LABELS[2:]
        for row, raw in enumerate(raws):
            if ("" if raw is None else str(raw).strip()) not in allowed:
                raise ValueError(
                    f"{records.where(row)}: label {raw!r}; expected 0, 1, 2 or 3"
                    + (" (or empty / -1 if unknown)" if split in self.test_splits else "")
                )
        cols["label"] = [
            -1 if raw is None or str(raw).strip() in ("", "-1") else int(str(raw).strip()) for raw in raws
        ]
        return datasets.Dataset.from_dict(cols, features=swag_features())

    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Four ``[CLS] sent1 [SEP] sent2 + " " + ending_i [SEP]`` sequences per example (§4.4, as transformers'
        ``run_swag.py``; the tokenizer's own special tokens), truncated longest-first: columns ``input_ids``,
        ``token_type_ids`` (when the tokenizer's ``model_input_names`` hold them), ``attention_mask``
        (``[4, L_i]`` unpadded lists) and ``label`` (``-100`` for a row without one; dropped when no row has one)."""
        labels = np.asarray(dataset["label"]) if "label" in dataset.column_names else np.full(len(dataset), -1)
        labelled = bool(np.any(labels >= 0))

        def tokenize(batch):
            first = [s for s in batch["sent1"] for _ in range(NUM_CHOICES)]
            second = [f"{s2} {batch[e][i]}".strip() for i, s2 in enumerate(batch["sent2"]) for e in ENDINGS]
            enc = tokenizer(first, second, truncation=True, max_length=max_seq_length)
            out = {k: [v[i : i + NUM_CHOICES] for i in range(0, len(v), NUM_CHOICES)] for k, v in enc.items()}
            if labelled:
                out["label"] = [int(x) if x >= 0 else -100 for x in batch["label"]]
            return out

        return dataset.map(
            tokenize, batched=True, remove_columns=list(dataset.column_names), desc=f"Tokenizing {self.name}/{split}"
        )

    #: :func:`multiple_choice_collator` (same arguments as :meth:`Task.data_collator`)
    data_collator = staticmethod(multiple_choice_collator)

    def compute_metrics(self, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
        """Accuracy over rows whose reference is a choice (``-100``/``-1`` rows are skipped). Inputs ``[n]`` ints.

        Raises:
            ValueError: no labelled row.
        """
        keep = np.asarray(references) >= 0
        return {"accuracy": M.accuracy(np.asarray(predictions)[keep], np.asarray(references)[keep])}

    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Write ``<split>_predictions.csv``: ``idx, video-id, fold-ind, label, ending`` (the chosen ending's text)."""
        feats = features.remove_columns([c for c in ("label",) if c in features.column_names])
        output = trainer.predict(feats, metric_key_prefix="predict")
        preds = self.logits_to_predictions(output.predictions)
        path = os.path.join(output_dir, f"{split}_predictions.csv")
        if trainer.is_world_process_zero():
            with open(path, "w", encoding="utf-8", newline="") as f:
                writer = csv.writer(f)
                writer.writerow(["idx", "video-id", "fold-ind", "label", "ending"])
                for i, (row, pred) in enumerate(zip(raw, preds)):
                    writer.writerow([i, row["video-id"], row["fold-ind"], int(pred), row[f"ending{int(pred)}"]])
        return [path]


SWAG = register_task(
    SwagTask(
        name="swag",
        description="SWAG: pick the most plausible of 4 continuations of a video caption (accuracy)",
        hub_dataset="allenai/swag",
        hub_config="regular",
        problem_type="multiple_choice",
        text_columns=("sent1", "sent2", *ENDINGS),
        label_names=tuple(str(i) for i in range(NUM_CHOICES)),
        metric_names=("accuracy",),
        primary_metric="accuracy",
        metrics=(MetricSpec("accuracy", "accuracy", "Accuracy"),),
        # §4.4: "We fine-tune the model for 3 epochs with a learning rate of 2e-5 and a batch size of 16."
        paper_defaults=PaperDefaults(
            learning_rate=2e-5,
            per_device_train_batch_size=16,
            num_train_epochs=3.0,
            max_seq_length=128,
            lr_grid=(2e-5,),
        ),
        paper_results={
            "BERT-base (dev)": {"accuracy": 81.6},
            "BERT-large (dev)": {"accuracy": 86.6},
            "BERT-large (test)": {"accuracy": 86.3},
        },
        paper_source="BERT paper Table 4 (SWAG dev and test accuracy, x100)",
        local_files={"train": ("train.csv",), "validation": ("val.csv",), "test": ("test.csv",)},
    )
)
