"""The bad-input catalogue (docs/bad_inputs.md): each bad input gives a clear error or a documented, counted result.

One parametrized test, one row per case of the table in ``docs/bad_inputs.md`` (a second test keeps the two in
sync). A case writes its bad file into ``tmp_path`` and calls the public reader / collator / recipe function; it
either expects an exception whose message names the file, the line (or record) and what was expected, or checks the
documented behaviour exactly (rows kept, a warning with a count, a truncation length). Nothing here may fail with a
torch error: the checks run before any tensor is made.
"""

import json
import logging
import os
import re
import warnings

import pytest

from tests.conftest import REPO, VOCAB

MRPC_HEADER = "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"


def _write(path, text: str | bytes):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode, **({} if isinstance(text, bytes) else {"encoding": "utf-8", "newline": ""})) as f:
        f.write(text)
    return str(path)


def _mrpc(tmp, rows: list[str], header: str = MRPC_HEADER, name="train.tsv", raw: bytes | None = None):
    folder = tmp / "MRPC"
    _write(folder / name, raw if raw is not None else "\n".join([header, *rows]) + "\n")
    return str(folder)


def _read(task: str, folder: str):
    from hf_bert_tasks import get_task

    return get_task(task).read_local(folder)


def expect_error(exc, *patterns):
    """Decorator data: the case must raise ``exc`` with every regex in ``patterns`` in its message."""
    return ("error", exc, patterns)


# ----------------------------------------------------------------------------------------------------- GLUE
def glue_short_row(tmp):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat sat .\tthe cat sat .", "0\t3\t4\tonly three"])
    return lambda: _read("mrpc", folder)


def glue_extra_field(tmp):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat sat .\tthe cat\tsat ."])
    return lambda: _read("mrpc", folder)


def glue_quote_in_field(tmp):
    rows = [
        '1\t1\t2\t"the cat sat .\tthe cat sat .',
        '0\t3\t4\ta dog " ran\tit ran .',
        "1\t5\t6\tthe mat .\tthe rug .",
    ]
    folder = _mrpc(tmp, rows)

    def check():
        ds = _read("mrpc", folder)["train"]
        assert len(ds) == 3
        assert ds["sentence1"][0] == '"the cat sat .'
        assert ds["sentence1"][1] == 'a dog " ran'

    return check


def glue_bom(tmp):
    raw = ("\ufeff" + MRPC_HEADER + "\n1\t1\t2\tthe cat .\tthe dog .\n").encode("utf-8")
    folder = _mrpc(tmp, [], raw=raw)

    def check():
        ds = _read("mrpc", folder)["train"]
        assert ds["label"] == [1] and ds["sentence1"] == ["the cat ."]

    return check


def glue_crlf(tmp):
    raw = (MRPC_HEADER + "\r\n1\t1\t2\tthe cat .\tthe dog .\r\n0\t3\t4\ta mat .\ta rug .\r\n").encode("utf-8")
    folder = _mrpc(tmp, [], raw=raw)

    def check():
        ds = _read("mrpc", folder)["train"]
        assert ds["sentence2"] == ["the dog .", "a rug ."] and ds["label"] == [1, 0]

    return check


def glue_non_utf8(tmp):
    raw = (MRPC_HEADER + "\n1\t1\t2\tthe cat .\tthe dog .\n").encode() + b"0\t3\t4\tcaf\xe9 .\tthe rug .\n"
    folder = _mrpc(tmp, [], raw=raw)
    return lambda: _read("mrpc", folder)


def glue_empty_text(tmp, caplog):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat .\tthe dog .", "0\t3\t4\t\tthe rug .", "0\t5\t6\t \ta mat ."])

    def check():
        with caplog.at_level(logging.WARNING, logger="hf_bert_tasks.tasks.glue"):
            ds = _read("mrpc", folder)["train"]
        assert len(ds) == 3
        assert re.search(r"train\.tsv: 2 example\(s\) with an empty text field \(first: data row 2\)", caplog.text)

    return check


def glue_unknown_label(tmp):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat .\tthe dog .", "2\t3\t4\ta mat .\ta rug ."])
    return lambda: _read("mrpc", folder)


def glue_missing_label(tmp):
    folder = _mrpc(tmp, ["\t1\t2\tthe cat .\tthe dog ."])
    return lambda: _read("mrpc", folder)


def mnli_label_outside_set(tmp):
    folder = tmp / "MNLI"
    lines = [
        {"premise": "the cat sat .", "hypothesis": "a cat sat .", "label": "entailment"},
        {"premise": "the dog ran .", "hypothesis": "it sat .", "label": "maybe"},
    ]
    _write(folder / "dev_matched.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")
    return lambda: _read("mnli", str(folder))


