"""Issue 44 item 1: ``--train_file`` / ``--validation_file`` / ``--test_file`` (CSV, TSV, JSON Lines) for every task
family, column names from ``--text_column_names`` / ``--label_column_name`` or the task's; errors that name the file,
the columns found and those expected. Files are small literals written here."""

import json
from types import SimpleNamespace

import pytest

from hf_bert_tasks.tasks import get_task


def data_args(**given):
    """The ``DataArguments`` fields ``Task.configure`` reads, defaults as the recipe's."""
    defaults = {
        "train_file": None,
        "validation_file": None,
        "test_file": None,
        "text_column_names": None,
        "label_column_name": None,
        "label_list": None,
        "doc_stride": 128,
        "max_query_length": 64,
        "n_best_size": 20,
        "max_answer_length": 30,
        "null_score_diff_threshold": None,
        "label_all_tokens": False,
        "document_context": False,
        "max_seq_length": 384,
    }
    return SimpleNamespace(**{**defaults, **given})


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_csv_with_own_column_names_reads_labels_by_name_and_id(tmp_path):
    train = write(tmp_path / "reviews.csv", 'review,mood\nA fine film,positive\n"dull, long",negative\nWarm,1\n')
    task = get_task("sst2").configure(
        data_args(train_file=train, text_column_names="review", label_column_name="mood")
    )
    rows = task.load()["train"]
    assert rows["sentence"] == ["A fine film", "dull, long", "Warm"]
    assert rows["label"] == [1, 0, 1]
    assert rows.features["label"].names == ["negative", "positive"]


def test_tsv_pair_task_with_default_columns(tmp_path):
    dev = write(
        tmp_path / "dev.tsv",
        "sentence1\tsentence2\tlabel\nA cat sat.\tA cat was sitting.\tequivalent\nIt rained.\tShe sang.\t0\n",
    )
    rows = get_task("mrpc").configure(data_args(validation_file=dev)).load()["validation"]
    assert rows["sentence2"] == ["A cat was sitting.", "She sang."]
    assert rows["label"] == [1, 0]


def test_jsonl_test_file_without_labels_is_unlabelled(tmp_path):
    test = write(tmp_path / "test.jsonl", '{"sentence": "Great"}\n{"sentence": "Awful"}\n')
    rows = get_task("sst2").configure(data_args(test_file=test)).load()
    assert list(rows) == ["test"]
    assert rows["test"]["label"] == [-1, -1]


def test_stsb_scores_are_floats(tmp_path):
    train = write(tmp_path / "pairs.csv", "a,b,score\nOne dog.,A dog.,4.5\nRain.,Sun.,0.25\n")
    task = get_task("stsb").configure(data_args(train_file=train, text_column_names="a,b", label_column_name="score"))
    assert task.load()["train"]["label"] == pytest.approx([4.5, 0.25])


def test_missing_column_names_file_found_and_expected(tmp_path):
    train = write(tmp_path / "mine.csv", "text,sentiment\nok,positive\n")
    with pytest.raises(ValueError) as err:
        get_task("sst2").configure(data_args(train_file=train)).load()
    message = str(err.value)
    assert "mine.csv" in message and "['text', 'sentiment']" in message and "['sentence', 'label']" in message


def test_dev_label_outside_the_train_labels_names_line_and_label_set(tmp_path):
    train = write(tmp_path / "mine.csv", "sentence,label\nok,positive\nhmm,negative\n")
    dev = write(tmp_path / "dev.csv", "sentence,label\nfine,positive\nhmm,neutral\n")
    with pytest.raises(ValueError, match=r"dev.csv, line 3: label 'neutral'.*negative, positive"):
        get_task("sst2").configure(data_args(train_file=train, validation_file=dev)).load()


