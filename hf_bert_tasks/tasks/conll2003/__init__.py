"""CoNLL-2003 English named-entity recognition (BERT paper §5.3, Table 7): a token-classification head.

Hub source: the parquet conversion of ``eriktks/conll2003`` (``document_id`` ``-1``) or a mirror whose tags map by
name. Local source: the original column files (``train.txt`` …; IOB1 converted), ``-DOCSTART-`` kept as
``document_id``. Evaluation is word-level on ``validation`` and ``test``. Why, and recomputing with conlleval:
docs/design.md, 'tasks/conll2003/: Hub source and recomputing CoNLL scores'."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np

from ..base import MetricSpec, PaperDefaults, Task, not_a_metric, register_task
from ..files import JSON_LINES, write_json
from . import features as ner
from . import metrics as ner_metrics
from . import problem  # noqa: F401 - registers token_classification
from .files import (
    CHUNK_TAGS,
    DOCSTART,
    ENTITY_TYPES,
    NER_LABELS,
    POS_TAGS,
    conll_dataset,
    conll_features,
    read_conll_columns,
    read_conll_file,
    scheme_of,
    tag_parts,
    tag_set,
)

#: the names this module gives other modules (the tag sets and readers live in :mod:`.files`)
__all__ = [
    "CHUNK_TAGS",
    "CONLL2003",
    "CONLL_METRICS",
    "DOCSTART",
    "ENTITY_TYPES",
    "NER_LABELS",
    "POS_TAGS",
    "Conll2003Task",
    "conll_dataset",
    "conll_features",
    "ner_metric_specs",
    "read_conll_columns",
    "read_conll_file",
    "scheme_of",
    "tag_parts",
    "tag_set",
]

logger = logging.getLogger(__name__)

#: the extensions of a CoNLL column file (``word ... tag`` per line: ``train.txt``, ``eng.testa``, ``data.bioes`` …)
COLUMN_FILES = (".txt", ".conll", ".iob", ".bio", ".bioes", ".train", ".testa", ".testb")


def ner_metric_specs(types) -> tuple[MetricSpec, ...]:
    """The :class:`MetricSpec` of everything :meth:`Conll2003Task.evaluate` reports for entity ``types`` (seqeval,
    0-1): strict scores, word accuracy, conlleval-mode scores, per type its scores (``metric_config`` = the type)
    and its gold entity count (not a metric)."""
    prf = {"precision": "Precision", "recall": "Recall", "f1": "F1"}  # Hub metric id -> display name
    return (
        MetricSpec("f1", "f1", "F1"),
        MetricSpec("precision", "precision", "Precision"),
        MetricSpec("recall", "recall", "Recall"),
        MetricSpec("accuracy", "accuracy", "Accuracy (words)"),
        *(MetricSpec(f"conlleval_{k}", k, f"{display} (conlleval)", config="conlleval") for k, display in prf.items()),
        *(
            spec
            for t in types
            for spec in (
                *(
                    MetricSpec(f"{t}_{k}", k, f"{t} {display if k == 'f1' else k}", config=t)
                    for k, display in prf.items()
                ),
                not_a_metric(f"{t}_number", f"{t} gold entities (count)"),
            )
        ),
    )


@dataclass
class Conll2003Task(Task):
    """CoNLL-2003 NER with ``AutoModelForTokenClassification`` (one label per word, on its first WordPiece).

    Attributes (besides :class:`Task`'s; the last two are :attr:`data_options`):
        hub_revision: revision loaded without ``--dataset_name`` / ``--dataset_revision`` (the parquet conversion).
        label_all_tokens: train on every WordPiece (``B-X`` -> ``I-X`` on later pieces).
        document_context: fill windows with the neighbouring sentences of the document.
        tag_scheme: ``IOB2`` (CoNLL-2003's, after IOB1 conversion), or ``IOBES`` / ``BILOU`` for a user's tags.

    A user's files (``--train_file`` …) bring their own tag set (:meth:`labels_from_records`).
    """

    hub_revision: str | None = "refs/convert/parquet"
    label_all_tokens: bool = False
    document_context: bool = False
    #: the tag scheme of :attr:`label_names` (:data:`SCHEME_PREFIXES`): seqeval's strict mode scores in it
    tag_scheme: str = "IOB2"
    #: pads ``input_ids`` and pads ``labels`` with ``-100``
    collator_class = "DataCollatorForTokenClassification"
    data_options = ("label_all_tokens", "document_context")
    #: the column files (:func:`read_conll_columns`) and ``run_ner.py``'s JSON Lines (``tokens``, ``ner_tags``)
    user_file_formats: ClassVar[dict[str, str]] = {**dict.fromkeys(COLUMN_FILES, "CoNLL columns"), **JSON_LINES}

    def read_file(self, path: str, split: str | None = None):
        """One column file (``train.txt``, ``eng.testa`` …) as a ``datasets.Dataset`` (:func:`read_conll_file`)."""
        return conll_dataset(read_conll_file(path))

    def read_records(self, path: str, split: str):
        """A CoNLL-style text file (``.txt``, ``.conll``, ``.iob``, ``.bio``, ``.bioes``, ``eng.train`` …;
        :func:`read_conll_columns`), else :meth:`Task.read_records` (JSON Lines as ``run_ner.py``: a ``tokens``
        list and an ``ner_tags`` list per row)."""
        ext = os.path.splitext(path)[1].lower()
        if ext in COLUMN_FILES:
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{path}: no such file (given as the {split} file)")
            return read_conll_columns(path)
        return super().read_records(path, split)

    def _tag_names(self, records) -> list[list[str]] | None:
        """Each record's tags as names (ids of a JSON file index :attr:`user_labels`, else :data:`NER_LABELS`),
        IOB1 converted to IOB2; ``None`` for a file without tags. Checks tokens and tags are lists of one length.

        Raises:
            ValueError: a row whose tokens or tags are not lists, of other lengths, or a tag that is not ``O`` /
                ``B-TYPE`` … (file and line named).
        """
        if self.label_column not in records.rows:
            return None
        ids = self.user_labels or NER_LABELS
        lines = records.rows.get("token_lines")
        out = []
        for row, (words, tags) in enumerate(zip(records.rows["tokens"], records.rows[self.label_column])):
            if tags is None and isinstance(words, list):  # a test file's row without tags
                tags = ["O"] * len(words)
            if not isinstance(words, list) or not isinstance(tags, list):
                raise ValueError(
                    f"{records.where(row)}: tokens and tags must be lists (JSON Lines: "
                    '{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG", "O"]})'
                )
            if len(words) != len(tags):
                raise ValueError(
                    f"{records.where(row)}: {len(words)} tokens but {len(tags)} tags; expected one tag per token"
                )
            names = [ids[t] if isinstance(t, int) and 0 <= t < len(ids) else t for t in tags]
            bad = next((k for k, t in enumerate(names) if not isinstance(t, str) or not tag_parts(t)), None)
            if bad is not None:
                where = f"{records.path}, line {lines[row][bad]}" if lines else records.where(row)
                raise ValueError(
                    f"{where}: tag {tags[bad]!r} is not a tag; expected 'O' or a prefix B-, I- (IOB), E-, S- "
                    f"(IOBES) or L-, U- (BILOU) and a type ('B-PER'), or an id 0-{len(ids) - 1} of {list(ids)}"
                )
            out.append(names)
        if {tag_parts(t)[0] for tags in out for t in tags} <= {"B", "I", "O"} and ner.detect_scheme(out) == "IOB1":
            logger.info("%s: tags are IOB1; converted to IOB2", records.path)
            out = [ner.iob1_to_iob2(tags) for tags in out]
        return out

    def labels_from_records(self, records) -> None:
        """The NER label set of a user's files, set on this copy (:meth:`Task.configure` made it) as
        :attr:`label_names`, :attr:`tag_scheme` and :attr:`metrics` (per entity type), so ``config.json``'s
        ``id2label``, seqeval's scheme, the pipeline and the card use the user's tags: ``--label_list`` in its order;
        else :func:`tag_set` of the train file's tags (``O`` first, then the types sorted, each with its scheme's
        prefixes); without a train file, the other files' tags, unless they are all CoNLL-2003's (its 9 labels kept,
        as a model fine-tuned on CoNLL-2003 has them).

        Raises:
            ValueError: ``--label_list`` naming a tag twice, without ``O``, or with a name that is not a tag.
        """
        tags = {split: self._tag_names(rec) for split, rec in records.items()}
        tags = {split: rows for split, rows in tags.items() if rows is not None}
        if self.user_labels:
            names = self.user_labels
            bad = [t for t in names if not tag_parts(t)]
            if bad or "O" not in names or len(set(names)) != len(names):
                raise ValueError(
                    f"--label_list {','.join(names)}: expected distinct tags, 'O' among them, each 'O' or a "
                    f"prefix and a type ('B-PER'){f'; {bad} are not tags' if bad else ''}"
                )
        elif self.train_split in tags:
            names = tag_set(tags[self.train_split])
        elif not tags or {t for rows in tags.values() for row in rows for t in row} <= set(NER_LABELS):
            return
        else:
            names = tag_set([row for rows in tags.values() for row in rows])
        types = sorted({tag_parts(t)[1] for t in names} - {None})
        self.label_names, self.tag_scheme, self.metrics = tuple(names), scheme_of(names), ner_metric_specs(types)
        logger.info("%s: labels from the data (%s), in id order: %s", self.name, self.tag_scheme, list(names))

    def with_label_names(self, names):
        """A copy with the tag set ``names`` (a saved model's ``id2label``), its scheme and per-type metrics."""
        names = tuple(names)
        if names == tuple(self.label_names):
            return self
        if bad := [t for t in names if not tag_parts(t)]:
            raise ValueError(f"labels {list(names)}: {bad} are not NER tags ('O', 'B-PER' …)")
        types = sorted({tag_parts(t)[1] for t in names} - {None})
        return replace(self, label_names=names, tag_scheme=scheme_of(names), metrics=ner_metric_specs(types))

    def user_data_description(self) -> str:
        """The card's line for a model trained on the user's files: its tags and scheme, not CoNLL-2003's."""
        types = sorted({tag_parts(t)[1] for t in self.label_names} - {None})
        return (
            f"Named-entity recognition on the user's own data: entity types {', '.join(types)} (tags "
            f"{', '.join(self.label_names)}; {self.tag_scheme}), entity-level F1 (seqeval strict, {self.tag_scheme})"
        )

    def from_user_columns(self, records, split: str):
        """A user file's records (``tokens``: list of words; ``ner_tags``: list of tag names, or ids of
        :data:`NER_LABELS` / ``--label_list``, as long as ``tokens``; IOB1 converted; absent in a test file) in
        :func:`conll_features` of :attr:`label_names`.

        Raises:
            ValueError: a row whose tokens or tags are not lists, of other lengths, a tag that is not a tag, or one
                outside :attr:`label_names` (its name, file and line named, and the label set's source).
        """
        n, tokens = len(records), records.rows["tokens"]
        names = self._tag_names(records) or [["O"] * len(words) for words in tokens]
        index = set(self.label_names)
        lines = records.rows.get("token_lines")
        for row, tags in enumerate(names):
            if (bad := next((k for k, t in enumerate(tags) if t not in index), None)) is not None:
                source = (
                    "--label_list"
                    if self.user_labels
                    else "CoNLL-2003's tags"
                    if tuple(self.label_names) == NER_LABELS
                    else f"the tags of {self.user_files.get(self.train_split, 'the files')}"
                )
                where = f"{records.path}, line {lines[row][bad]}" if lines else records.where(row)
                raise ValueError(
                    f"{where}: tag {tags[bad]!r} is not in the label set {list(self.label_names)} (from {source}); "
                    "expected one of them (a type the train file has, or give them all with --label_list)"
                )
        cols = {
            "id": [str(i) for i in range(n)],
            "document_id": [int(d) for d in records.rows.get("document_id", [-1] * n)],
            "tokens": [[str(w) for w in words] for words in tokens],
            "ner_tags": names,
            "pos_tags": [[POS_TAGS[0]] * len(t) for t in tokens],
            "chunk_tags": [[CHUNK_TAGS[0]] * len(t) for t in tokens],
        }
        return conll_dataset(cols, tuple(self.label_names))

    def load(self, data_dir=None, dataset_name=None, dataset_config_name=None, revision=None, cache_dir=None):
        """Local files when ``data_dir`` is given; else the Hub mirror (default: the parquet export read with
        ``data_dir=<config>``; ``--dataset_name`` loads a mirror as given) relabelled by name (:meth:`_from_hub`).

        Raises:
            ValueError: a Hub split without ``tokens`` and ``ner_tags``/``tags``, or with labels not CoNLL-2003's.
        """
        if self.user_files:
            return self.read_user_files(data_dir)
        if data_dir is not None:
            return self.read_local(data_dir)
        import datasets

        if dataset_name is None and revision is None and self.hub_revision is not None:
            name, folder = self.hub_dataset, dataset_config_name or self.hub_config
            raw = datasets.load_dataset(name, revision=self.hub_revision, data_dir=folder, cache_dir=cache_dir)
        else:
            name = dataset_name or self.hub_dataset
            config = dataset_config_name if dataset_config_name is not None or dataset_name else self.hub_config
            raw = datasets.load_dataset(name, config, revision=revision, cache_dir=cache_dir)
        return datasets.DatasetDict({split: self._from_hub(ds, name, split) for split, ds in raw.items()})

    def _from_hub(self, ds, name: str, split: str):
        """One Hub split in :func:`conll_features` (``document_id`` -1). Tags map by ``ClassLabel`` name, tag strings
        by themselves, integer tags without names in the Hub order :data:`NER_LABELS` (with a warning)."""
        tag_col = next((c for c in ("ner_tags", "tags") if c in ds.column_names), None)
        if "tokens" not in ds.column_names or tag_col is None:
            raise ValueError(
                f"{name} [{split}]: columns {ds.column_names}; expected 'tokens' and 'ner_tags' (or 'tags')"
            )

        def names_of(column):  # the ClassLabel names of a list-of-labels column, if it has them
            return getattr(getattr(ds.features[column], "feature", None), "names", None)

        rows, names = ds[tag_col][:], names_of(tag_col)
        if names is None and all(isinstance(x, str) for r in rows for x in r):
            names = sorted({x for r in rows for x in r})
            rows = [[names.index(x) for x in r] for r in rows]
        elif names is None:
            logger.warning(
                "%s [%s]: %r has no label names; reading ids in the Hub order %s", name, split, tag_col, NER_LABELS
            )
            names = list(NER_LABELS)
        if unknown := sorted(set(names) - set(NER_LABELS)):
            raise ValueError(f"{name} [{split}]: labels {unknown} are not CoNLL-2003 labels {NER_LABELS}")
        tokens = ds["tokens"][:]
        cols = {
            "id": [str(i) for i in (ds["id"][:] if "id" in ds.column_names else range(len(ds)))],
            "document_id": [-1] * len(ds),
            "tokens": tokens,
            "ner_tags": [[names[i] for i in r] for r in rows],
        }
        for key, known in (("pos_tags", POS_TAGS), ("chunk_tags", CHUNK_TAGS)):  # an unknown tag reads as the first
            src = names_of(key) if key in ds.column_names else None
            cols[key] = (
                [[src[i] if src[i] in known else known[0] for i in r] for r in ds[key][:]]
                if src
                else [[known[0]] * len(t) for t in tokens]
            )
        return conll_dataset(cols)

    def preprocess(self, dataset, tokenizer, max_seq_length: int, split: str):
        """Windows of whole words with aligned labels (:func:`hf_bert_tasks.tasks.conll2003.features.tokenize_and_align`, whose
        ``word_index`` / ``sentence_index`` columns ``Trainer`` drops before the model); no word is lost."""
        import datasets

        labelled = self.label_column in dataset.column_names
        out = ner.tokenize_and_align(
            [list(t) for t in dataset["tokens"]],
            tokenizer,
            max_seq_length,
            tags=[list(t) for t in dataset[self.label_column]] if labelled else None,
            label_names=self.label_names,
            label_all_tokens=self.label_all_tokens,
            document_ids=list(dataset["document_id"]) if "document_id" in dataset.column_names else None,
            document_context=self.document_context,
        )
        logger.info("%s/%s: %d sentences -> %d windows", self.name, split, len(dataset), len(out["input_ids"]))
        return datasets.Dataset.from_dict(out)

    def compute_metrics(self, predictions: np.ndarray, references: np.ndarray) -> dict[str, float]:
        """Entity metrics over WordPiece positions not labelled ``-100`` (``[F, L]`` ids; what Trainer sees)."""
        return ner_metrics.token_level_metrics(predictions, references, self.label_names, scheme=self.tag_scheme)

    def word_level(self, trainer, raw, features, metric_key_prefix: str):
        """Predict ``features`` and map to one tag name per word; returns ``(tags, PredictionOutput)``."""
        output = trainer.predict(features, metric_key_prefix=metric_key_prefix)
        ids = ner_metrics.word_predictions(
            output.predictions,
            features["word_index"],
            features["sentence_index"],
            [len(t) for t in raw["tokens"]],
            fill=list(self.label_names).index("O"),
        )
        return [[self.label_names[i] for i in row] for row in ids], output

    def evaluate(self, trainer, raw, features, split: str, output_dir: str | None = None) -> dict[str, float]:
        """Word-level :data:`CONLL_METRICS` of one split as ``eval_`` keys (``_test`` suffix for the test split) plus
        ``eval_loss``; writes ``<split>_predictions.txt`` (``token gold pred``) into ``output_dir``."""
        pred, output = self.word_level(trainer, raw, features, "eval")
        gold = [[self.label_names[i] for i in row] for row in raw[self.label_column]]
        kept = ("eval_loss", "eval_runtime", "eval_samples_per_second")
        metrics = {k: v for k, v in output.metrics.items() if k in kept}
        strict = ner_metrics.entity_metrics(gold, pred, mode="strict", scheme=self.tag_scheme)
        metrics.update({f"eval_{k}": v for k, v in strict.items()})
        lenient = ner_metrics.entity_metrics(gold, pred, mode="conlleval")
        metrics.update({f"eval_conlleval_{k}": lenient[k] for k in ("precision", "recall", "f1")})
        if output_dir and trainer.is_world_process_zero():
            ner_metrics.write_conll(
                os.path.join(output_dir, f"{split}_predictions.txt"), raw["tokens"], pred, gold, overwrite=True
            )
        suffix = self.split_metric_suffix(split)
        metrics = {f"{k}{suffix}": v for k, v in metrics.items()}
        trainer.log(metrics)  # once, as Trainer's evaluate logs (history, console); an extra split's keys suffixed
        return metrics

    def predict(self, trainer, raw, features, split: str, output_dir: str) -> list[str]:
        """Write ``<split>_predictions.txt``: ``token gold pred`` lines (``token pred`` if the split has no tags)."""
        pred, _ = self.word_level(trainer, raw, features, "predict")
        labelled = self.label_column in raw.column_names
        gold = [[self.label_names[i] for i in row] for row in raw[self.label_column]] if labelled else None
        path = os.path.join(output_dir, f"{split}_predictions.txt")
        if trainer.is_world_process_zero():
            ner_metrics.write_conll(path, raw["tokens"], pred, gold, overwrite=True)
            write_json(
                os.path.join(output_dir, f"{split}_predictions_info.json"),
                {
                    "sentences": len(pred),
                    "words": sum(len(p) for p in pred),
                    "scheme": self.tag_scheme,
                    "document_context": self.document_context,
                },
            )
        return [path]


#: Everything ``Conll2003Task.evaluate`` reports (seqeval, 0-1): strict-IOB2 scores, word accuracy, per-type scores
#: (``metric_config`` = the type), conlleval-mode scores, per-type gold entity counts (not metrics).
CONLL_METRICS = ner_metric_specs(ENTITY_TYPES)

CONLL2003 = register_task(
    Conll2003Task(
        name="conll2003",
        description="CoNLL-2003 English NER: PER/ORG/LOC/MISC, entity-level F1 (IOB2, seqeval strict)",
        hub_dataset="eriktks/conll2003",
        hub_config="conll2003",
        problem_type="token_classification",
        text_columns=("tokens",),
        label_names=NER_LABELS,
        label_column="ner_tags",
        metric_names=("f1", "precision", "recall", "accuracy"),
        primary_metric="f1",
        metrics=CONLL_METRICS,
        eval_splits=("validation", "test"),
        test_splits=("test",),
        # Appendix A.3's grid (batch {16, 32}, lr {5e-5, 3e-5, 2e-5}, epochs {2, 3, 4}): NER has no values of its own
        paper_defaults=PaperDefaults(
            learning_rate=5e-5,
            per_device_train_batch_size=32,
            num_train_epochs=3.0,
            max_seq_length=128,
            lr_grid=(5e-5, 3e-5, 2e-5),
        ),
        paper_results={
            "BERT-base (dev)": {"f1": 96.4},
            "BERT-base (test)": {"f1": 92.4},
            "BERT-large (dev)": {"f1": 96.6},
            "BERT-large (test)": {"f1": 92.8},
        },
        paper_source="BERT paper Table 7 (CoNLL-2003 NER, fine-tuning approach; dev F1 and test F1, x100)",
        local_files={
            "train": ("train.txt", "eng.train"),
            "validation": ("valid.txt", "dev.txt", "testa.txt", "eng.testa"),
            "test": ("test.txt", "testb.txt", "eng.testb"),
        },
    )
)
