"""DataCollatorForBertPretraining: padding, MLM selection (Bernoulli / exact count), 80/10/10, whole-word masking."""

import pytest
import torch

from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

N_ORDINARY = 1000  # a large vocabulary, so a random replacement rarely equals the original token


@pytest.fixture(scope="module")
def big_tokenizer(tmp_path_factory):
    """``[PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4`` then ``N_ORDINARY`` ordinary tokens ``t0 .. t999`` (ids 5..)."""
    from transformers import BertTokenizer

    path = tmp_path_factory.mktemp("bigvocab") / "vocab.txt"
    path.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"t{i}" for i in range(N_ORDINARY)]) + "\n"
    )
    return BertTokenizer(vocab=str(path))


def _ordinary_rows(n_rows, n_tokens, seed=0):
    g = torch.Generator().manual_seed(seed)
    body = torch.randint(5, 5 + N_ORDINARY, (n_rows, n_tokens), generator=g)
    return [{"input_ids": [2, *row.tolist(), 3]} for row in body]


def _categories(batch, original):
    labels = batch["labels"]
    selected = labels != -100
    ids = batch["input_ids"]
    masked = selected & (ids == 4)
    kept = selected & (ids == original)
    randomised = selected & ~masked & ~kept
    return selected, masked, kept, randomised


def test_docstring_example_exact_tensors(vocab_tokenizer):
    c = DataCollatorForBertPretraining(
        vocab_tokenizer, mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0
    )
    out = c(
        [{"input_ids": [2, 7, 3], "next_sentence_label": 1}, {"input_ids": [2, 7, 9, 3], "next_sentence_label": 0}]
    )
    assert out["input_ids"].tolist() == [[2, 4, 3, 0], [2, 4, 4, 3]]
    assert out["token_type_ids"].tolist() == [[0, 0, 0, 0], [0, 0, 0, 0]]
    assert out["attention_mask"].tolist() == [[1, 1, 1, 0], [1, 1, 1, 1]]
    assert out["labels"].tolist() == [[-100, 7, -100, -100], [-100, 7, 9, -100]]
    assert out["next_sentence_label"].tolist() == [1, 0]


def test_bernoulli_selects_15_percent_with_80_10_10(big_tokenizer):
    rows = _ordinary_rows(20_000, 64)
    original = torch.tensor([r["input_ids"] for r in rows])
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0)(rows)
    selected, masked, kept, randomised = _categories(out, original)
    n_ordinary, n_sel = 20_000 * 64, selected.sum().item()
    assert abs(n_sel / n_ordinary - 0.15) < 0.005
    assert abs(masked.sum().item() / n_sel - 0.80) < 0.01
    assert abs(randomised.sum().item() / n_sel - 0.10) < 0.01
    assert abs(kept.sum().item() / n_sel - 0.10) < 0.01


def test_bernoulli_achieves_a_40_percent_masking_rate_over_2000_rows(big_tokenizer):
    """--mlm_probability 0.4 (Wettig et al. 2022): 40 % of the 128,000 ordinary positions selected, within 0.5 points
    (the binomial std is 0.14 points), still 80/10/10 among them."""
    rows = _ordinary_rows(2_000, 64, seed=4)
    original = torch.tensor([r["input_ids"] for r in rows])
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0, mlm_probability=0.4)(rows)
    selected, masked, _, _ = _categories(out, original)
    assert abs(selected.sum().item() / (2_000 * 64) - 0.40) < 0.005
    assert abs(masked.sum().item() / selected.sum().item() - 0.80) < 0.01


def test_exact_count_achieves_a_40_percent_masking_rate_over_2000_rows(big_tokenizer):
    """Exact count at 0.4 with no per-sequence cap: round_half_up(100 * 0.4) = 40 of every 100-token row (google
    counts [CLS]/[SEP] in the length), a rate of 0.40 per row."""
    rows = _ordinary_rows(2_000, 98, seed=5)
    out = DataCollatorForBertPretraining(
        big_tokenizer, seed=0, selection="exact", mlm_probability=0.4, max_predictions_per_seq=100
    )(rows)
    counts = (out["labels"] != -100).sum(1)
    assert counts.tolist() == [40] * 2_000
    assert abs(counts.sum().item() / (2_000 * 100) - 0.40) < 0.005


def test_random_replacements_are_ordinary_tokens(big_tokenizer):
    rows = _ordinary_rows(2_000, 64, seed=1)
    original = torch.tensor([r["input_ids"] for r in rows])
    out = DataCollatorForBertPretraining(big_tokenizer, seed=3, mask_replace_prob=0.0, random_replace_prob=1.0)(rows)
    _, _, _, randomised = _categories(out, original)
    assert randomised.sum().item() > 1000
    assert (out["input_ids"][randomised] >= 5).all()