def test_train_labels_that_are_not_the_tasks_become_the_label_set_sorted(tmp_path):
    """run_glue.py's rule for a user's labels: the train file's distinct labels, sorted, are the ids."""
    train = write(tmp_path / "three.csv", "sentence,label\nok,positive\nhmm,neutral\nbad,negative\n")
    task = get_task("sst2").configure(data_args(train_file=train))
    rows = task.load()["train"]
    assert task.label_names == ("negative", "neutral", "positive")
    assert rows["label"] == [2, 1, 0]
    assert task.model_config_kwargs()["id2label"] == {0: "negative", 1: "neutral", 2: "positive"}
    assert get_task("sst2").label_names == ("negative", "positive")  # the registry's task is not changed


def test_label_list_gives_the_ids_in_its_order(tmp_path):
    train = write(tmp_path / "three.csv", "sentence,label\nok,pos\nbad,neg\n")
    task = get_task("sst2").configure(data_args(train_file=train, label_list="pos,neg"))
    assert task.load()["train"]["label"] == [0, 1]
    assert task.label_names == ("pos", "neg")


def test_binary_f1_task_with_three_labels_is_refused(tmp_path):
    train = write(tmp_path / "pairs.csv", "sentence1,sentence2,label\na,b,yes\nc,d,no\ne,f,maybe\n")
    with pytest.raises(ValueError, match=r"pairs.csv: labels \['maybe', 'no', 'yes'\]; task 'mrpc' is scored with"):
        get_task("mrpc").configure(data_args(train_file=train)).load()


def test_training_row_without_label_is_an_error(tmp_path):
    train = write(tmp_path / "mine.csv", "sentence,label\nok,\n")
    with pytest.raises(ValueError, match=r"mine.csv, line 2: no label"):
        get_task("sst2").configure(data_args(train_file=train)).load()


def test_unknown_extension_is_an_error(tmp_path):
    train = write(tmp_path / "mine.xlsx", "x")
    with pytest.raises(ValueError, match=r"mine.xlsx: extension '.xlsx'; task 'sst2' reads .csv / .tsv \(a header"):
        get_task("sst2").configure(data_args(train_file=train)).load()


def test_too_many_text_column_names(tmp_path):
    with pytest.raises(ValueError, match="--text_column_names a,b: 2 names, task 'sst2' has 1"):
        get_task("sst2").configure(data_args(train_file="x.csv", text_column_names="a,b"))


def test_data_dir_and_files_together_are_an_error(tmp_path):
    train = write(tmp_path / "t.csv", "sentence,label\nok,1\n")
    with pytest.raises(ValueError, match="both given"):
        get_task("sst2").configure(data_args(train_file=train)).load(data_dir=str(tmp_path))


def test_swag_csv_with_own_columns(tmp_path):
    train = write(tmp_path / "mc.csv", "ctx,lead,e0,e1,e2,e3,gold\nA man,picks up a,box.,cloud.,song.,Tuesday.,0\n")
    task = get_task("swag").configure(
        data_args(train_file=train, text_column_names="ctx,lead,e0,e1,e2,e3", label_column_name="gold")
    )
    row = task.load()["train"][0]
    assert (row["sent1"], row["sent2"], row["ending3"], row["label"]) == ("A man", "picks up a", "Tuesday.", 0)


def test_swag_label_out_of_range(tmp_path):
    train = write(tmp_path / "mc.csv", "sent1,sent2,ending0,ending1,ending2,ending3,label\nA,b,c,d,e,f,4\n")
    with pytest.raises(ValueError, match=r"mc.csv, line 2: label '4'; expected 0, 1, 2 or 3"):
        get_task("swag").configure(data_args(train_file=train)).load()


