"""CoNLL-2003 English named-entity recognition (BERT paper §5.3, Table 7): a token-classification head.

Hub source: the parquet conversion of ``eriktks/conll2003`` (``document_id`` ``-1``) or a mirror whose tags map by
name. Local source: the original column files (``train.txt`` …; IOB1 converted), ``-DOCSTART-`` kept as
``document_id``. Evaluation is word-level on ``validation`` and ``test``. Why, and recomputing with conlleval:
docs/design.md, 'tasks/conll2003/: Hub source and recomputing CoNLL scores'."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass

import numpy as np

from ..base import MetricSpec, PaperDefaults, Task, not_a_metric, register_task
from ..files import text_lines, write_json
from . import features as ner
from . import metrics as ner_metrics

logger = logging.getLogger(__name__)

#: NER labels in the Hub dataset's order (``ClassLabel`` ids 0..8).
NER_LABELS = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC")
ENTITY_TYPES = ("PER", "ORG", "LOC", "MISC")
#: Penn Treebank POS tags in the Hub dataset's order (47).
POS_TAGS = (
    '"',
    "''",
    "#",
    "$",
    "(",
    ")",
    ",",
    ".",
    ":",
    "``",
    "CC",
    "CD",
    "DT",
    "EX",
    "FW",
    "IN",
    "JJ",
    "JJR",
    "JJS",
    "LS",
    "MD",
    "NN",
    "NNP",
    "NNPS",
    "NNS",
    "NN|SYM",
    "PDT",
    "POS",
    "PRP",
    "PRP$",
    "RB",
    "RBR",
    "RBS",
    "RP",
    "SYM",
    "TO",
    "UH",
    "VB",
    "VBD",
    "VBG",
    "VBN",
    "VBP",
    "VBZ",
    "WDT",
    "WP",
    "WP$",
    "WRB",
)
#: Chunk tags in the Hub dataset's order (23).
CHUNK_TAGS = (
    "O",
    "B-ADJP",
    "I-ADJP",
    "B-ADVP",
    "I-ADVP",
    "B-CONJP",
    "I-CONJP",
    "B-INTJ",
    "I-INTJ",
    "B-LST",
    "I-LST",
    "B-NP",
    "I-NP",
    "B-PP",
    "I-PP",
    "B-PRT",
    "I-PRT",
    "B-SBAR",
    "I-SBAR",
    "B-UCP",
    "I-UCP",
    "B-VP",
    "I-VP",
)
DOCSTART = "-DOCSTART-"
#: tag column -> its tag names, in the file's column order (POS, chunk, NER)
_TAG_COLUMNS = {"pos_tags": POS_TAGS, "chunk_tags": CHUNK_TAGS, "ner_tags": NER_LABELS}
_KNOWN = tuple(frozenset(names) for names in _TAG_COLUMNS.values())  # for the reader's checks


def conll_features():
    """The ``datasets.Features`` of a CoNLL-2003 split: the Hub's columns plus ``document_id`` (``-1`` = unknown)."""
    import datasets

    tags = {key: datasets.List(datasets.ClassLabel(names=list(names))) for key, names in _TAG_COLUMNS.items()}
    return datasets.Features(
        {
            "id": datasets.Value("string"),
            "document_id": datasets.Value("int32"),
            "tokens": datasets.List(datasets.Value("string")),
            **tags,
        }
    )


