"""CoNLL-style files: the CoNLL-2003 tag sets (NER, POS, chunk, in the Hub dataset's orders), the tag schemes of a
user's own tags (IOB1 / IOB2, IOBES, BILOU: :func:`tag_parts`, :func:`scheme_of`, :func:`tag_set`), the readers of the
original column files (:func:`read_conll_file`) and of a user's ``token tag`` / ``token _ _ tag`` files
(:func:`read_conll_columns`), and their ``datasets`` form (:func:`conll_dataset`)."""

from __future__ import annotations

import logging

from ..files import text_lines
from . import features as ner

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


def conll_features(ner_labels: tuple[str, ...] = NER_LABELS):
    """The ``datasets.Features`` of a CoNLL-2003 split: the Hub's columns plus ``document_id`` (``-1`` = unknown);
    ``ner_labels``: the NER tag names in id order (a user's own, :meth:`Conll2003Task.labels_from_records`)."""
    import datasets

    columns = {**_TAG_COLUMNS, "ner_tags": tuple(ner_labels)}
    tags = {key: datasets.List(datasets.ClassLabel(names=list(names))) for key, names in columns.items()}
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


def conll_dataset(cols: dict[str, list], ner_labels: tuple[str, ...] = NER_LABELS):
    """Columns of tag *names* (:func:`read_conll_file`) as a ``datasets.Dataset`` in :func:`conll_features` of
    ``ner_labels`` (every NER tag one of them)."""
    import datasets
    import pyarrow as pa

    table = {
        "id": pa.array(cols["id"], pa.string()),
        "document_id": pa.array(cols["document_id"], pa.int32()),
        "tokens": pa.array(cols["tokens"], pa.list_(pa.string())),
    }
    for key, names in {**_TAG_COLUMNS, "ner_tags": tuple(ner_labels)}.items():
        index = {name: i for i, name in enumerate(names)}
        table[key] = pa.array([[index[t] for t in tags] for tags in cols[key]], pa.list_(pa.int64()))
    return datasets.Dataset(pa.table(table), info=datasets.DatasetInfo(features=conll_features(ner_labels)))


#: the prefixes of each tag scheme, in the order a label set lists them (:func:`tag_set`)
SCHEME_PREFIXES = {"IOB2": ("B", "I"), "IOBES": ("B", "I", "E", "S"), "BILOU": ("B", "I", "L", "U")}


def tag_parts(tag: str) -> tuple[str, str | None]:
    """``"B-PER"`` -> ``("B", "PER")``, ``"O"`` -> ``("O", None)``: a tag of IOB1 / IOB2 (``B``, ``I``), IOBES
    (``E``, ``S``) or BILOU (``L``, ``U``); ``None`` for anything else (the caller names the file and line)."""
    if tag == "O":
        return "O", None
    if len(tag) > 2 and tag[1] == "-" and tag[0] in "BIESLU":
        return tag[0], tag[2:]
    return None


def scheme_of(tags) -> str:
    """The scheme (:data:`SCHEME_PREFIXES`) of a set of valid tags (:func:`tag_parts`): ``IOBES`` with an ``E-`` or
    ``S-`` tag, ``BILOU`` with an ``L-`` or ``U-`` tag, else ``IOB2`` (IOB1 is converted on reading).

    Raises:
        ValueError: tags of both IOBES and BILOU.
    """
    prefixes = {tag_parts(t)[0] for t in tags}
    if prefixes & {"E", "S"} and prefixes & {"L", "U"}:
        raise ValueError(f"tags {sorted(tags)} mix IOBES (E-, S-) and BILOU (L-, U-); expected one scheme")
    return "IOBES" if prefixes & {"E", "S"} else "BILOU" if prefixes & {"L", "U"} else "IOB2"


def tag_set(sentences) -> tuple[str, ...]:
    """The NER label set of tagged sentences (lists of valid tag names): ``O`` first (id 0: the tag of a word left
    without a prediction), then for each entity type, sorted, every prefix of the scheme (:func:`scheme_of`) in
    :data:`SCHEME_PREFIXES` order: ``[[B-PER, O, B-LOC, I-LOC]]`` -> ``(O, B-LOC, I-LOC, B-PER, I-PER)``. The types
    are the data's, the order is fixed (``run_ner.py`` sorts its labels too), so a tag a file lacks (``I-PER``) still
    has its id."""
    tags = {t for tags in sentences for t in tags}
    types = sorted({tag_parts(t)[1] for t in tags} - {None})
    return ("O", *(f"{p}-{t}" for t in types for p in SCHEME_PREFIXES[scheme_of(tags)]))


def read_conll_columns(path: str):
    """A user's CoNLL-style text file (``--train_file x.txt`` / ``.conll``) as
    :class:`~hf_bert_tasks.tasks.files.Records` of sentences: one word per line, fields separated by whitespace,
    the **first** the token and the **last** its tag (``token tag``, ``token _ _ tag``, CoNLL-2003's
    ``token POS chunk tag``: the fields between are not read), the same number of fields on every line; a blank line
    ends a sentence, a ``-DOCSTART-`` line a document. One field per line: tokens without tags (a test file).
    Columns: ``tokens``, ``ner_tags`` (when tagged), ``document_id`` and ``token_lines`` (each word's line).

    Raises:
        FileNotFoundError: ``path`` missing.
        ValueError: a line with another number of fields than the first word's line, no sentence, bytes that are not
            UTF-8 (file and line named).
    """
    from ..files import Records

    rows: dict[str, list] = {"tokens": [], "ner_tags": [], "document_id": [], "token_lines": []}
    starts, sentence, document, width = [], [], 0, None
    for line, text in [*text_lines(path), (0, "")]:  # a last blank line ends the last sentence
        fields = text.split()
        if fields and fields[0] != DOCSTART:
            width = width or (line, len(fields))
            if len(fields) != width[1]:
                raise ValueError(
                    f"{path}, line {line}: found {len(fields)} field(s) in {text!r}, line {width[0]} has "
                    f"{width[1]}; expected the same fields on every line ('token tag', 'token _ _ tag' …)"
                )
            sentence.append((line, fields))
            continue
        if sentence:
            starts.append(sentence[0][0])
            rows["tokens"].append([f[0] for _, f in sentence])
            rows["ner_tags"].append([f[-1] for _, f in sentence])
            rows["document_id"].append(document)
            rows["token_lines"].append([n for n, _ in sentence])
            sentence = []
        document += bool(fields) and bool(starts)  # -DOCSTART-: a new document after the first sentences
    if not starts:
        raise ValueError(f"{path}: no sentence found; expected 'token tag' lines, a blank line after each sentence")
    if width[1] == 1:
        del rows["ner_tags"]
    return Records(path, list(rows), rows, starts)
