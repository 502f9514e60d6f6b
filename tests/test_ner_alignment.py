"""NER helpers (hf_bert_tasks.tasks.conll2003.features): tag schemes, WordPiece label alignment, windows, document context, metrics.

Token ids below come from tests/conftest.py's VOCAB (id = line number): [CLS]=2 [SEP]=3 the=5 cat=7 sat=9 on=10
mat=11 .=14 he=30 un=24 ##believ=25 ##able=26 new=27 york=28 in=29 she=31.
Label ids are CoNLL-2003's: O=0 B-PER=1 I-PER=2 B-ORG=3 I-ORG=4 B-LOC=5 I-LOC=6 B-MISC=7 I-MISC=8.
"""

import numpy as np
import pytest

from hf_bert_tasks.tasks.conll2003 import NER_LABELS
from hf_bert_tasks.tasks.conll2003 import features as ner
from hf_bert_tasks.tasks.conll2003 import metrics as ner_metrics

O, B_PER, I_PER, B_LOC, I_LOC, B_MISC, I_MISC = 0, 1, 2, 5, 6, 7, 8
X = ner_metrics.IGNORE_INDEX


def test_word_split_into_three_pieces_labels_only_its_first_piece(vocab_tokenizer):
    out = ner.tokenize_and_align(
        [["he", "unbelievable", "york"]], vocab_tokenizer, 16, tags=[[O, B_MISC, B_LOC]], label_names=NER_LABELS
    )
    assert out["input_ids"] == [[2, 30, 24, 25, 26, 28, 3]]
    assert out["labels"] == [[X, O, B_MISC, X, X, B_LOC, X]]
    assert out["word_index"] == [[-1, 0, 1, -1, -1, 2, -1]]
    assert out["token_type_ids"] == [[0] * 7]
    assert out["sentence_index"] == [0]


def test_label_all_tokens_turns_b_into_i_on_later_pieces(vocab_tokenizer):
    out = ner.tokenize_and_align(
        [["he", "unbelievable", "york"]],
        vocab_tokenizer,
        16,
        tags=[[O, B_MISC, B_LOC]],
        label_names=NER_LABELS,
        label_all_tokens=True,
    )
    assert out["labels"] == [[X, O, B_MISC, I_MISC, I_MISC, B_LOC, X]]
    # predictions still go back through the first piece only
    assert out["word_index"] == [[-1, 0, 1, -1, -1, 2, -1]]


def test_label_all_tokens_keeps_i_labels_on_later_pieces():
    inside = ner.inside_label_map(NER_LABELS)
    assert ner.align_labels([None, 0, 0, None], [I_PER], True, inside) == [X, I_PER, I_PER, X]


def test_inside_label_map_of_conll_labels():
    assert ner.inside_label_map(NER_LABELS) == [0, 2, 2, 4, 4, 6, 6, 8, 8]


def test_iob1_tags_are_converted_to_iob2():
    iob1 = ["I-PER", "I-PER", "O", "I-LOC", "B-LOC", "I-ORG", "I-MISC"]
    assert ner.detect_scheme([iob1]) == "IOB1"
    assert ner.iob1_to_iob2(iob1) == ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "B-ORG", "B-MISC"]


def test_iob2_tags_are_detected_and_left_alone():
    iob2 = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC"]
    assert ner.detect_scheme([["O"], iob2]) == "IOB2"
    assert ner.iob1_to_iob2(iob2) == iob2


def test_sentence_longer_than_the_window_is_split_without_losing_a_word(vocab_tokenizer):
    words = ["the", "cat", "sat", "on", "the", "mat", "."]
    tags = [O, B_PER, O, O, O, B_LOC, O]
    # max_seq_length 6 leaves 4 pieces per window: targets [0, 4) and [4, 7); the second borrows "on" as context
    out = ner.tokenize_and_align([words], vocab_tokenizer, 6, tags=[tags], label_names=NER_LABELS)
    assert out["input_ids"] == [[2, 5, 7, 9, 10, 3], [2, 10, 5, 11, 14, 3]]
    assert out["labels"] == [[X, O, B_PER, O, O, X], [X, X, O, B_LOC, O, X]]
    assert out["word_index"] == [[-1, 0, 1, 2, 3, -1], [-1, -1, 4, 5, 6, -1]]
    assert out["sentence_index"] == [0, 0]
    # predicting the gold label at every position gives back one tag per word, all 7 of them
    preds = np.array(out["labels"])
    assert ner_metrics.word_predictions(preds, out["word_index"], out["sentence_index"], [7]) == [tags]


def test_plan_windows_centres_the_target_in_its_context():
    windows = ner.plan_windows([[1] * 10], max_pieces=6)
    assert [(w.target_start, w.target_end) for w in windows] == [(0, 6), (6, 10)]
    # second window: 4 target pieces + 2 context words, taken from the left (nothing to the right)
    assert windows[1].words == [(0, w) for w in range(4, 10)] and windows[1].target_offset == 2


def test_a_word_longer_than_the_window_gets_its_own_window_and_keeps_its_label(vocab_tokenizer):
    out = ner.tokenize_and_align(
        [["he", "unbelievable"]], vocab_tokenizer, 4, tags=[[O, B_MISC]], label_names=NER_LABELS
    )
    assert out["input_ids"] == [[2, 30, 3], [2, 24, 25, 3]]
    assert out["labels"] == [[X, O, X], [X, B_MISC, X, X]]
    assert out["word_index"] == [[-1, 0, -1], [-1, 1, -1, -1]]


