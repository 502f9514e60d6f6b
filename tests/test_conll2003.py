"""CoNLL-2003 task: the column-file reader, Hub relabelling, preprocessing options and the recipe end to end."""

import json
from types import SimpleNamespace

import pytest

from hf_bert_tasks.finetune import recipe as finetune
from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.conll2003 import NER_LABELS, conll_features, read_conll_file
from tests.conftest import shared_data, tiny_run_argv

TWO_DOCUMENTS = """-DOCSTART- -X- -X- O

nadia NNP B-NP B-PER
ran VBD B-VP O
to TO B-PP O
the DT B-NP O
castle NN I-NP B-LOC

hiro NNP B-NP B-PER
sat VBD B-VP O

-DOCSTART- -X- -X- O

greta NNP B-NP B-PER
walked VBD B-VP O
"""


def names(dataset, column, row):
    feature = dataset.features[column].feature
    return [feature.int2str(i) for i in dataset[row][column]]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_reader_keeps_documents_and_sentences(tmp_path):
    cols = read_conll_file(write(tmp_path, "train.txt", TWO_DOCUMENTS))
    assert cols["id"] == ["0", "1", "2"]
    assert cols["document_id"] == [0, 0, 1]
    assert cols["tokens"] == [["nadia", "ran", "to", "the", "castle"], ["hiro", "sat"], ["greta", "walked"]]
    assert cols["ner_tags"][0] == ["B-PER", "O", "O", "O", "B-LOC"]
    assert cols["pos_tags"][1] == ["NNP", "VBD"] and cols["chunk_tags"][1] == ["B-NP", "B-VP"]


def test_sentences_before_the_first_docstart_form_document_zero(tmp_path):
    text = "ines NNP B-NP B-PER\n\n-DOCSTART- -X- -X- O\n\nfarid NNP B-NP B-PER\n"
    assert read_conll_file(write(tmp_path, "a.txt", text))["document_id"] == [0, 1]


def test_iob1_file_is_converted_to_iob2(tmp_path):
    text = "new NNP I-NP I-LOC\nyork NNP I-NP I-LOC\nnadia NNP I-NP B-LOC\nsat VBD I-VP O\n"
    cols = read_conll_file(write(tmp_path, "iob1.txt", text))
    assert cols["ner_tags"] == [["B-LOC", "I-LOC", "B-LOC", "O"]]
    assert cols["chunk_tags"] == [["B-NP", "I-NP", "I-NP", "B-VP"]]


def test_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path, "train.txt", "-DOCSTART- -X- -X- O\n\nnadia NNP B-PER\n")
    with pytest.raises(ValueError, match=r"train\.txt, line 3: found 3 field\(s\).*token POS chunk NER"):
        read_conll_file(path)


def test_unknown_entity_tag_names_file_and_line(tmp_path):
    path = write(tmp_path, "valid.txt", "nadia NNP B-NP B-PERSON\n")
    with pytest.raises(ValueError, match=r"valid\.txt, line 1: NER tag 'B-PERSON' is unknown"):
        read_conll_file(path)


def test_read_local_gives_hub_splits_and_features(tmp_path):
    for name in ("train.txt", "valid.txt", "test.txt"):
        write(tmp_path, name, TWO_DOCUMENTS)
    raw = get_task("conll2003").load(str(tmp_path))
    assert sorted(raw) == ["test", "train", "validation"]
    assert raw["train"].features == conll_features()
    assert names(raw["validation"], "ner_tags", 0) == ["B-PER", "O", "O", "O", "B-LOC"]


def test_missing_files_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="valid.txt"):
        get_task("conll2003").load(str(tmp_path))


def test_hub_mirror_with_another_label_order_is_mapped_by_name():
    import datasets

    order = ["O", "B-ORG", "B-MISC", "B-PER", "I-PER", "B-LOC", "I-ORG", "I-MISC", "I-LOC"]  # tner's order
    ds = datasets.Dataset.from_dict(
        {"tokens": [["nadia", "ran"]], "tags": [[3, 0]]},
        features=datasets.Features(
            {
                "tokens": datasets.List(datasets.Value("string")),
                "tags": datasets.List(datasets.ClassLabel(names=order)),
            }
        ),
    )
    out = get_task("conll2003")._from_hub(ds, "some/mirror", "train")
    assert out.features == conll_features()
    assert out[0]["ner_tags"] == [NER_LABELS.index("B-PER"), 0] and out[0]["document_id"] == -1


def test_default_hub_source_reads_the_parquet_export_layout(tmp_path):
    import dataclasses

    import datasets

    hub_features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "tokens": datasets.List(datasets.Value("string")),
            "ner_tags": datasets.List(datasets.ClassLabel(names=list(NER_LABELS))),
        }
    )
    for split, folder in (("train", "train"), ("validation", "validation"), ("test", "test")):
        (tmp_path / "conll2003" / folder).mkdir(parents=True)
        part = datasets.Dataset.from_dict(
            {"id": ["0"], "tokens": [[split, "nadia"]], "ner_tags": [[0, 1]]}, features=hub_features
        )
        part.to_parquet(str(tmp_path / "conll2003" / folder / "0000.parquet"))
    # a local folder with the refs/convert/parquet branch's layout stands in for the Hub repository
    task = dataclasses.replace(get_task("conll2003"), hub_dataset=str(tmp_path), hub_revision="main")
    raw = task.load(revision=None)
    assert sorted(raw) == ["test", "train", "validation"]
    assert raw["validation"][0]["tokens"] == ["validation", "nadia"] and raw["validation"][0]["ner_tags"] == [0, 1]
    assert raw["test"].features == conll_features()


