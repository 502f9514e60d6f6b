"""Padding-free batches (issue 57 item 1, ``hf_bert_tasks.padding_free``): the flattening's exact tensors, and for
pretraining and every task family of the registry (one task per problem type, its own reader, preprocess and
collator on tiny files) the padding-free batch gives the padded batch's loss, logits at real positions and parameter
gradients.

Tolerance: ``atol`` :data:`ATOL` = 1e-5 in float32 (``rtol`` 1e-4). Both sides compute the same sums over the same
keys (a padded key's softmax weight is exactly 0 on both sides: both mask it out of the softmax); they differ
only in the order of float32 additions (matrices ``[B, L, H]`` vs ``[1, T, H]``, different BLAS blocking): a few
float32 ulps on values of order 1, measured at most ~1e-6 on these models, so 1e-5 fails any real difference (a
token attending to another sequence, a lost position or segment id moves logits by >1e-2 here)."""

from __future__ import annotations

import copy
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

import hf_bert_tasks
from hf_bert_tasks.padding_free import PaddingFreeCollator, enable_padding_free, flatten_padded_batch
from hf_bert_tasks.tasks import TASK_REGISTRY
from tests.test_contract_task_mode import MAX_SEQ_LENGTH, VOCAB, write_tiny_data

ATOL, RTOL = 1e-5, 1e-4
#: the columns ``Trainer`` passes to the collator (``remove_unused_columns``: the model's forward arguments)
MODEL_COLUMNS = {
    "input_ids",
    "token_type_ids",
    "attention_mask",
    "label",
    "labels",
    "start_positions",
    "end_positions",
}


def families() -> dict[str, str]:
    """``{problem type: first registered task of it}``: every task family of the registry."""
    first: dict[str, str] = {}
    for name in hf_bert_tasks.list_tasks():
        first.setdefault(TASK_REGISTRY[name].problem_type, name)
    return first


FAMILIES = families()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from transformers import BertTokenizer

    path = tmp_path_factory.mktemp("pf-vocab") / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return BertTokenizer(vocab=str(path), do_lower_case=True)


def tiny_config(**kwargs):
    """A 2-layer, hidden-32 BERT without dropout (the two sides draw no masks) and a wide init (logits that vary)."""
    from transformers import BertConfig

    sizes = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64}
    return BertConfig(
        vocab_size=len(VOCAB),
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.2,
        **sizes,
        **kwargs,
    )


def assert_close(got, expected, what: str):
    assert got.shape == expected.shape, (what, got.shape, expected.shape)
    torch.testing.assert_close(got, expected, atol=ATOL, rtol=RTOL, msg=lambda m: f"{what}: {m}")


def assert_same_gradients(padded_model, free_model):
    grads = dict(free_model.named_parameters())
    for name, p in padded_model.named_parameters():
        q = grads[name]
        assert (p.grad is None) == (q.grad is None), name
        if p.grad is not None:
            assert_close(q.grad, p.grad, f"gradient of {name}")


def _two_models(model_class, config):
    torch.manual_seed(0)
    padded = model_class.from_config(config) if model_class.__name__.startswith("Auto") else model_class(config)
    return padded, enable_padding_free(copy.deepcopy(padded))