@pytest.mark.parametrize("selection", ["bernoulli", "exact"])
@pytest.mark.parametrize("wwm", [False, True])
def test_special_and_pad_positions_never_selected(big_tokenizer, selection, wwm):
    lengths = [3, 7, 12, 30, 31, 64]
    feats = []
    for i, n in enumerate(lengths):
        ids = [2] + [5 + (7 * i + j) % N_ORDINARY for j in range(n - 2)] + [3]
        ids[len(ids) // 2] = 1  # an [UNK] inside
        feats.append({"input_ids": ids, "word_ids": [-1] + list(range(n - 2)) + [-1]})
    width = 64  # the longest row, already a multiple of 8
    original = torch.tensor([f["input_ids"] + [0] * (width - len(f["input_ids"])) for f in feats])
    special = original <= 3  # [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3, padding included
    n_selected = 0
    for seed in range(100):
        c = DataCollatorForBertPretraining(
            big_tokenizer,
            seed=seed,
            mlm_probability=0.5,
            selection=selection,
            whole_word_mask=wwm,
            pad_to_multiple_of=8,
        )
        out = c(feats)
        assert out["input_ids"].shape == (len(feats), width)
        assert (out["labels"][special] == -100).all()
        assert torch.equal(out["input_ids"][special], original[special])
        n_selected += (out["labels"] != -100).sum().item()
    assert n_selected > 1000  # ordinary positions were selected meanwhile


def test_exact_count_gives_googles_count(big_tokenizer):
    lengths = [3, 5, 10, 17, 40, 66, 100, 130, 200]
    feats = [{"input_ids": [2] + [5 + j for j in range(n - 2)] + [3]} for n in lengths]
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0, selection="exact", max_predictions_per_seq=20)(feats)
    counts = (out["labels"] != -100).sum(1).tolist()
    # min(20, max(1, round_half_up(n * 0.15))), n counting [CLS]/[SEP] as google's len(tokens)
    assert counts == [1, 1, 2, 3, 6, 10, 15, 20, 20]


def test_exact_count_rounds_half_up_like_python2(big_tokenizer):
    feats = [{"input_ids": [2] + [5 + j for j in range(8)] + [3]}]  # n = 10, 10 * 0.25 = 2.5 -> 3 (Python 3 round: 2)
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0, selection="exact", mlm_probability=0.25)(feats)
    assert (out["labels"] != -100).sum().item() == 3


def _wwm_rows(n_rows, n_words, seed=0):
    """Rows of ordinary tokens grouped into words of 1-3 pieces; returns features and the word id matrix."""
    g = torch.Generator().manual_seed(seed)
    feats = []
    for _ in range(n_rows):
        sizes = torch.randint(1, 4, (n_words,), generator=g).tolist()
        words = [w for w, s in enumerate(sizes) for _ in range(s)]
        ids = torch.randint(5, 5 + N_ORDINARY, (len(words),), generator=g).tolist()
        feats.append({"input_ids": [2, *ids, 3], "word_ids": [-1, *words, -1]})
    return feats


def test_whole_word_masking_selects_all_pieces_and_decides_80_10_10_per_word(big_tokenizer):
    feats = _wwm_rows(8_000, 32)  # about 8,000 x 64 tokens, 256,000 words
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0, whole_word_mask=True)(feats)
    n_words = n_sel = n_mask = n_keep = n_rand = 0
    n_tokens = n_sel_tokens = 0
    for row, f in enumerate(feats):
        labels = out["labels"][row].tolist()
        ids = out["input_ids"][row].tolist()
        words: dict[int, list[int]] = {}
        for pos, w in enumerate(f["word_ids"]):
            if w >= 0:
                words.setdefault(w, []).append(pos)
        n_words += len(words)
        n_tokens += sum(len(p) for p in words.values())
        for positions in words.values():
            chosen = {labels[p] != -100 for p in positions}
            assert len(chosen) == 1, "pieces of one word must be selected together"
            if chosen.pop():
                n_sel += 1
                n_sel_tokens += len(positions)
                cats = {
                    "mask" if ids[p] == 4 else "keep" if ids[p] == f["input_ids"][p] else "rand" for p in positions
                }
                # one category per word (a random piece equal to the original, p = 1/1000, would read as "keep")
                if len(cats) > 1:
                    assert cats == {"rand", "keep"}
                    cats = {"rand"}
                cat = cats.pop()
                n_mask += cat == "mask"
                n_keep += cat == "keep"
                n_rand += cat == "rand"
    assert abs(n_sel / n_words - 0.15) < 0.005
    assert abs(n_sel_tokens / n_tokens - 0.15) < 0.005
    assert abs(n_mask / n_sel - 0.80) < 0.01
    assert abs(n_rand / n_sel - 0.10) < 0.01
    assert abs(n_keep / n_sel - 0.10) < 0.01


