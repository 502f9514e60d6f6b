"""A GLUE-like task defined here, outside the package, by one registration (``register_task``): it joins
``hf-bert-tasks finetune --task`` and runs end to end from the CLI entry on files written by this test."""

import dataclasses
import json

import pytest

from hf_bert_tasks import cli, get_task, register_task
from hf_bert_tasks.tasks.base import TASK_REGISTRY
from tests.conftest import tiny_run_argv

PAIRS = [
    ("The river rose after three days of rain.", "Heavy rain made the river rise.", 1),
    ("The shop opens at nine.", "The bakery sells bread.", 0),
    ("She fixed the old bicycle.", "The old bicycle was repaired by her.", 1),
    ("The train left late.", "Cats sleep most of the day.", 0),
    ("He painted the fence blue.", "The fence was painted blue by him.", 1),
    ("The museum is closed today.", "Tomatoes grow well in summer.", 0),
    ("Our team won the final match.", "The final match was won by our team.", 1),
    ("A storm hit the coast.", "The library has new chairs.", 0),
]


@pytest.fixture
def paraphrase_task():
    """``news_paraphrase``: MRPC's reader, columns and metrics under a new name (one ``register_task`` call)."""
    task = register_task(
        dataclasses.replace(
            get_task("mrpc"),
            name="news_paraphrase",
            description="news_paraphrase: are two short news sentences paraphrases (F1, accuracy)",
            paper_results={},
            submission_files={},
        )
    )
    yield task
    TASK_REGISTRY.pop(task.name)


def write_split(folder, name: str, pairs) -> None:
    """The MRPC file layout: ``Quality``, two ids, ``#1 String``, ``#2 String`` (tab-separated, header line)."""
    lines = ["Quality\t#1 ID\t#2 ID\t#1 String\t#2 String"]
    lines += [f"{label}\t{2 * i}\t{2 * i + 1}\t{a}\t{b}" for i, (a, b, label) in enumerate(pairs)]
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_task_registered_in_a_test_runs_through_the_cli(paraphrase_task, tmp_path, tiny_bert_dir):
    data = tmp_path / "data"
    data.mkdir()
    write_split(data, "train.tsv", PAIRS)
    write_split(data, "dev.tsv", PAIRS[:4])
    out = tmp_path / "out"
    sizes = {"max_steps": 2, "per_device_train_batch_size": 4}
    argv = tiny_run_argv("news_paraphrase", tiny_bert_dir, out, "--do_train", "--do_eval", data_dir=data, **sizes)
    assert cli.main(["finetune", *argv]) == 0
    with open(out / "all_results.json") as f:
        results = json.load(f)
    assert results["eval_samples"] == 4 and {"eval_f1", "eval_accuracy"} <= set(results)
    with open(out / "run_info.json") as f:
        assert json.load(f)["task"] == "news_paraphrase"