# ------------------------------------------------------------------------------------------------ the collator
def test_flattening_gives_transformers_padding_free_tensors():
    inner = {
        "input_ids": torch.tensor([[2, 7, 9, 3], [2, 8, 3, 0], [2, 3, 0, 0]]),
        "token_type_ids": torch.tensor([[0, 0, 1, 1], [0, 1, 1, 0], [0, 0, 0, 0]]),
        "attention_mask": torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0], [1, 1, 0, 0]]),
        "labels": torch.tensor([[-100, 5, -100, -100], [-100, -100, 6, -100], [-100, -100, -100, -100]]),
        "next_sentence_label": torch.tensor([1, 0, 1]),
    }
    flat = PaddingFreeCollator(lambda features: inner)([{}, {}, {}])
    assert sorted(flat) == sorted(
        [
            "input_ids",
            "token_type_ids",
            "labels",
            "next_sentence_label",
            "position_ids",
            "cu_seq_lens_q",
            "cu_seq_lens_k",
            "max_length_q",
            "max_length_k",
        ]
    )
    assert flat["input_ids"].tolist() == [[2, 7, 9, 3, 2, 8, 3, 2, 3]]
    assert flat["token_type_ids"].tolist() == [[0, 0, 1, 1, 0, 1, 1, 0, 0]]
    assert flat["position_ids"].tolist() == [[0, 1, 2, 3, 0, 1, 2, 0, 1]]
    assert flat["cu_seq_lens_q"].dtype == torch.int32 and flat["cu_seq_lens_q"].tolist() == [0, 4, 7, 9]
    assert flat["cu_seq_lens_k"].tolist() == [0, 4, 7, 9]
    assert (flat["max_length_q"], flat["max_length_k"]) == (4, 4)
    assert flat["labels"].tolist() == inner["labels"].tolist()  # per example, as the inner collator made them
    assert flat["next_sentence_label"].tolist() == [1, 0, 1]


def test_flattening_trims_token_labels_to_the_longest_row_and_counts_choices():
    inner = {
        "input_ids": torch.tensor([[[2, 7, 3, 0, 0], [2, 3, 0, 0, 0]], [[2, 9, 9, 3, 0], [2, 8, 3, 0, 0]]]),
        "attention_mask": torch.tensor([[[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]], [[1, 1, 1, 1, 0], [1, 1, 1, 0, 0]]]),
        "labels": torch.tensor([1, 0]),
    }
    flat = flatten_padded_batch(inner)
    assert flat["input_ids"].tolist() == [[2, 7, 3, 2, 3, 2, 9, 9, 3, 2, 8, 3]]
    assert flat["cu_seq_lens_q"].tolist() == [0, 3, 5, 9, 12]
    assert flat["num_choices"].item() == 2 and flat["max_length_q"] == 4
    ner = flatten_padded_batch(
        {
            "input_ids": torch.tensor([[2, 7, 3, 0, 0], [2, 3, 0, 0, 0]]),
            "attention_mask": torch.tensor([[1, 1, 1, 0, 0], [1, 1, 0, 0, 0]]),
            "labels": torch.tensor([[-100, 4, -100, -100, -100], [-100, -100, -100, -100, -100]]),
        }
    )
    assert ner["labels"].tolist() == [[-100, 4, -100], [-100, -100, -100]]


def test_flattening_refuses_left_padding():
    with pytest.raises(ValueError, match="right padding"):
        flatten_padded_batch({"input_ids": torch.tensor([[0, 2, 3]]), "attention_mask": torch.tensor([[0, 1, 1]])})


# ------------------------------------------------------------------------------------------------ equivalence
def family_batch(task, tokenizer, folder) -> dict:
    """The task's own padded training batch of its first 6 tiny examples (some of different lengths)."""
    features = task.preprocess(task.load(write_tiny_data(task, folder))["train"], tokenizer, MAX_SEQ_LENGTH, "train")
    rows = [{k: v for k, v in features[i].items() if k in MODEL_COLUMNS} for i in range(min(6, len(features)))]
    batch = task.data_collator(tokenizer)(rows)
    assert not batch["attention_mask"].bool().all(), "the batch must hold padding"
    return batch