def stsb_score_not_a_number(tmp):
    folder = tmp / "STS-B"
    header = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"
    _write(folder / "train.tsv", header + "\n0\tg\tf\t2012\t0\ts\ts\tthe cat .\tthe dog .\thigh\n")
    return lambda: _read("stsb", str(folder))


def glue_header_lacks_column(tmp):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat .\tthe dog ."], header="Quality\t#1 ID\t#2 ID\t#1 String\tsecond")
    return lambda: _read("mrpc", folder)


def glue_empty_file(tmp):
    folder = _mrpc(tmp, [], raw=b"")
    return lambda: _read("mrpc", folder)


def glue_header_only(tmp):
    folder = _mrpc(tmp, [])
    return lambda: _read("mrpc", folder)


def glue_blank_lines(tmp, caplog):
    folder = _mrpc(tmp, ["1\t1\t2\tthe cat .\tthe dog .", "", "0\t3\t4\ta mat .\ta rug .", ""])

    def check():
        with caplog.at_level(logging.INFO, logger="hf_bert_tasks.tasks.glue"):
            ds = _read("mrpc", folder)["train"]
        assert len(ds) == 2
        assert "skipped 2 empty line(s)" in caplog.text

    return check


def jsonl_not_json(tmp):
    folder = tmp / "MNLI"
    _write(folder / "dev_matched.jsonl", '{"premise": "a", "hypothesis": "b", "label": "neutral"}\n{"premise": "a",\n')
    return lambda: _read("mnli", str(folder))


def jsonl_not_an_object(tmp):
    folder = tmp / "MNLI"
    _write(folder / "dev_matched.jsonl", '["the cat", "the dog", "neutral"]\n')
    return lambda: _read("mnli", str(folder))


def cola_wrong_field_count(tmp):
    folder = tmp / "CoLA"
    _write(folder / "train.tsv", "src\t1\t\tthe cat sat .\nsrc\t0\tthe dog ran .\n")
    return lambda: _read("cola", str(folder))


def data_dir_missing(tmp):
    return lambda: _read("mrpc", str(tmp / "nowhere"))


def data_dir_without_task_files(tmp):
    _write(tmp / "other" / "notes.txt", "hello\n")
    return lambda: _read("mrpc", str(tmp / "other"))


def missing_split(tmp):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments
    from hf_bert_tasks.finetune.data import select_splits

    folder = _mrpc(tmp, ["1\t1\t2\tthe cat .\tthe dog ."])
    args = FinetuneTrainingArguments(output_dir=str(tmp / "out"), do_train=True, do_eval=True, report_to="none")
    return lambda: select_splits(get_task("mrpc"), _read("mrpc", folder), args)


# ------------------------------------------------------------------------------------------------ recipes
def config_unknown_key(tmp):
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments
    from hf_bert_tasks.flags.training import parse_args

    path = _write(tmp / "cfg.yaml", "task: mrpc\noutput_dir: x\nlearnin_rate: 2e-5\n")
    return lambda: parse_args((ModelArguments, DataArguments, FinetuneTrainingArguments), ["--config", path])


def _finetune_parse(argv):
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments
    from hf_bert_tasks.flags.training import parse_args

    return lambda: parse_args((ModelArguments, DataArguments, FinetuneTrainingArguments), argv)


def cli_unknown_task(tmp):
    return _finetune_parse(["--task", "mrcp", "--output_dir", str(tmp / "o")])


def cli_missing_task(tmp):
    return _finetune_parse(["--output_dir", str(tmp / "o")])


def cli_unknown_flag(tmp):
    return _finetune_parse(["--task", "mrpc", "--output_dir", str(tmp / "o"), "--learnin_rate", "2e-5"])


def cli_bad_value(tmp):
    return _finetune_parse(["--task", "mrpc", "--output_dir", str(tmp / "o"), "--num_train_epochs", "three"])


def lr_grid_not_numbers(tmp):
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments

    args = FinetuneTrainingArguments(output_dir=str(tmp / "o"), lr_grid="5e-5,fast", report_to="none")
    return lambda: args.learning_rates


def mismatched_head(tmp, tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification

    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import ModelArguments
    from hf_bert_tasks.finetune.recipe import build_model

    three = AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir, num_labels=3)
    three.save_pretrained(tmp / "mnli-model")
    return lambda: build_model(get_task("mrpc"), ModelArguments(model_name_or_path=str(tmp / "mnli-model")))


def max_seq_length_over_positions(tmp, tiny_bert_dir):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from hf_bert_tasks.finetune.data import check_model_fits

    model = AutoModelForSequenceClassification.from_pretrained(tiny_bert_dir, num_labels=2)  # 256 positions
    return lambda: check_model_fits(model, AutoTokenizer.from_pretrained(tiny_bert_dir), 512, "tiny-bert")


