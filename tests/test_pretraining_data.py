"""create_pretraining_examples: NSP pairs from documents (google-research/bert create_pretraining_data.py rules)."""

import warnings

import pytest

from hf_bert_tasks.pretraining.data import build_pretraining_dataset, create_pretraining_examples
from hf_bert_tasks.pretraining.documents import read_documents, split_into_sentences

N_DOCS, WORDS_PER_DOC = 40, 400


@pytest.fixture(scope="module")
def doc_tokenizer(tmp_path_factory):
    """Vocabulary where every word ``d<doc>w<k>`` is one token, so each token tells its document and position."""
    from transformers import BertTokenizer

    words = [f"d{d}w{k}" for d in range(N_DOCS) for k in range(WORDS_PER_DOC)]
    path = tmp_path_factory.mktemp("docvocab") / "vocab.txt"
    path.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "play", "##ing", *words]) + "\n")
    return BertTokenizer(vocab=str(path))


def _corpus(sentence_len=4):
    """N_DOCS documents of WORDS_PER_DOC / sentence_len sentences; word k of document d is ``d{d}w{k}``."""
    docs = []
    for d in range(N_DOCS):
        words = [f"d{d}w{k}" for k in range(WORDS_PER_DOC)]
        docs.append([" ".join(words[i : i + sentence_len]) for i in range(0, WORDS_PER_DOC, sentence_len)])
    return {"sentences": docs}


def _where(tokenizer, token_id):
    """(document, position) of a corpus token."""
    doc, pos = tokenizer.convert_ids_to_tokens(token_id)[1:].split("w")
    return int(doc), int(pos)


def _segments(example):
    ids, types = example["input_ids"], example["token_type_ids"]
    a_end = types.index(1) - 1  # index of the first [SEP]
    return ids[1:a_end], ids[a_end + 1 : -1]


def _rows(out):
    return [{k: out[k][i] for k in out} for i in range(len(out["input_ids"]))]


def test_isnext_fraction_is_half_on_a_multi_document_corpus(doc_tokenizer):
    out = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, dupe_factor=5, seed=0)
    labels = out["next_sentence_label"]
    assert len(labels) > 2000
    assert abs(labels.count(0) / len(labels) - 0.5) < 0.05


def test_notnext_pairs_never_come_from_the_same_document(doc_tokenizer):
    out = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, dupe_factor=5, seed=1)
    n_not_next = 0
    for ex in _rows(out):
        a, b = _segments(ex)
        docs_a = {_where(doc_tokenizer, t)[0] for t in a}
        docs_b = {_where(doc_tokenizer, t)[0] for t in b}
        assert len(docs_a) == 1 and len(docs_b) == 1
        if ex["next_sentence_label"] == 1:
            n_not_next += 1
            assert docs_a != docs_b
    assert n_not_next > 100


def test_isnext_b_continues_a_in_the_same_document(doc_tokenizer):
    out = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, dupe_factor=3, seed=2)
    for ex in _rows(out):
        if ex["next_sentence_label"] == 0:
            a, b = _segments(ex)
            pos_a = [_where(doc_tokenizer, t) for t in a]
            pos_b = [_where(doc_tokenizer, t) for t in b]
            assert {d for d, _ in pos_a} == {d for d, _ in pos_b}
            assert max(p for _, p in pos_a) < min(p for _, p in pos_b)


@pytest.mark.parametrize("max_seq_length", [5, 9, 16, 64])
def test_instances_fit_and_both_segments_are_non_empty(doc_tokenizer, max_seq_length):
    out = create_pretraining_examples(
        _corpus(sentence_len=7), tokenizer=doc_tokenizer, max_seq_length=max_seq_length, dupe_factor=2, seed=3
    )
    cls, sep = doc_tokenizer.cls_token_id, doc_tokenizer.sep_token_id
    for ex in _rows(out):
        ids, types = ex["input_ids"], ex["token_type_ids"]
        assert len(ids) <= max_seq_length and len(types) == len(ids) == len(ex["word_ids"])
        assert ids[0] == cls and ids[-1] == sep and ids.count(sep) == 2
        a, b = _segments(ex)
        assert len(a) >= 1 and len(b) >= 1
        assert types == [0] * (len(a) + 2) + [1] * (len(b) + 1)


