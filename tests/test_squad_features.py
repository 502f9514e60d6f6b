"""SQuAD windowed features (hf_bert_tasks.tasks.squad.features.create_features) and the official-JSON reader, on written fixtures.

Token ids are line numbers of tests.conftest.VOCAB: [CLS]=2 [SEP]=3 the=5 a=6 cat=7 dog=8 sat=9 on=10 mat=11 ran=12
to=13 .=14 new=27 york=28; anything else is [UNK]=1.
"""

import json

import pytest

from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.squad import features as qa

# 14 context tokens: a(0) dog(1) sat(2) on(3) the(4) mat(5) .(6) the(7) cat(8) ran(9) to(10) new(11) york(12) .(13)
CONTEXT = "a dog sat on the mat . the cat ran to new york ."
# question "the cat" = 2 tokens -> window = 12 - 2 - 3 = 7 context tokens; windows (0, 7) (4, 7) (8, 6)
SMALL = qa.WindowConfig(max_seq_length=12, doc_stride=4, max_query_length=2)


def answer(text, context=CONTEXT, occurrence=0):
    start = -1
    for _ in range(occurrence + 1):
        start = context.index(text, start + 1)
    return {"text": [text], "answer_start": [start]}


def test_window_spans_follow_google_doc_stride():
    assert qa.window_spans(14, 7, 4) == [(0, 7), (4, 7), (8, 6)]
    assert qa.window_spans(5, 7, 4) == [(0, 5)]
    assert qa.window_spans(0, 7, 4) == [(0, 0)]


def test_max_context_prefers_the_window_where_the_token_is_central():
    # score = min(left, right) + 0.01 * window length. Token 5: (0,7) 1.07, (4,7) 1.07 -> tie, first window wins.
    # Token 6: (0,7) 0.07, (4,7) 2.07. Token 9: (4,7) min(5,1)+0.07 = 1.07 beats (8,6) min(1,4)+0.06 = 1.06.
    masks = qa.max_context_mask([(0, 7), (4, 7), (8, 6)])
    assert masks[0] == [True, True, True, True, True, True, False]
    assert masks[1] == [False, False, True, True, True, True, False]
    assert masks[2] == [False, False, True, True, True, True]


def test_windows_inputs_and_labels_when_the_answer_is_in_the_second_window(vocab_tokenizer):
    feats = qa.create_features(["the cat"], [CONTEXT], vocab_tokenizer, SMALL, answers=[answer("cat ran")])
    assert feats["input_ids"] == [
        [2, 5, 7, 3, 6, 8, 9, 10, 5, 11, 14, 3],
        [2, 5, 7, 3, 5, 11, 14, 5, 7, 12, 13, 3],
        [2, 5, 7, 3, 7, 12, 13, 27, 28, 14, 3],
    ]
    assert feats["token_type_ids"][0] == [0, 0, 0, 0] + [1] * 8
    assert feats["attention_mask"][2] == [1] * 11
    # "cat ran" = context tokens 8-9: not in window 1, positions 4 + (8-4) in window 2, 4 + 0 in window 3
    assert feats["start_positions"] == [0, 8, 4]
    assert feats["end_positions"] == [0, 9, 5]


def test_an_answer_no_window_holds_whole_points_at_cls(vocab_tokenizer):
    # "dog sat on the mat . the cat" = tokens 1-8 (8 tokens) is longer than any 7-token window
    feats = qa.create_features(
        ["the cat"], [CONTEXT], vocab_tokenizer, SMALL, answers=[answer("dog sat on the mat . the cat")]
    )
    assert feats["start_positions"] == [0, 0, 0] and feats["end_positions"] == [0, 0, 0]


def test_an_answer_cut_by_the_first_window_is_labelled_in_the_second(vocab_tokenizer):
    # "mat . the" = tokens 5-7: window 1 ends at token 6, window 2 (4..10) holds it at 4 + 1 .. 4 + 3
    feats = qa.create_features(["the cat"], [CONTEXT], vocab_tokenizer, SMALL, answers=[answer("mat . the")])
    assert feats["start_positions"] == [0, 5, 0] and feats["end_positions"] == [0, 7, 0]


