"""The GPU fast path as defaults (issue 26): with a CUDA GPU the recipes' command line gets bf16 (where supported) and
fused AdamW unless the user chose a precision or an optimizer (:func:`hf_bert_tasks.flags.training.gpu_fast_path`); on
CPU the parsed arguments do not change, and the models attend through SDPA.

There is no GPU here: ``torch.cuda`` is monkeypatched only while ``gpu_fast_path`` runs (``TrainingArguments``'
own checks would otherwise see a GPU that is not there, or refuse bf16 on CPU).
"""

import logging
import os
import types

import pytest

from tests.conftest import SAMPLES

FINETUNE = [
    "--task",
    "mrpc",
    "--data_dir",
    os.path.join(SAMPLES, "MRPC"),
    "--output_dir",
    "out",
    "--report_to",
    "none",
]
PRETRAIN = [
    "--train_files",
    os.path.join(SAMPLES, "pretraining", "corpus.txt"),
    "--output_dir",
    "out",
    "--report_to",
    "none",
]


def _finetune_args(argv):
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments
    from hf_bert_tasks.flags.training import parse_args

    return parse_args((ModelArguments, DataArguments, FinetuneTrainingArguments), argv)[-1]


def _pretrain_args(argv):
    from hf_bert_tasks.flags.training import parse_args
    from hf_bert_tasks.pretraining.config import (
        PretrainDataArguments,
        PretrainModelArguments,
        PretrainTrainingArguments,
    )

    return parse_args((PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments), argv)[-1]


def _fake_gpu(monkeypatch, bf16: bool = True):
    """``torch.cuda`` says a GPU is present (with or without native bf16)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: bf16)


def _args(**values):
    """The fields ``gpu_fast_path`` reads and sets, at transformers' defaults unless given."""
    return types.SimpleNamespace(
        **{"bf16": False, "fp16": False, "optim": "adamw_torch", "use_cpu": False, "torch_compile": False, **values}
    )


def _fast_path(args, given, compile_by_default=False):
    from hf_bert_tasks.flags.training import flags_given, gpu_fast_path

    with flags_given(given):
        return gpu_fast_path(args, compile_by_default=compile_by_default)


class _Seen(list):
    """(bf16, optim) per call; ``compiled``: torch_compile per call."""

    def __init__(self):
        super().__init__()
        self.compiled = []


def _gpu_only_in_fast_path(monkeypatch, bf16: bool = True) -> list:
    """Replace ``gpu_fast_path`` by one that sees a GPU while it runs; returns the (bf16, optim) it set, per call.
    bf16 is turned back off afterwards, so ``TrainingArguments`` accepts the arguments on this CPU."""
    import torch

    from hf_bert_tasks.flags import training as arguments

    real, seen = arguments.gpu_fast_path, _Seen()

    def on_gpu(args, compile_by_default=False):
        with monkeypatch.context() as m:
            m.setattr(torch.cuda, "is_available", lambda: True)
            m.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: bf16)
            real(args, compile_by_default=compile_by_default)
        seen.append((args.bf16, str(args.optim)))
        seen.compiled.append(args.torch_compile)
        args.bf16 = False

    monkeypatch.setattr(arguments, "gpu_fast_path", on_gpu)
    return seen


def _without_fast_path(monkeypatch):
    from hf_bert_tasks.flags import training as arguments

    monkeypatch.setattr(arguments, "gpu_fast_path", lambda args, compile_by_default=False: None)


# ------------------------------------------------------------------------------------------------------ on CPU
@pytest.mark.parametrize(
    "parse, argv", [(_finetune_args, FINETUNE), (_pretrain_args, PRETRAIN)], ids=["finetune", "pretrain"]
)
def test_cpu_parse_is_unchanged(monkeypatch, tmp_path, parse, argv):
    import torch
    from transformers import TrainingArguments

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    parsed = parse(argv)
    with monkeypatch.context() as m:
        _without_fast_path(m)
        before = parse(argv)
    assert parsed.to_dict() == before.to_dict()
    assert parsed.bf16 is False and parsed.fp16 is False
    default = TrainingArguments.__dataclass_fields__["optim"].default
    assert parsed.optim == default