def test_full_length_target_fills_the_sequence(doc_tokenizer):
    out = create_pretraining_examples(
        _corpus(), tokenizer=doc_tokenizer, max_seq_length=32, short_seq_prob=0.0, seed=4
    )
    lengths = [len(x) for x in out["input_ids"]]
    # without short targets, most instances reach the limit after trimming (chunks end at >= 29 tokens)
    assert sum(n == 32 for n in lengths) / len(lengths) > 0.5


def test_same_seed_same_output_other_seed_differs(doc_tokenizer):
    a = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=5)
    b = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=5)
    c = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=6)
    assert a == b
    assert a != c


def test_dupe_factor_repeats_with_fresh_choices(doc_tokenizer):
    one = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=7)
    three = create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=7, dupe_factor=3)
    assert 2.5 * len(one["input_ids"]) < len(three["input_ids"]) < 3.5 * len(one["input_ids"])
    n = len(one["input_ids"])
    assert three["input_ids"][:n] != three["input_ids"][n : 2 * n]


def test_word_ids_group_wordpieces_and_mark_specials(doc_tokenizer):
    batch = {"sentences": [["d0w0 playing", "d0w1"], ["d1w0 d1w1", "d1w2"]]}
    out = create_pretraining_examples(
        batch, tokenizer=doc_tokenizer, max_seq_length=16, nsp_probability=0.0, short_seq_prob=0.0, seed=0
    )
    first = _rows(out)[0]
    assert doc_tokenizer.convert_ids_to_tokens(first["input_ids"]) == [
        "[CLS]",
        "d0w0",
        "play",
        "##ing",
        "[SEP]",
        "d0w1",
        "[SEP]",
    ]
    assert first["word_ids"] == [-1, 0, 1, 1, -1, 2, -1]
    assert first["next_sentence_label"] == 0


def test_sentences_that_tokenize_to_nothing_are_dropped(doc_tokenizer):
    batch = {"sentences": [["\x07", "d0w0 d0w1", "   ", "d0w2"], ["d1w0", "\x07\x07", "d1w1"]]}
    out = create_pretraining_examples(batch, tokenizer=doc_tokenizer, max_seq_length=16, short_seq_prob=0.0, seed=0)
    for ex in _rows(out):
        a, b = _segments(ex)
        assert a and b
        assert doc_tokenizer.unk_token_id not in ex["input_ids"]


def test_single_document_error_or_isnext_only(doc_tokenizer):
    batch = {"sentences": [["d0w0 d0w1", "d0w2", "d0w3 d0w4", "d0w5"]]}
    with pytest.raises(ValueError, match="single document"):
        create_pretraining_examples(batch, tokenizer=doc_tokenizer, max_seq_length=8, on_single_document="error")
    with pytest.warns(UserWarning, match="single document"):
        out = create_pretraining_examples(batch, tokenizer=doc_tokenizer, max_seq_length=8, seed=0)
    assert out["next_sentence_label"] and set(out["next_sentence_label"]) == {0}


def test_single_sentence_documents_warn(doc_tokenizer):
    batch = {"sentences": [["d0w0 d0w1"], ["d1w0", "d1w1"]]}
    with pytest.warns(UserWarning, match="1 of 2 documents in a batch have a single sentence"):
        create_pretraining_examples(batch, tokenizer=doc_tokenizer, max_seq_length=16, seed=0)


def test_text_column_one_sentence_per_line(doc_tokenizer):
    by_text = create_pretraining_examples(
        {"text": ["d0w0\nd0w1\n\nd0w2", "d1w0\nd1w1"]}, tokenizer=doc_tokenizer, max_seq_length=16, seed=0
    )
    by_list = create_pretraining_examples(
        {"sentences": [["d0w0", "d0w1", "d0w2"], ["d1w0", "d1w1"]]}, tokenizer=doc_tokenizer, max_seq_length=16, seed=0
    )
    assert by_text["input_ids"] == by_list["input_ids"]