def test_whole_word_exact_count_never_exceeds_and_keeps_words_whole(big_tokenizer):
    feats = _wwm_rows(200, 40, seed=5)
    out = DataCollatorForBertPretraining(
        big_tokenizer, seed=1, whole_word_mask=True, selection="exact", max_predictions_per_seq=20
    )(feats)
    for row, f in enumerate(feats):
        n = len(f["input_ids"])
        target = min(20, max(1, int(n * 0.15 + 0.5)))
        got = (out["labels"][row] != -100).sum().item()
        assert 1 <= got <= target
        assert got >= target - 2  # words have at most 3 pieces: a skipped word leaves at most 2 unfilled
        labels = out["labels"][row].tolist()
        for w in set(f["word_ids"]) - {-1}:
            assert len({labels[p] != -100 for p, x in enumerate(f["word_ids"]) if x == w}) == 1


def test_whole_word_mask_without_word_ids_raises(vocab_tokenizer):
    c = DataCollatorForBertPretraining(vocab_tokenizer, whole_word_mask=True)
    with pytest.raises(ValueError, match="word_ids"):
        c([{"input_ids": [2, 7, 3]}])


def test_pad_to_multiple_of_and_dynamic_padding(vocab_tokenizer):
    c = DataCollatorForBertPretraining(vocab_tokenizer, pad_to_multiple_of=8, seed=0)
    out = c(
        [
            {
                "input_ids": [2] + [7] * 11 + [3],
                "token_type_ids": [0] * 7 + [1] * 6,
                "word_ids": [-1] + list(range(11)) + [-1],
            }
        ]
    )
    assert out["input_ids"].shape == (1, 16)
    assert out["attention_mask"][0].tolist() == [1] * 13 + [0] * 3
    assert out["token_type_ids"][0].tolist() == [0] * 7 + [1] * 6 + [0] * 3
    assert out["labels"][0, 13:].tolist() == [-100] * 3
    assert "word_ids" not in out


def test_same_seed_same_masks_other_seed_differs(big_tokenizer):
    rows = _ordinary_rows(64, 64, seed=2)
    a = DataCollatorForBertPretraining(big_tokenizer, seed=7)(rows)
    b = DataCollatorForBertPretraining(big_tokenizer, seed=7)(rows)
    c = DataCollatorForBertPretraining(big_tokenizer, seed=8)(rows)
    assert torch.equal(a["input_ids"], b["input_ids"]) and torch.equal(a["labels"], b["labels"])
    assert not torch.equal(a["labels"], c["labels"])


def test_static_masks_are_padded_not_remasked(vocab_tokenizer):
    c = DataCollatorForBertPretraining(vocab_tokenizer, seed=0)
    feats = [
        {"input_ids": [2, 4, 9, 3], "labels": [-100, 7, -100, -100], "next_sentence_label": 0},
        {"input_ids": [2, 4, 3], "labels": [-100, 8, -100], "next_sentence_label": 1},
    ]
    out = c(feats)
    assert out["input_ids"].tolist() == [[2, 4, 9, 3], [2, 4, 3, 0]]
    assert out["labels"].tolist() == [[-100, 7, -100, -100], [-100, 8, -100, -100]]


def test_static_mask_map_stores_labels_per_row(vocab_tokenizer):
    c = DataCollatorForBertPretraining(
        vocab_tokenizer, seed=0, mlm_probability=1.0, mask_replace_prob=1.0, random_replace_prob=0.0
    )
    out = c.static_mask_map({"input_ids": [[2, 7, 3], [2, 7, 9, 3]], "next_sentence_label": [1, 0]})
    assert out["input_ids"] == [[2, 4, 3], [2, 4, 4, 3]]
    assert out["labels"] == [[-100, 7, -100], [-100, 7, 9, -100]]
    assert out["next_sentence_label"] == [1, 0]


def test_output_is_what_bert_for_pretraining_takes(vocab_tokenizer):
    from transformers import BertConfig, BertForPreTraining

    torch.manual_seed(0)
    model = BertForPreTraining(
        BertConfig(
            vocab_size=len(vocab_tokenizer),
            hidden_size=16,
            num_hidden_layers=1,
            num_attention_heads=2,
            intermediate_size=32,
        )
    )
    c = DataCollatorForBertPretraining(
        vocab_tokenizer, seed=0, selection="exact"
    )  # >= 1 target per row: a finite loss
    batch = c(
        [
            {"input_ids": [2, 7, 9, 3, 11, 3], "token_type_ids": [0, 0, 0, 0, 1, 1], "next_sentence_label": 1},
            {"input_ids": [2, 5, 3, 8, 3], "token_type_ids": [0, 0, 0, 1, 1], "next_sentence_label": 0},
        ]
    )
    assert set(batch) == {"input_ids", "token_type_ids", "attention_mask", "labels", "next_sentence_label"}
    loss = model(**batch).loss
    assert loss is not None and torch.isfinite(loss)