def test_document_context_windows_label_only_the_centre_sentence(vocab_tokenizer):
    sentences = [["the", "cat"], ["he", "sat"], ["she", "ran"]]
    tags = [[O, B_PER], [B_PER, O], [B_PER, O]]
    out = ner.tokenize_and_align(
        sentences,
        vocab_tokenizer,
        16,
        tags=tags,
        label_names=NER_LABELS,
        document_ids=[0, 0, 1],
        document_context=True,
    )
    # sentence 1 sees sentence 0 (same document) as context; sentence 2 is alone in document 1
    assert out["input_ids"] == [[2, 5, 7, 30, 9, 3], [2, 5, 7, 30, 9, 3], [2, 31, 12, 3]]
    assert out["labels"] == [[X, O, B_PER, X, X, X], [X, X, X, B_PER, O, X], [X, B_PER, O, X]]
    assert out["word_index"] == [[-1, 0, 1, -1, -1, -1], [-1, -1, -1, 0, 1, -1], [-1, 0, 1, -1]]
    assert out["sentence_index"] == [0, 1, 2]


def test_document_context_fills_the_window_only_as_far_as_it_fits():
    windows = ner.plan_windows([[1, 1], [1, 1], [1, 1]], max_pieces=4, document_ids=[7, 7, 7], document_context=True)
    # centre sentence 1 (words (1,0),(1,1)) grows one word left and one right
    assert windows[1].words == [(0, 1), (1, 0), (1, 1), (2, 0)] and windows[1].target_offset == 1


def test_document_context_without_document_ids_is_an_error():
    with pytest.raises(ValueError, match="document_context needs the document"):
        ner.plan_windows([[1]], 8, document_ids=[-1], document_context=True)


def test_word_predictions_from_logits_padded_by_trainer():
    logits = np.full((2, 5, 9), -100.0)  # Trainer pads batches with -100
    logits[0, 1, B_PER] = logits[0, 2, I_PER] = logits[1, 1, B_LOC] = 1.0
    preds = ner_metrics.word_predictions(logits, [[-1, 0, 1, -1], [-1, 0, -1]], [0, 1], [2, 1])
    assert preds == [[B_PER, I_PER], [B_LOC]]


def test_strict_mode_and_conlleval_mode_differ_on_an_i_tag_after_o():
    gold = [["B-PER", "I-PER", "O", "B-LOC"]]
    pred = [["I-PER", "I-PER", "O", "B-LOC"]]
    strict = ner_metrics.entity_metrics(gold, pred, mode="strict")
    lenient = ner_metrics.entity_metrics(gold, pred, mode="conlleval")
    assert (strict["precision"], strict["recall"], strict["f1"]) == (1.0, 0.5, pytest.approx(2 / 3))
    assert strict["PER_f1"] == 0.0 and strict["LOC_f1"] == 1.0
    assert (lenient["precision"], lenient["recall"], lenient["f1"]) == (1.0, 1.0, 1.0)
    # conlleval's reading of the prediction = strict mode on the prediction repaired to IOB2
    assert ner_metrics.entity_metrics(gold, [ner.iob1_to_iob2(pred[0])], mode="strict")["f1"] == 1.0


def test_entity_metrics_per_type_and_token_accuracy():
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "I-PER", "O", "B-ORG"], ["B-ORG", "O"]]
    m = ner_metrics.entity_metrics(gold, pred)
    assert (m["precision"], m["recall"], m["f1"]) == (pytest.approx(2 / 3), pytest.approx(2 / 3), pytest.approx(2 / 3))
    assert m["accuracy"] == pytest.approx(5 / 6)
    assert (m["PER_f1"], m["LOC_f1"], m["ORG_precision"], m["ORG_recall"]) == (1.0, 0.0, 0.5, 1.0)
    assert (m["PER_number"], m["LOC_number"], m["ORG_number"]) == (1, 1, 1)


def test_token_level_metrics_skip_ignored_positions():
    labels = np.array([[X, B_PER, X, O, X]])
    preds = np.array([[O, B_PER, B_LOC, O, O]])
    m = ner_metrics.token_level_metrics(preds, labels, NER_LABELS)
    assert m["f1"] == 1.0 and m["accuracy"] == 1.0


def test_write_conll_gives_token_gold_pred_lines(tmp_path):
    path = tmp_path / "pred.txt"
    ner_metrics.write_conll(
        str(path), [["nadia", "ran"], ["ok"]], [["B-PER", "O"], ["O"]], [["B-PER", "O"], ["B-ORG"]]
    )
    assert path.read_text() == "nadia B-PER B-PER\nran O O\n\nok B-ORG O\n\n"
    with pytest.raises(FileExistsError):
        ner_metrics.write_conll(str(path), [["ok"]], [["O"]])


def test_alignment_needs_a_fast_tokenizer():
    class Slow:
        is_fast = False

    with pytest.raises(ValueError, match="fast tokenizer"):
        ner.tokenize_and_align([["a"]], Slow(), 8)
