"""The tokenized-features cache (hf_bert_tasks/finetune/data.py): a second run — in this process or a fresh one —
skips tokenization; the key follows data, tokenizer, max_seq_length, task options; local files get a stable key."""

import json
import os
import subprocess
import sys

import pytest

from hf_bert_tasks.finetune.data import KEY_FILE, features_key, preprocess_cached, tokenizer_fingerprint
from tests.conftest import REPO, SAMPLES, tiny_run_argv

ARGS = [
    "--max_train_samples",
    "32",
    "--max_eval_samples",
    "16",
    "--max_predict_samples",
    "8",
    "--num_train_epochs",
    "1",
    "--per_device_train_batch_size",
    "16",
    "--learning_rate",
    "1e-3",
    "--disable_tqdm",
    "true",
    "--seed",
    "5",
]


def sst2_argv(model_dir, out, cache, *extra):
    return tiny_run_argv("sst2", model_dir, out, "--tokenized_cache_dir", str(cache), *ARGS, *extra)


@pytest.fixture
def preprocess_calls(monkeypatch):
    """Counts calls of the GLUE tasks' tokenization (``GlueTask.preprocess``) by split."""
    from hf_bert_tasks.tasks.glue import GlueTask

    calls = []
    real = GlueTask.preprocess
    monkeypatch.setattr(
        GlueTask, "preprocess", lambda self, ds, tok, n, split: calls.append(split) or real(self, ds, tok, n, split)
    )
    return calls


def entries(cache):
    return sorted(p for p in os.listdir(cache) if not p.startswith("."))


def test_a_second_run_in_this_process_skips_tokenization(tiny_bert_dir, tmp_path, preprocess_calls):
    from hf_bert_tasks.finetune import recipe as finetune

    cache = tmp_path / "cache"
    first = finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "a", cache))
    assert sorted(preprocess_calls) == ["test", "train", "validation"]
    assert len(entries(cache)) == 3
    second = finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "b", cache))
    assert sorted(preprocess_calls) == ["test", "train", "validation"]  # no new call
    # same process, same kernels, same features: bitwise-identical training
    assert second["eval_accuracy"] == first["eval_accuracy"] and second["train_loss"] == first["train_loss"]


def test_a_second_run_in_a_fresh_process_is_a_cache_hit(tiny_bert_dir, tmp_path):
    from hf_bert_tasks.finetune import recipe as finetune

    cache = tmp_path / "cache"
    finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "a", cache))
    before = {e: os.path.getmtime(cache / e) for e in entries(cache)}
    env = dict(os.environ, PYTHONPATH=REPO, HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1")
    proc = subprocess.run(
        [sys.executable, "-m", "hf_bert_tasks.cli", "finetune", *sst2_argv(tiny_bert_dir, tmp_path / "b", cache)],
        check=False,
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = proc.stdout + proc.stderr
    for split in ("train", "validation", "test"):
        assert f"tokenized features of sst2/{split} loaded from the cache" in log, split
    assert "Tokenizing sst2" not in log
    assert {e: os.path.getmtime(cache / e) for e in entries(cache)} == before  # nothing rewritten or added


def test_cached_features_equal_fresh_tokenization(sample_tokenizer, tmp_path):
    from hf_bert_tasks import get_task

    task = get_task("mrpc")
    raw = task.read_local(os.path.join(SAMPLES, "MRPC"))["validation"].select(range(20))
    fresh = task.preprocess(raw, sample_tokenizer, 64, "validation")
    for _ in range(2):  # miss (written, then read back), then hit
        cached = preprocess_cached(task, raw, sample_tokenizer, 64, "validation", str(tmp_path))
        assert cached.column_names == fresh.column_names
        assert cached.to_dict() == fresh.to_dict()
    (entry,) = entries(tmp_path)
    with open(tmp_path / entry / KEY_FILE, encoding="utf-8") as f:
        assert json.load(f)["max_seq_length"] == 64


def test_reading_the_same_local_file_twice_gives_the_same_key(sample_tokenizer):
    from hf_bert_tasks import get_task

    task = get_task("mrpc")
    a = task.read_local(os.path.join(SAMPLES, "MRPC"))["validation"]
    b = task.read_local(os.path.join(SAMPLES, "MRPC"))["validation"]
    assert features_key(task, a, sample_tokenizer, 128, "validation") == features_key(
        task, b, sample_tokenizer, 128, "validation"
    )


def test_the_key_follows_data_length_limit_tokenizer_split_and_task_options(sample_tokenizer, vocab_tokenizer):
    import dataclasses

    from hf_bert_tasks import get_task

    task = get_task("mrpc")
    raw = task.read_local(os.path.join(SAMPLES, "MRPC"))["validation"]
    base = features_key(task, raw, sample_tokenizer, 128, "validation")
    edited = raw.map(lambda row, i: {"sentence1": row["sentence1"] + (" again" if i == 3 else "")}, with_indices=True)
    squad = get_task("squad_v1")
    variants = [
        features_key(task, edited, sample_tokenizer, 128, "validation"),  # one sentence changed
        features_key(task, raw.select(range(50)), sample_tokenizer, 128, "validation"),  # --max_eval_samples
        features_key(task, raw, sample_tokenizer, 64, "validation"),  # --max_seq_length
        features_key(task, raw, vocab_tokenizer, 128, "validation"),  # another tokenizer
        features_key(task, raw, sample_tokenizer, 128, "test"),  # another split
    ]
    for variant in variants:
        assert variant != base
    doc_stride = [
        features_key(dataclasses.replace(squad, doc_stride=s), raw, sample_tokenizer, 128, "validation")
        for s in (64, 128)
    ]
    assert doc_stride[0] != doc_stride[1]


def test_the_tokenizer_fingerprint_ignores_the_state_a_call_leaves_behind(sample_tokenizer):
    import copy

    tokenizer = copy.deepcopy(sample_tokenizer)
    before = tokenizer_fingerprint(tokenizer)
    tokenizer(["a b c d e f"], ["g h"], truncation=True, max_length=4, padding="max_length")
    assert tokenizer_fingerprint(tokenizer) == before


def test_no_cache_and_overwrite_cache(tiny_bert_dir, tmp_path, preprocess_calls):
    from hf_bert_tasks.finetune import recipe as finetune

    cache = tmp_path / "cache"
    finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "a", cache, "--no_cache_tokenized"))
    assert not cache.exists() and len(preprocess_calls) == 3
    finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "b", cache))
    finetune.main(sst2_argv(tiny_bert_dir, tmp_path / "c", cache, "--overwrite_cache"))
    assert len(preprocess_calls) == 9 and len(entries(cache)) == 3  # replaced, not duplicated


def test_the_code_fingerprint_follows_the_file_that_holds_ignore_index(tmp_path, monkeypatch):
    """NER features use ``IGNORE_INDEX`` from ``tasks/conll2003/metrics.py``: editing it must change the cache key."""
    import shutil

    from hf_bert_tasks.finetune import data as tokenized_cache
    from hf_bert_tasks.tasks.conll2003 import metrics as ner_metrics

    package = tmp_path / "pkg"
    rel = os.path.relpath(ner_metrics.__file__, tokenized_cache._PACKAGE)
    shutil.copytree(tokenized_cache._PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__", "samples"))
    monkeypatch.setattr(tokenized_cache, "_PACKAGE", str(package))
    before = tokenized_cache.code_fingerprint()
    target = package / rel
    target.write_text(target.read_text().replace("IGNORE_INDEX = -100", "IGNORE_INDEX = -1"))
    assert tokenized_cache.code_fingerprint() != before