def test_bad_arguments_raise(vocab_tokenizer):
    with pytest.raises(ValueError, match="mlm_probability"):
        DataCollatorForBertPretraining(vocab_tokenizer, mlm_probability=0.0)
    with pytest.raises(ValueError, match="selection"):
        DataCollatorForBertPretraining(vocab_tokenizer, selection="topk")
    with pytest.raises(ValueError, match="sum to at most 1"):
        DataCollatorForBertPretraining(vocab_tokenizer, mask_replace_prob=0.9, random_replace_prob=0.2)


def test_mismatched_word_ids_length_names_the_feature(vocab_tokenizer):
    c = DataCollatorForBertPretraining(vocab_tokenizer, whole_word_mask=True)
    with pytest.raises(ValueError, match="feature 1: 'word_ids' has 2 entries but 'input_ids' has 3"):
        c([{"input_ids": [2, 7, 3], "word_ids": [-1, 0, -1]}, {"input_ids": [2, 7, 3], "word_ids": [-1, 0]}])


# --------------------------------------------------------------------------- masking randomness (keyed by example)
def test_splitmix64_matches_the_reference_outputs():
    """The first five outputs of splitmix64 seeded with 1234567 (Rosetta Code "Pseudo-random numbers/Splitmix64",
    from Vigna's reference splitmix64.c)."""
    import numpy as np

    from hf_bert_tasks.pretraining.collators import splitmix64

    got = splitmix64(np.array([1234567], dtype=np.uint64), np.arange(5)[None, :])[0].tolist()
    assert got == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def _same_rows(n_rows, n_tokens=30):
    """``n_rows`` features with IDENTICAL tokens but different ``idx``: any difference in their masks comes from idx."""
    body = [5 + (7 * j) % N_ORDINARY for j in range(n_tokens)]
    return [{"input_ids": [2, *body, 3], "idx": i} for i in range(n_rows)]


def _by_idx(batches, feats_per_batch):
    """{idx: (labels row, input_ids row)} from collated batches and the idx of their rows."""
    out = {}
    for batch, idxs in zip(batches, feats_per_batch):
        for row, i in enumerate(idxs):
            out[i] = (batch["labels"][row].tolist(), batch["input_ids"][row].tolist())
    return out


def test_mask_of_an_example_does_not_depend_on_its_batch_or_padding(big_tokenizer):
    feats = _ordinary_rows(6, 20, seed=4)
    for i, f in enumerate(feats):
        f["idx"] = 100 + i
    long_row = {"input_ids": [2] + [9] * 60 + [3], "idx": 7}
    c = DataCollatorForBertPretraining(big_tokenizer, seed=11, mlm_probability=0.3)
    alone = [c([f]) for f in feats]
    together = c([long_row, *feats])  # another composition, padded to 62 instead of 22
    for row, a in enumerate(alone, 1):
        n = len(feats[row - 1]["input_ids"])
        assert together["labels"][row, :n].tolist() == a["labels"][0].tolist()
        assert together["input_ids"][row, :n].tolist() == a["input_ids"][0].tolist()


def test_different_examples_with_equal_tokens_get_different_masks(big_tokenizer):
    """The issue's reproduction: identical rows under two DataLoader workers drew identical masks. Keyed by idx, the
    8 rows (same tokens) get 8 different masks (30 candidates at p=0.15: a collision has probability < 1e-3)."""
    out = DataCollatorForBertPretraining(big_tokenizer, seed=0)(_same_rows(8))
    masks = {tuple(row) for row in out["labels"].tolist()}
    assert len(masks) == 8


def test_dynamic_masks_change_with_the_epoch_and_come_back(big_tokenizer):
    feats = _same_rows(4)
    c = DataCollatorForBertPretraining(big_tokenizer, seed=0)
    epoch0 = c(feats)["labels"]
    c.set_epoch(1)
    epoch1 = c(feats)["labels"]
    c.set_epoch(0)
    again = c(feats)["labels"]
    assert torch.equal(epoch0, again)
    for row in range(4):
        assert not torch.equal(epoch0[row], epoch1[row])


class _Rows(torch.utils.data.Dataset):
    def __init__(self, feats):
        self.feats = feats

    def __len__(self):
        return len(self.feats)

    def __getitem__(self, i):
        return self.feats[i]


