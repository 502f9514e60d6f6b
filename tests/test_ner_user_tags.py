"""Issue 54 item 2: NER from a user's own files takes its tag set from the data (IOB2, IOB1, BIOES / BILOU tags;
``--label_list`` or the train file's tags, ``O`` first then the types sorted), reads ``token tag`` and
``token _ _ tag`` CoNLL files, and ``config.json``, the metrics (seqeval in the tags' scheme), the pipeline and the
card use the user's tags. Files are small literals written here."""

import json
from types import SimpleNamespace

import pytest

from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.conll2003.metrics import entity_metrics


def data_args(**given):
    """The ``DataArguments`` fields ``Task.configure`` reads, defaults as the recipe's."""
    defaults = {"train_file": None, "validation_file": None, "test_file": None, "label_list": None}
    return SimpleNamespace(**{**defaults, "label_all_tokens": False, "document_context": False, **given})


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def tags_of(task, split):
    return [[task.label_names[i] for i in row] for row in split["ner_tags"]]


TWO_COLUMNS = "Mara B-PER\nvisited O\nOslo B-LOC\n\nLe B-PER\nMans I-PER\n"


def test_two_column_file_gives_its_own_tag_set_o_first_then_types_sorted(tmp_path):
    task = get_task("conll2003").configure(data_args(train_file=write(tmp_path / "t.txt", TWO_COLUMNS)))
    train = task.load()["train"]
    assert task.label_names == ("O", "B-LOC", "I-LOC", "B-PER", "I-PER")
    assert train["tokens"] == [["Mara", "visited", "Oslo"], ["Le", "Mans"]]
    assert tags_of(task, train) == [["B-PER", "O", "B-LOC"], ["B-PER", "I-PER"]]
    assert task.model_config_kwargs()["id2label"] == {0: "O", 1: "B-LOC", 2: "I-LOC", 3: "B-PER", 4: "I-PER"}
    assert get_task("conll2003").label_names[:3] == ("O", "B-PER", "I-PER")  # the registry's task is unchanged


def test_placeholder_columns_are_skipped_token_first_tag_last(tmp_path):
    text = "-DOCSTART- _ _ O\n\nMara _ _ B-PERSON\nsang _ _ O\n"
    task = get_task("conll2003").configure(data_args(train_file=write(tmp_path / "p.conll", text)))
    train = task.load()["train"]
    assert train["tokens"] == [["Mara", "sang"]]
    assert tags_of(task, train) == [["B-PERSON", "O"]]
    assert task.label_names == ("O", "B-PERSON", "I-PERSON")


def test_bioes_tags_keep_their_scheme_and_every_prefix(tmp_path):
    text = "Mara S-PER\nin O\nNew B-LOC\nYork E-LOC\n"
    task = get_task("conll2003").configure(data_args(train_file=write(tmp_path / "b.txt", text)))
    train = task.load()["train"]
    assert task.tag_scheme == "IOBES"
    assert task.label_names == ("O", "B-LOC", "I-LOC", "E-LOC", "S-LOC", "B-PER", "I-PER", "E-PER", "S-PER")
    assert tags_of(task, train) == [["S-PER", "O", "B-LOC", "E-LOC"]]


def test_iob1_tags_are_converted_to_iob2(tmp_path):
    text = "Mara I-PER\nand O\nLe I-PER\nMans I-PER\nOslo I-LOC\n"
    task = get_task("conll2003").configure(data_args(train_file=write(tmp_path / "i.txt", text)))
    assert tags_of(task, task.load()["train"]) == [["B-PER", "O", "B-PER", "I-PER", "B-LOC"]]


def test_dev_tag_unseen_in_train_names_tag_file_and_line(tmp_path):
    train = write(tmp_path / "train.txt", TWO_COLUMNS)
    dev = write(tmp_path / "dev.txt", "Acme B-ORG\nrose O\n\nMara B-PER\nleft O\nBonn B-GPE\n")
    task = get_task("conll2003").configure(data_args(train_file=train, validation_file=dev))
    with pytest.raises(ValueError, match=r"dev\.txt, line 1: tag 'B-ORG' is not in the label set \['O', 'B-LOC'"):
        task.load()


def test_label_list_gives_the_ids_in_its_order(tmp_path):
    task = get_task("conll2003").configure(
        data_args(
            train_file=write(tmp_path / "t.txt", TWO_COLUMNS), label_list="O,B-PER,I-PER,B-LOC,I-LOC,B-ORG,I-ORG"
        )
    )
    train = task.load()["train"]
    assert task.label_names == ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
    assert train["ner_tags"][0] == [1, 0, 3]


