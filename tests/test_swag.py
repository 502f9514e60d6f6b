"""SWAG task: swagaf CSV reader, 4-choice features, the multiple-choice collator, unlabelled rows, the recipe."""

import csv
import io
import json
import random

import numpy as np
import pytest

from hf_bert_tasks.finetune import recipe as finetune
from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.swag import multiple_choice_collator, read_swag_csv, swag_features
from tests.conftest import build_learnable_bert, majority_accuracy, tiny_run_argv

HEADER = ",video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label\n"
ROWS = (
    '0,clip_a,11,the cat sat. the dog,the cat sat.,the dog,gold,ran.,"sat on the mat, not the rug.",is good.,'
    "was bad.,1\n"
    "1,clip_b,12,he ran. she,he ran.,she,gen,sat.,ran to the dog.,is not.,was good.,0\n"
)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_reader_parses_quoted_endings_and_labels(tmp_path):
    cols = read_swag_csv(write(tmp_path, "val.csv", HEADER + ROWS))
    assert cols["video-id"] == ["clip_a", "clip_b"] and cols["fold-ind"] == ["11", "12"]
    assert cols["sent1"] == ["the cat sat.", "he ran."] and cols["sent2"] == ["the dog", "she"]
    assert cols["ending1"] == ["sat on the mat, not the rug.", "ran to the dog."]
    assert cols["label"] == [1, 0]


def test_test_file_without_label_column_reads_as_unlabelled(tmp_path):
    header = HEADER.replace(",label\n", "\n")
    rows = "".join(line.rsplit(",", 1)[0] + "\n" for line in ROWS.splitlines())
    cols = read_swag_csv(write(tmp_path, "test.csv", header + rows))
    assert cols["label"] == [-1, -1] and cols["ending3"] == ["was bad.", "was good."]


def test_row_with_missing_fields_names_file_and_line(tmp_path):
    path = write(tmp_path, "train.csv", HEADER + ROWS + "2,clip_c,13,x,x,y,gold,a,b\n")
    with pytest.raises(ValueError, match=r"train\.csv, line 4: found 9 field\(s\), the header has 12"):
        read_swag_csv(path)


def test_label_out_of_range_names_file_line_and_field(tmp_path):
    path = write(tmp_path, "train.csv", HEADER + ROWS.replace("was good.,0", "was good.,4"))
    with pytest.raises(ValueError, match=r"train\.csv, line 3: field 'label' = '4'"):
        read_swag_csv(path)


def test_header_without_endings_is_an_error(tmp_path):
    with pytest.raises(ValueError, match=r"line 1: header lacks column\(s\) \['ending3'\]"):
        read_swag_csv(write(tmp_path, "val.csv", "sent1,sent2,ending0,ending1,ending2,label\na,b,c,d,e,0\n"))


def test_a_column_error_lists_the_columns_found(tmp_path):
    with pytest.raises(ValueError, match=r"found \['sent1', 'sent2', 'ending0', 'ending1', 'ending2', 'label'\]"):
        read_swag_csv(write(tmp_path, "val.csv", "sent1,sent2,ending0,ending1,ending2,label\na,b,c,d,e,0\n"))


def _dataset(labels):
    import datasets

    cols = {c: ["", ""] for c in swag_features()}
    cols.update(
        {
            "sent1": ["the cat sat .", "he ran ."],
            "sent2": ["the dog", "she"],
            "ending0": ["ran .", "sat ."],
            "ending1": ["sat on the mat .", "ran ."],
            "ending2": ["is good .", "is not ."],
            "ending3": ["was bad .", "was good ."],
            "label": labels,
        }
    )
    return datasets.Dataset.from_dict(cols, features=swag_features())


def test_each_example_becomes_four_pair_sequences(vocab_tokenizer):
    features = get_task("swag").preprocess(_dataset([1, 0]), vocab_tokenizer, 128, "validation")
    first = features[0]
    assert len(first["input_ids"]) == 4
    # [CLS] the cat sat . [SEP] the dog sat on the mat . [SEP]   (sent1 | sent2 + " " + ending1)
    assert first["input_ids"][1] == [2, 5, 7, 9, 14, 3, 5, 8, 9, 10, 5, 11, 14, 3]
    assert first["token_type_ids"][1] == [0] * 6 + [1] * 8
    assert vocab_tokenizer.decode(first["input_ids"][0]) == "[CLS] the cat sat. [SEP] the dog ran. [SEP]"
    assert features["label"] == [1, 0]


def test_collator_gives_batch_choices_length_tensors(vocab_tokenizer):
    features = get_task("swag").preprocess(_dataset([1, 0]), vocab_tokenizer, 128, "train")
    batch = multiple_choice_collator(vocab_tokenizer)([features[0], features[1]])
    assert tuple(batch["input_ids"].shape) == (2, 4, 14)
    assert batch["labels"].tolist() == [1, 0]
    assert batch["attention_mask"][1, 0].tolist() == [1] * 9 + [0] * 5  # "[CLS] he ran . [SEP] she sat . [SEP]"


