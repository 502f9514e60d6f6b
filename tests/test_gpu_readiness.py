"""GPU-readiness settings that can be checked on CPU: mixed precision pads to multiples of 8, SDPA attention by
default, and the GPU benchmark's FLOP count and CPU path."""

import os

import pytest

from tests.conftest import REPO, SAMPLES


def _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path, *extra) -> list[int]:
    """Sequence lengths of every training batch of a 2-step MRPC fine-tune (collator spied on)."""
    from hf_bert_tasks.scripts import finetune
    from hf_bert_tasks.tasks.glue import GlueTask

    lengths: list[int] = []
    make = GlueTask.data_collator

    def spy(self, *a, **kw):
        inner = make(self, *a, **kw)

        def collate(features):
            batch = inner(features)
            lengths.append(int(batch["input_ids"].shape[1]))
            return batch

        return collate

    monkeypatch.setattr(GlueTask, "data_collator", spy)
    finetune.main(["--task", "mrpc", "--data_dir", os.path.join(SAMPLES, "MRPC"), "--model_name_or_path", tiny_bert_dir,
                   "--output_dir", str(tmp_path / "out"), "--do_train", "--max_steps", "3", "--max_train_samples", "24",
                   "--per_device_train_batch_size", "8", "--save_strategy", "no", "--report_to", "none", *extra])
    return lengths


def test_bf16_pads_batches_to_a_multiple_of_8(monkeypatch, tiny_bert_dir, tmp_path):
    lengths = _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path, "--bf16", "--use_cpu")  # CPU bf16 needs use_cpu
    assert lengths and all(n % 8 == 0 for n in lengths), lengths


def test_fp32_pads_to_the_longest_sequence_only(monkeypatch, tiny_bert_dir, tmp_path):
    lengths = _padded_lengths(monkeypatch, tiny_bert_dir, tmp_path)
    assert any(n % 8 for n in lengths), lengths


def test_models_use_sdpa_attention_by_default(tiny_bert_dir):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.arguments import ModelArguments
    from hf_bert_tasks.finetuning import build_model

    model = build_model(get_task("mrpc"), ModelArguments(model_name_or_path=tiny_bert_dir))
    assert model.config._attn_implementation == "sdpa"
    eager = build_model(get_task("mrpc"), ModelArguments(model_name_or_path=tiny_bert_dir, attn_implementation="eager"))
    assert eager.config._attn_implementation == "eager"


def _gpu_bench():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_bench", os.path.join(REPO, "benchmarks", "gpu_bench.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gpu_bench_flops_per_token_for_bert_base():
    """6 x encoder matmul weights + 12 L H S, plus the pooler/classifier once per 128-token sequence."""
    from hf_bert_tasks.modeling import bert_config

    config = bert_config("base")
    encoder = 12 * (4 * 768 * 768 + 2 * 768 * 3072)  # 84,934,656
    expected = 6 * encoder + 12 * 12 * 768 * 128 + 6 * (768 * 768 + 2 * 768) / 128
    assert _gpu_bench().flops_per_token(config, 128, "finetuning", 0.15) == pytest.approx(expected)
    assert expected == pytest.approx(523_791_432)


def test_gpu_bench_runs_on_cpu_with_a_tiny_model():
    rows = _gpu_bench().main(["--device", "cpu", "--tiny", "--dtype", "fp32", "--steps", "1", "--warmup", "1",
                              "--pretrain_batch", "2", "--finetune_batch", "2", "--seq", "16"])
    assert [r["kind"] for r in rows] == ["pretraining", "finetuning"]
    assert all(r["tokens_per_s"] > 0 and r["mfu"] is None for r in rows)
