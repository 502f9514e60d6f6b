"""``hf-bert-tasks suite``: the paper's tasks for one encoder, offline on the package's samples, resumable (a finished
task is read back, never run again; an interrupted one is run on the next call) and shareable (a task claimed by a
live process is left to it), ending with ``suite.md`` / ``suite.json`` beside the paper's numbers."""

import json
import os
import re
import shutil
import zipfile
from types import SimpleNamespace

import pytest

from hf_bert_tasks import cli, get_task
from hf_bert_tasks.scripts import suite

#: a suite small enough for the default suite: one GLUE task, SQuAD v2.0 and CoNLL-2003 on their samples
TASKS = "mrpc,squad_v2,conll2003"
BUDGET = ["--max_steps", "2", "--per_device_train_batch_size", "4", "--max_eval_samples", "8"]
BUDGET += ["--max_seq_length", "128", "--doc_stride", "32", "--max_query_length", "24"]


def run_suite(model, out, *extra) -> int:
    argv = ["suite", "--model_name_or_path", str(model), "--output_dir", str(out), "--samples", "--tasks", TASKS]
    return cli.main([*argv, *BUDGET, *extra])


@pytest.fixture(scope="module")
def finished_suite(tiny_bert_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("suite")
    assert run_suite(tiny_bert_dir, out) == 0
    return out


def test_the_suite_runs_every_task_on_its_sample_and_writes_its_table(finished_suite):
    summary = json.loads((finished_suite / "suite.json").read_text())
    assert summary["status"] == {"squad_v2": "finished", "mrpc": "finished", "conll2003": "finished"}
    # the paper's table order; one row per scored split (CoNLL-2003: dev and test)
    assert [(r["task"], r["split"]) for r in summary["rows"]] == [
        ("mrpc", "validation"),
        ("squad_v2", "validation"),
        ("conll2003", "validation"),
        ("conll2003", "test"),
    ]
    for row in summary["rows"]:
        results = json.loads((finished_suite / row["task"] / "all_results.json").read_text())
        suffix = get_task(row["task"]).split_metric_suffix(row["split"])
        scale = 1.0 if row["task"] == "squad_v2" else 100.0  # SQuAD's scripts report 0-100 already
        assert row["ours"] == pytest.approx(results[f"eval_f1{suffix}"] * scale)  # F1: the three tasks' primary
        assert row["baseline"] == pytest.approx(results[f"baseline_f1{suffix}"] * scale)
    paper = {(r["task"], r["split"]): r["paper"] for r in summary["rows"]}  # Tables 1, 3 and 7, beside the right row
    assert paper[("mrpc", "validation")] == {"BERT-base": "88.9 (test server)", "BERT-large": "89.3 (test server)"}
    assert paper[("squad_v2", "validation")] == {"BERT-large": "81.9 (dev)"}  # Table 3 reports BERT-large only
    assert paper[("conll2003", "validation")] == {"BERT-base": "96.4 (dev)", "BERT-large": "96.6 (dev)"}
    assert paper[("conll2003", "test")] == {"BERT-base": "92.4 (test)", "BERT-large": "92.8 (test)"}
    rows = [line.split("|")[1:-1] for line in (finished_suite / "suite.md").read_text().splitlines()]
    mrpc = next(cells for cells in rows if [c.strip() for c in cells[:3]] == ["mrpc", "fine-tuning", "validation"])
    assert "88.9 (test server)" in [c.strip() for c in mrpc]


def test_a_finished_task_is_read_back_not_run_again(finished_suite, tiny_bert_dir, capsys):
    before = {t: os.path.getmtime(finished_suite / t / "all_results.json") for t in TASKS.split(",")}
    assert run_suite(tiny_bert_dir, finished_suite) == 0
    assert {t: os.path.getmtime(finished_suite / t / "all_results.json") for t in before} == before
    assert "[1/3] mrpc: finished" in capsys.readouterr().out


def test_an_interrupted_suite_continues_at_the_first_unfinished_task(finished_suite, tiny_bert_dir, tmp_path):
    out = tmp_path / "resumed"
    for task in ("mrpc", "squad_v2"):  # finished before the interruption
        os.makedirs(out / task)
        (out / task / "all_results.json").write_bytes((finished_suite / task / "all_results.json").read_bytes())
    os.makedirs(out / "conll2003")  # the task that was running: a claim whose process is gone
    (out / "conll2003" / suite.CLAIM_FILE).write_text(json.dumps({"host": suite.socket.gethostname(), "pid": -1}))
    assert run_suite(tiny_bert_dir, out) == 0
    summary = json.loads((out / "suite.json").read_text())
    assert set(summary["status"].values()) == {"finished"} and len(summary["rows"]) == 4
    assert not (out / "conll2003" / suite.CLAIM_FILE).exists()  # released at the end of the run


def test_a_task_claimed_by_a_live_process_is_left_to_it(tmp_path):
    folder = tmp_path / "mrpc"
    os.makedirs(folder)
    (folder / suite.CLAIM_FILE).write_text(json.dumps({"host": suite.socket.gethostname(), "pid": os.getppid()}))
    assert not suite.claim(str(folder))


def test_a_claim_on_another_host_is_left_to_it(tmp_path):
    folder = tmp_path / "mrpc"
    os.makedirs(folder)
    (folder / suite.CLAIM_FILE).write_text(json.dumps({"host": "another-machine", "pid": 1}))
    assert not suite.claim(str(folder))


def test_an_unclaimed_task_is_claimed_once(tmp_path):
    assert suite.claim(str(tmp_path / "mrpc"))
    assert not suite.claim(str(tmp_path / "mrpc"))  # this live process holds it now
    assert json.loads((tmp_path / "mrpc" / suite.CLAIM_FILE).read_text())["pid"] == os.getpid()


def test_an_unknown_task_is_refused_with_the_closest_name(tmp_path, capsys):
    argv = ["suite", "--model_name_or_path", "m", "--output_dir", str(tmp_path), "--tasks", "mrcp"]
    assert cli.main(argv) == 2
    assert "unknown task(s) ['mrcp']" in capsys.readouterr().err


def test_a_data_dir_without_a_task_is_refused(tmp_path, capsys):
    argv = ["suite", "--model_name_or_path", "m", "--output_dir", str(tmp_path), "--tasks", "mrpc"]
    assert cli.main([*argv, "--data_dir", "glue_data/MRPC"]) == 2
    assert "expected TASK=DIR" in capsys.readouterr().err


def test_samples_skip_a_task_that_has_none(tmp_path, tiny_bert_dir):
    out = tmp_path / "suite"
    argv = ["suite", "--model_name_or_path", str(tiny_bert_dir), "--output_dir", str(out), "--samples"]
    assert cli.main([*argv, "--tasks", "cola"]) == 0
    assert json.loads((out / "suite.json").read_text())["status"]["cola"].startswith("skipped: no sample")


def test_the_glue_zip_holds_each_written_server_file_at_its_root(finished_suite):
    """The sample suite's one GLUE task, MRPC, writes MRPC.tsv from its test split: the zip holds it byte for byte,
    at the root (the server reads no folders), and suite.json / suite.md name the ten files still missing."""
    with zipfile.ZipFile(finished_suite / "glue_submission.zip") as zf:
        assert zf.namelist() == ["MRPC.tsv"]
        assert zf.read("MRPC.tsv") == (finished_suite / "mrpc" / "MRPC.tsv").read_bytes()
    glue = json.loads((finished_suite / "suite.json").read_text())["glue_submission"]
    assert glue == {"zip": "glue_submission.zip", "files": ["MRPC.tsv"], "missing": []}
    assert "GLUE server zip: `glue_submission.zip`, 1 of 1 files." in (finished_suite / "suite.md").read_text()


#: the GLUE server's eleven files (gluebenchmark.com submission instructions), AX.tsv from the MNLI model
SERVER_FILES = {
    "CoLA.tsv", "SST-2.tsv", "MRPC.tsv", "STS-B.tsv", "QQP.tsv", "MNLI-m.tsv", "MNLI-mm.tsv", "QNLI.tsv", "RTE.tsv",
    "WNLI.tsv", "AX.tsv",
}  # fmt: skip
GLUE_TASKS = ["cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli"]


def test_a_suite_of_every_glue_task_expects_the_servers_eleven_files(tmp_path):
    from hf_bert_tasks.scripts.suite_report import _glue_zip_line, write_glue_zip

    (tmp_path / "rte").mkdir()
    (tmp_path / "rte" / "RTE.tsv").write_text("index\tprediction\n0\tentailment\n1\tnot_entailment\n")
    glue = write_glue_zip(str(tmp_path), GLUE_TASKS + ["squad_v1"])
    assert set(glue["files"]) | set(glue["missing"]) == SERVER_FILES
    assert glue["files"] == ["RTE.tsv"] and len(glue["missing"]) == 10
    assert "missing CoLA.tsv" in "\n".join(_glue_zip_line(glue))


def test_a_suite_without_glue_tasks_writes_no_zip(tmp_path):
    from hf_bert_tasks.scripts.suite_report import write_glue_zip

    assert write_glue_zip(str(tmp_path), ["squad_v1", "conll2003"]) is None
    assert not (tmp_path / "glue_submission.zip").exists()


@pytest.mark.parametrize(
    ("task", "text", "line", "expected"),
    [
        ("rte", "index\tlabel\n0\tentailment\n", 1, "expected the header"),
        ("rte", "index\tprediction\n0\tentailed\n", 2, "expected one of ['entailment', 'not_entailment']"),
        ("mrpc", "index\tprediction\n0\t1\n1\t2\n", 3, "expected a class id 0-1"),
        ("stsb", "index\tprediction\n0\t5.100\n", 2, "expected a score in [0, 5]"),
        ("cola", "index\tprediction\n0\t1\n0\t0\n", 3, "expected a new integer index"),
    ],
)
def test_a_malformed_server_file_is_refused_with_its_line(tmp_path, task, text, line, expected):
    from hf_bert_tasks.scripts.suite_report import write_glue_zip

    name = get_task(task).submission_files["test"]
    (tmp_path / task).mkdir()
    (tmp_path / task / name).write_text(text)
    with pytest.raises(ValueError, match=f"{name}, line {line}: {expected}".replace("[", r"\[").replace("]", r"\]")):
        write_glue_zip(str(tmp_path), [task])
    assert not (tmp_path / "glue_submission.zip").exists()


@pytest.fixture(scope="module")
def feature_suite(tiny_bert_dir, tmp_path_factory):
    """CoNLL-2003 fine-tuned, then frozen with the strategies ``last`` and ``sum_all`` (``--feature_based``)."""
    out = tmp_path_factory.mktemp("feature_suite")
    argv = ["suite", "--model_name_or_path", str(tiny_bert_dir), "--output_dir", str(out), "--samples"]
    assert cli.main([*argv, "--tasks", "conll2003", "--feature_based", "last,sum_all", *BUDGET]) == 0
    return out


def test_feature_based_rows_follow_conll_with_table7_beside_them(feature_suite):
    """``--feature_based last,sum_all``: after CoNLL-2003's fine-tuning run, one frozen-encoder run per strategy, each
    in its own folder with --mode feature_based; their rows carry Table 7's BERT-base dev F1 (94.9, 95.5)."""
    out = feature_suite
    summary = json.loads((out / "suite.json").read_text())
    assert summary["runs"] == ["conll2003", "conll2003-feature_based-last", "conll2003-feature_based-sum_all"]
    assert set(summary["status"].values()) == {"finished"}
    for strategy in ("last", "sum_all"):
        info = json.loads((out / f"conll2003-feature_based-{strategy}" / "run_info.json").read_text())
        assert (info["training_mode"]["mode"], info["training_mode"]["strategy"]) == ("feature_based", strategy)
    dev = {r["approach"]: r["paper"] for r in summary["rows"] if r["split"] == "validation"}
    assert dev == {
        "fine-tuning": {"BERT-base": "96.4 (dev)", "BERT-large": "96.6 (dev)"},
        "feature-based: last": {"BERT-base": "94.9 (dev)"},
        "feature-based: sum_all": {"BERT-base": "95.5 (dev)"},
    }
    test = [r["paper"] for r in summary["rows"] if r["split"] == "test" and r["approach"] != "fine-tuning"]
    assert test == [{}, {}]  # Table 7 has no feature-based test numbers


def test_feature_based_runs_take_their_own_learning_rate(tmp_path):
    args = suite.build_parser().parse_args(
        ["--model_name_or_path", "m", "--output_dir", str(tmp_path), "--learning_rate", "1e-4", "--lr_grid"]
    )
    tuned = suite.run_argv("conll2003", args, None, str(tmp_path / "a"))
    frozen = suite.run_argv("conll2003", args, None, str(tmp_path / "b"), "last")
    assert tuned[tuned.index("--learning_rate") + 1] == "1e-4" and "--lr_grid" in tuned
    assert "--learning_rate" not in frozen and "--lr_grid" not in frozen  # the mode's default, 1e-3
    assert frozen[frozen.index("--mode") + 1 : frozen.index("--mode") + 4] == [
        "feature_based",
        "--feature_strategy",
        "last",
    ]
    args.feature_learning_rate = "5e-3"
    frozen = suite.run_argv("conll2003", args, None, str(tmp_path / "b"), "last")
    assert frozen[frozen.index("--learning_rate") + 1] == "5e-3"


def test_every_table7_strategy_is_a_feature_strategy_of_the_mode():
    from hf_bert_tasks import paper

    assert suite.feature_strategies(",".join(suite.TABLE7_STRATEGIES)) == list(paper.TABLE7_FEATURE_BASED_DEV_F1)


@pytest.mark.parametrize(
    ("tasks", "feature_based", "message"),
    [
        ("conll2003", "lastt", "unknown strategy \\['lastt'\\] \\(did you mean 'last'"),
        ("mrpc", "last", "Table 7's feature-based rows are CoNLL-2003's"),
    ],
)
def test_bad_feature_based_flags_are_refused(tmp_path, tasks, feature_based, message, capsys):
    argv = ["suite", "--model_name_or_path", "m", "--output_dir", str(tmp_path), "--tasks", tasks]
    assert cli.main([*argv, "--feature_based", feature_based]) != 0
    assert re.search(message, capsys.readouterr().err)


# ---------------------------------------------------------------------------------------- the suite's card, chart, push
def card_results(path):
    """The ``huggingface_hub.EvalResult`` list of the card at ``path``."""
    from huggingface_hub import ModelCard

    return ModelCard.load(path).data.eval_results or []


def test_the_suite_card_holds_every_finished_runs_results(finished_suite):
    """README.md's model-index is every finished run's own card's, in table order (the same results: its
    all_results.json, the dataset its run_info.json recorded): MRPC 2, SQuAD v2.0 8, CoNLL-2003 38 (dev and test),
    no two with the key a push merges by."""
    from hf_bert_tasks.hub.push import eval_result_key

    results = card_results(finished_suite / "README.md")
    own = {task: card_results(finished_suite / task / "README.md") for task in TASKS.split(",")}
    assert results == own["mrpc"] + own["squad_v2"] + own["conll2003"]
    assert [len(own[t]) for t in TASKS.split(",")] == [2, 8, 38]
    assert len({eval_result_key(r) for r in results}) == 48


def test_the_suite_card_is_built_from_the_recorded_flags(finished_suite):
    summary = json.loads((finished_suite / "suite.json").read_text())
    assert summary["flags"] == {
        "tasks": TASKS,
        "samples": True,
        "max_eval_samples": "8",
        "max_steps": "2",
        "per_device_train_batch_size": "4",
        "max_seq_length": "128",
        "doc_stride": "32",
        "max_query_length": "24",
    }
    text = (finished_suite / "README.md").read_text()
    assert f"# {finished_suite.name}: the BERT paper's tasks for `{summary['model']}`" in text
    assert "A reduced budget (`--samples`, `--max_eval_samples 8`, `--max_steps 2`)" in text
    assert "![The suite's scores beside the paper's](suite.png)" in text
    assert (
        "- `suite.png`: the suite's chart" in text and "GLUE server zip: `glue_submission.zip`, 1 of 1 files." in text
    )


def test_feature_based_results_stay_apart_from_the_fine_tuning_ones_in_the_card(feature_suite):
    """The three CoNLL-2003 runs score the same splits: the frozen runs' F1 carry their strategy in metric_config
    (part of the key a push merges by) and in their name."""
    from hf_bert_tasks.hub.push import eval_result_key

    results = card_results(feature_suite / "README.md")
    f1 = [(r.dataset_split, r.metric_config, r.metric_name) for r in results if r.metric_type == "f1"]
    headline = [x for x in f1 if x[1] is None or x[1].startswith("feature-based")]
    # model-index lists them by split; --max_eval_samples 8: a slice of dev, the test split whole
    assert len(headline) == 6 and set(headline) == {
        ("validation[:8]", None, "F1"),
        ("test", None, "F1"),
        ("validation[:8]", "feature-based: last", "F1 (feature-based: last)"),
        ("test", "feature-based: last", "F1 (feature-based: last)"),
        ("validation[:8]", "feature-based: sum_all", "F1 (feature-based: sum_all)"),
        ("test", "feature-based: sum_all", "F1 (feature-based: sum_all)"),
    }
    assert len({eval_result_key(r) for r in results}) == len(results)


def test_a_suite_readme_edited_by_hand_is_kept_and_the_rest_rewritten(finished_suite, tiny_bert_dir, tmp_path, caplog):
    out = tmp_path / "suite"
    shutil.copytree(finished_suite, out)
    (out / "README.md").write_text("# my notes\n")
    (out / "suite.md").unlink()
    assert run_suite(tiny_bert_dir, out) == 0  # every task finished: read back, the tables and the card written
    assert (out / "README.md").read_text() == "# my notes\n"
    assert "README.md was edited or not written by hf_bert_tasks: kept" in caplog.text
    assert (out / "suite.md").is_file()


#: three rows as task_rows writes them: a mean over 3 seeds, a single run, a feature-based run without a baseline
CHART_ROWS = [
    {"task": "mrpc", "approach": "fine-tuning", "split": "validation", "metric": "F1", "ours": 80.0, "std": 2.0,
     "n": 3, "baseline": 68.4, "paper": {"BERT-base": "88.9 (test server)", "BERT-large": "89.3 (test server)"}},
    {"task": "squad_v2", "approach": "fine-tuning", "split": "validation", "metric": "F1", "ours": 70.0, "std": None,
     "n": 1, "baseline": 50.1, "paper": {"BERT-large": "81.9 (dev)"}},
    {"task": "conll2003", "approach": "feature-based: last", "split": "validation", "metric": "F1", "ours": 90.0,
     "std": None, "n": 1, "baseline": None, "paper": {"BERT-base": "94.9 (dev)"}},
]  # fmt: skip


def test_the_chart_draws_a_bar_per_row_the_papers_markers_and_the_baselines(tmp_path):
    from matplotlib.collections import LineCollection, PathCollection

    from hf_bert_tasks.scripts.suite_report import plot_suite

    ax = plot_suite(CHART_ROWS, str(tmp_path / "suite.png"), "bert-base-uncased").axes[0]
    assert [(bar.get_width(), bar.get_y() + bar.get_height() / 2) for bar in ax.patches] == [
        (80.0, 2.0),
        (70.0, 1.0),
        (90.0, 0.0),
    ]
    labels = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())))
    assert labels == {
        2: "mrpc validation (n=3)",
        1: "squad_v2 validation (n=1)",
        0: "conll2003 validation, feature-based: last (n=1)",
    }
    (errorbar,) = [c for c in ax.containers if c.get_label() == "± std over n runs"]
    assert errorbar.lines[2][0].get_segments()[0].tolist() == [[78.0, 2.0], [82.0, 2.0]]  # the n > 1 row only
    markers = {c.get_label(): c.get_offsets().tolist() for c in ax.collections if isinstance(c, PathCollection)}
    assert markers == {"paper: BERT-base": [[88.9, 2.0], [94.9, 0.0]], "paper: BERT-large": [[89.3, 2.0], [81.9, 1.0]]}
    (baselines,) = [c for c in ax.collections if isinstance(c, LineCollection) and c.get_label().startswith("trivial")]
    assert [s.tolist() for s in baselines.get_segments()] == [[[68.4, 1.6], [68.4, 2.4]], [[50.1, 0.6], [50.1, 1.4]]]
    assert ax.get_xlim() == (0.0, 100.0)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "ours: fine-tuning",
        "ours: feature-based",
        "± std over n runs",
        "paper: BERT-base",
        "paper: BERT-large",
        "trivial baseline (best constant)",
    ]