def _loader_masks(collator, feats, num_workers, persistent=False, epochs=(0,)):
    """{(epoch, idx): labels} collated by a DataLoader with ``num_workers`` workers (batch 4, fixed order)."""
    loader = torch.utils.data.DataLoader(
        _Rows(feats),
        batch_size=4,
        collate_fn=collator,
        num_workers=num_workers,
        persistent_workers=persistent and num_workers > 0,
    )
    out = {}
    for epoch in epochs:
        collator.set_epoch(epoch)
        for b, batch in enumerate(loader):
            for row in range(batch["labels"].shape[0]):
                out[(epoch, 4 * b + row)] = batch["labels"][row].tolist()
    return out


def test_same_seed_same_masks_whatever_num_workers(big_tokenizer):
    feats = _same_rows(8)
    masks = {
        workers: _loader_masks(DataCollatorForBertPretraining(big_tokenizer, seed=5), feats, workers)
        for workers in (0, 1, 2)
    }
    assert masks[0] == masks[1] == masks[2]
    # worker 0 collates rows 0-3, worker 1 rows 4-7: their first rows (equal tokens) differ
    assert masks[2][(0, 0)] != masks[2][(0, 4)]


def test_persistent_workers_see_the_new_epoch(big_tokenizer):
    feats = _same_rows(8)
    in_process = _loader_masks(DataCollatorForBertPretraining(big_tokenizer, seed=5), feats, 0, epochs=(0, 1))
    persistent = _loader_masks(
        DataCollatorForBertPretraining(big_tokenizer, seed=5), feats, 1, persistent=True, epochs=(0, 1)
    )
    assert persistent == in_process
    assert all(in_process[(0, i)] != in_process[(1, i)] for i in range(8))


def test_two_ranks_draw_what_one_process_draws(big_tokenizer):
    """DDP: each rank has its own collator (same seed) and half of the examples; the masks are those of one process,
    so ranks never repeat one another's masks for different examples."""
    feats = _same_rows(8)
    single = DataCollatorForBertPretraining(big_tokenizer, seed=3)(feats)["labels"]
    rank0 = DataCollatorForBertPretraining(big_tokenizer, seed=3)(feats[0::2])["labels"]
    rank1 = DataCollatorForBertPretraining(big_tokenizer, seed=3)(feats[1::2])["labels"]
    assert torch.equal(rank0, single[0::2]) and torch.equal(rank1, single[1::2])
    assert not torch.equal(rank0[0], rank1[0])


def test_static_mask_map_is_the_same_for_any_map_batch_size(big_tokenizer):
    from datasets import Dataset

    rows = _ordinary_rows(10, 12, seed=6)
    ds = Dataset.from_dict({"input_ids": [r["input_ids"] for r in rows]})
    c = DataCollatorForBertPretraining(big_tokenizer, seed=2, mlm_probability=0.3)
    one = ds.map(c.static_mask_map, batched=True, batch_size=1, with_indices=True)
    seven = ds.map(c.static_mask_map, batched=True, batch_size=7, with_indices=True)
    assert one["labels"][:] == seven["labels"][:] and one["input_ids"][:] == seven["input_ids"][:]
    assert len({tuple(x) for x in one["labels"][:]}) == 10


def test_static_masks_stay_the_same_across_epochs(vocab_tokenizer):
    c = DataCollatorForBertPretraining(vocab_tokenizer, seed=0)
    feats = [{"input_ids": [2, 4, 9, 3], "labels": [-100, 7, -100, -100], "idx": 0}]
    first = c(feats)
    c.set_epoch(3)
    assert torch.equal(c(feats)["labels"], first["labels"]) and first["labels"][0].tolist() == [-100, 7, -100, -100]


def test_static_mask_map_draws_epoch_0_unpadded_and_leaves_the_collator_fields_alone(big_tokenizer):
    """Issue 22: static_mask_map used to overwrite max_length, pad_to_multiple_of and the epoch while it ran."""
    c = DataCollatorForBertPretraining(big_tokenizer, seed=2, mlm_probability=0.5, max_length=4, pad_to_multiple_of=8)
    c.set_epoch(3)
    rows = _ordinary_rows(3, 10, seed=7)  # 12 tokens each: longer than max_length
    out = c.static_mask_map({"input_ids": [r["input_ids"] for r in rows]}, [5, 6, 7])
    assert (c.max_length, c.pad_to_multiple_of, c.epoch) == (4, 8, 3)
    epoch0 = DataCollatorForBertPretraining(big_tokenizer, seed=2, mlm_probability=0.5)(
        [{**r, "idx": i} for r, i in zip(rows, [5, 6, 7])]
    )
    assert out["labels"] == epoch0["labels"].tolist() and out["input_ids"] == epoch0["input_ids"].tolist()


