"""Test set-up: offline Hub, tiny BERT checkpoints built in code, tokenizers from a written vocabulary.

Offline variables are set before transformers / datasets / huggingface_hub are imported (they read them at import);
an unset endpoint stalls ~47 s per Hub call in retries.
"""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
# Tiny models gain nothing from intra-op threads; one thread per process avoids oversubscribing 2-core CI machines
# when tests start subprocesses (torchrun with 2 ranks).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

from hf_bert_tasks.utils.resources import sample_path  # after the offline settings

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED_DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data"))
SAMPLES = sample_path()  # the package's built-in samples (hf_bert_tasks/samples)

#: the end of every torchrun driver script in the tests. Tear the process group down before the interpreter exits:
#: without it a gloo thread can still be joinable at exit and the C++ runtime aborts the rank ("terminate called
#: without an active exception", SIGABRT, after all outputs were written; seen in CI in test_distributed and
#: test_pretraining_distributed). Then leave without the interpreter's teardown: the abort was seen again after
#: destroy_process_group (fsdp2 worker).
TORCHRUN_EXIT = """
import os, sys
import torch.distributed as dist
if dist.is_available() and dist.is_initialized():
    dist.barrier()
    dist.destroy_process_group()
sys.stdout.flush(); sys.stderr.flush()
os._exit(0)
"""

#: A written WordPiece vocabulary for exact-tensor tests (ids = line numbers).
VOCAB = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "a",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "ran",
    "to",
    ".",
    ",",
    "is",
    "was",
    "not",
    "good",
    "bad",
    "play",
    "##ing",
    "##ed",
    "un",
    "##believ",
    "##able",
    "new",
    "york",
    "in",
    "he",
    "she",
    "it",
    "and",
    "rug",
]


#: The bundled sample folder (under :data:`SAMPLES`) of each task that has one.
SAMPLE_FOLDERS = {
    "mrpc": "MRPC",
    "sst2": "SST-2",
    "stsb": "STS-B",
    "mnli": "MNLI",
    "conll2003": "CoNLL-2003",
    "squad_v1": "SQuAD-v1.1",
    "squad_v2": "SQuAD-v2.0",
    "swag": "SWAG",
}
#: The flags every short test run shares unless told otherwise: no checkpoints, no report backends.
TINY_RUN = {"save_strategy": "no", "report_to": "none"}


def tiny_run_argv(task: str, model, out, *extra: str, data_dir=None, **flags) -> list[str]:
    """The ``finetune`` argv (without the sub-command) of a short test run of ``model`` on ``task``.

    ``--task``, ``--data_dir`` (``data_dir``, else the bundled sample of ``task``: :data:`SAMPLE_FOLDERS`),
    ``--model_name_or_path``, ``--output_dir``, then :data:`TINY_RUN` updated by ``flags`` in order (``name=value``
    gives ``--name str(value)``; ``name=None`` leaves a default flag out), then ``extra`` as given (switches such as
    ``--do_train``, and the flags a test is about). The run's length and sizes are the caller's ``flags``.
    Raises ValueError for a task without a bundled sample when ``data_dir`` is not given.
    """
    if data_dir is None:
        if task not in SAMPLE_FOLDERS:
            raise ValueError(f"tiny_run_argv: no bundled sample for task {task!r}; pass data_dir=")
        data_dir = os.path.join(SAMPLES, SAMPLE_FOLDERS[task])
    argv = ["--task", task, "--data_dir", str(data_dir), "--model_name_or_path", str(model), "--output_dir", str(out)]
    for name, value in {**TINY_RUN, **flags}.items():
        if value is not None:
            argv += [f"--{name}", str(value)]
    return argv + list(extra)


def shared_data(*parts: str) -> str:
    """Path under ../shared/data, or skip the test with the reason when it is absent."""
    path = os.path.join(SHARED_DATA, *parts)
    if not os.path.exists(path):
        pytest.skip(f"real data not available: {path} is absent (tests on ../shared/data run only where it exists)")
    return path


@pytest.fixture(scope="session")
def vocab_tokenizer(tmp_path_factory):
    """``BertTokenizer`` (fast) over :data:`VOCAB`, lower-cased."""
    from transformers import BertTokenizer

    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return BertTokenizer(vocab=str(path), do_lower_case=True)


@pytest.fixture(scope="session")
def sample_tokenizer():
    """A WordPiece tokenizer trained on the built-in samples (deterministic)."""
    from hf_bert_tasks.utils.resources import sample_texts
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    return train_wordpiece_tokenizer(sample_texts(), vocab_size=1000)


@pytest.fixture(scope="session")
def tiny_bert_dir(tmp_path_factory, sample_tokenizer):
    """Folder of a random 2-layer, hidden-32 BERT with the sample tokenizer (loads with any AutoModelFor...)."""
    from hf_bert_tasks.utils.modeling import build_random_bert

    out = tmp_path_factory.mktemp("tiny-bert")
    return build_random_bert(
        str(out),
        sample_tokenizer,
        preset="tiny",
        seed=0,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=256,
    )


def build_learnable_bert(output_dir, texts, seed: int = 0) -> str:
    """A random 2-layer, hidden-32 BERT with a WordPiece tokenizer trained on ``texts`` (the fixture's own words),
    saved to ``output_dir`` for the recipe tests that show learning. Dropout stays at BERT's 0.1."""
    from hf_bert_tasks.utils.modeling import build_random_bert
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    tokenizer = train_wordpiece_tokenizer(texts, vocab_size=400)
    return build_random_bert(
        str(output_dir),
        tokenizer,
        preset="tiny",
        seed=seed,
        hidden_size=32,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )


def majority_accuracy(labels) -> float:
    """Accuracy of always predicting the most frequent label (the constant-prediction baseline)."""
    from collections import Counter

    return Counter(labels).most_common(1)[0][1] / len(labels)


def predict_labels(out, pairs) -> list[int]:
    """Argmax class of the sequence-classification model saved in ``out`` for each ``(text, text_pair)`` (``text_pair``
    may be None), in one padded batch: tests recompute the metrics a recipe reports from it, outside the Trainer."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(out)
    model = AutoModelForSequenceClassification.from_pretrained(out).eval()
    firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
    enc = tokenizer(
        firsts,
        seconds if seconds[0] is not None else None,
        padding=True,
        truncation=True,
        max_length=128,
        return_tensors="pt",
    )
    with torch.no_grad():
        return model(**enc).logits.argmax(-1).tolist()