def test_cpu_fast_path_changes_nothing(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args = _args()
    assert _fast_path(args, set()) is None
    assert (args.bf16, args.optim) == (False, "adamw_torch")


# ------------------------------------------------------------------------------------------- with a GPU (patched)
def test_gpu_with_bf16_gets_bf16_and_fused_adamw(monkeypatch):
    _fake_gpu(monkeypatch, bf16=True)
    args = _args()
    _fast_path(args, {"output_dir", "task"})
    assert (args.bf16, args.optim) == (True, "adamw_torch_fused")


def test_gpu_without_native_bf16_keeps_fp32_and_gets_fused_adamw(monkeypatch):
    _fake_gpu(monkeypatch, bf16=False)
    args = _args()
    _fast_path(args, set())
    assert (args.bf16, args.fp16, args.optim) == (False, False, "adamw_torch_fused")


def test_explicit_bf16_false_is_kept(monkeypatch):
    _fake_gpu(monkeypatch)
    args = _args(bf16=False)
    _fast_path(args, {"bf16"})
    assert (args.bf16, args.optim) == (False, "adamw_torch_fused")


def test_explicit_fp16_is_kept(monkeypatch):
    _fake_gpu(monkeypatch)
    args = _args(fp16=True)
    _fast_path(args, {"fp16"})
    assert (args.bf16, args.fp16) == (False, True)


def test_explicit_optim_is_kept(monkeypatch):
    _fake_gpu(monkeypatch)
    args = _args(optim="adamw_torch")
    _fast_path(args, {"optim"})
    assert (args.bf16, args.optim) == (True, "adamw_torch")


def test_use_cpu_on_a_gpu_machine_changes_nothing(monkeypatch):
    _fake_gpu(monkeypatch)
    args = _args(use_cpu=True)
    assert _fast_path(args, {"use_cpu"}) is None
    assert (args.bf16, args.optim) == (False, "adamw_torch")


def test_launcher_precision_is_kept(monkeypatch):
    _fake_gpu(monkeypatch)
    monkeypatch.setenv("ACCELERATE_MIXED_PRECISION", "no")  # accelerate launch --mixed_precision no
    args = _args()
    _fast_path(args, set())
    assert (args.bf16, args.optim) == (False, "adamw_torch_fused")


def test_deepspeed_keeps_its_precision(monkeypatch):
    _fake_gpu(monkeypatch)
    args = _args()
    _fast_path(args, {"deepspeed"})
    assert args.bf16 is False


def test_arguments_built_in_python_are_left_alone(monkeypatch):
    from hf_bert_tasks.flags.training import gpu_fast_path

    _fake_gpu(monkeypatch)
    args = _args()
    assert gpu_fast_path(args) is None  # no flags_given block: not the command line
    assert (args.bf16, args.optim) == (False, "adamw_torch")


def test_the_choice_is_logged_with_its_opt_out(monkeypatch, caplog):
    _fake_gpu(monkeypatch)
    monkeypatch.delenv("RANK", raising=False)
    with caplog.at_level(logging.INFO, logger="hf_bert_tasks.finetune.config"):
        _fast_path(_args(), set())
    expected = "GPU present: bf16 (supported), fused AdamW; pass --bf16 False / --optim adamw_torch to opt out"
    assert [r.getMessage() for r in caplog.records] == [expected]


# ------------------------------------------------------------------------- which flags the command line gave
def test_finetune_command_line_without_precision_or_optim_gets_the_defaults(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _gpu_only_in_fast_path(monkeypatch)
    _finetune_args(FINETUNE)
    assert seen == [(True, "adamw_torch_fused")]
    assert seen.compiled == [False]  # fine-tuning: dynamic padding, compile not measured faster yet (issue 42)


def test_pretrain_command_line_without_precision_or_optim_gets_the_defaults(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _gpu_only_in_fast_path(monkeypatch)
    _pretrain_args(PRETRAIN)
    assert seen == [(True, "adamw_torch_fused")]
    assert seen.compiled == [True]


def test_pretrain_compile_opt_out_is_kept(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _gpu_only_in_fast_path(monkeypatch)
    args = _pretrain_args([*PRETRAIN, "--torch_compile", "False"])
    assert seen.compiled == [False] and args.torch_compile is False


def test_gpu_compile_default_is_logged_with_its_opt_out(monkeypatch, caplog):
    _fake_gpu(monkeypatch)
    monkeypatch.delenv("RANK", raising=False)
    args = _args()
    with caplog.at_level(logging.INFO, logger="hf_bert_tasks.finetune.config"):
        _fast_path(args, set(), compile_by_default=True)
    assert args.torch_compile is True
    expected = (
        "GPU present: bf16 (supported), fused AdamW, torch.compile; pass --bf16 False / --optim adamw_torch / "
        "--torch_compile False to opt out"
    )
    assert [r.getMessage() for r in caplog.records] == [expected]


def test_cpu_never_compiles_by_default(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    args = _args()
    assert _fast_path(args, set(), compile_by_default=True) is None and args.torch_compile is False


def test_command_line_opt_outs_are_kept(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _gpu_only_in_fast_path(monkeypatch)
    args = _finetune_args([*FINETUNE, "--bf16", "False", "--optim", "adamw_torch"])
    assert seen == [(False, "adamw_torch")]
    assert (args.bf16, args.optim) == (False, "adamw_torch")


def test_equals_spelling_counts_as_given(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    seen = _gpu_only_in_fast_path(monkeypatch)
    _pretrain_args([*PRETRAIN, "--optim=adamw_torch"])
    assert seen == [(True, "adamw_torch")]


def test_config_file_opt_outs_are_kept(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.yaml").write_text("bf16: false\noptim: adamw_torch\n")
    seen = _gpu_only_in_fast_path(monkeypatch)
    _pretrain_args([*PRETRAIN, "--config", "run.yaml"])
    assert seen == [(False, "adamw_torch")]


# ----------------------------------------------------------------------------------------------------- SDPA
def test_pretraining_model_uses_sdpa_attention(sample_tokenizer):
    import copy

    from hf_bert_tasks.pretraining.config import PretrainModelArguments
    from hf_bert_tasks.pretraining.recipe import _model

    training_args = types.SimpleNamespace(masked_only_decoder=True, seed=0)
    tokenizer = copy.deepcopy(sample_tokenizer)  # _model fits its model_max_length; the fixture is shared
    model = _model(PretrainModelArguments(preset="tiny"), tokenizer, 32, training_args)
    assert model.config._attn_implementation == "sdpa"