def test_label_list_without_o_is_refused(tmp_path):
    task = get_task("conll2003").configure(
        data_args(train_file=write(tmp_path / "t.txt", TWO_COLUMNS), label_list="B-PER,I-PER")
    )
    with pytest.raises(ValueError, match=r"--label_list B-PER,I-PER: expected distinct tags, 'O' among them"):
        task.load()


def test_a_line_with_another_number_of_fields(tmp_path):
    path = write(tmp_path / "t.txt", "Mara B-PER\nvisited NN O\n")
    with pytest.raises(ValueError, match=r"t\.txt, line 2: found 3 field\(s\) in 'visited NN O', line 1 has 2"):
        get_task("conll2003").configure(data_args(train_file=path)).load()


def test_a_tag_without_a_prefix_names_its_line(tmp_path):
    path = write(tmp_path / "t.txt", "Mara B-PER\n\nOslo LOC\n")
    with pytest.raises(ValueError, match=r"t\.txt, line 3: tag 'LOC' is not a tag; expected 'O' or a prefix"):
        get_task("conll2003").configure(data_args(train_file=path)).load()


def test_jsonl_tags_as_names_take_the_files_set(tmp_path):
    rows = [{"tokens": ["Mara", "sang"], "ner_tags": ["B-PERSON", "O"]}]
    path = write(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    task = get_task("conll2003").configure(data_args(train_file=path))
    task.load()
    assert task.label_names == ("O", "B-PERSON", "I-PERSON")


def test_a_dev_file_alone_with_conll_tags_keeps_conll_labels(tmp_path):
    """Evaluating a model fine-tuned on CoNLL-2003 on one's own dev file: its 9 labels stay, in the Hub's order."""
    task = get_task("conll2003").configure(data_args(validation_file=write(tmp_path / "d.txt", TWO_COLUMNS)))
    task.load()
    assert len(task.label_names) == 9 and task.label_names[1] == "B-PER"


def test_iobes_scores_are_strict_in_iobes():
    """seqeval strict IOBES: ``B-LOC I-LOC`` without ``E-LOC`` is no entity (counted by hand: 1 of 2 gold entities
    found, 1 predicted)."""
    gold = [["S-PER", "O", "B-LOC", "E-LOC"]]
    pred = [["S-PER", "O", "B-LOC", "I-LOC"]]
    scores = entity_metrics(gold, pred, mode="strict", scheme="IOBES")
    assert (scores["precision"], scores["recall"]) == (1.0, 0.5)
    assert entity_metrics(gold, gold, mode="strict", scheme="IOBES")["f1"] == 1.0


def test_finetune_on_a_per_loc_file_saves_its_tags_scores_them_and_cards_them(tiny_bert_dir, tmp_path):
    from transformers import pipeline

    from hf_bert_tasks.finetune.card import build_finetune_card
    from hf_bert_tasks.finetune.recipe import main

    sentences = [("nadia", "castle"), ("hiro", "village"), ("priya", "orchard"), ("ines", "valley")] * 2
    text = "".join(f"{p} B-PER\nfound O\nthe O\nmap O\nnear O\n{q} B-LOC\n. O\n\n" for p, q in sentences)
    train = write(tmp_path / "train.txt", text)
    dev = write(tmp_path / "dev.txt", text)
    out = tmp_path / "out"
    argv = ["--task", "conll2003", "--model_name_or_path", tiny_bert_dir, "--output_dir", str(out)]
    argv += ["--train_file", train, "--validation_file", dev, "--max_steps", "2", "--max_seq_length", "24"]
    main(argv + ["--per_device_train_batch_size", "4", "--no_cache_tokenized", "--disable_tqdm", "true"])
    config = json.loads((out / "config.json").read_text())
    assert config["id2label"] == {"0": "O", "1": "B-LOC", "2": "I-LOC", "3": "B-PER", "4": "I-PER"}
    results = json.loads((out / "all_results.json").read_text())
    assert results["eval_PER_number"] == 8 and results["eval_LOC_number"] == 8
    assert not [k for k in results if "ORG" in k or "MISC" in k]
    card = str(build_finetune_card(str(out)))
    head = card.split("## Results")[0].split("---\n", 2)[2]
    assert "entity types LOC, PER (tags O, B-LOC, I-LOC, B-PER, I-PER; IOB2)" in head
    assert "CoNLL-2003" not in head and "ORG" not in head
    entities = pipeline("token-classification", model=str(out))("nadia found the map near the castle .")
    assert {e["entity"] for e in entities} <= {"B-LOC", "I-LOC", "B-PER", "I-PER"}