@pytest.mark.parametrize(
    ("tags", "expected"),
    [(["B-PER", "O", "B-LOC"], ["B-PER", "O", "B-LOC"]), ([3, 0, 5], ["B-ORG", "O", "B-LOC"])],
    ids=["names", "ids"],
)
def test_ner_jsonl_tags_by_name_or_id(tmp_path, tags, expected):
    """A file's tags are names or ids (one kind per file: datasets 4's JSON reader refuses a column of both)."""
    rows = [{"tokens": ["Mara", "visited", "Oslo"], "ner_tags": tags}]
    dev = write(tmp_path / "ner.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    split = get_task("conll2003").configure(data_args(validation_file=dev)).load()["validation"]
    names = split.features["ner_tags"].feature.names
    assert [[names[i] for i in row] for row in split["ner_tags"]] == [expected]


def test_ner_tags_of_another_length(tmp_path):
    dev = write(tmp_path / "ner.jsonl", json.dumps({"tokens": ["a", "b"], "ner_tags": ["O"]}) + "\n")
    with pytest.raises(ValueError, match=r"ner.jsonl, line 1: 2 tokens but 1 tags"):
        get_task("conll2003").configure(data_args(validation_file=dev)).load()


def test_squad_jsonl_answers_checked_against_context(tmp_path):
    context = "The letter was signed by Ines in May."
    good = {
        "id": "a",
        "question": "Who signed?",
        "context": context,
        "answers": {"text": ["Ines"], "answer_start": [25]},
    }
    bad = dict(good, id="b", answers={"text": ["Ines"], "answer_start": [3]})
    path = write(tmp_path / "qa.jsonl", json.dumps(good) + "\n")
    split = get_task("squad_v1").configure(data_args(train_file=path)).load()["train"]
    assert split["answers"] == [{"text": ["Ines"], "answer_start": [25]}]
    write(tmp_path / "qa.jsonl", json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(ValueError, match="does not match the context"):
        get_task("squad_v1").configure(data_args(train_file=path)).load()


def test_tasks_command_shows_columns_and_labels(capsys):
    from hf_bert_tasks.cli import main

    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    assert "columns: sentence1, sentence2, label; label: not_equivalent, equivalent" in out
    assert "--train_file" in out


def test_finetune_on_own_csv_files_end_to_end(tiny_bert_dir, tmp_path):
    """Labels the task does not know (pos / neg) train as the file's own label set: config.json names them."""
    from hf_bert_tasks.finetune.recipe import main

    lines = [f"{w} film,{lab}\n" for w, lab in [("good", "pos"), ("bad", "neg"), ("bad", "neg")] * 4]
    train = write(tmp_path / "train.csv", "text,y\n" + "".join(lines))
    dev = write(tmp_path / "dev.csv", "text,y\n" + "".join(lines[:6]))
    out = tmp_path / "out"
    metrics = main(
        [
            "--task",
            "sst2",
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--train_file",
            train,
            "--validation_file",
            dev,
            "--text_column_names",
            "text",
            "--label_column_name",
            "y",
            "--max_steps",
            "2",
            "--per_device_train_batch_size",
            "4",
            "--no_cache_tokenized",
        ]
    )
    results = json.loads((out / "all_results.json").read_text())
    assert results["eval_samples"] == 6
    assert "eval_accuracy" in metrics
    assert results["baseline_accuracy"] == pytest.approx(4 / 6)  # "neg" is 4 of the 6 dev rows
    config = json.loads((out / "config.json").read_text())
    assert config["id2label"] == {"0": "neg", "1": "pos"}
    from hf_bert_tasks.finetune.card import build_finetune_card

    head = str(build_finetune_card(str(out))).split("## Results")[0]
    assert "Single label classification as task 'sst2', on the user's own data; labels neg, pos." in head
    assert "Stanford" not in head and "SST-2" not in head


def test_idx_that_is_not_an_integer_names_its_line(tmp_path):
    train = write(tmp_path / "i.csv", "idx,sentence,label\n0,ok,positive\nseven,hmm,negative\n")
    with pytest.raises(ValueError, match=r"i\.csv, line 3: idx 'seven' is not an integer"):
        get_task("sst2").configure(data_args(train_file=train)).load()


def test_card_after_max_eval_samples_states_the_subset_and_the_baseline(tiny_bert_dir, tmp_path):
    from hf_bert_tasks.finetune.card import build_finetune_card
    from hf_bert_tasks.finetune.recipe import main

    rows = "".join(f"{w} film,{lab}\n" for w, lab in [("good", "positive"), ("bad", "negative")] * 5)
    train = write(tmp_path / "train.csv", "text,y\n" + rows)
    dev = write(tmp_path / "dev.csv", "text,y\n" + rows)
    out = tmp_path / "out"
    main(
        [
            "--task",
            "sst2",
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--train_file",
            train,
            "--validation_file",
            dev,
            "--text_column_names",
            "text",
            "--label_column_name",
            "y",
            "--max_steps",
            "1",
            "--max_eval_samples",
            "3",
            "--no_cache_tokenized",
        ]
    )
    card = build_finetune_card(str(out))
    result = card.data.eval_results[0]
    assert (result.dataset_split, result.dataset_args, result.dataset_type) == (
        "validation[:3]",
        {"num_examples": 3},
        "csv",
    )
    assert result.dataset_name == "dev.csv (user file)" and card.data.datasets is None
    text = str(card)
    assert "validation: trivial baseline" in text and "0.6667" in text  # 2 of the first 3 dev rows are positive
    assert "scored on 3 validation examples" in text and "a subset, not the full split" in text
    assert "same splits" not in text and "Ours beside the BERT paper" not in text, text
    assert "OptimizerNames" not in text, text
    assert train not in text and dev not in text  # file names, not local paths


def test_a_misspelt_column_gets_the_closest_column_of_the_file(tmp_path):
    train = write(tmp_path / "mine.csv", "sentense,label\nok,1\n")
    with pytest.raises(ValueError, match=r"column\(s\) \['sentence'\] not found \(did you mean 'sentense'\?\)"):
        get_task("sst2").configure(data_args(train_file=train)).load()


def test_a_misspelt_column_flag_gets_the_closest_column_of_the_file(tmp_path):
    train = write(tmp_path / "mine.csv", "review,mood\nok,positive\n")
    with pytest.raises(ValueError, match=r"\['reveiw'\] not found \(did you mean 'review'\?\)"):
        get_task("sst2").configure(
            data_args(train_file=train, text_column_names="reveiw", label_column_name="mood")
        ).load()


def test_a_column_only_loosely_alike_gets_no_hint(tmp_path):
    # 'sentiment' is close to 'sentence' only by difflib's 0.71 (< 0.75): no hint, as for the bad-inputs case
    train = write(tmp_path / "mine.csv", "text,sentiment\nok,positive\n")
    with pytest.raises(ValueError, match=r"\['sentence', 'label'\] not found; found"):
        get_task("sst2").configure(data_args(train_file=train)).load()


def test_squad_reads_no_csv_and_says_what_it_reads(tmp_path):
    train = write(tmp_path / "qa.csv", "question,context,answers\nq,c,a\n")
    with pytest.raises(ValueError, match=r"task 'squad_v1' reads \.json \(official SQuAD JSON, or JSON Lines\)"):
        get_task("squad_v1").configure(data_args(train_file=train)).load()


def test_every_family_declares_the_formats_its_reader_takes():
    assert list(get_task("sst2").describe()["user_file_formats"]) == [".csv", ".tsv", ".json", ".jsonl"]
    assert list(get_task("squad_v2").describe()["user_file_formats"]) == [".json", ".jsonl"]
    assert list(get_task("conll2003").describe()["user_file_formats"]) == [
        ".txt",
        ".conll",
        ".iob",
        ".bio",
        ".bioes",
        ".train",
        ".testa",
        ".testb",
        ".json",
        ".jsonl",
    ]


def test_a_glue_file_with_a_misspelt_header_gets_the_closest_column(tmp_path):
    write(tmp_path / "train.tsv", "sentense\tlabel\nok\t1\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['sentence'\] \(did you mean 'sentense'\?\)"):
        get_task("sst2").read_local(str(tmp_path))


def test_a_swag_file_with_a_misspelt_header_gets_the_closest_column(tmp_path):
    header = "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,endng3,label"
    write(tmp_path / "train.csv", header + "\nv,1,a b,a,b,gold,w,x,y,z,0\n")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['ending3'\] \(did you mean 'endng3'\?\)"):
        get_task("swag").read_local(str(tmp_path))