def test_an_impossible_question_points_at_cls_everywhere(vocab_tokenizer):
    feats = qa.create_features(
        ["the cat"], [CONTEXT], vocab_tokenizer, SMALL, answers=[{"text": [], "answer_start": []}]
    )
    assert feats["start_positions"] == [0, 0, 0] and feats["end_positions"] == [0, 0, 0]


def test_a_question_longer_than_max_query_length_is_cut(vocab_tokenizer):
    config = qa.WindowConfig(max_seq_length=16, doc_stride=4, max_query_length=3)
    feats = qa.create_features(
        ["the cat sat on the mat and ran to new york"],
        ["a dog ran ."],
        vocab_tokenizer,
        config,
        answers=[answer("dog", "a dog ran .")],
    )
    assert feats["input_ids"] == [[2, 5, 7, 9, 3, 6, 8, 12, 14, 3]]
    assert feats["start_positions"] == [6] and feats["end_positions"] == [6]


def test_non_ascii_and_extra_whitespace_keep_offsets_exact(vocab_tokenizer):
    context = "  Zürich   is  new york .  "
    config = qa.WindowConfig(max_seq_length=32, doc_stride=8, max_query_length=8)
    train = qa.create_features(
        ["it"], [context], vocab_tokenizer, config, answers=[{"text": [" new york "], "answer_start": [14]}]
    )
    # [CLS] it [SEP] [UNK](Zürich) is new york . [SEP]: "new york" = positions 5-6 despite the spaces around it
    assert train["input_ids"] == [[2, 32, 3, 1, 16, 27, 28, 14, 3]]
    assert (train["start_positions"], train["end_positions"]) == ([5], [6])
    evalf = qa.create_features(["it"], [context], vocab_tokenizer, config, example_ids=["q1"])
    offsets = evalf["offset_mapping"][0]
    assert offsets == [[-1, -1]] * 3 + [[2, 8], [11, 13], [15, 18], [19, 23], [24, 25]] + [[-1, -1]]
    assert context[2:8] == "Zürich" and context[15:23] == "new york"


def test_eval_features_keep_example_id_context_offsets_and_max_context(vocab_tokenizer):
    feats = qa.create_features(["the cat"], [CONTEXT], vocab_tokenizer, SMALL, example_ids=["q7"])
    assert feats["example_id"] == ["q7", "q7", "q7"]
    assert "start_positions" not in feats
    first = feats["offset_mapping"][0]
    assert first[:4] == [[-1, -1]] * 4 and first[-1] == [-1, -1]
    assert first[4:6] == [[0, 1], [2, 5]]  # "a", "dog"
    assert feats["token_is_max_context"][1] == [False] * 4 + [False, False, True, True, True, True, False] + [False]


def test_an_answer_that_does_not_match_the_context_is_an_error(vocab_tokenizer):
    with pytest.raises(ValueError, match=r"example 0: answer 'cat' does not match the context at answer_start 3"):
        qa.create_features(
            ["the cat"], [CONTEXT], vocab_tokenizer, SMALL, answers=[{"text": ["cat"], "answer_start": [3]}]
        )


@pytest.mark.parametrize(
    "config, message",
    [
        (qa.WindowConfig(max_seq_length=10, doc_stride=2, max_query_length=8), "leaves no room for context"),
        (
            qa.WindowConfig(max_seq_length=12, doc_stride=5, max_query_length=8),
            r"doc_stride 5 must be between 1 and 1",
        ),
        (qa.WindowConfig(max_seq_length=64, doc_stride=0, max_query_length=8), r"doc_stride 0 must be between 1"),
    ],
)
def test_a_stride_that_leaves_no_room_is_a_clear_error(config, message, vocab_tokenizer):
    with pytest.raises(ValueError, match=message):
        qa.create_features(["the cat"], [CONTEXT], vocab_tokenizer, config)


