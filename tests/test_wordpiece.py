"""``train_wordpiece_tokenizer`` gives the same vocabulary every run (tokenizers' trainer alone does not:
huggingface/tokenizers#1794), and its ``##`` pieces stay ordinary pieces."""

from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

TEXTS = [
    "the kettle sat by the bright red lantern .",
    "a violin and a drum sang at the market .",
    "rosa carried the ladder past the mill .",
]


def test_training_twenty_times_gives_one_vocabulary():
    # with tokenizers' WordPieceTrainer used directly, these 20 trainings gave 20 different vocabularies (measured)
    vocabularies = {
        tuple(sorted(train_wordpiece_tokenizer(TEXTS, vocab_size=60).get_vocab().items())) for _ in range(20)
    }
    assert len(vocabularies) == 1


def test_special_tokens_keep_their_ids_and_continuation_pieces_are_not_special():
    tokenizer = train_wordpiece_tokenizer(TEXTS, vocab_size=45)
    assert [tokenizer.convert_tokens_to_ids(t) for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [
        0,
        1,
        2,
        3,
        4,
    ]
    assert sorted(tokenizer.all_special_tokens) == ["[CLS]", "[MASK]", "[PAD]", "[SEP]", "[UNK]"]
    ids = tokenizer("lantern")["input_ids"]
    pieces = tokenizer.convert_ids_to_tokens(ids)
    assert pieces[0] == "[CLS]" and pieces[-1] == "[SEP]" and any(p.startswith("##") for p in pieces)
    assert tokenizer.decode(ids, skip_special_tokens=True) == "lantern"


def test_a_one_shot_iterator_and_a_callable_give_the_list_s_vocabulary():
    expected = train_wordpiece_tokenizer(TEXTS, vocab_size=60).get_vocab()
    assert train_wordpiece_tokenizer(iter(TEXTS), vocab_size=60).get_vocab() == expected
    assert train_wordpiece_tokenizer(lambda: iter(TEXTS), vocab_size=60).get_vocab() == expected
