"""Local readers for the original GLUE files: quoting off, BOM, CRLF, headerless CoLA, labels by name, clear errors."""

import os

import numpy as np
import pytest

from hf_bert_tasks import get_task
from tests.conftest import shared_data

MRPC_HEADER = "\ufeffQuality\t#1 ID\t#2 ID\t#1 String\t#2 String\n"


def write(folder, name, text, encoding="utf-8"):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w", encoding=encoding, newline="") as f:
        f.write(text)
    return path


def test_mrpc_keeps_rows_with_unbalanced_quotes_and_strips_the_bom(tmp_path):
    # With CSV quoting on, the opening quote of row 1 would swallow row 2 into one field.
    write(
        tmp_path,
        "dev.tsv",
        MRPC_HEADER + '1\t11\t12\t"the dog ran .\tthe dog was running .\n0\t13\t14\tthe cat sat .\ta dog sat .\n',
    )
    ds = get_task("mrpc").read_local(str(tmp_path))["validation"]
    assert ds["sentence1"] == ['"the dog ran .', "the cat sat ."]
    assert ds["sentence2"] == ["the dog was running .", "a dog sat ."]
    assert ds["label"] == [1, 0]
    assert ds["idx"] == [0, 1]


def test_crlf_line_endings_are_accepted(tmp_path):
    write(tmp_path, "train.tsv", "sentence\tlabel\r\nit was good .\t1\r\nit was bad .\t0\r\n")
    ds = get_task("sst2").read_local(str(tmp_path))["train"]
    assert ds["sentence"] == ["it was good .", "it was bad ."]
    assert ds["label"] == [1, 0]


def test_cola_has_no_header_but_its_test_file_has_one(tmp_path):
    write(tmp_path, "train.tsv", "src1\t1\t\tthe cat sat on the mat .\nsrc1\t0\t*\tcat the mat sat .\n")
    write(tmp_path, "test.tsv", "index\tsentence\n0\tthe dog ran .\n1\tran dog the .\n")
    ds = get_task("cola").read_local(str(tmp_path))
    assert ds["train"]["sentence"] == ["the cat sat on the mat .", "cat the mat sat ."]
    assert ds["train"]["label"] == [1, 0]
    assert ds["test"]["sentence"] == ["the dog ran .", "ran dog the ."]
    assert ds["test"]["label"] == [-1, -1]


def test_text_labels_map_by_name_to_the_hub_ids(tmp_path):
    write(
        tmp_path,
        "dev.tsv",
        "index\tsentence1\tsentence2\tlabel\n"
        "0\ta dog ran .\tan animal moved .\tentailment\n"
        "1\ta dog ran .\tthe cat sat .\tnot_entailment\n",
    )
    ds = get_task("rte").read_local(str(tmp_path))["validation"]
    assert ds["label"] == [0, 1]  # nyu-mll/glue rte: entailment=0, not_entailment=1
    assert ds.features["label"].names == ["entailment", "not_entailment"]


def test_mnli_from_glue_tsv_and_from_jsonl_agree(tmp_path):
    tsv = tmp_path / "tsv"
    header = "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tlabel1\tgold_label\n"
    write(
        tsv,
        "dev_matched.tsv",
        header + "0\t1\t1a\tfiction\tshe ran .\tshe moved .\tentailment\tentailment\n"
        "1\t2\t2c\tfiction\the sat .\the never sat .\tcontradiction\tcontradiction\n"
        "2\t3\t3n\tfiction\tit rained .\tit was cold .\tneutral\tneutral\n",
    )
    jsonl = tmp_path / "jsonl"
    write(
        jsonl,
        "dev_matched.jsonl",
        '{"premise": "she ran .", "hypothesis": "she moved .", "label": "entailment"}\n'
        '{"premise": "he sat .", "hypothesis": "he never sat .", "label": "contradiction"}\n'
        '{"premise": "it rained .", "hypothesis": "it was cold .", "label": "neutral"}\n',
    )
    a = get_task("mnli").read_local(str(tsv))["validation_matched"]
    b = get_task("mnli").read_local(str(jsonl))["validation_matched"]
    assert a["label"] == b["label"] == [0, 2, 1]  # entailment=0, neutral=1, contradiction=2
    assert a["premise"] == b["premise"] and a["hypothesis"] == b["hypothesis"]


def test_stsb_scores_are_floats_and_test_split_is_unlabeled(tmp_path):
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2"
    write(tmp_path, "dev.tsv", header + "\tscore\n0\tg\tf\t2012\t0\ts\ts\ta cat .\ta dog .\t1.250\n")
    write(tmp_path, "test.tsv", header + "\n0\tg\tf\t2012\t0\ts\ts\ta cat .\ta dog .\n")
    ds = get_task("stsb").read_local(str(tmp_path))
    assert ds["validation"]["label"] == [1.25]
    assert ds["test"]["label"] == [-1.0]