def test_push_of_a_suite_uploads_its_card_and_files_in_one_commit(finished_suite, monkeypatch):
    """``hf-bert-tasks push <suite folder>``: the card (rendered for the repo id) and the suite's own files, not the
    runs' folders, in one commit (the Hub API mocked: no card there yet)."""
    import huggingface_hub
    from huggingface_hub import ModelCard
    from huggingface_hub.errors import EntryNotFoundError

    commits = []

    class Api:
        def __init__(self, token=None):
            pass

        def create_repo(self, repo_id, private=False, exist_ok=False):
            return f"https://huggingface.co/{repo_id}"

        def hf_hub_download(self, repo_id, filename, revision=None, token=None):
            raise EntryNotFoundError(f"{filename} not in {repo_id}")

        def create_commit(self, repo_id, operations, commit_message, revision):
            commits.append((repo_id, revision, operations))
            return SimpleNamespace(oid="0" * 40, commit_url=f"https://huggingface.co/{repo_id}/commit/0")

    monkeypatch.setattr(huggingface_hub, "HfApi", Api)
    assert cli.main(["push", str(finished_suite), "--repo_id", "me/x"]) == 0
    ((repo_id, revision, operations),) = commits
    assert (repo_id, revision) == ("me/x", "main")
    assert [op.path_in_repo for op in operations] == [
        "glue_submission.zip",
        "suite.json",
        "suite.md",
        "suite.png",
        "README.md",
    ]
    card = ModelCard(operations[-1].path_or_fileobj.decode("utf-8"))
    assert card.data.model_name == "x" and len(card.data.eval_results) == 48


