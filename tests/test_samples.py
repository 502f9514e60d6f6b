"""The package's samples (``hf_bert_tasks/samples``, written by ``tools/make_samples.py``): every task family has one,
each reads through its family's ``--data_dir`` reader into as many examples as the file holds (counted here with the
standard library), SQuAD answers are the context's spans, the files are what the generator writes, and a short run of
every family on its sample ends with its metrics (offline, issue 56 item 6)."""

import csv
import importlib.util
import json
import os

import pytest

from hf_bert_tasks import cli, get_task
from tests.conftest import REPO, SAMPLE_FOLDERS, SAMPLES, tiny_run_argv


def _conll_sentences(path: str) -> int:
    """Sentences of a CoNLL column file: blocks of lines between blank lines, ``-DOCSTART-`` blocks left out."""
    with open(path, encoding="utf-8") as f:
        blocks = [b for b in f.read().split("\n\n") if b.strip()]
    return sum(not b.strip().startswith("-DOCSTART-") for b in blocks)


def _squad_questions(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(len(p["qas"]) for a in json.load(f)["data"] for p in a["paragraphs"])


def _csv_rows(path: str) -> int:
    with open(path, encoding="utf-8", newline="") as f:
        return sum(1 for _ in csv.reader(f)) - 1


#: task -> {split: (file in its sample folder, the count of its examples by the standard library)}
EXPECTED = {
    "conll2003": {"train": ("train.txt", _conll_sentences), "validation": ("valid.txt", _conll_sentences)},
    "squad_v1": {"train": ("train-v1.1.json", _squad_questions), "validation": ("dev-v1.1.json", _squad_questions)},
    "squad_v2": {"train": ("train-v2.0.json", _squad_questions), "validation": ("dev-v2.0.json", _squad_questions)},
    "swag": {"train": ("train.csv", _csv_rows), "validation": ("val.csv", _csv_rows)},
}


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_a_family_sample_reads_every_example_of_its_files(task):
    folder = os.path.join(SAMPLES, SAMPLE_FOLDERS[task])
    data = get_task(task).load(folder)
    for split, (name, count) in EXPECTED[task].items():
        assert len(data[split]) == count(os.path.join(folder, name)) > 0, (task, split)


@pytest.mark.parametrize("task", ["squad_v1", "squad_v2"])
def test_every_squad_sample_answer_is_the_span_of_its_context(task):
    folder = os.path.join(SAMPLES, SAMPLE_FOLDERS[task])
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            articles = json.load(f)["data"]
        for paragraph in (p for a in articles for p in a["paragraphs"]):
            for qa in paragraph["qas"]:
                for answer in qa["answers"]:
                    start = answer["answer_start"]
                    assert paragraph["context"][start : start + len(answer["text"])] == answer["text"], qa["id"]


def test_the_v2_sample_holds_unanswerable_questions():
    with open(os.path.join(SAMPLES, "SQuAD-v2.0", "dev-v2.0.json"), encoding="utf-8") as f:
        qas = [qa for a in json.load(f)["data"] for p in a["paragraphs"] for qa in p["qas"]]
    unanswerable = [qa for qa in qas if qa["is_impossible"]]
    assert unanswerable and all(qa["answers"] == [] for qa in unanswerable)
    assert len(unanswerable) < len(qas)


def test_the_samples_are_what_the_generator_writes(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("make_samples", os.path.join(REPO, "tools", "make_samples.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "HERE", str(tmp_path))
    module.main()
    written = sorted(os.path.relpath(os.path.join(r, n), tmp_path) for r, _, names in os.walk(tmp_path) for n in names)
    assert written == sorted(
        os.path.relpath(os.path.join(r, n), SAMPLES) for r, _, names in os.walk(SAMPLES) for n in names
    )
    for name in written:
        with open(tmp_path / name, "rb") as ours, open(os.path.join(SAMPLES, name), "rb") as shipped:
            assert ours.read() == shipped.read(), name


@pytest.mark.parametrize("task", sorted(EXPECTED))
def test_every_family_fine_tunes_on_its_sample_offline(task, tiny_bert_dir, tmp_path):
    out = tmp_path / "out"
    sizes = {"max_steps": 2, "per_device_train_batch_size": 4, "max_eval_samples": 8, "max_seq_length": 128}
    windows = {"doc_stride": 32, "max_query_length": 24} if task.startswith("squad") else {}
    argv = tiny_run_argv(task, tiny_bert_dir, out, "--do_train", "--do_eval", **sizes, **windows)
    assert cli.main(["finetune", *argv]) == 0
    results = json.loads((out / "all_results.json").read_text())
    assert f"eval_{get_task(task).primary_metric}" in results
