"""benchmarks/parity: the SQuAD v2.0 parity rows (squad_split.py's file names, squad_arms.py's score keys and
commands, report.py's v2.0 rows) and swag_arms.py's recorded command. Pure functions; no run is started and
../shared is not read."""

import importlib.util
import json
import os
import sys
import types

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARITY = os.path.join(REPO, "benchmarks", "parity")


def load(name):
    spec = importlib.util.spec_from_file_location(f"parity_{name}", os.path.join(PARITY, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


squad_split, squad_arms, report, swag_arms = (load(n) for n in ("squad_split", "squad_arms", "report", "swag_arms"))


@pytest.mark.parametrize(
    "version, names",
    [("1.1", ("train-v1.1.json", "dev-v1.1.json")), ("v2.0", ("train-v2.0.json", "dev-v2.0.json"))],
)
def test_split_names_follow_the_official_version_field(version, names):
    # dev-v1.1.json has "version": "1.1", dev-v2.0.json "version": "v2.0"
    assert squad_split.split_names(version) == names


def test_split_names_refuse_an_unknown_version():
    with pytest.raises(ValueError, match=r"'version' field '3\.0': expected 1\.1 or v2\.0"):
        squad_split.split_names("3.0")


def test_split_main_writes_v2_names_and_keeps_unanswerable_questions(tmp_path):
    qa = lambda i, impossible: {"id": f"q{i}", "question": "Who?", "is_impossible": impossible,
                                "answers": [] if impossible else [{"text": "Ada", "answer_start": 0}]}  # fmt: skip
    articles = [
        {"title": f"A{a}", "paragraphs": [{"context": "Ada wrote.", "qas": [qa(a, a % 2 == 1)]}]} for a in range(3)
    ]
    src = tmp_path / "dev.json"
    src.write_text(json.dumps({"version": "v2.0", "data": articles}), encoding="utf-8")
    squad_split.main([str(src), str(tmp_path / "out"), "--train_articles", "0:2", "--dev_articles", "2:3"])
    train = json.loads((tmp_path / "out" / "train-v2.0.json").read_text(encoding="utf-8"))
    dev = json.loads((tmp_path / "out" / "dev-v2.0.json").read_text(encoding="utf-8"))
    assert (train["version"], [a["title"] for a in train["data"]], [a["title"] for a in dev["data"]]) == (
        "v2.0", ["A0", "A1"], ["A2"]
    )  # fmt: skip
    assert train["data"][1]["paragraphs"][0]["qas"][0]["is_impossible"] is True


def test_run_qa_v2_keys_map_to_the_row_names():
    # run_qa's evaluate-style keys (eval_exact, eval_HasAns_exact) and ours' (eval_exact_match) give the same names
    run_qa = {"eval_exact": 50.0, "eval_f1": 52.5, "eval_HasAns_exact": 1.0, "eval_HasAns_f1": 6.0,
              "eval_NoAns_exact": 99.0, "eval_NoAns_f1": 99.0, "eval_best_f1": 53.0, "eval_total": 806}  # fmt: skip
    assert squad_arms.pick_scores(run_qa) == {
        "eval_f1": 52.5, "eval_exact_match": 50.0, "eval_HasAns_f1": 6.0, "eval_NoAns_f1": 99.0,
        "eval_HasAns_exact_match": 1.0, "eval_NoAns_exact_match": 99.0, "eval_best_f1": 53.0,
    }  # fmt: skip
    assert squad_arms.pick_scores({"eval_f1": 11.2, "eval_exact_match": 5.4}) == {
        "eval_f1": 11.2, "eval_exact_match": 5.4
    }  # fmt: skip


def test_v2_commands_pass_the_version_flag_and_file_names(tmp_path):
    args = types.SimpleNamespace(task="squad_v2", model="/m", data="/d", batch=16, lr=1e-4, epochs=1.0,
                                 max_seq_length=192, doc_stride=64, warmup=0.1, weight_decay=0.01)  # fmt: skip
    ref = squad_arms.command("run_qa", 42, args, "/o") if os.path.isdir(squad_arms.BASELINE) else None
    if ref is not None:  # the run_qa arm needs ../shared/baselines/qa
        assert "--version_2_with_negative" in ref
        assert ref[ref.index("--train_file") + 1] == os.path.join("/d", "train-v2.0.json")
        assert ref[ref.index("--validation_file") + 1] == os.path.join("/d", "dev-v2.0.json")
    ours = squad_arms.command("ours_default", 42, args, "/o")
    assert ours[ours.index("--task") + 1] == "squad_v2" and "--train_sampling_strategy" not in ours


def test_report_reads_a_v2_row_as_task_squad_v2_with_hasans_noans():
    row = {"arm": "ours_default", "task": "squad_v2", "seed": 43, "eval_f1": 52.5, "eval_exact_match": 50.0,
           "eval_HasAns_f1": 6.0, "eval_NoAns_f1": 99.0, "wall_s": 200.0, "peak_rss_mb": 2000.0}  # fmt: skip
    out = report.normalise(row, "dir/squad_v2_arms.jsonl", 1)
    assert (out["side"], out["task"], out["budget"]) == ("ours", "squad_v2", "squad_v2_arms.jsonl")
    assert out["metrics"] == {"f1": 52.5, "exact_match": 50.0, "HasAns_f1": 6.0, "NoAns_f1": 99.0}


def test_swag_reference_command_is_recorded_without_machine_paths():
    args = types.SimpleNamespace(model="/x/model", work="/tmp/w", script="/x/refs/run_swag.py", max_seq_length=128,
                                 batch=16, lr=5e-5, epochs=2.0, warmup=0.1, weight_decay=0.01)  # fmt: skip
    args.portable_names = {args.script: "$RUN_SWAG"}
    cmd = swag_arms.command("reference", "swag", 42, args, "/tmp/w/reference-swag-s42")
    text = swag_arms.glue_arms.portable(cmd, args)
    assert text.startswith("python $RUN_SWAG --train_file $WORK/data/train.csv --validation_file $WORK/data/val.csv")
    assert "/x/" not in text and "/tmp/" not in text and sys.executable not in text


def test_swag_diagnostic_arm_sets_the_random_sampler():
    args = types.SimpleNamespace(model="/m", work="/w", script="/s", max_seq_length=128, batch=16, lr=5e-5,
                                 epochs=2.0, warmup=0.1, weight_decay=0.01)  # fmt: skip
    cmd = swag_arms.command("ours_random", "swag", 42, args, "/w/o")
    assert cmd[-2:] == ["--train_sampling_strategy", "random"]
    assert "--train_sampling_strategy" not in swag_arms.command("ours", "swag", 42, args, "/w/o")


def test_timed_run_keeps_results_drops_weights_and_measures(tmp_path):
    glue_arms = load("glue_arms")
    out = str(tmp_path / "run")
    script = (
        "import os, sys\n"
        "os.makedirs(sys.argv[1])\n"
        "for name in ('all_results.json', 'model.safetensors', 'training_args.bin'):\n"
        "    open(os.path.join(sys.argv[1], name), 'w').write('x')\n"
        "print(os.environ['HF_DATASETS_CACHE'])\n"
    )
    timing = glue_arms.timed_run([sys.executable, "-c", script, out], out, dict(os.environ), "probe")
    assert sorted(timing) == ["peak_rss_mb", "wall_s"] and timing["wall_s"] >= 0 and timing["peak_rss_mb"] > 0
    assert sorted(os.listdir(out)) == ["all_results.json"]
    assert (tmp_path / "run.log").read_text().strip() == out + ".datasets-cache"  # a fresh cache per run
    assert not os.path.exists(out + ".datasets-cache")


def test_timed_run_of_a_failing_command_is_none(tmp_path, capsys):
    glue_arms = load("glue_arms")
    out = str(tmp_path / "run")
    assert glue_arms.timed_run([sys.executable, "-c", "raise SystemExit(3)"], out, dict(os.environ), "probe") is None
    assert "probe: exit status 3" in capsys.readouterr().out