def test_missing_column_raises(doc_tokenizer):
    with pytest.raises(ValueError, match="'sentences' column .* or a 'text'"):
        create_pretraining_examples({"body": ["x"]}, tokenizer=doc_tokenizer)


def test_map_over_dataset_and_streaming_dataset_agree(doc_tokenizer):
    from datasets import Dataset

    docs = Dataset.from_dict({"sentences": [d[:20] for d in _corpus()["sentences"][:12]]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        eager = build_pretraining_dataset(docs, doc_tokenizer, batch_size=5, max_seq_length=32, seed=9)
        streamed = build_pretraining_dataset(
            docs.to_iterable_dataset(), doc_tokenizer, batch_size=5, max_seq_length=32, seed=9
        )
        streamed_rows = list(streamed)
    assert eager.column_names == ["input_ids", "token_type_ids", "next_sentence_label", "word_ids"]
    assert len(streamed_rows) == len(eager)
    assert [r["input_ids"] for r in streamed_rows] == eager["input_ids"][:]
    assert [r["next_sentence_label"] for r in streamed_rows] == list(eager["next_sentence_label"])


# ------------------------------------------------------------------ MLM only: RoBERTa FULL-SENTENCES packing
def test_without_nsp_no_next_sentence_label_and_one_segment(doc_tokenizer):
    out = create_pretraining_examples(
        _corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=0, next_sentence_prediction=False
    )
    assert sorted(out) == ["input_ids", "token_type_ids", "word_ids"]
    for ex in _rows(out):
        assert ex["input_ids"][0] == doc_tokenizer.cls_token_id and ex["input_ids"][-1] == doc_tokenizer.sep_token_id
        assert ex["token_type_ids"] == [0] * len(ex["input_ids"])


def test_without_nsp_instances_are_full_except_the_last(doc_tokenizer):
    out = create_pretraining_examples(
        _corpus(sentence_len=7), tokenizer=doc_tokenizer, max_seq_length=50, seed=0, next_sentence_prediction=False
    )
    lengths = [len(x) for x in out["input_ids"]]
    assert len(lengths) > 300
    assert set(lengths[:-1]) == {50} and 3 <= lengths[-1] <= 50


def test_without_nsp_every_corpus_token_appears_once_in_order_with_a_sep_between_documents(doc_tokenizer):
    out = create_pretraining_examples(
        _corpus(), tokenizer=doc_tokenizer, max_seq_length=32, seed=0, next_sentence_prediction=False
    )
    sep = doc_tokenizer.sep_token_id
    stream = [t for ids in out["input_ids"] for t in ids[1:-1]]  # without each instance's [CLS] ... [SEP]
    corpus = [doc_tokenizer.convert_tokens_to_ids(f"d{d}w{k}") for d in range(N_DOCS) for k in range(WORDS_PER_DOC)]
    assert [t for t in stream if t != sep] == corpus
    # an inner [SEP] sits exactly where document d ends and d + 1 begins (none where a block starts a document)
    for i, t in enumerate(stream):
        if t == sep:
            assert _where(doc_tokenizer, stream[i - 1])[0] + 1 == _where(doc_tokenizer, stream[i + 1])[0]
    # every document boundary has its [SEP], except where a block (30 tokens) starts with the next document
    for d in range(1, N_DOCS):
        first = stream.index(doc_tokenizer.convert_tokens_to_ids(f"d{d}w0"))
        assert stream[first - 1] == sep or first % 30 == 0
    assert stream.count(sep) > N_DOCS // 2


def test_without_nsp_word_ids_and_document_separator(doc_tokenizer):
    batch = {"sentences": [["d0w0 playing", "d0w1"], ["d1w0"]]}
    wide = create_pretraining_examples(
        batch, tokenizer=doc_tokenizer, max_seq_length=8, next_sentence_prediction=False
    )
    assert [doc_tokenizer.convert_ids_to_tokens(x) for x in wide["input_ids"]] == [
        ["[CLS]", "d0w0", "play", "##ing", "d0w1", "[SEP]", "d1w0", "[SEP]"]
    ]
    assert wide["word_ids"] == [[-1, 0, 1, 1, 2, -1, 3, -1]]
    # a block of 4 ends with document 0: the next block starts with document 1, not with the separator
    narrow = create_pretraining_examples(
        batch, tokenizer=doc_tokenizer, max_seq_length=6, next_sentence_prediction=False
    )
    assert [doc_tokenizer.convert_ids_to_tokens(x) for x in narrow["input_ids"]] == [
        ["[CLS]", "d0w0", "play", "##ing", "d0w1", "[SEP]"],
        ["[CLS]", "d1w0", "[SEP]"],
    ]
    assert narrow["word_ids"] == [[-1, 0, 1, 1, 2, -1], [-1, 0, -1]]


def test_without_nsp_build_pretraining_dataset_has_no_label_column_and_a_short_limit_is_allowed(doc_tokenizer):
    from datasets import Dataset

    docs = Dataset.from_dict({"sentences": [d[:10] for d in _corpus()["sentences"][:4]]})
    packed = build_pretraining_dataset(docs, doc_tokenizer, max_seq_length=3, next_sentence_prediction=False)
    assert packed.column_names == ["input_ids", "token_type_ids", "word_ids"]
    assert len(packed) == 4 * 10 * 4  # one corpus token per instance; documents end at block starts: no [SEP]
    with pytest.raises(ValueError, match="max_seq_length must be >= 5"):
        create_pretraining_examples(_corpus(), tokenizer=doc_tokenizer, max_seq_length=4)


def test_read_documents_blank_lines_and_wikitext_headings(tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("One here.\nTwo here.\n\n\nThree. Four!\n")
    assert read_documents(str(plain)) == [["One here.", "Two here."], ["Three. Four!"]]
    assert read_documents(str(plain), split_sentences=True) == [["One here.", "Two here."], ["Three.", "Four!"]]
    wiki = tmp_path / "wiki.tokens"
    wiki.write_text(
        " = Alpha = \n\n Alpha is a letter . It is first . \n\n = = Use = = \n\n Used a lot . \n"
        " = Beta = \n\n Beta follows . \n"
    )
    assert read_documents(str(wiki), split_sentences=True) == [
        ["Alpha", "Alpha is a letter .", "It is first .", "= = Use = =", "Used a lot ."],
        ["Beta", "Beta follows ."],
    ]


def test_a_whitespace_only_line_ends_a_document_like_a_blank_line(tmp_path):
    # datasets' paragraph sampling splits on "\n\n" only; google's reader strips lines first (a BOM and CRLF too)
    corpus = tmp_path / "c.txt"
    corpus.write_bytes(b"\xef\xbb\xbfa .\r\nb .\r\n  \r\nc .\n\t\n\n\nd .")
    assert read_documents(str(corpus)) == [["a .", "b ."], ["c ."], ["d ."]]


def test_read_documents_names_file_and_line_of_bad_bytes(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine line\n\xff\xfe broken\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: not valid utf-8"):
        read_documents(str(bad))


def test_split_into_sentences():
    assert split_into_sentences('It rained. We left!  Why? "Because." Done') == [
        "It rained.",
        "We left!",
        "Why?",
        '"Because."',
        "Done",
    ]


# ------------------------------------------------------------------------------------------- corpora of any size
DOCS = [["one a .", "one b ."], ["two a .", "two b .", "two c ."], ["three a ."]]


def _write_corpus(folder):
    """The same three documents as text (two files), jsonl and parquet."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-0.txt").write_text("one a .\none b .\n\ntwo a .\ntwo b .\ntwo c .\n", encoding="utf-8")
    (folder / "part-1.txt").write_text("\nthree a .\n", encoding="utf-8")
    (folder / "docs.jsonl").write_text(
        json.dumps({"text": "one a .\none b ."})
        + "\n"
        + json.dumps({"sentences": DOCS[1]})
        + "\n\n"
        + json.dumps({"text": "three a ."})
        + "\n",
        encoding="utf-8",
    )
    pq.write_table(pa.table({"text": ["\n".join(d) for d in DOCS]}), folder / "docs.parquet")
    return folder


@pytest.mark.parametrize("pattern", ["part-*.txt", "docs.jsonl", "docs.parquet"])
def test_load_documents_reads_text_globs_jsonl_and_parquet(tmp_path, pattern):
    from hf_bert_tasks.pretraining.documents import load_documents

    folder = _write_corpus(tmp_path / "corpus")
    docs = load_documents(str(folder / pattern), cache_dir=str(tmp_path / "cache"))
    assert docs.column_names == ["sentences"]
    assert list(docs["sentences"]) == DOCS


def test_load_documents_streaming_gives_the_same_documents(tmp_path):
    from hf_bert_tasks.pretraining.documents import load_documents

    folder = _write_corpus(tmp_path / "corpus")
    stream = load_documents([str(folder / "part-*.txt"), str(folder / "docs.parquet")], streaming=True)
    assert [row["sentences"] for row in stream] == DOCS + DOCS


def test_second_run_reads_documents_and_instances_from_the_cache(tmp_path, doc_tokenizer, monkeypatch):
    from hf_bert_tasks.pretraining import data as pretraining_data
    from hf_bert_tasks.pretraining import documents as pretraining_documents
    from hf_bert_tasks.pretraining.data import build_pretraining_dataset
    from hf_bert_tasks.pretraining.documents import load_documents

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n\n".join("\n".join(d) for d in _corpus()["sentences"][:6]) + "\n", encoding="utf-8")
    cache = str(tmp_path / "cache")
    first_docs = load_documents(str(corpus), cache_dir=cache)
    first = build_pretraining_dataset(first_docs, doc_tokenizer, batch_size=3, max_seq_length=32, seed=1)

    def must_not_run(*args, **kwargs):
        raise AssertionError("instance creation ran again: the cache was not used")

    monkeypatch.setattr(pretraining_data, "create_pretraining_examples", must_not_run)
    monkeypatch.setattr(pretraining_documents, "_text_documents", must_not_run)
    again_docs = load_documents(str(corpus), cache_dir=cache)
    again = build_pretraining_dataset(again_docs, doc_tokenizer, batch_size=3, max_seq_length=32, seed=1)
    assert again_docs.cache_files == first_docs.cache_files
    assert again.cache_files == first.cache_files
    assert again["input_ids"][:] == first["input_ids"][:]


def test_a_changed_file_is_read_again(tmp_path):
    import os

    from hf_bert_tasks.pretraining.documents import load_documents

    corpus = tmp_path / "c.txt"
    corpus.write_text("a .\nb .\n\nc .\n", encoding="utf-8")
    cache = str(tmp_path / "cache")
    assert list(load_documents(str(corpus), cache_dir=cache)["sentences"]) == [["a .", "b ."], ["c ."]]
    corpus.write_text("a .\n\nc .\nd .\n", encoding="utf-8")
    os.utime(corpus, ns=(1, 1))  # another modification time even on a coarse-grained file system
    assert list(load_documents(str(corpus), cache_dir=cache)["sentences"]) == [["a ."], ["c .", "d ."]]


def test_a_pattern_matching_nothing_and_a_bad_jsonl_line_are_named(tmp_path):
    from hf_bert_tasks.pretraining.documents import load_documents

    with pytest.raises(FileNotFoundError, match=r"nothing-\*\.txt does not exist"):
        load_documents(str(tmp_path / "nothing-*.txt"))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine ."}\n{"title": "no text"}\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"bad.jsonl, row 2: a row needs a 'sentences'"):
        load_documents(str(bad), cache_dir=str(tmp_path / "cache"))


def test_instances_are_the_same_with_two_preprocessing_workers(tmp_path, doc_tokenizer):
    from hf_bert_tasks.pretraining.data import build_pretraining_dataset
    from hf_bert_tasks.pretraining.documents import load_documents

    corpus = tmp_path / "c.txt"
    corpus.write_text("\n\n".join("\n".join(d[:30]) for d in _corpus()["sentences"][:8]) + "\n", encoding="utf-8")
    docs = load_documents(str(corpus), cache_dir=str(tmp_path / "cache"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = build_pretraining_dataset(docs, doc_tokenizer, batch_size=4, max_seq_length=32, seed=3)
        two = build_pretraining_dataset(docs, doc_tokenizer, batch_size=4, max_seq_length=32, seed=3, num_proc=2)
    assert two["input_ids"][:] == one["input_ids"][:]