def read_conll_file(path: str) -> dict[str, list]:
    """One CoNLL-2003 column file (Tjong Kim Sang & De Meulder, 2003: a ``token POS chunk NER`` line per word, a blank
    line ends a sentence, ``-DOCSTART-`` a document) as columns ``id, document_id, tokens, pos_tags, chunk_tags,
    ner_tags`` (tag names, IOB1 converted to IOB2; sentences before a first ``-DOCSTART-`` are document 0).

    Raises:
        FileNotFoundError: ``path`` missing.
        ValueError: a line without 4 fields, an unknown tag, non-UTF-8 bytes, no sentence (file and line named).
    """
    cols: dict[str, list] = {k: [] for k in ("id", "document_id", "tokens", *_TAG_COLUMNS)}
    document, sentence = 0, []
    for line, text in [*text_lines(path), (0, "")]:  # a last blank line ends the last sentence
        fields = text.split()
        if len(fields) == 4 and fields[0] != DOCSTART:
            sentence.append(fields)
            for tag, known, what in zip(fields[1:], _KNOWN, ("POS", "chunk", "NER")):
                if tag not in known:
                    raise ValueError(
                        f"{path}, line {line}: {what} tag {tag!r} is unknown; expected one of {list(known)}"
                    )
            continue
        if fields and fields[0] != DOCSTART:
            raise ValueError(
                f"{path}, line {line}: found {len(fields)} field(s) in {text!r}; expected 4 "
                "space-separated fields 'token POS chunk NER'"
            )
        if sentence:
            cols["id"].append(str(len(cols["id"])))
            cols["document_id"].append(document)
            for key, column in zip(("tokens", *_TAG_COLUMNS), zip(*sentence)):
                cols[key].append(list(column))
            sentence = []
        document += bool(fields) and bool(cols["id"])  # -DOCSTART-: a new document after the first sentences
    if not cols["id"]:
        raise ValueError(f"{path}: no sentence found; expected 'token POS chunk NER' lines")
    for key in ("ner_tags", "chunk_tags"):
        if ner.detect_scheme(cols[key]) == "IOB1":
            cols[key] = [ner.iob1_to_iob2(tags) for tags in cols[key]]
            logger.info("%s: %s are IOB1; converted to IOB2", path, key)
    return cols


def conll_dataset(cols: dict[str, list]):
    """Columns of tag *names* (:func:`read_conll_file`) as a ``datasets.Dataset`` in :func:`conll_features`."""
    import datasets
    import pyarrow as pa

    table = {
        "id": pa.array(cols["id"], pa.string()),
        "document_id": pa.array(cols["document_id"], pa.int32()),
        "tokens": pa.array(cols["tokens"], pa.list_(pa.string())),
    }
    for key, names in _TAG_COLUMNS.items():
        index = {name: i for i, name in enumerate(names)}
        table[key] = pa.array([[index[t] for t in tags] for tags in cols[key]], pa.list_(pa.int64()))
    return datasets.Dataset(pa.table(table), info=datasets.DatasetInfo(features=conll_features()))


