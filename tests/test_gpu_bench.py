"""benchmarks/gpu_bench.py's parameter count, MFU and result rows, and benchmarks/gpu_report.py's JSON and markdown,
checked on CPU against numbers computed here independently (no GPU needed)."""

import importlib.util
import json
import math
import os

import pytest

from tests.conftest import REPO


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(REPO, "benchmarks", f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _load("gpu_bench")


@pytest.fixture(scope="module")
def report():
    return _load("gpu_report")


def _params_from_shapes(config) -> int:
    """``BertForPreTraining``'s parameter count summed from the weight shapes the config implies (BERT paper §3 /
    transformers' modeling_bert.py): embeddings (word, position, token type, LayerNorm), per layer the Q/K/V/output
    projections with biases, two LayerNorms and the feed-forward pair, the pooler, the MLM transform (dense +
    LayerNorm) and its decoder bias (the decoder weight is the tied word-embedding matrix, counted once) and NSP."""
    V, H, I, L = config.vocab_size, config.hidden_size, config.intermediate_size, config.num_hidden_layers
    P, T = config.max_position_embeddings, config.type_vocab_size
    embeddings = V * H + P * H + T * H + 2 * H
    layer = 4 * (H * H + H) + 2 * H + (H * I + I) + (I * H + H) + 2 * H
    pooler = H * H + H
    mlm_head = (H * H + H) + 2 * H + V
    nsp = 2 * H + 2
    return embeddings + L * layer + pooler + mlm_head + nsp


def test_count_parameters_matches_the_shapes_of_a_tiny_config(bench):
    import torch
    from transformers import BertForPreTraining

    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly
    from hf_bert_tasks.utils.modeling import bert_config

    config = bert_config("tiny", vocab_size=500, max_position_embeddings=64)
    expected = _params_from_shapes(config)
    assert expected == 500 * 128 + 64 * 128 + 2 * 128 + 256 + 2 * 198_272 + 16_512 + 16_768 + 500 + 258
    with torch.device("meta"):
        assert bench.count_parameters(BertForPreTraining(config)) == expected
        assert bench.count_parameters(BertForPreTrainingMaskedOnly(config)) == expected  # same N for both sides


def test_the_bert_large_count_behind_the_nvidia_anchor(bench):
    import torch
    from transformers import BertConfig, BertForPreTraining

    config = BertConfig(
        vocab_size=30522, hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, intermediate_size=4096
    )
    assert _params_from_shapes(config) == bench.BERT_LARGE_PARAMS
    with torch.device("meta"):
        assert bench.count_parameters(BertForPreTraining(config)) == bench.BERT_LARGE_PARAMS


def test_mfu_is_6n_tokens_over_the_peak(bench):
    from hf_bert_tasks.utils.modeling import bert_config

    n = _params_from_shapes(bert_config("tiny", vocab_size=500, max_position_embeddings=64))
    # 3 sequences of 64 tokens in 0.5 s on a 989 TFLOP/s device: 6 x N FLOPs per token
    tokens_per_s = 3 * 64 / 0.5
    assert bench.mfu_6n(n, tokens_per_s, 989.0) == pytest.approx(6 * n * 384 / 989e12, rel=1e-12)
    # the anchor: 580 sequences/s x 128 tokens of BERT-large on an A100 (312 TFLOP/s)
    assert bench.anchor_mfu_bert_large_a100() == pytest.approx(6 * 336_226_108 * 580 * 128 / 312e12, rel=1e-12)
    assert round(100 * bench.anchor_mfu_bert_large_a100(), 1) == 48.0
    with pytest.raises(ValueError, match="peak must be > 0"):
        bench.mfu_6n(n, tokens_per_s, 0.0)


def test_peak_table_lookup(bench):
    assert bench.peak_tflops("NVIDIA H200", None) == 989.0
    assert bench.peak_tflops("NVIDIA H100 80GB HBM3", None) == 989.0
    assert bench.peak_tflops("NVIDIA H100 PCIe", None) == 756.0  # the longer key wins over "H100"
    assert bench.peak_tflops("NVIDIA A100-SXM4-80GB", None) == 312.0
    assert bench.peak_tflops("cpu", None) is None
    assert bench.peak_tflops("cpu", 2.5) == 2.5


def test_predictions_per_sequence_follow_google(bench):
    assert [bench.predictions_per_sequence(s) for s in (32, 128, 512)] == [5, 19, 77]  # caps 20 / 80 not reached


def test_ours_and_the_reference_see_the_same_weights_and_batch(bench):
    """Both sides' first step gives the same loss on CPU in fp32 (same weights, batch and dropout masks): the masked-
    only decoder changes the cost, not the numbers."""
    rows = bench.main(
        [
            "--device",
            "cpu",
            "--tiny",
            "--dtype",
            "fp32",
            "--only",
            "pretraining",
            "--sides",
            "ours,reference",
            "--seq",
            "16",
            "--pretrain_batch",
            "2",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--peak_tflops",
            "1",
        ]
    )
    ours, ref = rows
    assert (ours["side"], ref["side"]) == ("ours", "reference")
    assert ours["params"] == ref["params"]
    assert ours["first_loss"] == pytest.approx(ref["first_loss"], rel=1e-5)
    for r in rows:
        assert r["sequences_per_s"] == pytest.approx(2 / r["step_s"])
        assert r["mfu_6n"] == pytest.approx(6 * r["params"] * r["tokens_per_s"] / 1e12)


def _measured(side, seq, rate, compile=False, params=1000):
    return {
        "kind": "pretraining",
        "side": side,
        "seq": seq,
        "batch": 4,
        "dtype": "bfloat16",
        "compile": compile,
        "compile_backend": "inductor" if compile else None,
        "step_s": 4 / rate,
        "tokens_per_s": rate * seq,
        "sequences_per_s": rate,
        "params": params,
        "mfu_6n": 6 * params * rate * seq / 989e12,
        "mfu": 0.1,
        "peak_tflops": 989.0,
        "peak_source": "test",
        "first_loss": 8.0,
        "final_loss": 7.9,
        "predictions_per_seq": 19,
        "warmup_s": 1.0,
        "device_name": "NVIDIA H200",
    }


def test_throughput_rows_give_the_ratios(bench, monkeypatch):
    env = {"GPU_SH_DEVICE": "NVIDIA H200", "GPU_SH_COMMIT": "abc1234", "GPU_SH_DRY_RUN": "0"}
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    measured = [_measured("ours", 128, 300.0), _measured("reference", 128, 200.0), _measured("ours", 512, 50.0)]
    rows = bench.throughput_result_rows(measured, "pretrain_throughput", [])
    ratios = [r for r in rows if r["units"] == "x"]
    assert [(r["metric"], r["value"]) for r in ratios] == [("ours / reference sequences/s, seq 128 x batch 4", 1.5)]
    mfu = [r for r in rows if r["units"] == "%" and "MFU (6N" in r["metric"]]
    assert len(mfu) == 3 and mfu[0]["value"] == pytest.approx(100 * 6 * 1000 * 300 * 128 / 989e12)
    needed = [r for r in rows if r["units"] == "%" and "MFU (needed FLOPs" in r["metric"]]
    assert [r["value"] for r in needed] == [pytest.approx(10.0)] * 3  # the rows' mfu 0.1
    assert {r["device"] for r in rows} == {"NVIDIA H200"} and {r["commit"] for r in rows} == {"abc1234"}
    compiled = bench.throughput_result_rows([_measured("ours", 128, 360.0, compile=True)], "pretrain_compiled", rows)
    assert [r["value"] for r in compiled if r["units"] == "x"] == [pytest.approx(1.2)]
    no_peak = dict(_measured("ours", 128, 300.0), mfu_6n=None)
    with pytest.raises(ValueError, match="pass --peak_tflops"):
        bench.throughput_result_rows([no_peak], "pretrain_throughput", [])


ENV = {"device": "NVIDIA H200", "commit": "abc1234", "dry_run": False}
LITERAL = [
    {
        "step": "transfer",
        "metric": "SST-2 dev accuracy, pretrained",
        "value": 81.25,
        "units": "%",
        "anchor": "CPU run: 78.0",
        "device": "NVIDIA H200",
        "commit": "abc1234",
        "dry_run": False,
        "config": {},
    },
    {
        "step": "pretrain_throughput",
        "metric": "ours sequences/s, seq 128",
        "value": 1234.5,
        "units": "sequences/s",
        "anchor": "NVIDIA | A100",
        "device": "NVIDIA H200",
        "commit": "abc1234",
        "dry_run": False,
        "config": {"peak_tflops": 989.0, "peak_source": "dense bf16, vendor data sheet"},
    },
    {
        "step": "pretrain_throughput",
        "metric": "ours / reference sequences/s, seq 128",
        "value": 1.4567,
        "units": "x",
        "anchor": "> 1: faster",
        "device": "NVIDIA H200",
        "commit": "abc1234",
        "dry_run": False,
        "config": {},
    },
    {
        "step": "wall_time",
        "metric": "transfer",
        "value": 401.0,
        "units": "s",
        "anchor": "budget 420 s",
        "device": "NVIDIA H200",
        "commit": "abc1234",
        "dry_run": False,
        "config": {"budget_s": 420.0},
    },
]


def test_report_renders_a_literal_json(report, tmp_path):
    path = tmp_path / "gpu_results.json"
    path.write_text(json.dumps(LITERAL))
    text = report.render(report.load_rows(str(path)))
    lines = text.splitlines()
    assert lines[0] == "Measured by `bash benchmarks/gpu.sh` on NVIDIA H200 at commit `abc1234`."
    assert "MFU peak: 989.0 TFLOP/s (dense bf16, vendor data sheet)." in lines
    table = [line for line in lines if line.startswith("| ")]
    assert table[0] == "| step | metric | value | units | compared with |"
    # STEPS order (pretraining before transfer), values formatted, a '|' inside a cell escaped
    assert table[1:4] == [
        "| pretrain_throughput | ours sequences/s, seq 128 | 1,234 | sequences/s | NVIDIA \\| A100 |",
        "| pretrain_throughput | ours / reference sequences/s, seq 128 | 1.46 | x | > 1: faster |",
        "| transfer | SST-2 dev accuracy, pretrained | 81.25 | % | CPU run: 78.0 |",
    ]
    assert table[-2:] == ["| step | wall clock (s) | budget (s) |", "| transfer | 401.0 | 420.0 |"]
    assert "Dry run" not in text
    dry = [dict(r, dry_run=True) for r in LITERAL]
    assert report.render(dry).startswith("**Dry run**")


def test_report_cli_checks_every_expected_step(report, tmp_path, capsys):
    path = tmp_path / "gpu_results.json"
    path.write_text(json.dumps(LITERAL))
    out = tmp_path / "report.md"
    assert report.main(["render", str(path), "--expect", "pretrain_throughput,transfer", "--out", str(out)]) == 0
    assert out.read_text() == capsys.readouterr().out
    assert report.main(["render", str(path), "--expect", "pretrain_throughput,glue_vs_run_glue"]) == 1
    assert "glue_vs_run_glue" in capsys.readouterr().err


@pytest.mark.parametrize("value", [None, float("nan"), float("inf"), "12", True])
def test_a_row_needs_a_finite_number(report, value):
    with pytest.raises(ValueError, match="not a finite number"):
        report.make_row("transfer", "x", value, "s", "", env=ENV)


def test_append_replaces_a_steps_earlier_rows(report, tmp_path):
    path = str(tmp_path / "r.json")
    report.append_rows(
        path,
        [
            report.make_row("a", "m1", 1, "s", "", env=ENV),
            report.make_row("a", "m2", 2, "s", "", env=ENV),
            report.make_row("b", "m1", 3, "s", "", env=ENV),
        ],
    )
    report.append_rows(path, [report.make_row("a", "m3", 4, "s", "", env=ENV)])  # step a again: m1, m2 go
    assert [(r["step"], r["metric"]) for r in report.load_rows(path)] == [("b", "m1"), ("a", "m3")]
    report.append_rows(path, [report.make_row("b", "m2", 5, "s", "", env=ENV)], replace="metric")  # b's m1 stays
    assert [(r["step"], r["metric"], r["value"]) for r in report.load_rows(path)] == [
        ("b", "m1", 3.0),
        ("a", "m3", 4.0),
        ("b", "m2", 5.0),
    ]


def test_transfer_rows_from_the_tools_outputs(report, tmp_path):
    """tools/pretraining_transfer.py's files (the shapes its pretrain and report stages write) -> rows."""
    (tmp_path / "pretrain").mkdir()
    (tmp_path / "finetune").mkdir()
    final = {"eval_mlm_accuracy": 0.25, "eval_mlm_loss": 5.5}
    (tmp_path / "pretrain" / "pretraining_summary.json").write_text(
        json.dumps(
            {
                "steps": 3000,
                "model": {"preset": "mini"},
                "phases": [{"batch_size": 256, "max_seq_length": 128, "train_instances": 44851, "final_eval": final}],
            }
        )
    )
    (tmp_path / "pretrain" / "trainer_state.json").write_text(
        json.dumps(
            {
                "log_history": [
                    {"loss": 7.0, "step": 100},
                    {"train_runtime": 150.0, "train_samples_per_second": 5120.0, "step": 3000},
                ]
            }
        )
    )
    (tmp_path / "finetune" / "transfer_results.json").write_text(
        json.dumps(
            {
                "sst2": {
                    "metric": "eval_accuracy",
                    "pretrained": [84.0, 86.0],
                    "random-init": [80.0, 81.0],
                    "gain": 4.5,
                },
                "conll2003": {"metric": "eval_f1", "pretrained": [60.0], "random-init": [62.5], "gain": -2.5},
            }
        )
    )
    rows = {r["metric"]: r for r in report.transfer_rows(str(tmp_path), pretrain_wall_s=170, env=ENV)}
    assert rows["pretraining: Trainer train_runtime"]["value"] == 150.0
    assert rows["pretraining: sequences/s (Trainer, data loading included)"]["value"] == 5120.0
    assert rows["pretraining: whole stage wall clock (corpus tokenization included)"]["value"] == 170.0
    assert rows["pretraining: held-out MLM accuracy"]["value"] == 25.0
    assert rows["SST-2 dev accuracy, pretrained"]["value"] == 85.0
    assert rows["SST-2 gain (pretrained - random init)"]["value"] == pytest.approx(4.5)
    assert rows["CoNLL-2003 gain (pretrained - random init)"]["value"] == pytest.approx(-2.5)
    assert all(math.isfinite(r["value"]) for r in rows.values())
    (tmp_path / "finetune" / "transfer_results.json").write_text(json.dumps({}))
    with pytest.raises(ValueError, match="no 'sst2' entry"):
        report.transfer_rows(str(tmp_path), env=ENV)


def test_kernel_families_of_literal_kernel_names(bench):
    assert bench.kernel_family("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64") == "matmul"
    assert bench.kernel_family("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT") == "matmul"
    assert bench.kernel_family("pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>") == "attention"
    assert (
        bench.kernel_family("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<FusedAdamW>")
        == "optimizer"
    )
    assert bench.kernel_family("void at::native::cunn_SoftMaxForward<4, float>") == "softmax/cross-entropy"
    assert bench.kernel_family("triton_per_fused_add_native_layer_norm_3") == "elementwise/norm/other"


def test_profile_rows_give_busy_fraction_families_and_top_kernels(bench, monkeypatch):
    for key, value in {"GPU_SH_DEVICE": "NVIDIA H200", "GPU_SH_COMMIT": "abc1234", "GPU_SH_DRY_RUN": "0"}.items():
        monkeypatch.setenv(key, value)
    profile = {
        "steps": 2,
        "activity": "CUDA kernels (self device time)",
        "total_ms": 80.0,
        "wall_ms": 100.0,
        "busy": 0.8,
        "families": {"matmul": 0.75, "attention": 0.25, "optimizer": 0.0},
        "top": [
            {"name": "gemm_a", "ms": 60.0, "share": 0.75, "calls": 10},
            {"name": "flash_fwd", "ms": 20.0, "share": 0.25, "calls": 4},
        ],
    }
    rows = bench.throughput_result_rows([dict(_measured("ours", 128, 300.0), profile=profile)], "mfu", [])
    prof = {r["metric"]: r["value"] for r in rows if r["metric"].startswith("profile ")}
    assert prof == {
        "profile ours, seq 128 x batch 4: GPU kernels busy (their time / wall time of 2 steps)": pytest.approx(80.0),
        "profile ours, seq 128 x batch 4: share of GPU kernels time, matmul": pytest.approx(75.0),
        "profile ours, seq 128 x batch 4: share of GPU kernels time, attention": pytest.approx(25.0),
        "profile ours, seq 128 x batch 4: #1 gemm_a": pytest.approx(75.0),
        "profile ours, seq 128 x batch 4: #2 flash_fwd": pytest.approx(25.0),
    }  # a 0 % family gets no row


def test_profile_of_a_tiny_cpu_step_lists_operators(bench):
    rows = bench.throughput_main(
        [
            "--device",
            "cpu",
            "--tiny",
            "--dtype",
            "fp32",
            "--seq",
            "16",
            "--pretrain_batch",
            "2",
            "--steps",
            "1",
            "--warmup",
            "1",
            "--only",
            "pretraining",
            "--profile",
            "1",
            "--profile_top",
            "5",
            "--peak_tflops",
            "1",
        ]
    )
    prof = rows[0]["profile"]
    assert prof["steps"] == 1 and prof["activity"].startswith("CPU") and 0 < len(prof["top"]) <= 5
    assert sum(prof["families"].values()) == pytest.approx(1.0)
    assert prof["top"][0]["share"] >= prof["top"][-1]["share"] > 0


def test_a_failing_variant_keeps_the_other_rows_and_fails_the_run(bench, monkeypatch, tmp_path):
    real = bench.measure

    def measure(kind, args, device, dtype, seq=None, batch_size=None, side="ours", static=False):
        if static:
            raise RuntimeError("inductor failed")
        return real(kind, args, device, dtype, seq=seq, batch_size=batch_size, side=side, static=static)

    monkeypatch.setattr(bench, "measure", measure)
    results = tmp_path / "results.json"
    with pytest.raises(
        RuntimeError,
        match=r"1 of 2 measurements failed: pretraining ours static seq 16: "
        r"RuntimeError: inductor failed",
    ):
        bench.throughput_main(
            [
                "--device",
                "cpu",
                "--tiny",
                "--dtype",
                "fp32",
                "--seq",
                "16",
                "--pretrain_batch",
                "2",
                "--steps",
                "1",
                "--warmup",
                "1",
                "--only",
                "pretraining",
                "--static_predictions",
                "both",
                "--peak_tflops",
                "1",
                "--results",
                str(results),
            ]
        )
    metrics = [r["metric"] for r in json.loads(results.read_text())]
    assert any(m.startswith("ours (BertForPreTrainingMaskedOnly) sequences/s, seq 16") for m in metrics)
    assert not any("static" in m for m in metrics)
