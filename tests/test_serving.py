"""A served model answers as the recipe scored it (issue 24 item 3), for every task family.

Each family's tiny recipe run (the contract test's data writers, tiny BERT and settings: ``tests/
test_contract_task_mode.py``) writes its predictions file; the saved folder is then served through the documented
entry point — :func:`hf_bert_tasks.hub.push.pipeline_for` (text classification, regression, NER, SQuAD v1/v2), and
``AutoModelForMultipleChoice`` for SWAG (transformers 5 has no multiple-choice pipeline) — on the same examples,
and the served answers must be the written ones: labels, scores, entities per word, SQuAD texts including v2.0's
abstentions.
"""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

from hf_bert_tasks.tasks import TASK_REGISTRY
from tests.conftest import tiny_run_argv
from tests.test_contract_task_mode import COMMON, MAX_SEQ_LENGTH, tiny_model_dir, write_tiny_data  # noqa: F401

#: One task per family; SQuAD v2.0 also saves checkpoints, to check that they record what the folder does.
FAMILIES = {
    "mrpc": [],
    "stsb": [],
    "conll2003": [],
    "squad_v1": [],
    "swag": [],
    "squad_v2": ["--save_strategy", "steps", "--save_steps", "1"],
    "sst2": ["--mode", "feature_based", "--head_hidden_size", "16"],
}  # the card's code, frozen features
#: The recipe's window settings (COMMON), given to the QA pipeline so that it cuts the same windows.
QA_WINDOWS = {"max_seq_len": MAX_SEQ_LENGTH, "doc_stride": 16, "max_question_len": 16}


@pytest.fixture(scope="module")
def recipe(tmp_path_factory, tiny_model_dir):  # noqa: F811 - the contract test's fixture
    """``recipe(name) -> (task, output folder, raw eval split)``: one family's tiny recipe run (``--mode finetune``),
    run once per module."""
    from hf_bert_tasks.finetune import recipe as finetune

    runs = {}

    def get(name: str):
        if name not in runs:
            task, root = TASK_REGISTRY[name], tmp_path_factory.mktemp(name)
            data_dir, out = write_tiny_data(task, root / "data"), str(root / "out")
            finetune.main(tiny_run_argv(name, tiny_model_dir, out, *COMMON, *FAMILIES[name], data_dir=data_dir))
            runs[name] = task, out, task.load(data_dir)[task.eval_splits[0]]
        return runs[name]

    return get


def _tsv(path):
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))


def _json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def _groups(tags: list[str]) -> list[tuple[str, int, int]]:
    """Entities as the token-classification pipeline groups per-word tags: a word joins the previous word's group
    when it has the same type and does not start with ``B-`` (``O`` words group too and are dropped)."""
    groups: list[list] = []
    for i, tag in enumerate(tags):
        kind = tag[2:] if tag[:2] in ("B-", "I-") else tag
        if groups and groups[-1][0] == kind and not tag.startswith("B-"):
            groups[-1][2] = i
        else:
            groups.append([kind, i, i])
    return [tuple(g) for g in groups if g[0] != "O"]


@pytest.mark.parametrize("name", [n for n in FAMILIES if n != "sst2"])
def test_served_answers_are_the_written_predictions(recipe, name):
    from hf_bert_tasks.hub.push import pipeline_for

    task, out, raw = recipe(name)
    split = task.eval_splits[0]
    if task.problem_type in ("single_label_classification", "regression"):
        rows = _tsv(os.path.join(out, f"{split}_predictions.tsv"))
        served = pipeline_for(out)([{"text": a, "text_pair": b} for a, b in zip(raw["sentence1"], raw["sentence2"])])
        if task.problem_type == "regression":
            np.testing.assert_allclose(
                [s["score"] for s in served], [float(r["prediction"]) for r in rows], rtol=1e-4, atol=1e-5
            )
        else:
            assert [s["label"] for s in served] == [task.label_names[int(r["prediction"])] for r in rows]
    elif task.problem_type == "token_classification":
        with open(os.path.join(out, f"{split}_predictions.txt"), encoding="utf-8") as f:
            sentences = [[line.split()[2] for line in block.splitlines()] for block in f.read().strip().split("\n\n")]
        pipe = pipeline_for(out)
        for tokens, tags in zip(raw["tokens"], sentences, strict=True):
            starts = np.cumsum([0] + [len(t) + 1 for t in tokens])  # character start of each word in the text
            entities = pipe(" ".join(tokens))
            served = [
                (
                    e["entity_group"],
                    int(np.searchsorted(starts, e["start"])),
                    int(np.searchsorted(starts, e["end"], side="right")) - 1,
                )
                for e in entities
            ]
            assert served == _groups(tags), (tokens, tags)
    elif task.problem_type == "question_answering":
        written = _json(os.path.join(out, "predictions.json"))
        assert _serve(pipeline_for(out, **QA_WINDOWS), raw) == written
    else:  # multiple choice: AutoModelForMultipleChoice, inputs as SwagTask.preprocess builds them
        import torch
        from transformers import AutoModelForMultipleChoice, AutoTokenizer

        rows = _tsv(os.path.join(out, f"{split}_predictions.tsv"))
        model, tokenizer = AutoModelForMultipleChoice.from_pretrained(out).eval(), AutoTokenizer.from_pretrained(out)
        for row, example in zip(rows, raw, strict=True):
            endings = [f"{example['sent2']} {example[f'ending{i}']}" for i in range(4)]
            enc = tokenizer([example["sent1"]] * 4, endings, padding=True, return_tensors="pt")
            with torch.no_grad():
                logits = model(**{k: v.unsqueeze(0) for k, v in enc.items()}).logits
            assert int(logits.argmax(-1)) == int(row["prediction"])