@dataclass
class Conll2003Task(Task):
    """CoNLL-2003 NER with ``AutoModelForTokenClassification`` (one label per word, on its first WordPiece).

    Attributes (besides :class:`Task`'s; the last two are :attr:`data_options`):
        hub_revision: revision loaded without ``--dataset_name`` / ``--dataset_revision`` (the parquet conversion).
        label_all_tokens: train on every WordPiece (``B-X`` -> ``I-X`` on later pieces).
        document_context: fill windows with the neighbouring sentences of the document.
    """

    hub_revision: str | None = "refs/convert/parquet"
    label_all_tokens: bool = False
    document_context: bool = False
    #: pads ``input_ids`` and pads ``labels`` with ``-100``
    collator_class = "DataCollatorForTokenClassification"
    data_options = ("label_all_tokens", "document_context")

    def read_file(self, path: str, split: str | None = None):
        """One column file (``train.txt``, ``eng.testa`` …) as a ``datasets.Dataset`` (:func:`read_conll_file`)."""
        return conll_dataset(read_conll_file(path))

    def read_user_file(self, path: str, split: str):
        """A ``.txt`` / ``.conll`` column file (:func:`read_conll_file`), else :meth:`Task.read_user_file` (JSON
        Lines as ``run_ner.py``: a ``tokens`` list and an ``ner_tags`` list per row)."""
        if os.path.splitext(path)[1].lower() in (".txt", ".conll", ".testa", ".testb", ".train"):
            return conll_dataset(read_conll_file(path))
        return super().read_user_file(path, split)

    def from_user_columns(self, ds, path: str, split: str, header: bool):
        """A user file's rows (``tokens``: list of words; ``ner_tags``: list of tag names or ids of
        :data:`NER_LABELS`, as long as ``tokens``; IOB1 converted) in :func:`conll_features`.

        Raises:
            ValueError: a row whose tokens or tags are not lists, of other lengths, or an unknown tag (file and line).
        """
        tokens = ds["tokens"]
        tags = ds[self.label_column] if self.label_column in ds.column_names else [["O"] * len(t) for t in tokens]
        names = []
        for row, (words, labels) in enumerate(zip(tokens, tags)):
            where = f"{path}, line {row + 1 + header}"
            if not isinstance(words, list) or not isinstance(labels, list):
                raise ValueError(
                    f"{where}: tokens and tags must be lists (JSON Lines: "
                    '{"tokens": ["EU", "rejects"], "ner_tags": ["B-ORG", "O"]})'
                )
            if len(words) != len(labels):
                raise ValueError(f"{where}: {len(words)} tokens but {len(labels)} tags; expected one tag per token")
            try:
                names.append(
                    [
                        NER_LABELS[t]
                        if isinstance(t, int) and 0 <= t < len(NER_LABELS)
                        else NER_LABELS[NER_LABELS.index(t)]
                        for t in labels
                    ]
                )
            except ValueError:
                bad = next(t for t in labels if t not in NER_LABELS)
                raise ValueError(
                    f"{where}: tag {bad!r} is unknown; expected one of {list(NER_LABELS)} "
                    f"(or ids 0-{len(NER_LABELS) - 1})"
                ) from None
        if ner.detect_scheme(names) == "IOB1":
            names = [ner.iob1_to_iob2(t) for t in names]
        cols = {
            "id": [str(i) for i in range(len(ds))],
            "document_id": [-1] * len(ds),
            "tokens": [[str(w) for w in words] for words in tokens],
            "ner_tags": names,
            "pos_tags": [[POS_TAGS[0]] * len(t) for t in tokens],
            "chunk_tags": [[CHUNK_TAGS[0]] * len(t) for t in tokens],
        }
        return conll_dataset(cols)

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
        return ner_metrics.token_level_metrics(predictions, references, self.label_names)

    def word_level(self, trainer, raw, features, metric_key_prefix: str):
        """Predict ``features`` and map to one tag name per word; returns ``(tags, PredictionOutput)``."""
        output = trainer.predict(features, metric_key_prefix=metric_key_prefix)
        ids = ner_metrics.word_predictions(
            output.predictions, features["word_index"], features["sentence_index"], [len(t) for t in raw["tokens"]]
        )
        return [[self.label_names[i] for i in row] for row in ids], output

    def evaluate(self, trainer, raw, features, split: str, output_dir: str | None = None) -> dict[str, float]:
        """Word-level :data:`CONLL_METRICS` of one split as ``eval_`` keys (``_test`` suffix for the test split) plus
        ``eval_loss``; writes ``<split>_predictions.txt`` (``token gold pred``) into ``output_dir``."""
        pred, output = self.word_level(trainer, raw, features, "eval")
        gold = [[self.label_names[i] for i in row] for row in raw[self.label_column]]
        kept = ("eval_loss", "eval_runtime", "eval_samples_per_second")
        metrics = {k: v for k, v in output.metrics.items() if k in kept}
        metrics.update({f"eval_{k}": v for k, v in ner_metrics.entity_metrics(gold, pred, mode="strict").items()})
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
                    "scheme": "IOB2",
                    "document_context": self.document_context,
                },
            )
        return [path]


#: Everything ``Conll2003Task.evaluate`` reports (seqeval, 0-1): strict-IOB2 scores, word accuracy, per-type scores
#: (``metric_config`` = the type), conlleval-mode scores, per-type gold entity counts (not metrics).
_PRF = {"precision": "Precision", "recall": "Recall", "f1": "F1"}  # Hub metric id -> display name
CONLL_METRICS = (
    MetricSpec("f1", "f1", "F1"),
    MetricSpec("precision", "precision", "Precision"),
    MetricSpec("recall", "recall", "Recall"),
    MetricSpec("accuracy", "accuracy", "Accuracy (words)"),
    *(MetricSpec(f"conlleval_{k}", k, f"{display} (conlleval)", config="conlleval") for k, display in _PRF.items()),
    *(
        spec
        for t in ENTITY_TYPES
        for spec in (
            *(
                MetricSpec(f"{t}_{k}", k, f"{t} {display if k == 'f1' else k}", config=t)
                for k, display in _PRF.items()
            ),
            not_a_metric(f"{t}_number", f"{t} gold entities (count)"),
        )
    ),
)

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
        model_head="AutoModelForTokenClassification",
        pipeline_tag="token-classification",
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