@pytest.mark.parametrize("problem_type", sorted(FAMILIES))
def test_padding_free_family_batch_gives_the_padded_loss_logits_and_gradients(problem_type, tokenizer, tmp_path):
    options = SimpleNamespace(max_query_length=16, doc_stride=16)  # SQuAD windows that fit MAX_SEQ_LENGTH
    task = TASK_REGISTRY[FAMILIES[problem_type]].configure(options)
    padded = family_batch(task, tokenizer, tmp_path)
    flat = flatten_padded_batch(padded)
    reference, free = _two_models(task.model_class(), tiny_config(**task.model_config_kwargs()))
    ref_out, free_out = reference(**padded), free(**flat)
    real = padded["attention_mask"].bool().reshape(-1, padded["attention_mask"].shape[-1])[:, : flat["max_length_q"]]
    if problem_type == "question_answering":  # the padded reference's softmax over the real tokens only
        pad = ~padded["attention_mask"].bool()
        starts, ends = (ref_out[k].masked_fill(pad, float("-inf")) for k in ("start_logits", "end_logits"))
        ref_loss = (
            F.cross_entropy(starts, padded["start_positions"]) + F.cross_entropy(ends, padded["end_positions"])
        ) / 2
        for key in ("start_logits", "end_logits"):
            assert_close(free_out[key][real], ref_out[key][:, : real.shape[1]][real], key)
    else:
        ref_loss, logits = ref_out.loss, ref_out.logits
        if problem_type == "token_classification":
            logits, free_logits = logits[:, : real.shape[1]][real], free_out.logits[real]
        else:
            free_logits = free_out.logits
        assert_close(free_logits, logits, "logits")
    assert_close(free_out.loss, ref_loss, "loss")
    ref_loss.backward()
    free_out.loss.backward()
    assert_same_gradients(reference, free)