def tokenizer_larger_than_model_vocab(tmp, tiny_bert_dir, vocab_tokenizer):
    from transformers import AutoModelForSequenceClassification, BertConfig

    from hf_bert_tasks.finetune.data import check_model_fits

    model = AutoModelForSequenceClassification.from_config(
        BertConfig(vocab_size=20, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=37)
    )
    return lambda: check_model_fits(model, vocab_tokenizer, 64, "small-vocab-bert")


# ------------------------------------------------------------------------------------------------ SQuAD
def _squad(tmp, qas, context="the cat sat on the mat .", version="1.1", name="dev-v1.1.json"):
    data = {"version": version, "data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}
    return _write(tmp / "squad" / name, json.dumps(data))


def squad_answer_start_mismatch(tmp):
    from hf_bert_tasks import get_task

    path = _squad(tmp, [{"id": "q1", "question": "where ?", "answers": [{"text": "the mat", "answer_start": 3}]}])
    return lambda: get_task("squad_v1").read_json(path)


def squad_not_json(tmp):
    from hf_bert_tasks import get_task

    path = _write(tmp / "squad" / "dev-v1.1.json", '{"version": "1.1", "data": [\n  {"title": }\n]}')
    return lambda: get_task("squad_v1").read_json(path)


def squad_missing_context(tmp):
    from hf_bert_tasks import get_task

    data = {"data": [{"title": "t", "paragraphs": [{"qas": []}]}]}
    path = _write(tmp / "squad" / "dev-v1.1.json", json.dumps(data))
    return lambda: get_task("squad_v1").read_json(path)


def squad_unanswerable_in_v1(tmp):
    from hf_bert_tasks import get_task

    path = _squad(tmp, [{"id": "q1", "question": "why ?", "answers": [], "is_impossible": True}])
    return lambda: get_task("squad_v1").read_json(path)


def squad_duplicate_id(tmp):
    from hf_bert_tasks import get_task

    qa = {"id": "q1", "question": "what sat ?", "answers": [{"text": "the cat", "answer_start": 0}]}
    path = _squad(tmp, [qa, dict(qa)])
    return lambda: get_task("squad_v1").read_json(path)


def squad_answerable_without_answer(tmp):
    from hf_bert_tasks import get_task

    path = _squad(tmp, [{"id": "q1", "question": "what sat ?", "answers": []}])
    return lambda: get_task("squad_v1").read_json(path)


def squad_overlong_question(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.tasks.squad import features as qa

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    question = " ".join(["the cat sat on the mat"] * 10)  # 60 WordPieces

    def check():
        config = qa.WindowConfig(max_seq_length=32, doc_stride=8, max_query_length=6)
        out = qa.create_features([question], ["the dog sat on the rug ."], tokenizer, config)
        ids = out["input_ids"][0]
        sep = ids.index(tokenizer.sep_token_id)
        assert sep - 1 == 6  # [CLS] + the first 6 question pieces
        assert ids[1:7] == tokenizer("the cat sat on the mat", add_special_tokens=False)["input_ids"]

    return check


# ---------------------------------------------------------------------------------------------- CoNLL
def conll_wrong_column_count(tmp):
    from hf_bert_tasks.tasks.conll2003 import read_conll_file

    path = _write(tmp / "valid.txt", "-DOCSTART- -X- -X- O\n\nEU NNP B-NP B-ORG\nrejects VBZ B-VP\n")
    return lambda: read_conll_file(path)


def conll_unknown_tag(tmp):
    from hf_bert_tasks.tasks.conll2003 import read_conll_file

    path = _write(tmp / "valid.txt", "EU NNP B-NP B-ORG\nrejects VBZ B-VP B-ACTION\n")
    return lambda: read_conll_file(path)


def conll_empty_file(tmp):
    from hf_bert_tasks.tasks.conll2003 import read_conll_file

    path = _write(tmp / "valid.txt", "-DOCSTART- -X- -X- O\n\n")
    return lambda: read_conll_file(path)


def conll_iob1_tags(tmp, caplog):
    from hf_bert_tasks.tasks.conll2003 import read_conll_file

    path = _write(tmp / "valid.txt", "EU NNP B-NP I-ORG\nrejects VBZ B-VP O\nGerman JJ B-NP I-MISC\n")

    def check():
        with caplog.at_level(logging.INFO, logger="hf_bert_tasks.tasks.conll2003"):
            cols = read_conll_file(path)
        assert cols["ner_tags"] == [["B-ORG", "O", "B-MISC"]] or _names(cols["ner_tags"]) == [["B-ORG", "O", "B-MISC"]]
        assert "IOB1; converted to IOB2" in caplog.text

    return check


def _names(rows):
    from hf_bert_tasks.tasks.conll2003 import NER_LABELS

    return [[NER_LABELS[i] if isinstance(i, int) else i for i in row] for row in rows]


# ----------------------------------------------------------------------------------------------- SWAG
def swag_label_out_of_range(tmp):
    from hf_bert_tasks.tasks.swag import read_swag_csv

    header = "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"
    path = _write(tmp / "val.csv", header + "\nv,1,s,A man sits.,He,gold,stands.,runs.,eats.,sleeps.,7\n")
    return lambda: read_swag_csv(path)


def swag_short_row(tmp):
    from hf_bert_tasks.tasks.swag import read_swag_csv

    header = "video-id,fold-ind,startphrase,sent1,sent2,gold-source,ending0,ending1,ending2,ending3,label"
    path = _write(tmp / "val.csv", header + "\nv,1,s,A man sits.,He,gold,stands.,runs.,0\n")
    return lambda: read_swag_csv(path)


# ----------------------------------------------------------------------------------------- pretraining
def corpus_one_document(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.data import create_pretraining_examples

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    doc = ["the cat sat on the mat .", "the dog ran .", "she sat on the rug .", "it was good ."]

    def check():
        with pytest.warns(UserWarning, match="single document.*IsNext pairs only"):
            out = create_pretraining_examples({"sentences": [doc]}, tokenizer=tokenizer, max_seq_length=16, seed=1)
        assert out["next_sentence_label"] and set(out["next_sentence_label"]) == {0}

    return check


def corpus_one_document_strict(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.data import create_pretraining_examples

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    return lambda: create_pretraining_examples(
        {"sentences": [["the cat sat .", "the dog ran ."]]},
        tokenizer=tokenizer,
        max_seq_length=16,
        on_single_document="error",
    )


def corpus_one_sentence_documents(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.data import create_pretraining_examples

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    docs = [["the cat sat on the mat ."], ["the dog ran to the rug ."], ["she was not good ."]]

    def check():
        with pytest.warns(UserWarning, match="3 of 3 documents in a batch have a single sentence"):
            create_pretraining_examples({"sentences": docs}, tokenizer=tokenizer, max_seq_length=16, seed=1)

    return check


def corpus_empty_file(tmp):
    from hf_bert_tasks.pretraining.documents import documents_dataset

    path = _write(tmp / "corpus.txt", "\n\n  \n")
    return lambda: documents_dataset(path)


def corpus_non_utf8(tmp):
    from hf_bert_tasks.pretraining.documents import read_documents

    path = _write(tmp / "corpus.txt", b"the cat sat .\nthe caf\xe9 .\n")
    return lambda: read_documents(path)


def collator_vocab_without_mask_token(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    tokenizer = BertTokenizerFast(
        tokenizer_object=vocab_tokenizer.backend_tokenizer,
        mask_token=None,
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        unk_token="[UNK]",
    )
    tokenizer.mask_token = None
    return lambda: DataCollatorForBertPretraining(tokenizer=tokenizer)


def vocab_file_without_mask_line(tmp):
    from transformers import BertTokenizer

    path = _write(tmp / "vocab.txt", "\n".join(v for v in VOCAB if v != "[MASK]") + "\n")

    def check():
        tokenizer = BertTokenizer(vocab=path)
        # transformers appends [MASK] as an added special token after the file's ids: MLM works when the model's
        # embeddings are sized len(tokenizer) (the pretrain recipe does); check_model_fits rejects a smaller model.
        assert tokenizer.mask_token_id == len(VOCAB) - 1 == len(tokenizer) - 1

    return check


def collator_features_with_different_keys(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    collator = DataCollatorForBertPretraining(tokenizer=tokenizer, seed=0)
    features = [{"input_ids": [2, 7, 9, 3], "next_sentence_label": 0}, {"input_ids": [2, 8, 3]}]
    return lambda: collator(features)


def collator_feature_longer_than_max_length(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    collator = DataCollatorForBertPretraining(tokenizer=tokenizer, seed=0, max_length=4)
    return lambda: collator([{"input_ids": [2, 7, 9, 10, 11, 3]}])


def collator_empty_batch(tmp, vocab_tokenizer):
    from transformers import BertTokenizerFast

    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    tokenizer = BertTokenizerFast(tokenizer_object=vocab_tokenizer.backend_tokenizer)
    return lambda: DataCollatorForBertPretraining(tokenizer=tokenizer, seed=0)([])


#: id -> (case builder, expected). Expected is ``("error", Exception, regexes)`` or ``"ok"`` (the case checks itself).
# ------------------------------------------------------------------------------- user files (issue 44)
def _user_file(tmp, task: str, name: str, text: str, flag: str = "train_file", **flags):
    """``get_task(task)`` configured as ``--<flag> <tmp>/<name>`` (written with ``text``) plus ``flags``; loads it."""
    from types import SimpleNamespace

    from hf_bert_tasks import get_task

    path = _write(tmp / name, text)
    return lambda: get_task(task).configure(SimpleNamespace(**{flag: path, **flags})).load()


def user_file_missing(tmp):
    from types import SimpleNamespace

    from hf_bert_tasks import get_task

    return lambda: get_task("sst2").configure(SimpleNamespace(train_file=str(tmp / "nope.csv"))).load()


def user_file_extension(tmp):
    return _user_file(tmp, "sst2", "mine.xlsx", "x")


def user_file_missing_columns(tmp):
    return _user_file(tmp, "sst2", "mine.csv", "text,sentiment\nok,positive\n")


def user_file_text_column_count(tmp):
    from types import SimpleNamespace

    from hf_bert_tasks import get_task

    return lambda: get_task("sst2").configure(SimpleNamespace(train_file="x.csv", text_column_names="a,b"))


def user_file_and_data_dir(tmp):
    from types import SimpleNamespace

    from hf_bert_tasks import get_task

    path = _write(tmp / "t.csv", "sentence,label\nok,1\n")
    return lambda: get_task("sst2").configure(SimpleNamespace(train_file=path)).load(data_dir=str(tmp))


def user_file_no_label(tmp):
    return _user_file(tmp, "sst2", "mine.csv", "sentence,label\nok,\n")


def user_file_unknown_label(tmp):
    return _user_file(tmp, "sst2", "mine.csv", "sentence,label\nok,positive\nhmm,neutral\n", "validation_file")


def user_file_score_not_a_number(tmp):
    return _user_file(tmp, "stsb", "pairs.csv", "sentence1,sentence2,label\na dog .,one dog .,high\n")


def user_file_ner_tag_count(tmp):
    return _user_file(tmp, "conll2003", "ner.jsonl", '{"tokens": ["a", "b"], "ner_tags": ["O"]}\n', "validation_file")


def user_file_ner_unknown_tag(tmp):
    return _user_file(
        tmp, "conll2003", "ner.jsonl", '{"tokens": ["a", "b"], "ner_tags": ["O", "THING"]}\n', "validation_file"
    )


def user_file_ner_not_lists(tmp):
    return _user_file(tmp, "conll2003", "ner.jsonl", '{"tokens": "a b", "ner_tags": "O O"}\n', "validation_file")


_QA = '{"id": "a", "question": "who ?", "context": "the letter was signed by ines .", "answers": %s}\n'


def user_file_squad_answers_shape(tmp):
    return _user_file(tmp, "squad_v1", "qa.jsonl", _QA % '{"text": ["ines"], "answer_start": []}')


def user_file_squad_answer_mismatch(tmp):
    return _user_file(tmp, "squad_v1", "qa.jsonl", _QA % '{"text": ["ines"], "answer_start": [3]}')


def user_file_empty(tmp):
    return _user_file(tmp, "sst2", "mine.csv", "\n")


def user_file_broken_quote(tmp):
    return _user_file(tmp, "sst2", "mine.csv", 'sentence,label\nfine,1\n"never closed,0\nmore,1\n')


def user_file_row_width(tmp):
    return _user_file(tmp, "mrpc", "pairs.csv", "sentence1,sentence2,label\na,b,1\nc,0\n")


def user_file_jsonl_bad_line(tmp):
    return _user_file(tmp, "sst2", "mine.jsonl", '{"sentence": "a", "label": 1}\n{"sentence": "b", label: 0}\n')


def user_file_tsv_csv_quoted(tmp):
    return _user_file(tmp, "sst2", "mine.tsv", 'sentence\tlabel\nok\t1\n"say ""hi"""\t0\n')


def user_file_ner_unseen_dev_tag(tmp):
    train = _write(tmp / "train.txt", "Mara B-PER\nvisited O\nOslo B-LOC\n")
    return _user_file(tmp, "conll2003", "dev.txt", "Acme B-ORG\nrose O\n", "validation_file", train_file=train)


def user_file_swag_label(tmp):
    return _user_file(tmp, "swag", "mc.csv", "sent1,sent2,ending0,ending1,ending2,ending3,label\nA,b,c,d,e,f,4\n")


CASES = {
    "glue-short-row": (
        glue_short_row,
        expect_error(ValueError, r"train\.tsv, line 3", r"found 4 field\(s\), the header has 5"),
    ),
    "glue-extra-field": (
        glue_extra_field,
        expect_error(ValueError, r"train\.tsv, line 2", r"found 6 field\(s\), the header has 5"),
    ),
    "glue-quote-in-field": (glue_quote_in_field, "ok"),
    "glue-bom": (glue_bom, "ok"),
    "glue-crlf": (glue_crlf, "ok"),
    "glue-non-utf8": (glue_non_utf8, expect_error(ValueError, r"train\.tsv, line 3", r"not UTF-8 at column 10")),
    "glue-empty-text": (glue_empty_text, "ok"),
    "glue-unknown-label": (
        glue_unknown_label,
        expect_error(ValueError, r"train\.tsv, line 3", r"'Quality' = '2' is not a known label", r"\['0', '1'\]"),
    ),
    "glue-missing-label": (
        glue_missing_label,
        expect_error(ValueError, r"train\.tsv, line 2", r"'Quality' = '' is not a known label"),
    ),
    "mnli-label-outside-set": (
        mnli_label_outside_set,
        expect_error(ValueError, r"dev_matched\.jsonl, line 2", r"'maybe' is not a known label", r"contradiction"),
    ),
    "stsb-score-not-a-number": (
        stsb_score_not_a_number,
        expect_error(ValueError, r"train\.tsv, line 2", r"'score' = 'high' is not a number"),
    ),
    "glue-header-lacks-column": (
        glue_header_lacks_column,
        expect_error(ValueError, r"train\.tsv, line 1", r"lacks column\(s\) \['#2 String'\]"),
    ),
    "glue-empty-file": (glue_empty_file, expect_error(ValueError, r"train\.tsv: the file is empty")),
    "glue-header-only": (glue_header_only, expect_error(ValueError, r"train\.tsv: no data rows")),
    "glue-blank-lines": (glue_blank_lines, "ok"),
    "jsonl-not-json": (jsonl_not_json, expect_error(ValueError, r"dev_matched\.jsonl, line 2: not valid JSON")),
    "jsonl-not-an-object": (
        jsonl_not_an_object,
        expect_error(ValueError, r"dev_matched\.jsonl, line 1: expected a JSON object, got list"),
    ),
    "cola-wrong-field-count": (
        cola_wrong_field_count,
        expect_error(ValueError, r"train\.tsv, line 2: found 3 field\(s\); expected 4"),
    ),
    "data-dir-missing": (data_dir_missing, expect_error(FileNotFoundError, r"--data_dir .*nowhere: no such folder")),
    "data-dir-without-task-files": (
        data_dir_without_task_files,
        expect_error(FileNotFoundError, r"none of the mrpc files \['dev\.tsv', 'test\.tsv', 'train\.tsv'\]"),
    ),
    "missing-split": (
        missing_split,
        expect_error(
            ValueError, r"--do_eval: task 'mrpc' needs split\(s\) \['validation'\]; the data has \['train'\]"
        ),
    ),
    "config-unknown-key": (
        config_unknown_key,
        expect_error(ValueError, r"cfg\.yaml: unknown argument\(s\) \['learnin_rate'\]"),
    ),
    "cli-unknown-task": (
        cli_unknown_task,
        expect_error(ValueError, r"unknown task 'mrcp' \(did you mean 'mrpc'\?\); known tasks: cola"),
    ),
    "cli-missing-task": (cli_missing_task, expect_error(ValueError, r"--task is required")),
    "cli-unknown-flag": (
        cli_unknown_flag,
        expect_error(ValueError, r"unrecognized arguments: --learnin_rate 2e-5 \(did you mean --learning_rate\?\)"),
    ),
    "cli-bad-value": (
        cli_bad_value,
        expect_error(ValueError, r"argument --num_train_epochs.*: invalid float value: 'three'"),
    ),
    "lr-grid-not-numbers": (
        lr_grid_not_numbers,
        expect_error(ValueError, r"--lr_grid '5e-5,fast': expected comma-separated floats"),
    ),
    "mismatched-head": (
        mismatched_head,
        expect_error(
            ValueError,
            r"mnli-model: its classification head does not fit task 'mrpc' \(2 label\(s\)\); the checkpoint's head has 3",
        ),
    ),
    "max-seq-length-over-positions": (
        max_seq_length_over_positions,
        expect_error(ValueError, r"--max_seq_length 512 is longer than the 256 position embeddings"),
    ),
    "tokenizer-larger-than-model-vocab": (
        tokenizer_larger_than_model_vocab,
        expect_error(ValueError, r"tokenizer has 35 ids but small-vocab-bert has only 20 token embeddings"),
    ),
    "squad-answer-start-mismatch": (
        squad_answer_start_mismatch,
        expect_error(
            ValueError, r"dev-v1\.1\.json, question id 'q1', answer 0", r"does not match the context at answer_start 3"
        ),
    ),
    "squad-not-json": (
        squad_not_json,
        expect_error(ValueError, r"dev-v1\.1\.json, line 2, column \d+: not valid JSON"),
    ),
    "squad-missing-context": (
        squad_missing_context,
        expect_error(ValueError, r"dev-v1\.1\.json, article 0, paragraph 0: missing field 'context'"),
    ),
    "squad-unanswerable-in-v1": (
        squad_unanswerable_in_v1,
        expect_error(ValueError, r"question id 'q1': is_impossible is true, but SQuAD v1\.1", r"squad_v2"),
    ),
    "squad-duplicate-id": (squad_duplicate_id, expect_error(ValueError, r"question id 'q1': duplicate question id")),
    "squad-answerable-without-answer": (
        squad_answerable_without_answer,
        expect_error(ValueError, r"question id 'q1': no answer for an answerable question"),
    ),
    "squad-overlong-question": (squad_overlong_question, "ok"),
    "conll-wrong-column-count": (
        conll_wrong_column_count,
        expect_error(ValueError, r"valid\.txt, line 4: found 3 field\(s\)", r"expected 4"),
    ),
    "conll-unknown-tag": (
        conll_unknown_tag,
        expect_error(ValueError, r"valid\.txt, line 2: NER tag 'B-ACTION' is unknown"),
    ),
    "conll-empty-file": (conll_empty_file, expect_error(ValueError, r"valid\.txt: no sentence found")),
    "conll-iob1-tags": (conll_iob1_tags, "ok"),
    "swag-label-out-of-range": (
        swag_label_out_of_range,
        expect_error(ValueError, r"val\.csv.*line 2.*'label' = '7'; expected 0, 1, 2, 3"),
    ),
    "swag-short-row": (
        swag_short_row,
        expect_error(ValueError, r"val\.csv.*line 2.*found 9 field\(s\), the header has 11"),
    ),
    "corpus-one-document": (corpus_one_document, "ok"),
    "corpus-one-document-strict": (corpus_one_document_strict, expect_error(ValueError, r"single document")),
    "corpus-one-sentence-documents": (corpus_one_sentence_documents, "ok"),
    "corpus-empty-file": (
        corpus_empty_file,
        expect_error(ValueError, r"no documents \(non-blank lines\) in \[.*corpus\.txt'\]"),
    ),
    "corpus-non-utf8": (corpus_non_utf8, expect_error(ValueError, r"corpus\.txt:2: not valid utf-8 text")),
    "collator-vocab-without-mask-token": (
        collator_vocab_without_mask_token,
        expect_error(ValueError, r"no mask token \(\[MASK\]\); MLM needs one"),
    ),
    "vocab-file-without-mask-line": (vocab_file_without_mask_line, "ok"),
    "collator-features-with-different-keys": (
        collator_features_with_different_keys,
        expect_error(ValueError, r"feature 1 has keys \['input_ids'\], feature 0 has"),
    ),
    "collator-feature-longer-than-max-length": (
        collator_feature_longer_than_max_length,
        expect_error(ValueError, r"a feature has 6 tokens, more than max_length=4"),
    ),
    "collator-empty-batch": (
        collator_empty_batch,
        expect_error(ValueError, r"cannot collate an empty list of features"),
    ),
    "user-file-missing": (
        user_file_missing,
        expect_error(FileNotFoundError, r"nope\.csv: no such file \(given as the train file\)"),
    ),
    "user-file-extension": (
        user_file_extension,
        expect_error(
            ValueError,
            r"mine\.xlsx: extension '\.xlsx'; task 'sst2' reads \.csv / \.tsv \(a header row\), \.json / \.jsonl",
        ),
    ),
    "user-file-missing-columns": (
        user_file_missing_columns,
        expect_error(
            ValueError,
            r"mine\.csv, line 1: column\(s\) \['sentence', 'label'\] not found; found \['text', 'sentiment'\], expected \['sentence', 'label'\] for task 'sst2'",
            r"--text_column_names",
        ),
    ),
    "user-file-text-column-count": (
        user_file_text_column_count,
        expect_error(
            ValueError,
            r"--text_column_names a,b: 2 names, task 'sst2' has 1 text column\(s\); expected names for \['sentence'\]",
        ),
    ),
    "user-file-and-data-dir": (
        user_file_and_data_dir,
        expect_error(
            ValueError,
            r"--data_dir .* and --train_file/--validation_file/--test_file were both given; expected one source of data",
        ),
    ),
    "user-file-no-label": (
        user_file_no_label,
        expect_error(
            ValueError,
            r"mine\.csv, line 2: no label in column 'label'; expected negative, positive \(names or ids 0-1\)",
        ),
    ),
    "user-file-unknown-label": (
        user_file_unknown_label,
        expect_error(
            ValueError,
            r"mine\.csv, line 3: label 'neutral' is not one of task 'sst2''s labels; expected negative, positive",
        ),
    ),
    "user-file-score-not-a-number": (
        user_file_score_not_a_number,
        expect_error(ValueError, r"pairs\.csv, line 2: label 'high' is not a number; expected a float score"),
    ),
    "user-file-ner-tag-count": (
        user_file_ner_tag_count,
        expect_error(ValueError, r"ner\.jsonl, line 1: 2 tokens but 1 tags; expected one tag per token"),
    ),
    "user-file-ner-unknown-tag": (
        user_file_ner_unknown_tag,
        expect_error(
            ValueError,
            r"ner\.jsonl, line 1: tag 'THING' is not a tag; expected 'O' or a prefix B-, I- \(IOB\)",
            r"or an id 0-8 of \['O', 'B-PER'",
        ),
    ),
    "user-file-ner-not-lists": (
        user_file_ner_not_lists,
        expect_error(ValueError, r"ner\.jsonl, line 1: tokens and tags must be lists"),
    ),
    "user-file-squad-answers-shape": (
        user_file_squad_answers_shape,
        expect_error(
            ValueError,
            r"qa\.jsonl, line 1: answers .*; expected .*\(lists of equal length; empty lists for no answer\)",
        ),
    ),
    "user-file-squad-answer-mismatch": (
        user_file_squad_answer_mismatch,
        expect_error(
            ValueError,
            r"qa\.jsonl, question id 'a', answer 0: text 'ines' does not match the context at answer_start 3",
        ),
    ),
    "user-file-empty": (user_file_empty, expect_error(ValueError, r"mine\.csv: the file is empty")),
    "user-file-broken-quote": (
        user_file_broken_quote,
        expect_error(ValueError, r"mine\.csv, line 3: broken quoting \(a quoted field is not closed\)"),
    ),
    "user-file-row-width": (
        user_file_row_width,
        expect_error(ValueError, r"pairs\.csv, line 3: found 2 comma-separated field\(s\), the header has 3"),
    ),
    "user-file-jsonl-bad-line": (
        user_file_jsonl_bad_line,
        expect_error(ValueError, r"mine\.jsonl, line 2: not valid JSON \(Expecting property name"),
    ),
    "user-file-tsv-csv-quoted": (
        user_file_tsv_csv_quoted,
        expect_error(ValueError, r"mine\.tsv, line 3: field .* is quoted as a CSV writer quotes"),
    ),
    "user-file-ner-unseen-dev-tag": (
        user_file_ner_unseen_dev_tag,
        expect_error(ValueError, r"dev\.txt, line 1: tag 'B-ORG' is not in the label set \['O', 'B-LOC'"),
    ),
    "user-file-swag-label": (
        user_file_swag_label,
        expect_error(ValueError, r"mc\.csv, line 2: label '4'; expected 0, 1, 2 or 3"),
    ),
}

_FIXTURES = ("caplog", "tiny_bert_dir", "vocab_tokenizer")


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input(case, tmp_path, request):
    build, expected = CASES[case]
    names = build.__code__.co_varnames[1 : build.__code__.co_argcount]
    run = build(tmp_path, *(request.getfixturevalue(n) for n in names if n in _FIXTURES))
    if expected == "ok":
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            run()
        return
    _, exc, patterns = expected
    with pytest.raises(exc) as info:
        run()
    for pattern in patterns:
        assert re.search(pattern, str(info.value)), f"{case}: {pattern!r} not in {str(info.value)!r}"


@pytest.mark.parametrize("case", [c for c, (_, expected) in CASES.items() if expected != "ok"])
def test_the_cli_prints_each_documented_error_as_one_line_with_status_2(case, tmp_path, request, capsys):
    """What a user of ``hf-bert-tasks`` sees for the same error: ``hf-bert-tasks: error: <message>``, exit 2."""
    from hf_bert_tasks import cli

    build, (_, exc, _) = CASES[case]
    names = build.__code__.co_varnames[1 : build.__code__.co_argcount]
    run = build(tmp_path, *(request.getfixturevalue(n) for n in names if n in _FIXTURES))
    with pytest.raises(exc) as info:
        run()
    assert isinstance(info.value, cli.USER_ERRORS)  # caught by the boundary, so no traceback
    capsys.readouterr()
    assert cli.report_error(info.value) == 2
    err = capsys.readouterr().err
    assert err == f"hf-bert-tasks: error: {' '.join(str(info.value).split())}\n"


def test_catalogue_has_at_least_30_cases_and_matches_the_docs():
    with open(os.path.join(REPO, "docs", "bad_inputs.md"), encoding="utf-8") as f:
        documented = set(re.findall(r"^\| `([a-z0-9-]+)` \|", f.read(), flags=re.MULTILINE))
    assert len(CASES) >= 30
    assert documented == set(CASES), (sorted(set(CASES) - documented), sorted(documented - set(CASES)))