@pytest.mark.parametrize(
    "selection, wwm", [("bernoulli", False), ("exact", False), ("bernoulli", True), ("exact", True)]
)
def test_masks_keyed_by_idx_do_not_depend_on_the_padding_side(big_tokenizer, selection, wwm):
    import copy

    left_tokenizer = copy.deepcopy(big_tokenizer)
    left_tokenizer.padding_side = "left"
    feats = [{k: v for k, v in f.items() if k != "token_type_ids"} for f in PINNED_FEATURES]
    kwargs = {"seed": 4, "mlm_probability": 0.5, "selection": selection, "whole_word_mask": wwm}
    right = DataCollatorForBertPretraining(big_tokenizer, **kwargs)([dict(f) for f in feats])
    left = DataCollatorForBertPretraining(left_tokenizer, **kwargs)([dict(f) for f in feats])
    for row, f in enumerate(feats):
        n = len(f["input_ids"])
        assert left["labels"][row, 12 - n :].tolist() == right["labels"][row, :n].tolist()
        assert left["input_ids"][row, 12 - n :].tolist() == right["input_ids"][row, :n].tolist()
        assert (right["labels"][row] != -100).any()  # something was masked to compare


# --------------------------------------------------------------------------- masks pinned to literal values
#: Three features (two sentence pairs, one single segment) with word ids and dataset row indices.
PINNED_FEATURES = [
    {
        "input_ids": [2, 11, 12, 13, 14, 15, 3, 16, 17, 18, 19, 3],
        "token_type_ids": [0] * 7 + [1] * 5,
        "word_ids": [-1, 0, 0, 1, 2, 2, -1, 3, 4, 4, 4, -1],
        "idx": 5,
    },
    {
        "input_ids": [2, 21, 22, 23, 3, 24, 25, 3],
        "token_type_ids": [0] * 5 + [1] * 3,
        "word_ids": [-1, 0, 1, 1, -1, 2, 3, -1],
        "idx": 1017,
    },
    {
        "input_ids": [2, 31, 32, 33, 34, 35, 36, 37, 38, 3],
        "token_type_ids": [0] * 10,
        "word_ids": [-1, 0, 1, 2, 3, 3, 4, 5, 6, -1],
        "idx": 3,
    },
]
#: (selection, whole_word_mask) -> (input_ids, labels), recorded from the per-example splitmix64 implementation of
#: commit 382fba6, masking code of 62bb96d (seed 2024, epoch 3, mlm_probability 0.5, max_predictions_per_seq 4, the big_tokenizer vocabulary).
#: A change of these tensors changes the masks every recorded run drew: speed-ups must keep them bit for bit.
PINNED_MASKS = {
    ("bernoulli", False): (
        [
            [2, 4, 12, 13, 14, 15, 3, 4, 951, 4, 4, 3],
            [2, 21, 22, 23, 3, 4, 4, 3, 0, 0, 0, 0],
            [2, 31, 4, 33, 34, 35, 36, 37, 38, 3, 0, 0],
        ],
        [
            [-100, 11, -100, -100, -100, -100, -100, 16, 17, 18, 19, -100],
            [-100, -100, 22, 23, -100, 24, 25, -100, -100, -100, -100, -100],
            [-100, -100, 32, -100, -100, -100, -100, -100, -100, -100, -100, -100],
        ],
    ),
    ("bernoulli", True): (
        [
            [2, 4, 4, 4, 14, 15, 3, 16, 17, 18, 19, 3],
            [2, 4, 22, 23, 3, 24, 25, 3, 0, 0, 0, 0],
            [2, 31, 32, 4, 34, 35, 36, 37, 38, 3, 0, 0],
        ],
        [
            [-100, 11, 12, 13, -100, -100, -100, -100, -100, -100, -100, -100],
            [-100, 21, -100, -100, -100, 24, 25, -100, -100, -100, -100, -100],
            [-100, -100, -100, 33, -100, -100, -100, -100, -100, -100, -100, -100],
        ],
    ),
    ("exact", False): (
        [
            [2, 4, 12, 13, 14, 15, 3, 4, 951, 18, 4, 3],
            [2, 21, 22, 23, 3, 4, 4, 3, 0, 0, 0, 0],
            [2, 4, 4, 4, 34, 4, 36, 37, 38, 3, 0, 0],
        ],
        [
            [-100, 11, -100, -100, -100, -100, -100, 16, 17, -100, 19, -100],
            [-100, -100, 22, 23, -100, 24, 25, -100, -100, -100, -100, -100],
            [-100, 31, 32, 33, -100, 35, -100, -100, -100, -100, -100, -100],
        ],
    ),
    ("exact", True): (
        [
            [2, 4, 4, 4, 14, 15, 3, 4, 17, 18, 19, 3],
            [2, 4, 22, 23, 3, 24, 25, 3, 0, 0, 0, 0],
            [2, 31, 32, 4, 4, 4, 36, 4, 38, 3, 0, 0],
        ],
        [
            [-100, 11, 12, 13, -100, -100, -100, 16, -100, -100, -100, -100],
            [-100, 21, -100, -100, -100, 24, 25, -100, -100, -100, -100, -100],
            [-100, -100, -100, 33, 34, 35, -100, 37, -100, -100, -100, -100],
        ],
    ),
}