def test_configure_returns_a_copy_with_the_data_options():
    task = get_task("conll2003")
    configured = task.configure(SimpleNamespace(label_all_tokens=True, document_context=True))
    assert configured.label_all_tokens and configured.document_context
    assert not task.label_all_tokens and not task.document_context


def test_document_context_on_data_without_documents_is_an_error(vocab_tokenizer):
    import datasets

    raw = datasets.Dataset.from_dict(  # a Hub-style copy: the -DOCSTART- lines are gone, document_id is -1
        {
            "id": ["0"],
            "document_id": [-1],
            "tokens": [["the", "cat"]],
            "pos_tags": [["DT", "NN"]],
            "chunk_tags": [["B-NP", "I-NP"]],
            "ner_tags": [["O", "O"]],
        },
        features=conll_features(),
    )
    task = get_task("conll2003").configure(SimpleNamespace(label_all_tokens=False, document_context=True))
    with pytest.raises(ValueError, match="-DOCSTART-"):
        task.preprocess(raw, vocab_tokenizer, 32, "train")


def _three_files(folder, train=TWO_DOCUMENTS, dev=TWO_DOCUMENTS, test=TWO_DOCUMENTS):
    for name, text in (("train.txt", train), ("valid.txt", dev), ("test.txt", test)):
        (folder / name).write_text(text, encoding="utf-8")
    return folder


# ---------------------------------------------------------------- recipe end to end (tiny BERT, fixture files)
PEOPLE = ["nadia", "hiro", "priya", "ines", "greta", "farid"]
PLACES = ["castle", "village", "orchard", "valley", "museum", "harbour"]
THINGS = ["kettle", "map", "compass", "lantern"]


def fixture_corpus(seed: int) -> str:
    """Documents of template sentences: people are PER, places LOC, 'the market of X' an ORG+LOC pair."""
    lines = []
    for doc in range(4):
        lines += ["-DOCSTART- -X- -X- O", ""]
        for k in range(4):
            i = seed * 7 + doc * 4 + k
            person, place, thing = PEOPLE[i % 6], PLACES[(i * 5) % 6], THINGS[i % 4]
            words = [
                (person, "NNP", "B-NP", "B-PER"),
                ("found", "VBD", "B-VP", "O"),
                ("the", "DT", "B-NP", "O"),
                (thing, "NN", "I-NP", "O"),
                ("near", "IN", "B-PP", "O"),
                ("the", "DT", "B-NP", "O"),
                (place, "NN", "I-NP", "B-LOC"),
                (".", ".", "O", "O"),
            ]
            lines += [" ".join(w) for w in words] + [""]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("document_context", [False, True])
def test_recipe_trains_evaluates_writes_conll_predictions_and_serves_a_pipeline(
    tiny_bert_dir, tmp_path, document_context
):
    from transformers import pipeline

    data = tmp_path / "data"
    data.mkdir()
    _three_files(data, fixture_corpus(0), fixture_corpus(1), fixture_corpus(2))
    out = tmp_path / "out"
    args = tiny_run_argv(
        "conll2003",
        tiny_bert_dir,
        out,
        data_dir=data,
        num_train_epochs=12,
        per_device_train_batch_size=8,
        learning_rate="3e-3",
        warmup_steps=0,
        max_seq_length=24,
        eval_strategy="no",
        disable_tqdm="true",
        seed=0,
    )
    finetune.main(args + (["--document_context"] if document_context else []))
    results = json.loads((out / "all_results.json").read_text())
    # the reported entity-level scores are those of the written prediction files (seqeval, strict IOB2, as reference)
    from seqeval.metrics import f1_score, precision_score, recall_score
    from seqeval.scheme import IOB2

    for split, suffix in (("validation", ""), ("test", "_test")):
        blocks = (out / f"{split}_predictions.txt").read_text().strip().split("\n\n")
        gold = [[line.split(" ")[1] for line in b.splitlines()] for b in blocks]
        pred = [[line.split(" ")[2] for line in b.splitlines()] for b in blocks]
        for key, fn in (("f1", f1_score), ("precision", precision_score), ("recall", recall_score)):
            expected = fn(gold, pred, mode="strict", scheme=IOB2)
            assert results[f"eval_{key}{suffix}"] == pytest.approx(expected), (split, key)
    # the template data is learnable: names and places are found (16 PER + 16 LOC gold entities per split)
    assert results["eval_PER_number"] == 16 and results["eval_LOC_number"] == 16
    assert results["eval_f1"] > 0.9 and results["eval_f1_test"] > 0.9
    lines = (out / "validation_predictions.txt").read_text().split("\n")
    assert len([line for line in lines if line]) == 16 * 8  # every word of every sentence, none lost
    assert all(len(line.split(" ")) == 3 for line in lines if line)
    assert (out / "test_predictions.txt").is_file()
    tagger = pipeline("token-classification", model=str(out), aggregation_strategy="simple")
    entities = tagger("priya found the map near the orchard .")
    assert [(e["entity_group"], e["word"]) for e in entities] == [("PER", "priya"), ("LOC", "orchard")]


@pytest.mark.slow
def test_real_conll2003_files_match_the_official_counts():
    raw = get_task("conll2003").load(shared_data("conll2003"))
    assert {s: len(raw[s]) for s in raw} == {"train": 14041, "validation": 3250, "test": 3453}
    assert [len(set(raw[s]["document_id"])) for s in ("train", "validation", "test")] == [946, 216, 231]
