"""GPU-readiness settings that can be checked on CPU: mixed precision pads to multiples of 8, SDPA attention by
default, and the GPU benchmark's FLOP count and CPU path."""

import os

import pytest

from tests.conftest import REPO, tiny_run_argv


def _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path, *extra) -> list[tuple[int, int]]:
    """``(padded length, longest example in the batch)`` of every training batch of a 3-step SST-2 fine-tune (its sentences vary in length)
    (collator spied on)."""
    from hf_bert_tasks.finetune import recipe as finetune
    from hf_bert_tasks.tasks.glue import GlueTask

    lengths: list[tuple[int, int]] = []
    make = GlueTask.data_collator

    def spy(self, *a, **kw):
        inner = make(self, *a, **kw)

        def collate(features):
            batch = inner(features)
            lengths.append((int(batch["input_ids"].shape[1]), max(len(f["input_ids"]) for f in features)))
            return batch

        return collate

    monkeypatch.setattr(GlueTask, "data_collator", spy)
    finetune.main(
        tiny_run_argv(
            "sst2",
            tiny_bert_dir,
            tmp_path / "out",
            "--do_train",
            *extra,
            max_steps=3,
            max_train_samples=24,
            per_device_train_batch_size=8,
        )
    )
    return lengths


def test_bf16_pads_batches_to_a_multiple_of_8(monkeypatch, tiny_bert_dir, tmp_path):
    lengths = _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path, "--bf16", "--use_cpu")  # CPU bf16 needs use_cpu
    assert any(longest % 8 for _, longest in lengths), lengths  # else the data could not tell the two apart
    assert all(padded == -(-longest // 8) * 8 for padded, longest in lengths), lengths


def test_fp32_pads_to_the_longest_sequence_only(monkeypatch, tiny_bert_dir, tmp_path):
    lengths = _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path)
    assert any(longest % 8 for _, longest in lengths), lengths
    assert all(padded == longest for padded, longest in lengths), lengths


def test_models_use_sdpa_attention_by_default(tiny_bert_dir):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import ModelArguments
    from hf_bert_tasks.finetune.recipe import build_model

    model = build_model(get_task("mrpc"), ModelArguments(model_name_or_path=tiny_bert_dir))
    assert model.config._attn_implementation == "sdpa"
    eager = build_model(
        get_task("mrpc"), ModelArguments(model_name_or_path=tiny_bert_dir, attn_implementation="eager")
    )
    assert eager.config._attn_implementation == "eager"


def _gpu_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_bench", os.path.join(REPO, "benchmarks", "gpu_bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _matmul_weights(module) -> int:
    """Weights of the ``nn.Linear`` layers under ``module`` (no biases, embeddings or LayerNorm), counted from a real
    model: the N of the 6N rule, obtained independently of the benchmark's own formula."""
    import torch

    return sum(m.weight.numel() for m in module.modules() if isinstance(m, torch.nn.Linear))


@pytest.mark.parametrize("kind", ["finetuning", "pretraining"])
def test_gpu_bench_flops_per_token_for_bert_base(kind):
    """Training FLOPs per token = 6 N + 12 L H S (PaLM, Chowdhery et al. 2022, appendix B: 6N for the matmul weights
    forward + backward, 12 L H S for the attention scores and weighted sum), with N counted from a BERT-base model
    built on the meta device: the encoder's matmuls for every token; the MLM transform + vocabulary decoder for the
    15 % predicted tokens (pretraining); the pooler and the classifier / NSP layer once per 128-token sequence."""
    import torch
    from transformers import BertConfig, BertForPreTraining, BertForSequenceClassification

    from hf_bert_tasks.utils.modeling import bert_config

    config = bert_config("base")
    seq, fraction = 128, 0.15
    with torch.device("meta"):
        if kind == "finetuning":
            model = BertForSequenceClassification(BertConfig(**{**config.to_dict(), "num_labels": 2}))
            per_token = _matmul_weights(model.bert.encoder)
            per_sequence = _matmul_weights(model.bert.pooler) + _matmul_weights(model.classifier)
        else:
            model = BertForPreTraining(config)
            per_token = _matmul_weights(model.bert.encoder) + fraction * _matmul_weights(model.cls.predictions)
            per_sequence = _matmul_weights(model.bert.pooler) + _matmul_weights(model.cls.seq_relationship)
    assert _matmul_weights(model.bert.encoder) == 84_934_656  # BERT-base: 12 x (4 x 768^2 + 2 x 768 x 3072)
    expected = 6 * (per_token + per_sequence / seq) + 12 * 12 * 768 * seq
    assert _gpu_bench().flops_per_token(config, seq, kind, fraction) == pytest.approx(expected, rel=1e-12)


def test_gpu_bench_runs_on_cpu_with_a_tiny_model():
    rows = _gpu_bench().main(
        [
            "--device",
            "cpu",
            "--tiny",
            "--dtype",
            "fp32",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--pretrain_batch",
            "2",
            "--finetune_batch",
            "2",
            "--seq",
            "16",
        ]
    )
    assert [r["kind"] for r in rows] == ["pretraining", "finetuning"]
    assert [(r["batch"], r["seq"]) for r in rows] == [(2, 16), (2, 16)]
    for r in rows:  # tokens/s = batch x seq / step time; no MFU without a known peak (CPU)
        assert r["tokens_per_s"] == pytest.approx(2 * 16 / r["step_s"]) and r["mfu"] is None