@pytest.mark.parametrize("selection, wwm", sorted(PINNED_MASKS))
def test_masks_keyed_by_seed_epoch_and_idx_are_pinned(big_tokenizer, selection, wwm):
    c = DataCollatorForBertPretraining(
        big_tokenizer,
        seed=2024,
        mlm_probability=0.5,
        selection=selection,
        whole_word_mask=wwm,
        max_predictions_per_seq=4,
    )
    c.set_epoch(3)
    out = c([dict(f) for f in PINNED_FEATURES])
    input_ids, labels = PINNED_MASKS[(selection, wwm)]
    assert out["input_ids"].tolist() == input_ids
    assert out["labels"].tolist() == labels
    assert out["token_type_ids"].tolist() == [
        f["token_type_ids"] + [0] * (12 - len(f["token_type_ids"])) for f in PINNED_FEATURES
    ]


# --------------------------------------------------------------------------- keys re-derived from the rule
#: Vigna's splitmix64.c in plain Python integers, independent of the collator's vectorised numpy code.
_M64, _GOLDEN = 2**64 - 1, 0x9E3779B97F4A7C15


def _mix64_ref(z):
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9 & _M64
    z = (z ^ (z >> 27)) * 0x94D049BB133111EB & _M64
    return z ^ (z >> 31)


def _key_ref(seed, *words):
    """mix64(...mix64(mix64(seed + GOLDEN) ^ words[0]) ^ ...): words = (epoch, idx) or (epoch, worker, call, row)."""
    key = _mix64_ref((seed + _GOLDEN) & _M64)
    for w in words:
        key = _mix64_ref(key ^ w)
    return key


def _uniform_ref(key, stream, n):
    """Draw n of sub-stream ``stream`` (1 select, 2 category, 3 token): output n + 1 of splitmix64, top 53 bits."""
    sub = _mix64_ref(key ^ (stream * _GOLDEN & _M64))
    return (_mix64_ref((sub + (n + 1) * _GOLDEN) & _M64) >> 11) / 2**53


def _bernoulli_ref(ids, key, p=0.5):
    """Token-level Bernoulli masking of one unpadded row, one position at a time (the class docstring's rule with
    the big_tokenizer vocabulary: ids <= 4 special, ordinary token k is id 5 + k)."""
    out, labels = list(ids), [-100] * len(ids)
    for j, t in enumerate(ids):
        if t <= 4 or _uniform_ref(key, 1, j) >= p:
            continue
        labels[j], category = t, _uniform_ref(key, 2, j)
        if category < 0.8:
            out[j] = 4
        elif category < 0.9:
            out[j] = 5 + int(_uniform_ref(key, 3, j) * N_ORDINARY)
    return out, labels


def _padded(rows, pad, width=12):
    return [r + [pad] * (width - len(r)) for r in rows]


def test_reference_rule_reproduces_the_pinned_masks():
    """The plain-Python rule above, keyed by (seed 2024, epoch 3, idx), gives the masks recorded at 382fba6."""
    got = [_bernoulli_ref(f["input_ids"], _key_ref(2024, 3, f["idx"])) for f in PINNED_FEATURES]
    assert (_padded([g[0] for g in got], 0), _padded([g[1] for g in got], -100)) == PINNED_MASKS[("bernoulli", False)]


def test_the_key_functions_of_earlier_releases_follow_the_reference_rule():
    from hf_bert_tasks.pretraining.collators import example_keys, keyed_uniform, keyed_uniforms

    keys = example_keys(2024, 3, [0, 7])
    assert keys.tolist() == [_key_ref(2024, 3, 0), _key_ref(2024, 3, 7)]
    draws = keyed_uniforms(2024, (3, [0, 7]), [[0, 1, 2]])
    for stream, name in enumerate(("select", "category", "token"), start=1):
        expected = [[_uniform_ref(_key_ref(2024, 3, i), stream, n) for n in range(3)] for i in (0, 7)]
        assert keyed_uniform(keys, name, [[0, 1, 2], [0, 1, 2]]).tolist() == expected
        assert draws[stream - 1].tolist() == expected


