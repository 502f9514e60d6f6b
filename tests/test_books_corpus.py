"""Book corpora (issue 43 item 1): paragraphs split into sentences by rule, xz shards read through datasets."""

import lzma

import pytest

from hf_bert_tasks.pretraining.documents import read_documents, resolve_corpus_files, split_into_sentences


def test_titles_before_a_name_do_not_end_a_sentence():
    assert split_into_sentences("Mr. Smith met Dr. Watson and Mrs. Hudson. They talked.") == [
        "Mr. Smith met Dr. Watson and Mrs. Hudson.",
        "They talked.",
    ]


def test_latin_short_forms_and_dotted_letters_do_not_end_a_sentence():
    assert split_into_sentences("Bring fruit, e.g. plums, i.e. small ones. The U.S. Army came at 5 p.m. in rain.") == [
        "Bring fruit, e.g. plums, i.e. small ones.",
        "The U.S. Army came at 5 p.m. in rain.",
    ]


def test_dotted_letters_before_a_capital_are_kept_known_limit():
    # ambiguous without a model ("in the U.S. Then ..."); kept together, as pysbd does for "U.S. Army"
    assert split_into_sentences("They came at 5 p.m. Then it rained.") == ["They came at 5 p.m. Then it rained."]


def test_an_initial_does_not_end_a_sentence():
    assert split_into_sentences("A letter from J. Carver arrived. It was short.") == [
        "A letter from J. Carver arrived.",
        "It was short.",
    ]


def test_a_quotation_followed_by_a_lower_case_word_continues_the_sentence():
    assert split_into_sentences('"Is it late?" she asked. "No!" he said, "not yet."') == [
        '"Is it late?" she asked.',
        '"No!" he said, "not yet."',
    ]


def test_a_closing_quote_after_the_stop_stays_with_its_sentence():
    assert split_into_sentences("He said, 'Wait here.' Then he went out.") == [
        "He said, 'Wait here.'",
        "Then he went out.",
    ]


def test_runs_of_stops_stay_whole():
    assert split_into_sentences("What?! You sold it?! Yes... and no. Fine.") == [
        "What?!",
        "You sold it?!",
        "Yes... and no.",
        "Fine.",
    ]


def test_number_abbreviations_hold_only_before_a_digit():
    assert split_into_sentences("See No. 7 and vol. 2. I said no. Then I left.") == [
        "See No. 7 and vol. 2.",
        "I said no.",
        "Then I left.",
    ]


def test_a_decimal_number_is_not_a_sentence_end():
    assert split_into_sentences("It cost 2.50 pounds. We paid.") == ["It cost 2.50 pounds.", "We paid."]


def test_text_without_a_stop_is_one_sentence_and_blank_text_none():
    assert split_into_sentences("  no stop at all  ") == ["no stop at all"]
    assert split_into_sentences(" \t ") == []


def _xz(path, text: str) -> str:
    with lzma.open(path, "wt", encoding="utf-8") as f:
        f.write(text)
    return str(path)


def test_xz_book_shard_gives_one_document_per_book_one_sentence_per_item(tmp_path):
    shard = _xz(
        tmp_path / "books-000.txt.xz",
        "THE FIRST BOOK\nMr. Gray woke early. He ate.\nIt rained.\n\nSECOND BOOK\nA short one! Done.\n",
    )
    assert read_documents(shard, document_boundary="blank_line", split_sentences=True) == [
        ["THE FIRST BOOK", "Mr. Gray woke early.", "He ate.", "It rained."],
        ["SECOND BOOK", "A short one!", "Done."],
    ]


def test_xz_text_boundary_auto_detects_blank_lines_inside_the_compressed_file(tmp_path):
    shard = _xz(tmp_path / "b.txt.xz", "One. Two.\n\nThree.\n")
    assert read_documents(shard) == [["One. Two."], ["Three."]]


def test_bad_bytes_in_an_xz_file_are_named_by_file_and_line(tmp_path):
    path = tmp_path / "bad.txt.xz"
    with lzma.open(path, "wb") as f:
        f.write(b"fine line\n\xff broken\n")
    with pytest.raises(ValueError, match=r"bad.txt.xz:2: not valid utf-8"):
        read_documents(str(path))


def test_zstd_and_compressed_parquet_are_refused_by_name(tmp_path):
    for name in ("c.txt.zst", "c.parquet.gz"):
        (tmp_path / name).write_bytes(b"x")
        with pytest.raises(ValueError, match=name.replace(".", r"\.") + ": this compression is not read"):
            resolve_corpus_files(str(tmp_path / name))


def test_validation_files_are_the_held_out_set_and_every_training_document_is_trained_on(tmp_path):
    from hf_bert_tasks.pretraining.config import PretrainDataArguments
    from hf_bert_tasks.pretraining.recipe import _corpus

    train = tmp_path / "train.txt"
    train.write_text("a one.\na two.\n\nb one.\nb two.\n\nc one.\nc two.\n")
    held = tmp_path / "heldout.txt"
    held.write_text("h one.\nh two.\n")
    args = PretrainDataArguments(
        train_files=[str(train)],
        validation_files=[str(held)],
        validation_split_percentage=50,
        dataset_cache_dir=str(tmp_path / "cache"),
    )
    train_docs, eval_docs, summary = _corpus(args, seed=0)
    assert train_docs["sentences"] == [["a one.", "a two."], ["b one.", "b two."], ["c one.", "c two."]]
    assert eval_docs["sentences"] == [["h one.", "h two."]]
    assert (summary["train_documents"], summary["eval_documents"]) == (3, 1)


def test_a_missing_validation_file_is_named_with_its_flag(tmp_path):
    from hf_bert_tasks.pretraining.config import PretrainDataArguments
    from hf_bert_tasks.pretraining.recipe import _corpus

    train = tmp_path / "train.txt"
    train.write_text("a one.\na two.\n\nb one.\n")
    args = PretrainDataArguments(
        train_files=[str(train)],
        validation_files=[str(tmp_path / "held*.txt")],
        dataset_cache_dir=str(tmp_path / "cache"),
    )
    with pytest.raises(FileNotFoundError, match=r"--validation_files: .*held\*\.txt does not exist"):
        _corpus(args, seed=0)


def test_pretrain_cli_names_a_missing_validation_file_before_reading_the_corpus(capsys, tmp_path):
    from hf_bert_tasks import cli

    train = tmp_path / "train.txt"
    train.write_text("a one.\n\nb one.\n")
    argv = [
        "pretrain",
        "--train_files",
        str(train),
        "--validation_files",
        str(tmp_path / "none.txt"),
        "--output_dir",
        str(tmp_path / "out"),
    ]
    assert cli.main(argv) == 2
    assert capsys.readouterr().err == (
        f"hf-bert-tasks: error: --validation_files: {tmp_path / 'none.txt'} does not exist (no file matches)\n"
    )