def pretraining_batch(tokenizer, whole_word_mask: bool) -> dict:
    """The pretraining collator's padded batch (MLM + NSP, masks keyed by ``idx``) of 4 literal A/B instances."""
    from hf_bert_tasks.pretraining.collators import DataCollatorForBertPretraining

    lengths, features = [(3, 4), (5, 2), (2, 2), (6, 5)], []
    for i, (a, b) in enumerate(lengths):
        ids = [2, *range(5 + i, 5 + i + a), 3, *range(20 + i, 20 + i + b), 3]
        words = [-1, *range(a), -1, *range(a, a + b), -1]
        words = [w // 2 if w >= 0 else -1 for w in words]  # two WordPieces per word
        features.append(
            {
                "input_ids": ids,
                "token_type_ids": [0] * (a + 2) + [1] * (b + 1),
                "next_sentence_label": i % 2,
                "idx": i,
                **({"word_ids": words} if whole_word_mask else {}),
            }
        )
    collator = DataCollatorForBertPretraining(tokenizer, seed=3, mlm_probability=0.3, whole_word_mask=whole_word_mask)
    return collator(features)


@pytest.mark.parametrize(
    "head,whole_word_mask", [("masked_only", False), ("masked_only", True), ("full", False)], ids=str
)
def test_padding_free_pretraining_batch_gives_the_padded_loss_logits_and_gradients(head, whole_word_mask, tokenizer):
    from transformers import BertForPreTraining

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    padded = pretraining_batch(tokenizer, whole_word_mask)
    assert padded["labels"].ne(-100).any()
    flat = flatten_padded_batch(padded)
    model_class = BertForPreTrainingMaskedOnly if head == "masked_only" else BertForPreTraining
    reference, free = _two_models(model_class, tiny_config())
    ref_out, free_out = reference(**padded), free(**flat)
    assert_close(free_out.loss, ref_out.loss, "loss")
    assert_close(free_out.seq_relationship_logits, ref_out.seq_relationship_logits, "NSP logits")
    if head == "masked_only":  # [N, V]: the predicted positions in row-major order on both sides
        assert_close(free_out.prediction_logits, ref_out.prediction_logits, "MLM logits")
    else:
        real = padded["attention_mask"].bool()
        assert_close(free_out.prediction_logits[real], ref_out.prediction_logits[real], "MLM logits")
    ref_out.loss.backward()
    free_out.loss.backward()
    assert_same_gradients(reference, free)


# ------------------------------------------------------------------------------------------------ the model side
def test_padding_free_model_still_takes_padded_batches(tokenizer, tmp_path):
    task = TASK_REGISTRY[FAMILIES["single_label_classification"]]
    padded = family_batch(task, tokenizer, tmp_path)
    reference, free = _two_models(task.model_class(), tiny_config(**task.model_config_kwargs()))
    assert_close(free(**padded).logits, reference(**padded).logits, "logits of a padded batch")


def test_varlen_attention_keeps_sequences_apart():
    """The registered attention function on a flattened row equals SDPA on each sequence alone."""
    from hf_bert_tasks.padding_free.attention import varlen_attention_forward

    torch.manual_seed(0)
    q, k, v = (torch.randn(1, 2, 5, 4) for _ in range(3))
    cu = torch.tensor([0, 2, 5], dtype=torch.int32)
    out, _ = varlen_attention_forward(
        None, q, k, v, None, cu_seq_lens_q=cu, cu_seq_lens_k=cu, max_length_q=3, max_length_k=3
    )
    for s, e in ((0, 2), (2, 5)):
        alone = F.scaled_dot_product_attention(q[:, :, s:e], k[:, :, s:e], v[:, :, s:e]).transpose(1, 2)
        assert_close(out[:, s:e], alone, f"sequence {s}:{e}")


def test_padding_free_checkpoint_is_a_plain_bert_checkpoint(tmp_path):
    import json

    from safetensors.torch import load_file
    from transformers import BertForSequenceClassification

    reference, free = _two_models(BertForSequenceClassification, tiny_config(num_labels=2))
    reference.save_pretrained(tmp_path / "padded")
    free.save_pretrained(tmp_path / "free")
    config = json.loads((tmp_path / "free" / "config.json").read_text())
    assert "hf_bert_tasks" not in json.dumps(config)
    assert config == json.loads((tmp_path / "padded" / "config.json").read_text())
    free_weights, weights = (load_file(tmp_path / d / "model.safetensors") for d in ("free", "padded"))
    assert sorted(free_weights) == sorted(weights)
    loaded = BertForSequenceClassification.from_pretrained(tmp_path / "free")
    assert loaded.config._attn_implementation in ("sdpa", "eager")


def test_bare_encoder_is_refused():
    from transformers import BertModel

    with pytest.raises(ValueError, match="--padding_free: BertModel"):
        enable_padding_free(BertModel(tiny_config()))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (the varlen kernels; issue 57 item 2)")
def test_cuda_varlen_kernel_gives_the_padded_loss_and_gradients_in_bf16(tokenizer):
    """On a GPU in bf16 autocast the padding-free side runs a varlen kernel (FlashAttention's or torch's) and the
    padded side SDPA: bf16 rounding differs (8 mantissa bits), so loss within 2e-2 nats, logits within 5e-2 and each
    gradient's direction (cosine > 0.99) instead of float32's 1e-5."""
    from hf_bert_tasks.padding_free.attention import kernel_for
    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    padded = pretraining_batch(tokenizer, whole_word_mask=False)
    flat = flatten_padded_batch(padded)
    reference, free = (m.cuda() for m in _two_models(BertForPreTrainingMaskedOnly, tiny_config()))
    assert kernel_for(torch.zeros(1, 1, 1, 1, dtype=torch.bfloat16, device="cuda"), 0.0) != "sdpa_repadded"
    outputs = []
    for model, batch in ((reference, padded), (free, flat)):
        batch = {k: v.cuda() if isinstance(v, torch.Tensor) else v for k, v in batch.items()}
        with torch.autocast("cuda", torch.bfloat16):
            out = model(**batch)
        out.loss.backward()
        outputs.append(out)
    torch.testing.assert_close(outputs[1].loss.float(), outputs[0].loss.float(), atol=2e-2, rtol=0)
    torch.testing.assert_close(
        outputs[1].prediction_logits.float(), outputs[0].prediction_logits.float(), atol=5e-2, rtol=0
    )
    grads = dict(free.named_parameters())
    for name, p in reference.named_parameters():
        if p.grad is not None and p.grad.norm() > 0:
            cosine = F.cosine_similarity(p.grad.flatten().float(), grads[name].grad.flatten().float(), dim=0)
            assert cosine > 0.99, (name, float(cosine))


def test_an_architecture_with_other_positions_is_refused():
    """RoBERTa's positions start after the pad id, not at 0 per sequence: refused in one line naming the flag."""
    from transformers import RobertaConfig, RobertaForSequenceClassification

    config = RobertaConfig(
        vocab_size=20, hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8
    )
    with pytest.raises(ValueError, match="--padding_free: model_type 'roberta' is not supported"):
        enable_padding_free(RobertaForSequenceClassification(config))
