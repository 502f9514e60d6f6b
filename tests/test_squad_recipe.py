"""``hf-bert-tasks finetune --task squad_v1|squad_v2`` end to end on written fixture files with a tiny BERT."""

import json
import os

import pytest

from hf_bert_tasks.scripts import finetune

PARAGRAPHS = [
    (
        "the old mill stands by the river and grinds wheat for the town every autumn .",
        [("what does the mill grind ?", "wheat"), ("where does the mill stand ?", "by the river")],
    ),
    (
        "maria painted the north wall of the library blue in the spring of that year .",
        [("who painted the wall ?", "maria"), ("which colour was the wall ?", "blue")],
    ),
    (
        "a small ferry crosses the lake twice a day and carries bicycles but no cars .",
        [("how often does the ferry cross ?", "twice a day"), ("what does the ferry not carry ?", "no cars")],
    ),
]


def squad_json(version, prefix, impossible=False, with_answers=True):
    data = []
    for a, (context, qas) in enumerate(PARAGRAPHS):
        items = []
        for q, (question, text) in enumerate(qas):
            qa = {
                "id": f"{prefix}{a}{q}",
                "question": question,
                "answers": [{"text": text, "answer_start": context.index(text)}] if with_answers else [],
            }
            if version == "2.0":
                qa["is_impossible"] = False
            items.append(qa)
        if impossible:
            items.append(
                {
                    "id": f"{prefix}{a}x",
                    "question": "who owns the moon ?",
                    "answers": [],
                    "is_impossible": True,
                    "plausible_answers": [],
                }
            )
        data.append({"title": f"article {a}", "paragraphs": [{"context": context, "qas": items}]})
    return {"version": version, "data": data}


def write_folder(tmp_path, version, test_split=False):
    folder = tmp_path / f"squad{version}"
    folder.mkdir()
    v2 = version == "2.0"
    for name, obj in (
        ("train", squad_json(version, "t", impossible=v2)),
        ("dev", squad_json(version, "d", impossible=v2)),
    ):
        (folder / f"{name}-v{version}.json").write_text(json.dumps(obj), encoding="utf-8")
    if test_split:
        obj = squad_json(version, "p", with_answers=False)
        (folder / f"test-v{version}.json").write_text(json.dumps(obj), encoding="utf-8")
    return str(folder)


def run(task, data_dir, model_dir, out, *extra):
    return finetune.main(
        [
            "--task",
            task,
            "--data_dir",
            data_dir,
            "--model_name_or_path",
            model_dir,
            "--output_dir",
            str(out),
            "--max_seq_length",
            "32",
            "--doc_stride",
            "8",
            "--max_query_length",
            "12",
            "--max_steps",
            "2",
            "--per_device_train_batch_size",
            "4",
            "--learning_rate",
            "1e-3",
            "--eval_strategy",
            "no",
            "--save_strategy",
            "no",
            "--disable_tqdm",
            "true",
            "--report_to",
            "none",
            *extra,
        ]
    )


def load(out, name):
    with open(os.path.join(out, name), encoding="utf-8") as f:
        return json.load(f)


def test_squad_v1_writes_predictions_nbest_and_metrics_and_serves_a_pipeline(tiny_bert_dir, tmp_path):
    from transformers import pipeline

    out = tmp_path / "v1"
    metrics = run("squad_v1", write_folder(tmp_path, "1.1"), tiny_bert_dir, out)
    assert {"eval_exact_match", "eval_f1", "eval_samples"} <= set(metrics)
    assert 0.0 <= metrics["eval_f1"] <= 100.0
    predictions = load(out, "predictions.json")
    dev_ids = [f"d{a}{q}" for a in range(3) for q in range(2)]
    assert sorted(predictions) == dev_ids and all(isinstance(t, str) for t in predictions.values())
    nbest = load(out, "nbest_predictions.json")
    assert sorted(nbest) == dev_ids
    assert all(1 <= len(entries) <= 20 for entries in nbest.values())
    assert not (out / "null_odds.json").exists()
    results = load(out, "all_results.json")
    assert results["eval_f1"] == metrics["eval_f1"]
    import hf_bert_tasks.qa_pipeline  # noqa: F401  (registers "extractive-question-answering")

    # transformers 5 removed pipeline("question-answering"); the saved model serves through our registered task
    with pytest.raises(KeyError, match="question-answering has been removed"):
        pipeline("question-answering", model=str(out))
    qa = pipeline("extractive-question-answering", model=str(out))
    answer = qa(question="what does the mill grind ?", context=PARAGRAPHS[0][0])
    assert set(answer) == {"score", "start", "end", "answer"} and 0.0 < answer["score"] <= 1.0
    assert PARAGRAPHS[0][0][answer["start"] : answer["end"]] == answer["answer"] != ""
    assert (
        len(
            qa(question="where ?", context=PARAGRAPHS[1][0], top_k=3, max_seq_len=24, doc_stride=4, max_question_len=8)
        )
        == 3
    )


def test_squad_v2_writes_null_odds_and_metrics_at_tau_zero_and_best(tiny_bert_dir, tmp_path):
    out = tmp_path / "v2"
    metrics = run("squad_v2", write_folder(tmp_path, "2.0", test_split=True), tiny_bert_dir, out)
    for key in (
        "exact_match",
        "f1",
        "HasAns_exact_match",
        "HasAns_f1",
        "NoAns_exact_match",
        "NoAns_f1",
        "best_exact_match",
        "best_exact_match_thresh",
        "best_f1",
        "best_f1_thresh",
        "null_score_diff_threshold",
    ):
        assert f"eval_{key}" in metrics, key
    assert metrics["eval_null_score_diff_threshold"] == 0.0
    assert metrics["eval_best_f1"] >= metrics["eval_f1"]
    odds = load(out, "null_odds.json")
    predictions = load(out, "predictions.json")
    assert sorted(odds) == sorted(predictions) and len(predictions) == 9
    assert all((predictions[q] == "") == (odds[q] > 0.0) for q in predictions)
    assert sorted(load(out, "test_predictions.json")) == [f"p{a}{q}" for a in range(3) for q in range(2)]
    assert (out / "test_null_odds.json").is_file()


def test_squad_v2_applies_a_given_threshold_at_predict_time(tiny_bert_dir, tmp_path):
    out = tmp_path / "v2tau"
    data_dir = write_folder(tmp_path, "2.0", test_split=True)
    metrics = run("squad_v2", data_dir, tiny_bert_dir, out, "--null_score_diff_threshold", "1e9")
    assert metrics["eval_null_score_diff_threshold"] == 1e9
    assert all(text != "" for text in load(out, "test_predictions.json").values())
    assert metrics["eval_NoAns_exact_match"] == 0.0  # tau so high that no question is declared unanswerable


def test_a_doc_stride_that_leaves_no_room_fails_before_training(tiny_bert_dir, tmp_path):
    with pytest.raises(ValueError, match=r"doc_stride 40 must be between 1 and 17"):
        run("squad_v1", write_folder(tmp_path, "1.1"), tiny_bert_dir, tmp_path / "bad", "--doc_stride", "40")
