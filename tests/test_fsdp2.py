"""Sharded training: FSDP2 over 2 CPU processes (gloo) equals one process, and every loss path of the package reads
parameters only through module forwards (the property DeepSpeed ZeRO-3 and FSDP need).

* FSDP2: ``tests/fsdp2_worker.py`` wraps each ``BertLayer`` and the model with ``torch.distributed.fsdp.fully_shard``
  (transformers' Trainer does not apply FSDP on CPU: it falls back to DDP, so the sharding is applied directly, as
  accelerate's FSDP2 plugin does per layer), takes 3 SGD steps with the package's loss terms, and saves the full
  state dict. Tolerance 1e-5 relative on losses and 1e-5 absolute on weights (gloo reduce-scatter sums in another
  order than one process).
* ZeRO-3 without DeepSpeed: :func:`sharded_like_zero3` replaces every parameter by an empty tensor outside the
  forward of the module that owns it (DeepSpeed ZeRO-3 gathers a parameter only around its own module's forward), so
  code that reads a weight directly (e.g. the tied MLM decoder through ``word_embeddings.weight``) fails.
"""

import contextlib
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = os.path.join(REPO, "tests", "fsdp2_worker.py")
sys.path.insert(0, os.path.join(REPO, "tests"))
import fsdp2_worker


def run_worker(kind, out_dir, processes):
    env = dict(
        os.environ,
        OMP_NUM_THREADS="1",
        PYTHONPATH=os.pathsep.join(p for p in (REPO, os.environ.get("PYTHONPATH")) if p),
    )
    if processes == 1:
        cmd = [sys.executable, WORKER, kind, str(out_dir)]
    else:
        torchrun = shutil.which("torchrun", path=os.path.dirname(sys.executable)) or "torchrun"
        # --standalone: torchrun picks a free rendezvous port, so two suites on one machine do not collide
        cmd = [torchrun, "--standalone", "--nproc_per_node", str(processes), WORKER, kind, str(out_dir)]
    proc = subprocess.run(cmd, check=False, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with open(os.path.join(out_dir, "losses.json"), encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.slow  # ~30 s idle per kind (two torchrun starts); run in CI with the slow set
@pytest.mark.parametrize("kind", ["pretrain", "finetune"])
def test_fsdp2_two_processes_give_the_losses_and_weights_of_one(kind, tmp_path):
    from transformers import BertForPreTraining, BertForTokenClassification

    one = run_worker(kind, tmp_path / "one", 1)
    two = run_worker(kind, tmp_path / "two", 2)
    assert len(one) == len(two) == fsdp2_worker.STEPS
    assert two == pytest.approx(one, rel=1e-5)
    assert one[0] != one[-1]  # the steps trained something
    model_class = BertForPreTraining if kind == "pretrain" else BertForTokenClassification
    a = model_class.from_pretrained(tmp_path / "one" / "model")
    b = model_class.from_pretrained(tmp_path / "two" / "model")  # the gathered FSDP2 weights load unsharded
    for (name, pa), (_, pb) in zip(a.state_dict().items(), b.state_dict().items()):
        torch.testing.assert_close(pb, pa, rtol=0, atol=1e-5, msg=name)
    if kind == "pretrain":  # the tied MLM decoder is still the word-embedding matrix after the sharded run
        assert b.cls.predictions.decoder.weight.data_ptr() == b.bert.embeddings.word_embeddings.weight.data_ptr()


@contextlib.contextmanager
def sharded_like_zero3(model):
    """Inside: every parameter is ``torch.empty(0)`` except during the forward of a module that owns it directly."""
    owners = [m for m in model.modules() if any(True for _ in m.parameters(recurse=False))]
    full = {id(p): p.data for p in model.parameters()}
    empty = torch.empty(0)

    def gather(module, *_):
        for p in module.parameters(recurse=False):
            p.data = full[id(p)]

    def release(module, *_):
        for p in module.parameters(recurse=False):
            p.data = empty

    handles = [h for m in owners for h in (m.register_forward_pre_hook(gather), m.register_forward_hook(release))]
    for p in model.parameters():
        p.data = empty
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        for p in model.parameters():
            p.data = full[id(p)]


def test_the_zero3_simulation_catches_a_weight_read_outside_its_forward():
    """Negative control: reading the tied decoder weight directly (the pattern of the public reports) fails."""
    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    model = BertForPreTrainingMaskedOnly(fsdp2_worker.tiny_config()).eval()
    rows = fsdp2_worker.batch(0)
    with torch.no_grad(), sharded_like_zero3(model):
        hidden = model.bert(rows["input_ids"]).last_hidden_state
        with pytest.raises(RuntimeError):
            hidden @ model.cls.predictions.decoder.weight.mT


def test_masked_only_mlm_and_nsp_loss_read_parameters_only_through_forwards():
    from hf_bert_tasks.pretraining.trainer import BertForPreTrainingMaskedOnly

    model = BertForPreTrainingMaskedOnly(fsdp2_worker.tiny_config()).eval()
    rows = fsdp2_worker.batch(0)
    with torch.no_grad():
        expected = fsdp2_worker.loss_sums("pretrain", model, rows)
        with sharded_like_zero3(model):
            got = fsdp2_worker.loss_sums("pretrain", model, rows)
    for e, g in zip(expected, got):
        torch.testing.assert_close(g, e)


def test_feature_based_model_reads_parameters_only_through_forwards():
    from hf_bert_tasks.modes.feature_based.mode import BertFeatureBasedModel
    from hf_bert_tasks.modes.feature_based.modeling import BertFeatureBasedConfig

    encoder = fsdp2_worker.tiny_config()
    config = BertFeatureBasedConfig(
        encoder_config=encoder.to_dict(),
        task_problem_type="token_classification",
        feature_strategy="concat_last_four",
        head_hidden_size=8,
        num_labels=5,
    )
    model = BertFeatureBasedModel(config).eval()
    rows = fsdp2_worker.batch(0)
    inputs = {"input_ids": rows["input_ids"], "attention_mask": rows["attention_mask"], "labels": rows["tag_labels"]}
    with torch.no_grad():
        expected = model(**inputs)
        with sharded_like_zero3(model):
            got = model(**inputs)
    torch.testing.assert_close(got.loss, expected.loss)
    torch.testing.assert_close(got.logits, expected.logits)