def test_a_suite_json_of_an_older_version_is_refused_naming_the_field(tmp_path):
    from hf_bert_tasks.scripts.suite_card import build_suite_card

    (tmp_path / "suite.json").write_text(json.dumps({"model": "bert-base-uncased", "runs": ["mrpc"]}))
    with pytest.raises(ValueError, match=r"suite\.json: field 'model_origin' missing or not a str; run hf-bert-tasks"):
        build_suite_card(str(tmp_path))


def test_run_flags_are_refused_for_a_suites_card(finished_suite):
    from hf_bert_tasks.hub.push import card_for_push

    with pytest.raises(
        ValueError, match=r"is a suite's folder \(suite\.json\); --task: a run's, not for the suite's card"
    ):
        card_for_push(str(finished_suite), "me/x", [], {"task": "mrpc"})


@pytest.mark.slow
def test_the_whole_suite_runs_offline_on_every_sample(tiny_bert_dir, tmp_path):
    """Every task of the paper (default --tasks) with --samples and Table 7's six feature-based rows: the eight tasks
    with a sample finish, the five without one are skipped with a note, and suite.md holds a row per scored split."""
    out = tmp_path / "suite"
    argv = ["suite", "--model_name_or_path", str(tiny_bert_dir), "--output_dir", str(out), "--samples"]
    assert cli.main([*argv, "--feature_based", *BUDGET]) == 0
    summary = json.loads((out / "suite.json").read_text())
    finished = [run for run, status in summary["status"].items() if status == "finished"]
    skipped = sorted(run for run, status in summary["status"].items() if status.startswith("skipped: no sample"))
    assert skipped == ["cola", "qnli", "qqp", "rte", "wnli"]
    assert sorted(finished) == sorted(
        ["mnli", "sst2", "stsb", "mrpc", "squad_v1", "squad_v2", "swag", "conll2003"]
        + [f"conll2003-feature_based-{s}" for s in suite.TABLE7_STRATEGIES]
    )
    # CoNLL dev and test (x7 runs), one row for each other task (the MNLI sample has a matched dev set only)
    assert len(summary["rows"]) == 7 * 2 + 7