def test_masks_without_idx_follow_seed_epoch_worker_call_and_row(big_tokenizer):
    """Without ``idx`` (main process: worker 0), row r of the c-th call is keyed by (seed, epoch, 0, c, r)."""
    c = DataCollatorForBertPretraining(big_tokenizer, seed=2024, mlm_probability=0.5)
    feats = [{k: v for k, v in f.items() if k != "idx"} for f in PINNED_FEATURES]
    for call in (1, 2):
        out = c([dict(f) for f in feats])
        got = [_bernoulli_ref(f["input_ids"], _key_ref(2024, 0, 0, call, r)) for r, f in enumerate(feats)]
        assert out["input_ids"].tolist() == _padded([g[0] for g in got], 0)
        assert out["labels"].tolist() == _padded([g[1] for g in got], -100)


def _loader_patterns(collator, rows, num_workers, epochs=2, persistent=False):
    """[(epoch, batch index, selected-position pattern of the batch)] of a DataLoader over ``rows`` (batch 4)."""
    loader = torch.utils.data.DataLoader(
        rows, batch_size=4, collate_fn=collator, num_workers=num_workers, persistent_workers=persistent
    )
    return [
        (e, b, tuple(map(tuple, (batch["labels"] != -100).tolist())))
        for e in range(epochs)
        for b, batch in enumerate(loader)
    ]


@pytest.mark.parametrize("num_workers, persistent", [(0, False), (1, False), (2, False), (2, True)])
def test_without_idx_workers_and_epochs_do_not_repeat_masks(big_tokenizer, num_workers, persistent):
    """Issue 24: 8 different 32-token rows without idx, batch 4. With keys from one generator copied into every
    worker, batch 0 (worker 0) and batch 1 (worker 1) had the same selected positions, and fresh workers repeated
    epoch 1 in epoch 2. Now no two batches of two epochs share their pattern (4 x 32 candidates at p = 0.15)."""
    torch.manual_seed(0)
    rows = _ordinary_rows(8, 32, seed=9)
    collator = DataCollatorForBertPretraining(big_tokenizer, mlm_probability=0.15, selection="bernoulli", seed=0)
    patterns = _loader_patterns(collator, rows, num_workers, persistent=persistent)
    assert len(patterns) == 4
    assert len({p for _, _, p in patterns}) == 4


def test_without_idx_worker_masks_are_reproducible_under_torch_manual_seed(big_tokenizer):
    rows = _ordinary_rows(8, 32, seed=9)
    runs = []
    for _ in range(2):
        torch.manual_seed(1)
        runs.append(_loader_patterns(DataCollatorForBertPretraining(big_tokenizer, seed=0), rows, 2))
    assert runs[0] == runs[1]


def test_segment_word_units_shift_restarting_word_ids_of_segment_b():
    import numpy as np

    from hf_bert_tasks.pretraining.collators import segment_word_units

    # [CLS] w0 w0 w1 [SEP] w0 w1 w1 [SEP]: B's ids restart at 0 (a fast tokenizer's word_ids on a pair)
    words = np.array([[-1, 0, 0, 1, -1, 0, 1, 1, -1]])
    candidate = words >= 0
    boundary = ~candidate
    # by hand: A keeps 0,0,1; B's first id 0 <= A's max 1, so B moves past it by 2: 2,3,3
    assert segment_word_units(words, candidate, boundary).tolist() == [[0, 0, 0, 1, 0, 2, 3, 3, 0]]
    # ids that already continue across the [SEP] (create_pretraining_examples) keep their values
    words = np.array([[-1, 0, 1, -1, 2, 2, -1]])
    assert segment_word_units(words, words >= 0, words < 0).tolist() == [[0, 0, 1, 0, 2, 2, 0]]


def test_whole_word_masking_selects_pair_segments_words_independently(vocab_tokenizer):
    """Pair word ids from a fast tokenizer restart at 0 in segment B; google's create_pretraining_data.py builds
    words per segment, so A's word 0 and B's word 0 must be drawn independently (not tied)."""
    enc = vocab_tokenizer(["the cat sat"] * 300, ["dog ran on"] * 300)
    feats = [
        {
            "input_ids": enc["input_ids"][i],
            "token_type_ids": enc["token_type_ids"][i],
            "word_ids": [-1 if w is None else w for w in enc.word_ids(i)],
            "idx": i,
        }
        for i in range(300)
    ]
    assert feats[0]["word_ids"] == [-1, 0, 1, 2, -1, 0, 1, 2, -1]
    out = DataCollatorForBertPretraining(vocab_tokenizer, seed=3, whole_word_mask=True, mlm_probability=0.5)(feats)
    selected = out["labels"] != -100
    tied = (selected[:, 1:4] == selected[:, 5:8]).all(dim=1)  # A's word k and B's word k chosen alike in a row
    # independent draws at p=0.5: a row agrees on all 3 words with probability 1/8 (expected ~37 of 300)
    assert tied.sum().item() < 100
    assert 0.4 < selected[:, [1, 2, 3, 5, 6, 7]].float().mean().item() < 0.6
