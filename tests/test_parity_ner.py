"""benchmarks/parity/ner_arms.py's conversion of CoNLL-2003 column files into run_ner.py's JSON Lines (no run is
started, nothing from ../shared is read). Expected rows are written out by hand from the literal files."""

import importlib.util
import json
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
spec = importlib.util.spec_from_file_location("ner_arms", os.path.join(REPO, "benchmarks", "parity", "ner_arms.py"))
ner_arms = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ner_arms)

TRAIN = (
    "-DOCSTART- -X- -X- O\n"
    "\n"
    "Orwin NNP B-NP B-ORG\n"
    "hires VBZ B-VP O\n"
    "Fennish JJ B-NP B-MISC\n"
    "\n"
    "Mara NNP B-NP B-PER\n"
    "Quillan NNP I-NP I-PER\n"
    "\n"
    "-DOCSTART- -X- -X- O\n"
    "\n"
    "TALLOWMERE NNP B-NP B-LOC\n"
)  # the last sentence has no blank line after it
VALID = "ROWING NNP B-NP O\n-DOCSTART- -X- -X- O\nDUNBARROW NNP B-NP B-LOC\n\n\n"


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


@pytest.fixture
def source(tmp_path):
    """A CoNLL folder with the literal ``train.txt`` and ``valid.txt`` above."""
    folder = tmp_path / "conll"
    folder.mkdir()
    write(folder / "train.txt", TRAIN)
    write(folder / "valid.txt", VALID)
    return folder


def test_docstart_lines_and_blank_lines_end_sentences_and_are_no_sentence(tmp_path):
    assert ner_arms.read_sentences(write(tmp_path / "train.txt", TRAIN)) == [
        {"tokens": ["Orwin", "hires", "Fennish"], "ner_tags": ["B-ORG", "O", "B-MISC"]},
        {"tokens": ["Mara", "Quillan"], "ner_tags": ["B-PER", "I-PER"]},
        {"tokens": ["TALLOWMERE"], "ner_tags": ["B-LOC"]},
    ]


def test_a_docstart_line_without_a_blank_line_before_it_ends_the_sentence(tmp_path):
    assert ner_arms.read_sentences(write(tmp_path / "valid.txt", VALID)) == [
        {"tokens": ["ROWING"], "ner_tags": ["O"]},
        {"tokens": ["DUNBARROW"], "ner_tags": ["B-LOC"]},
    ]


def test_convert_writes_json_lines_and_links_the_column_files(source, tmp_path):
    assert ner_arms.convert(str(source), str(tmp_path / "work")) == {"train": 3, "validation": 2}
    lines = (tmp_path / "work" / "data" / "validation.json").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line) for line in lines] == [
        {"tokens": ["ROWING"], "ner_tags": ["O"]},
        {"tokens": ["DUNBARROW"], "ner_tags": ["B-LOC"]},
    ]
    assert os.path.realpath(tmp_path / "work" / "columns" / "train.txt") == os.path.realpath(source / "train.txt")


def test_a_line_without_four_fields_is_named_by_file_and_line(tmp_path):
    path = write(tmp_path / "train.txt", "Orwin NNP B-NP B-ORG\nhires VBZ O\n")
    with pytest.raises(ValueError, match=r"train\.txt, line 2: found 3 field\(s\) in 'hires VBZ O'; expected 4"):
        ner_arms.read_sentences(path)


def test_an_ner_tag_that_is_not_iob_is_named_by_file_and_line(tmp_path):
    path = write(tmp_path / "train.txt", "\nOrwin NNP B-NP ORG\n")
    with pytest.raises(ValueError, match=r"train\.txt, line 2: NER tag 'ORG'; expected 'O', 'B-TYPE' or 'I-TYPE'"):
        ner_arms.read_sentences(path)


def test_a_file_without_a_sentence_is_an_error(tmp_path):
    path = write(tmp_path / "train.txt", "-DOCSTART- -X- -X- O\n\n")
    with pytest.raises(ValueError, match="no sentence found"):
        ner_arms.read_sentences(path)


def test_both_readers_give_the_same_sentences(source, tmp_path):
    ner_arms.convert(str(source), str(tmp_path / "work"))
    ner_arms.check_same_sentences(str(source), str(tmp_path / "work"))  # no error: the package reads the same


def test_a_sentence_the_package_reads_otherwise_is_reported(source, tmp_path):
    ner_arms.convert(str(source), str(tmp_path / "work"))
    write(tmp_path / "work" / "data" / "train.json", '{"tokens": ["Orwin"], "ner_tags": ["B-ORG"]}\n' * 3)
    with pytest.raises(ValueError, match="train.json: sentence 0 differs from the package's reading of train.txt"):
        ner_arms.check_same_sentences(str(source), str(tmp_path / "work"))


def test_the_rows_metrics_are_one_scorer_on_both_sides(tmp_path):
    results = {"eval_precision": 0.5, "eval_recall": 0.25, "eval_f1": 0.3, "eval_accuracy": 0.9,
               "eval_conlleval_precision": 0.6, "eval_conlleval_recall": 0.4, "eval_conlleval_f1": 0.48}  # fmt: skip
    (tmp_path / "all_results.json").write_text(json.dumps(results), encoding="utf-8")
    assert ner_arms.ner_metrics(str(tmp_path), "ours") == pytest.approx(
        {
            "precision": 60.0,
            "recall": 40.0,
            "f1": 48.0,
            "accuracy": 90.0,
            "strict_precision": 50.0,
            "strict_recall": 25.0,
            "strict_f1": 30.0,
        }
    )
    assert ner_arms.ner_metrics(str(tmp_path), "reference") == pytest.approx(
        {"precision": 50.0, "recall": 25.0, "f1": 30.0, "accuracy": 90.0}
    )
