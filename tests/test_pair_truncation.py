"""GLUE sentence pairs are truncated by google-research/bert's ``_truncate_seq_pair`` (run_classifier.py): pop the
last token of the longer segment until the pair fits; at equal lengths pop from segment B."""

import pytest

from hf_bert_tasks.tasks.glue import encode_pairs, truncate_seq_pair


@pytest.mark.parametrize(
    ("len_a", "len_b", "budget", "expected"),
    [
        # worked by hand, one pop at a time: (5,5)->(5,4)->(4,4)->(4,3)
        (5, 5, 7, (4, 3)),
        # (4,4)->(4,3)->(3,3)->(3,2)->(2,2)->(2,1)
        (4, 4, 3, (2, 1)),
        # only the longer loses while it stays longer: (9,2)->...->(5,2)
        (9, 2, 7, (5, 2)),
        # (2,9)->...->(2,5)
        (2, 9, 7, (2, 5)),
        # (6,3): 6,3 -> 5,3 -> 4,3 -> 3,3 -> 3,2  (budget 5)
        (6, 3, 5, (3, 2)),
        (3, 3, 6, (3, 3)),
        (0, 4, 2, (0, 2)),
    ],
)
def test_truncate_seq_pair_follows_googles_pop_order(len_a, len_b, budget, expected):
    assert truncate_seq_pair(len_a, len_b, budget) == expected


def test_truncate_seq_pair_matches_the_pop_loop_on_every_small_case():
    def google(a, b, budget):  # transcription of _truncate_seq_pair on lengths
        while a + b > budget:
            if a > b:
                a -= 1
            else:
                b -= 1
        return a, b

    for a in range(8):
        for b in range(8):
            for budget in range(12):
                assert truncate_seq_pair(a, b, budget) == google(a, b, budget)


def test_equal_pair_at_odd_budget_keeps_segment_a_longer(vocab_tokenizer):
    a = " ".join(["the"] * 5)
    b = " ".join(["a"] * 5)
    one = vocab_tokenizer.convert_tokens_to_ids
    out = encode_pairs(vocab_tokenizer, [a], [b], max_seq_length=10)  # 7 tokens of the 10 for A and B
    cls, sep = vocab_tokenizer.cls_token_id, vocab_tokenizer.sep_token_id
    assert out["input_ids"][0] == [cls, *[one("the")] * 4, sep, *[one("a")] * 3, sep]
    assert out["token_type_ids"][0] == [0] * 6 + [1] * 4
    assert out["attention_mask"][0] == [1] * 10


def test_pairs_that_fit_equal_the_tokenizers_own_pair_encoding(vocab_tokenizer):
    a, b = ["the cat sat", "a dog"], ["on the mat", "ran"]
    ours = encode_pairs(vocab_tokenizer, a, b, max_seq_length=64)
    theirs = vocab_tokenizer(a, b, truncation=True, max_length=64)
    for key in ("input_ids", "token_type_ids", "attention_mask"):
        assert ours[key] == theirs[key]
