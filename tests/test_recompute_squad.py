"""Every SQuAD score the package reports is reproduced by the official scripts from the files it writes.

* v1.1: ``evaluate-v1.1.py DATA predictions.json`` -> ``eval_exact_match``, ``eval_f1``.
* v2.0: ``evaluate-v2.0.py DATA best_non_null_predictions.json --na-prob-file null_odds.json --na-prob-thresh TAU``
  -> every ``eval_*`` score (at tau, HasAns/NoAns, best and best thresholds); ``predictions.json`` alone -> the
  scores at tau.

Files come from the package's own code: the pure post-processing (:func:`hf_bert_tasks.tasks.squad.postprocess.postprocess_qa_predictions`
+ ``SquadTask.score`` / ``write_predictions``) over the full dev files, and the recipe's evaluate path on a tiny model.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest

from hf_bert_tasks.finetune import recipe as finetune
from hf_bert_tasks.tasks import get_task
from hf_bert_tasks.tasks.squad import postprocess as qa_postprocess
from tests import oracles


def official_to_ours(official: dict) -> dict:
    """The official keys as the recipe names them (``exact`` -> ``exact_match``; ``total`` counts are not reported)."""
    return {re.sub(r"exact(?!_match)", "exact_match", k): v for k, v in official.items() if not k.endswith("total")}


def assert_reproduced(reported: dict, official: dict, prefix: str = "") -> None:
    expected = official_to_ours(official)
    for key, value in expected.items():
        mine = reported[f"{prefix}{key}"]
        if math.isinf(value):
            assert mine == value, key
        else:
            # same per-question floats summed in the same order; 1e-9 is the issue's bound
            assert abs(mine - value) <= 1e-9, (key, mine, value)
    score_keys = {k[len(prefix) :] for k in reported if k.startswith(prefix)} - {"null_score_diff_threshold"}
    score_keys = {k for k in score_keys if re.fullmatch(r"(HasAns_|NoAns_|best_)?(exact_match|f1)(_thresh)?", k)}
    assert score_keys == set(expected)  # nothing reported that the script does not reproduce


def squad_file(path, paragraphs, version="2.0") -> str:
    """An official-layout SQuAD file: ``paragraphs`` = [(context, [(id, question, answer text or None)])]."""
    data = []
    for p, (context, qas) in enumerate(paragraphs):
        items = []
        for qid, question, answer in qas:
            item = {
                "id": qid,
                "question": question,
                "answers": [] if answer is None else [{"text": answer, "answer_start": context.index(answer)}],
            }
            if version == "2.0":
                item["is_impossible"] = answer is None
            items.append(item)
        data.append({"title": f"t{p}", "paragraphs": [{"context": context, "qas": items}]})
    path.write_text(json.dumps({"version": version, "data": data}), encoding="utf-8")
    return str(path)


# ------------------------------------------------------------------ the issue's case, by hand
def test_the_issues_one_question_case_reproduces_best_f1_from_the_written_files(tmp_path):
    # gold "x"; the span "x" scores 0 + 0, the null answer 0.5 + 0: odds = null - best non-null = 0.5 > tau 0
    data_file = squad_file(tmp_path / "dev-v2.0.json", [("x", [("q", "what ?", "x")])])
    task = get_task("squad_v2")
    raw = task.read_json(data_file)
    result = qa_postprocess.postprocess_qa_predictions(
        ["q"],
        ["x"],
        np.array([0]),
        np.array([[0.5, 0.0]]),
        np.array([[0.0, 0.0]]),
        np.array([[[-1, -1], [0, 1]]]),
        version_2_with_negative=True,
        null_score_diff_threshold=task.tau,
    )
    reported = task.score(raw, result)
    assert (reported["best_f1"], reported["best_f1_thresh"], reported["f1"]) == (100.0, 0.5, 0.0)
    task.write_predictions(result, str(tmp_path))
    assert json.loads((tmp_path / "predictions.json").read_text()) == {"q": ""}  # cut at tau 0
    assert json.loads((tmp_path / "best_non_null_predictions.json").read_text()) == {"q": "x"}
    official = oracles.squad_v2(
        data_file, str(tmp_path / "best_non_null_predictions.json"), str(tmp_path / "null_odds.json"), task.tau
    )
    assert (official["best_f1"], official["best_f1_thresh"]) == (100.0, 0.5)
    assert_reproduced(reported, official)


# ---------------------------------------------------- full dev files through the pure post-processing
def word_features(contexts: list[str], golds: list[list[dict]], rng: np.random.Generator, width: int = 64):
    """Windows of ``width`` whitespace words per context (position 0 = [CLS]) with random logits, raised at the
    gold answer's first/last word for some questions so that right, partial and wrong answers all occur, and at
    [CLS] so that the null answer wins at some thresholds and loses at others.

    Returns ``(feature_example_index [F], start_logits [F, width+1], end_logits [F, width+1], offsets [F, width+1, 2])``.
    """
    spans_of: dict[str, np.ndarray] = {}
    index, offsets = [], []
    for ex, context in enumerate(contexts):
        if context not in spans_of:
            spans_of[context] = np.array([(m.start(), m.end()) for m in re.finditer(r"\S+", context)]).reshape(-1, 2)
        spans = spans_of[context]
        for w0 in range(0, max(len(spans), 1), width):
            off = np.full((width + 1, 2), -1)
            window = spans[w0 : w0 + width]
            off[1 : len(window) + 1] = window
            index.append(ex)
            offsets.append(off)
    index, offsets = np.array(index), np.array(offsets)
    starts, ends = rng.normal(0, 2, offsets.shape[:2]), rng.normal(0, 2, offsets.shape[:2])
    boost = rng.random(len(contexts)) < 0.6
    for f, ex in enumerate(index):
        if golds[ex] and boost[ex]:
            a0 = golds[ex][0]["answer_start"]
            a1 = a0 + len(golds[ex][0]["text"])
            starts[f] += 6 * ((offsets[f, :, 0] <= a0) & (a0 < offsets[f, :, 1]))
            ends[f] += 6 * ((offsets[f, :, 0] < a1) & (a1 <= offsets[f, :, 1]))
    # the null answer ([CLS]) competes: odds null - best non-null spread around 0, higher for unanswerable questions
    no_answer = np.array([not golds[ex] for ex in index])
    starts[:, 0] += 10.0 + 4.0 * (no_answer & (rng.random(len(index)) < 0.7))
    return index, starts, ends, offsets


def _with_tau(task, tau: float):
    args = {
        "doc_stride": 128,
        "max_query_length": 64,
        "n_best_size": 20,
        "max_answer_length": 30,
        "null_score_diff_threshold": tau,
    }
    return task.configure(type("DataArguments", (), args)())


@pytest.fixture(scope="module")
def dev_predictions():
    """version -> (task, data file, raw columns, QAPredictions) for a full dev file, post-processed once."""
    cache = {}

    def get(version: str):
        if version not in cache:
            data_file = oracles.shared_file("data", "squad", f"dev-v{version}.json")
            task = get_task("squad_v1" if version == "1.1" else "squad_v2")
            raw = task.read_json(data_file)
            golds = [
                [{"text": t, "answer_start": s} for t, s in zip(a["text"], a["answer_start"])] for a in raw["answers"]
            ]
            index, starts, ends, offsets = word_features(raw["context"], golds, np.random.default_rng(0))
            result = qa_postprocess.postprocess_qa_predictions(
                raw["id"],
                raw["context"],
                index,
                starts,
                ends,
                offsets,
                n_best_size=5,
                max_answer_length=8,
                version_2_with_negative=task.version_2_with_negative,
            )
            cache[version] = task, data_file, raw, result
        return cache[version]

    return get


@pytest.mark.parametrize("version, tau", [("1.1", None), ("2.0", 0.0), ("2.0", 2.5)])
def test_full_dev_scores_are_reproduced_from_the_written_files(dev_predictions, tmp_path, version, tau):
    task, data_file, raw, result = dev_predictions(version)
    if version == "1.1":
        reported = task.score(raw, result)
        task.write_predictions(result, str(tmp_path))
        official, unanswered = oracles.squad_v1(data_file, str(tmp_path / "predictions.json"))
        assert unanswered == 0 and 10.0 < official["f1"] < 90.0
        assert_reproduced(reported, official)
        return
    task = _with_tau(task, tau)
    # what the recipe does at tau: the predictions cut there, the scores at tau and the best tau
    result = result._replace(
        predictions={q: "" if result.null_odds[q] > tau else t for q, t in result.best_non_null.items()}
    )
    reported = task.score(raw, result)
    assert reported["null_score_diff_threshold"] == tau and reported["best_f1"] > reported["f1"]
    task.write_predictions(result, str(tmp_path))
    official = oracles.squad_v2(
        data_file, str(tmp_path / "best_non_null_predictions.json"), str(tmp_path / "null_odds.json"), task.tau
    )
    assert_reproduced(reported, official)
    if tau == 2.5:  # predictions.json (cut at tau) alone gives the scores at tau, not the best-threshold ones
        at_tau = official_to_ours(oracles.squad_v2(data_file, str(tmp_path / "predictions.json")))
        assert "best_f1" not in at_tau
        for key, value in at_tau.items():
            assert abs(reported[key] - value) <= 1e-9, key


# ------------------------------------------------------------ the recipe's evaluate path, tiny model
PARAGRAPHS = [
    (
        "the old mill stands by the river and grinds wheat for the town every autumn .",
        [
            ("what does the mill grind ?", "wheat"),
            ("where does the mill stand ?", "by the river"),
            ("who owns the moon ?", None),
        ],
    ),
    (
        "maria painted the north wall of the library blue in the spring of that year .",
        [("who painted the wall ?", "maria"), ("which colour was the wall ?", "blue"), ("why ?", None)],
    ),
    (
        "a small ferry crosses the lake twice a day and carries bicycles but no cars .",
        [("how often does the ferry cross ?", "twice a day"), ("what does the ferry not carry ?", "no cars")],
    ),
]


def _recipe_data(folder, version):
    folder.mkdir()
    paragraphs = [
        (c, [(f"d{p}{q}", question, a) for q, (question, a) in enumerate(qas) if version == "2.0" or a is not None])
        for p, (c, qas) in enumerate(PARAGRAPHS)
    ]
    return squad_file(folder / f"dev-v{version}.json", paragraphs, version)


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_recipe_eval_metrics_are_reproduced_by_the_official_script(tiny_bert_dir, tmp_path, version):
    oracles.shared_file("oracles", f"evaluate-v{version}.py")  # skip before the recipe runs when it is absent
    name = "squad_v1" if version == "1.1" else "squad_v2"
    data_file = _recipe_data(tmp_path / "data", version)
    out = tmp_path / "out"
    finetune.main(
        [
            "--task",
            name,
            "--data_dir",
            str(tmp_path / "data"),
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--do_eval",
            "--max_seq_length",
            "32",
            "--doc_stride",
            "8",
            "--max_query_length",
            "12",
            "--disable_tqdm",
            "true",
            "--report_to",
            "none",
        ]
    )
    reported = json.loads((out / "all_results.json").read_text())
    if version == "1.1":
        official, _ = oracles.squad_v1(data_file, str(out / "predictions.json"))
    else:
        official = oracles.squad_v2(
            data_file,
            str(out / "best_non_null_predictions.json"),
            str(out / "null_odds.json"),
            reported["eval_null_score_diff_threshold"],
            tmp_dir=str(tmp_path),
        )
        assert official["total"] == 8 and official["NoAns_total"] == 2
    assert_reproduced(reported, official, prefix="eval_")
