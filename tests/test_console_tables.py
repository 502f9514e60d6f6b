"""Issue 58 item 1: the tables the CLI prints fit the terminal (80 columns when unknown) and break no word
(:mod:`hf_bert_tasks.console`), captured as a person sees them."""

import json
import re

import pytest

from hf_bert_tasks.console import close_names, column_widths, render_table, terminal_width, wrap_words


def words(text: str) -> set[str]:
    """The unbreakable words of ``text`` (runs between spaces and ``/``), a trailing comma dropped."""
    return {w.rstrip(",") for w in re.split(r"[ /]+", text) if w}


def test_wrap_breaks_after_spaces_and_path_separators_only():
    assert wrap_words("--seeds 1,2,3", 10) == ["--seeds", "1,2,3"]
    assert wrap_words("dev_mismatched.jsonl, train.tsv", 22) == ["dev_mismatched.jsonl,", "train.tsv"]
    assert wrap_words("runs/compare/conll2003/seed1", 14) == ["runs/compare/", "conll2003/", "seed1"]


def test_a_word_wider_than_the_column_stands_alone_unbroken():
    assert wrap_words("a single_label_classification b", 10) == ["a", "single_label_classification", "b"]


def test_wrap_keeps_the_text_and_its_line_breaks():
    assert wrap_words("one two\nthree", 80) == ["one two", "three"]
    assert wrap_words("", 5) == [""]


def test_columns_keep_their_natural_width_when_they_fit():
    assert column_widths(("a", "bb"), [("xxx", "y")], 80) == [3, 2]


def test_columns_shrink_to_the_width_but_not_below_their_longest_word():
    widths = column_widths(("name", "files"), [("mnli", "dev_matched.tsv, dev_mismatched.tsv, train.tsv")], 30)
    assert widths == [4, 24]  # 4 + 2 spaces + 24 = 30; "dev_mismatched.tsv," (19) still fits unbroken


def test_too_narrow_a_terminal_gives_a_block_per_row():
    lines = render_table(("task", "problem type"), [("cola", "single_label_classification")], width=20)
    assert lines == ["cola", "  problem type:", "  single_label_classification"]


def test_notes_are_wrapped_under_their_row_with_a_hanging_indent():
    lines = render_table(("task",), [("cola",)], width=20, notes=[("columns: sentence, label, idx",)])
    assert lines == ["task", "----", "cola", "  columns: sentence,", "    label, idx"]


def test_a_row_of_the_wrong_length_is_an_error():
    with pytest.raises(ValueError, match="row 0 has 1 cells; expected 2"):
        render_table(("a", "b"), [("x",)])


def test_unknown_terminal_width_is_80(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    # pytest captures stdout: no terminal, so shutil.get_terminal_size falls back
    assert terminal_width() == 80


def test_close_names_suggests_one_or_names_each():
    assert close_names(["sentense"], ["label", "sentence"]) == " (did you mean 'sentence'?)"
    assert close_names(["sentense", "lable"], ["label", "sentence"]) == (
        " (did you mean 'sentence' for 'sentense', 'label' for 'lable'?)"
    )
    assert close_names(["zzz"], ["label"]) == ""


@pytest.mark.parametrize("columns", [80, 60, 120])
def test_tasks_table_fits_the_terminal_and_breaks_no_word(capsys, monkeypatch, columns):
    from hf_bert_tasks.cli import main

    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["tasks"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(map(len, lines)) <= columns
    printed = {w for line in lines for w in words(line)}
    for name in ("dev_mismatched.jsonl", "single_label_classification", "train-v1.1.json", "eng.testa"):
        assert name in printed, name  # whole, on one line


def test_tasks_lists_every_format_a_family_reads(capsys, monkeypatch):
    from hf_bert_tasks.cli import main

    monkeypatch.setenv("COLUMNS", "200")
    main(["tasks"])
    out = capsys.readouterr().out
    assert "reads: .json (official SQuAD JSON, or JSON Lines), .jsonl (JSON Lines)" in out
    assert (
        "reads: .txt / .conll / .iob / .bio / .bioes / .train / .testa / .testb (CoNLL columns), .json / .jsonl (JSON Lines)"
        in out
    )
    assert "reads: .csv / .tsv (a header row), .json / .jsonl (JSON Lines)" in out


def test_tasks_json_is_one_parseable_list(capsys):
    from hf_bert_tasks.cli import main

    main(["tasks", "--json"])
    rows = json.loads(capsys.readouterr().out)
    assert rows[-1]["name"] == "squad_v2" and rows[-1]["user_file_formats"][".jsonl"] == "JSON Lines"


def test_finetune_help_names_squad_json_and_conll_txt():
    from hf_bert_tasks.finetune.args import finetune_parser

    help_text = " ".join(finetune_parser().format_help().split())
    assert ".csv, .tsv, .jsonl; SQuAD .json, CoNLL .txt" in help_text


def test_quickstart_table_fits_80_columns_and_keeps_each_verdict_whole():
    from hf_bert_tasks.scripts.quickstart_report import Row, table_lines

    rows = [
        Row("pretraining", "MLM accuracy", 0.41, 0.07, "most frequent WordPiece"),
        Row("fine-tune sst2", "accuracy", 0.55, 0.51, "majority class"),
        Row("pretrained vs random, 160 labels", "accuracy", 0.62, 0.60, "random init", kind="gain"),
    ]
    summary = {"total_wall_seconds": 312.4, "cpu_seconds": 301.0}
    lines = table_lines(rows, summary, "runs/quickstart-20261207-055300", width=80)
    assert max(map(len, lines)) <= 80
    printed = {w for line in lines for w in words(line)}
    assert {"(+0.340", "+0.10", "quickstart-20261207-055300", "quickstart_summary.json", "WordPiece)"} <= printed
    assert sum(line.startswith("NOT shown here:") for line in lines) == 2  # the two rows short of their margin