def _abstentions(out):
    """A threshold in the widest gap between the written null odds (so answers and abstentions both occur) and the
    official rule's answers at it, from ``best_non_null_predictions.json`` + ``null_odds.json``."""
    odds, best = _json(os.path.join(out, "null_odds.json")), _json(os.path.join(out, "best_non_null_predictions.json"))
    values = np.sort(list(odds.values()))
    gap = int(np.argmax(np.diff(values)))
    tau = float(values[gap] + values[gap + 1]) / 2
    expected = {qid: "" if odds[qid] > tau else best[qid] for qid in odds}
    assert "" in expected.values() and set(expected.values()) != {""}
    return tau, expected


def _serve(pipe, raw) -> dict[str, str]:
    questions = zip(raw["id"], raw["question"], raw["context"], strict=True)
    return {qid: pipe(question=q, context=c)["answer"] for qid, q, c in questions}


def test_a_squad_v2_folder_records_that_it_abstains_and_at_which_threshold(recipe):
    _, out, _ = recipe("squad_v2")
    results, config = _json(os.path.join(out, "all_results.json")), _json(os.path.join(out, "config.json"))
    assert config["version_2_with_negative"] is True
    assert config["null_score_diff_threshold"] == results["eval_null_score_diff_threshold"] == 0.0


def test_the_served_threshold_is_the_one_in_config_json(recipe, tmp_path):
    """Served with no options, the folder abstains where its config's threshold says (the null answer need not be
    among the n-best); the official rule on the written files gives the expected answers."""
    import shutil

    from hf_bert_tasks.hub.push import pipeline_for

    _, out, raw = recipe("squad_v2")
    tau, expected = _abstentions(out)
    folder = shutil.copytree(out, tmp_path / "served", ignore=shutil.ignore_patterns("checkpoint-*"))
    config = _json(folder / "config.json")
    (folder / "config.json").write_text(json.dumps(dict(config, null_score_diff_threshold=tau)), encoding="utf-8")
    assert _serve(pipeline_for(str(folder), **QA_WINDOWS), raw) == expected


def test_a_threshold_given_to_the_pipeline_wins_over_the_config(recipe):
    from hf_bert_tasks.hub.push import pipeline_for

    _, out, raw = recipe("squad_v2")
    tau, expected = _abstentions(out)
    assert _serve(pipeline_for(out, null_score_diff_threshold=tau, **QA_WINDOWS), raw) == expected


def test_squad_checkpoints_and_the_final_folder_record_the_same_serving_config(recipe):
    _, out, _ = recipe("squad_v2")
    keys = ("version_2_with_negative", "null_score_diff_threshold")
    final = {k: _json(os.path.join(out, "config.json"))[k] for k in keys}
    checkpoints = sorted(d for d in os.listdir(out) if d.startswith("checkpoint-"))
    assert checkpoints, "the run saves checkpoints (the recipe keeps the newest)"
    for name in checkpoints:
        assert {k: _json(os.path.join(out, name, "config.json")).get(k) for k in keys} == final, name


def test_a_squad_v1_model_says_so_in_its_config(recipe):
    _, out, _ = recipe("squad_v1")
    assert _json(os.path.join(out, "config.json"))["version_2_with_negative"] is False


@pytest.mark.parametrize("name", ["squad_v1", "squad_v2"])
def test_the_qa_pipeline_serves_the_trained_window_without_being_told(recipe, name):
    """Issue 44 item 3: the trained max_seq_length / doc_stride / max_query_length are in config.json and the
    package's QA pipeline reads them back, so its answers are predictions.json's with no window option given."""
    from hf_bert_tasks.hub.push import pipeline_for

    _, out, raw = recipe(name)
    config = _json(os.path.join(out, "config.json"))
    assert (config["max_seq_length"], config["doc_stride"], config["max_query_length"]) == (MAX_SEQ_LENGTH, 16, 16)
    assert _serve(pipeline_for(out), raw) == _json(os.path.join(out, "predictions.json"))


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_cards_how_to_use_code_runs(recipe, name, tmp_path):
    """Issue 44 item 3: the card's "How to use" block, run as written (in a fresh interpreter, on transformers 5),
    loads the saved model and prints an answer, for every task family and for a frozen-feature model."""
    import re
    import subprocess
    import sys

    from hf_bert_tasks.finetune.card import build_finetune_card

    _, out, _ = recipe(name)
    text = str(build_finetune_card(out))
    code = re.search(r"## How to use\n.*?```python\n(.*?)```", text, flags=re.DOTALL).group(1)
    script = tmp_path / "how_to_use.py"
    script.write_text(code, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [os.path.dirname(os.path.dirname(os.path.abspath(__file__))), os.environ.get("PYTHONPATH", "")]
        ),
        "HF_MODULES_CACHE": str(tmp_path / "hf-modules"),
    }  # remote code (frozen-feature model) copied here
    proc = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert proc.returncode == 0, f"{code}\n{proc.stderr[-3000:]}"
    assert proc.stdout.strip(), code