# ------------------------------------------------------------------------------------------------- reader
def write(path, data, version="1.1"):
    path.write_text(json.dumps({"version": version, "data": data}), encoding="utf-8")
    return str(path)


def test_reader_returns_hub_columns(tmp_path):
    data = [
        {
            "title": "T",
            "paragraphs": [
                {
                    "context": "a cat sat .",
                    "qas": [
                        {
                            "id": "q1",
                            "question": "who sat?",
                            "answers": [{"text": "cat", "answer_start": 2}, {"text": "a cat", "answer_start": 0}],
                        }
                    ],
                }
            ],
        }
    ]
    cols = get_task("squad_v1").read_json(write(tmp_path / "dev-v1.1.json", data))
    assert cols == {
        "id": ["q1"],
        "title": ["T"],
        "context": ["a cat sat ."],
        "question": ["who sat?"],
        "answers": [{"text": ["cat", "a cat"], "answer_start": [2, 0]}],
    }


def test_reader_names_the_question_whose_answer_start_is_wrong(tmp_path):
    data = [
        {
            "title": "T",
            "paragraphs": [
                {
                    "context": "a cat sat .",
                    "qas": [{"id": "q9", "question": "who?", "answers": [{"text": "cat", "answer_start": 3}]}],
                }
            ],
        }
    ]
    with pytest.raises(ValueError, match=r"question id 'q9', answer 0: text 'cat' does not match the context"):
        get_task("squad_v1").read_json(write(tmp_path / "dev-v1.1.json", data))


def test_reader_keeps_v2_impossible_questions_with_empty_answers(tmp_path):
    data = [
        {
            "title": "T",
            "paragraphs": [
                {
                    "context": "a cat sat .",
                    "qas": [
                        {
                            "id": "q2",
                            "question": "who ran?",
                            "answers": [],
                            "is_impossible": True,
                            "plausible_answers": [{"text": "cat", "answer_start": 2}],
                        }
                    ],
                }
            ],
        }
    ]
    cols = get_task("squad_v2").read_json(write(tmp_path / "dev-v2.0.json", data, "v2.0"))
    assert cols["answers"] == [{"text": [], "answer_start": []}]


def test_reader_rejects_a_v2_file_for_squad_v1(tmp_path):
    data = [
        {
            "title": "T",
            "paragraphs": [
                {"context": "a cat .", "qas": [{"id": "q3", "question": "?", "answers": [], "is_impossible": True}]}
            ],
        }
    ]
    with pytest.raises(ValueError, match=r"question id 'q3': is_impossible is true.*--task squad_v2"):
        get_task("squad_v1").read_json(write(tmp_path / "dev-v1.1.json", data))


def test_reader_reports_the_line_of_broken_json(tmp_path):
    path = tmp_path / "dev-v1.1.json"
    path.write_text('{"version": "1.1",\n "data": [\n oops]}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"dev-v1.1.json, line 3, column 2: not valid JSON"):
        get_task("squad_v1").read_json(str(path))


def test_configure_returns_a_copy_with_the_data_options():
    from types import SimpleNamespace

    task = get_task("squad_v2")
    args = SimpleNamespace(
        doc_stride=32, max_query_length=16, n_best_size=5, max_answer_length=10, null_score_diff_threshold=-1.5
    )
    configured = task.configure(args)
    assert configured is not task and task.doc_stride == 128
    assert (
        configured.doc_stride,
        configured.max_query_length,
        configured.n_best_size,
        configured.max_answer_length,
        configured.tau,
    ) == (32, 16, 5, 10, -1.5)


@pytest.mark.slow
def test_the_official_dev_files_read_with_their_official_counts():
    from tests.conftest import shared_data

    v1 = get_task("squad_v1").read_json(shared_data("squad", "dev-v1.1.json"))
    assert len(v1["id"]) == 10570 and all(a["text"] for a in v1["answers"])
    v2 = get_task("squad_v2").read_json(shared_data("squad", "dev-v2.0.json"))
    assert len(v2["id"]) == 11873
    assert sum(1 for a in v2["answers"] if not a["text"]) == 5945