def test_a_short_row_names_file_line_and_expected_columns(tmp_path):
    path = write(tmp_path, "dev.tsv", MRPC_HEADER + "1\t11\t12\tonly one sentence\n")
    with pytest.raises(ValueError) as err:
        get_task("mrpc").read_local(str(tmp_path))
    message = str(err.value)
    assert path in message and "line 2" in message and "#2 String" in message


def test_an_unknown_label_names_file_line_field_and_allowed_values(tmp_path):
    write(tmp_path, "dev.tsv", "index\tsentence1\tsentence2\tlabel\n0\ta .\tb .\tmaybe\n")
    with pytest.raises(ValueError, match=r"dev.tsv, line 2: field 'label' = 'maybe'.*entailment"):
        get_task("rte").read_local(str(tmp_path))


def test_non_utf8_bytes_name_file_and_line(tmp_path):
    write(tmp_path, "train.tsv", "sentence\tlabel\nok .\t1\n")
    with open(tmp_path / "train.tsv", "ab") as f:
        f.write(b"caf\xe9 .\t0\n")
    with pytest.raises(ValueError, match=r"train.tsv, line 3: bytes that are not UTF-8"):
        get_task("sst2").read_local(str(tmp_path))


def test_a_folder_without_task_files_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="none of the mrpc files"):
        get_task("mrpc").read_local(str(tmp_path))


def test_local_files_and_hub_shaped_dataset_give_identical_features(tmp_path, sample_tokenizer):
    import datasets

    write(
        tmp_path,
        "dev.tsv",
        MRPC_HEADER + "1\t11\t12\tanna fixed the clock .\tthe clock was fixed by anna .\n"
        "0\t13\t14\tbruno sold a map .\tvera bought a drum .\n",
    )
    task = get_task("mrpc")
    local = task.read_local(str(tmp_path))["validation"]
    hub = datasets.Dataset.from_dict(
        {
            "sentence1": ["anna fixed the clock .", "bruno sold a map ."],
            "sentence2": ["the clock was fixed by anna .", "vera bought a drum ."],
            "label": [1, 0],
            "idx": [0, 1],
        },
        features=datasets.Features(
            {
                "sentence1": datasets.Value("string"),
                "sentence2": datasets.Value("string"),
                "label": datasets.ClassLabel(names=["not_equivalent", "equivalent"]),
                "idx": datasets.Value("int32"),
            }
        ),
    )
    a = task.preprocess(local, sample_tokenizer, 128, "validation")
    b = task.preprocess(hub, sample_tokenizer, 128, "validation")
    assert a.column_names == b.column_names == ["label", "input_ids", "token_type_ids", "attention_mask"]
    assert a.to_dict() == b.to_dict()


def test_pair_features_are_cls_a_sep_b_sep_with_token_type_ids(vocab_tokenizer):
    import datasets

    raw = datasets.Dataset.from_dict(
        {"sentence1": ["the cat sat"], "sentence2": ["a dog ran"], "label": [1], "idx": [0]}
    )
    out = get_task("mrpc").preprocess(raw, vocab_tokenizer, 128, "validation")
    assert out[0]["input_ids"] == [2, 5, 7, 9, 3, 6, 8, 12, 3]
    assert out[0]["token_type_ids"] == [0, 0, 0, 0, 0, 1, 1, 1, 1]
    assert out[0]["label"] == 1


def test_unlabeled_test_split_drops_the_label_column(vocab_tokenizer):
    import datasets

    raw = datasets.Dataset.from_dict({"sentence": ["the cat sat", "a dog ran"], "label": [-1, -1], "idx": [0, 1]})
    out = get_task("sst2").preprocess(raw, vocab_tokenizer, 128, "test")
    assert "label" not in out.column_names


@pytest.mark.parametrize(
    "folder,task,split,rows",
    [
        ("MRPC", "mrpc", "validation", 408),
        ("STS-B", "stsb", "validation", 1500),
        ("QNLI", "qnli", "validation", 5463),
        ("MRPC", "mrpc", "train", 3668),
        ("CoLA", "cola", "validation", 1043),
        ("RTE", "rte", "validation", 277),
        ("MNLI", "mnli", "validation_matched", 9815),
    ],
)
def test_real_glue_files_give_the_official_row_counts(folder, task, split, rows):
    ds = get_task(task).read_local(shared_data("glue", folder))
    assert len(ds[split]) == rows


def test_real_mnli_jsonl_label_counts():
    ds = get_task("mnli").read_local(shared_data("glue", "MNLI"))["validation_matched"]
    assert np.bincount(ds["label"]).tolist() == [3479, 3123, 3213]  # entailment, neutral, contradiction