def test_unlabelled_rows_are_ignored_by_loss_and_accuracy(vocab_tokenizer):
    task = get_task("swag")
    mixed = task.preprocess(_dataset([2, -1]), vocab_tokenizer, 128, "validation")
    assert mixed["label"] == [2, -100]
    assert task.compute_metrics(np.array([2, 0]), np.array([2, -100])) == {"accuracy": 1.0}
    unlabelled = task.preprocess(_dataset([-1, -1]), vocab_tokenizer, 128, "test")
    assert "label" not in unlabelled.column_names
    batch = multiple_choice_collator(vocab_tokenizer)([unlabelled[0], unlabelled[1]])
    assert "labels" not in batch and tuple(batch["input_ids"].shape) == (2, 4, 14)


# Learnable SWAG fixture: "<name> walked to the <place> ." / "then <name>" + four endings, of which exactly one is
# sensible (from SENSIBLE) and three are absurd (from ABSURD); the gold position varies. Pools written for this test.
NAMES = ["nadia", "hiro", "priya", "ines", "omar", "greta"]
PLACES = ["market", "harbour", "museum", "garden", "station"]
SENSIBLE = ["opened the door .", "sat on a bench .", "bought some bread .", "waved to a friend .", "read the sign ."]
ABSURD = ["ate the moon .", "turned into rain .", "folded the river .", "sang to a brick .", "drank the road ."]


def _swag_rows(n: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        name, label = rng.choice(NAMES), rng.randrange(4)
        endings = rng.sample(ABSURD, 3)
        endings.insert(label, rng.choice(SENSIBLE))
        rows.append(
            [
                str(i),
                f"clip_{seed}_{i}",
                str(i),
                "",
                f"{name} walked to the {rng.choice(PLACES)} .",
                f"then {name}",
                "gold",
                *endings,
                str(label),
            ]
        )
    return rows


def _swag_dir(tmp_path):
    header = HEADER.strip().split(",")
    splits = (
        ("train.csv", _swag_rows(64, 0), True),
        ("val.csv", _swag_rows(32, 1), True),
        ("test.csv", _swag_rows(8, 2), False),
    )
    for name, part, labelled in splits:
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(header if labelled else header[:-1])
        writer.writerows(r if labelled else r[:-1] for r in part)
        (tmp_path / name).write_text(buf.getvalue(), encoding="utf-8")
    return tmp_path


def test_recipe_learns_evaluates_and_writes_predicted_endings(tmp_path):
    data = _swag_dir(tmp_path)
    texts = [" ".join(row[4:11]) for row in _swag_rows(64, 0) + _swag_rows(32, 1) + _swag_rows(8, 2)]
    out = tmp_path / "out"
    results = finetune.main(
        tiny_run_argv(
            "swag",
            build_learnable_bert(tmp_path / "bert", texts),
            out,
            data_dir=data,
            num_train_epochs=8,
            learning_rate="3e-3",
            seed=0,
            eval_strategy="no",
            disable_tqdm="true",
            max_seq_length=24,
        )
    )  # 64 examples, the paper's batch 16: 32 steps
    saved = json.loads((out / "all_results.json").read_text())
    dev_labels = [int(row[-1]) for row in _swag_rows(32, 1)]
    baseline = max(0.25, majority_accuracy(dev_labels))  # chance, or always the most frequent gold position
    # measured accuracy 1.0 with model seeds 0, 1, 2 (OMP_NUM_THREADS unset and 1)
    assert saved["eval_accuracy"] >= baseline + 0.4
    assert saved["eval_samples"] == 32 and saved["train_samples"] == 64
    assert results["eval_accuracy"] == saved["eval_accuracy"]
    args = json.loads((out / "trainer_state.json").read_text())
    assert args["train_batch_size"] == 16  # the paper's SWAG default (lr 2e-5, batch 16, 3 epochs)
    with open(out / "test_predictions.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["video-id"] for r in rows] == [f"clip_2_{i}" for i in range(8)]
    test_raw = get_task("swag").load(str(data))["test"]
    for row, raw in zip(rows, test_raw):
        assert row["ending"] == raw[f"ending{row['label']}"]
    # the written test predictions follow the rule too (gold known by construction; 1 of 8 may miss)
    gold = [int(r[-1]) for r in _swag_rows(8, 2)]
    assert sum(int(r["label"]) == g for r, g in zip(rows, gold)) >= 7


@pytest.mark.slow
def test_real_swag_rows_read_as_they_are():
    """Issue 43 item 5: the head of SWAG's regular train.csv (UTF-8 BOM, an unnamed index column) reads unchanged;
    expected values from Python's csv module on the same file."""
    import csv
    from collections import Counter

    from hf_bert_tasks.tasks import get_task
    from tests.conftest import shared_data

    path = shared_data("swag", "train.head999.csv")
    with open(path, encoding="utf-8-sig", newline="") as f:
        records = list(csv.DictReader(f))
    split = get_task("swag").read_file(path, "train")
    assert len(split) == len(records) == 999
    assert "" not in split.column_names and "_0" not in split.column_names  # the index column is not kept
    for column in ("video-id", "sent1", "sent2", "ending0", "ending3"):
        assert split[column] == [r[column] for r in records], column
    assert Counter(split["label"]) == Counter(int(r["label"]) for r in records)