def _row(task, split, ours, approach="fine-tuning"):
    return {"task": task, "split": split, "approach": approach, "ours": ours}


def test_the_papers_glue_average_is_recomputed_as_table1_prints_it():
    """Table 1's Average column: BERT-base 79.6, BERT-large 82.1 (the paper, with WNLI excluded and MNLI m and mm
    both counted), recomputed from the tasks' own paper numbers."""
    from hf_bert_tasks.scripts.suite_report import glue_average

    assert glue_average([])["paper"] == {"BERT-base": 79.6, "BERT-large": 82.1}


def test_our_glue_average_needs_all_nine_scores():
    from hf_bert_tasks.scripts.suite_report import TABLE1_AVERAGE, glue_average, glue_average_line

    rows = [_row(task, split, 10.0 * (i + 1)) for i, (task, split) in enumerate(TABLE1_AVERAGE)]
    rows += [_row("wnli", "validation", 0.0), _row("mrpc", "validation", 0.0, "feature-based: last")]
    assert glue_average(rows)["ours"] == pytest.approx(50.0)  # (10 + 20 + ... + 90) / 9; WNLI, frozen rows ignored
    partial = glue_average(rows[2:])
    assert (partial["ours"], partial["scored"]) == (None, 7)
    assert partial["missing"] == ["mnli validation_matched", "mnli validation_mismatched"]
    assert "needs all nine scores; 7 here, missing mnli validation_matched" in glue_average_line(partial)[0]
    assert glue_average_line(glue_average([_row("squad_v1", "validation", 80.0)])) == []


def test_suite_md_states_the_glue_average_or_what_it_lacks(finished_suite):
    """The sample suite scores MRPC only: the average is not claimed, the line says what is missing."""
    summary = json.loads((finished_suite / "suite.json").read_text())
    assert summary["glue_average"]["scored"] == 1 and summary["glue_average"]["ours"] is None
    text = (finished_suite / "suite.md").read_text()
    assert (
        "GLUE average (Table 1's: the nine columns, MNLI m and mm, WNLI excluded): needs all nine scores; 1 here"
        in text
    )
    assert "paper: BERT-base 79.6, BERT-large 82.1." in text
