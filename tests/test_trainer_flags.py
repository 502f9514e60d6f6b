"""The TrainingArguments flag table (hf_bert_tasks.flags.trainer_flags): it lists every field of the installed
transformers; every refused flag is one line on stderr with exit status 2 before any model or data is loaded; every
working flag runs end to end (training, in-training evaluation, final evaluation and prediction) with its
non-default value on each task family and training mode. Groups of flags share a run; the default suite runs each
group once and every family x mode once, the slow suite the full cross product."""

import dataclasses
import json
import os
import shutil

import pytest

from hf_bert_tasks import cli
from hf_bert_tasks.flags.trainer_flags import (
    NOT_APPLICABLE,
    REFUSED,
    STATUSES,
    TABLE,
    VERSION_DEPENDENT,
    WORKS,
    flags_with,
)
from tests.conftest import SAMPLES

# ------------------------------------------------------------------------------------------- the table itself


def test_table_lists_every_field_of_the_installed_training_arguments():
    from transformers import TrainingArguments

    installed = {f.name for f in dataclasses.fields(TrainingArguments)}
    assert sorted(installed - set(TABLE)) == [], "fields of the installed transformers missing from the table"
    assert sorted(set(TABLE) - installed - set(VERSION_DEPENDENT)) == [], (
        "table rows for fields transformers no longer has (and no supported version has: VERSION_DEPENDENT)"
    )


def test_the_static_field_table_is_the_installed_training_arguments():
    """``TRAINER_FIELDS`` (what the one parser builds ``TrainingArguments``' flags from, without importing it) names
    every installed field with its narrowed type, default and metadata; an enum's installed choices are among its
    own. A row for a field the installed version lacks must be VERSION_DEPENDENT."""
    import enum
    import typing

    from transformers import TrainingArguments

    from hf_bert_tasks.flags.parser import _reduce_type
    from hf_bert_tasks.flags.trainer_fields import DIFFERS_BY_VERSION, FIELD_TYPES, TRAINER_FIELDS

    hints = typing.get_type_hints(TrainingArguments)
    fields = [f for f in dataclasses.fields(TrainingArguments) if f.init]
    assert sorted(set(TRAINER_FIELDS) - {f.name for f in fields} - set(VERSION_DEPENDENT)) == []
    for f in fields:
        kind, default, metadata = TRAINER_FIELDS[f.name]
        if f.name in DIFFERS_BY_VERSION:  # the newest version's row; the installed default applies when not given
            continue
        tp = _reduce_type(f.name, hints[f.name])
        installed = f.default_factory() if f.default is dataclasses.MISSING else f.default
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            assert (kind, default) == ("enum", installed), f.name
            assert {x.value for x in tp} <= set(metadata["choices"]), f.name
            continue
        assert default == installed, f.name
        assert {k: list(v) if k == "choices" else v for k, v in f.metadata.items() if k != "help"} == metadata, f.name
        if kind not in ("dict", "list[str]", "object"):  # JSON text; a list of str or of an Enum of str; a class
            assert FIELD_TYPES[kind] == tp, f.name


def test_every_row_has_a_status_and_what_it_needs():
    for name, flag in TABLE.items():
        assert flag.status in STATUSES, name
        if flag.status == WORKS:
            assert flag.argv or flag.note, f"{name}: a working flag needs a test value or the test covering it"
            assert not flag.argv or f"--{name}" in flag.argv, name
        else:
            assert flag.note and "\n" not in flag.note, f"{name}: a reason on one line"


# ----------------------------------------------------------------------------------------- refused: exit 2 at once


@pytest.fixture
def no_loading(monkeypatch):
    """Loading a tokenizer, config or model fails the test (a refusal must come first)."""
    import transformers

    def forbidden(*args, **kwargs):
        raise AssertionError("a model or tokenizer was loaded before the refusal")

    for name in ("AutoTokenizer", "AutoConfig", "AutoModelForSequenceClassification"):
        monkeypatch.setattr(getattr(transformers, name), "from_pretrained", forbidden)


def _finetune(capsys, *argv):
    status = cli.main(["finetune", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    "argv", [("--remove_unused_columns", "False"), ("--label_names", "labels"), ("--debug", "underflow_overflow")]
)
def test_a_refused_flag_is_one_line_and_exit_2_before_loading(capsys, tmp_path, tiny_bert_dir, no_loading, argv):
    name = argv[0][2:]
    # loading is forbidden and the data folder is empty: any loading would fail with another message
    status, _out, err = _finetune(
        capsys,
        "--task",
        "mrpc",
        "--model_name_or_path",
        tiny_bert_dir,
        "--data_dir",
        str(tmp_path),
        "--output_dir",
        str(tmp_path / "out"),
        *argv,
    )
    assert status == 2
    assert err.count("\n") == 1 and TABLE[name].note in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("task", "argv", "expected"),
    [
        ("stsb", ("--label_smoothing_factor", "0.1"), "is a regression"),
        ("squad_v1", ("--prediction_loss_only", "True"), "no answer positions"),
    ],
)
def test_a_flag_the_task_refuses_is_one_line_and_exit_2_before_loading(
    capsys, tmp_path, tiny_bert_dir, no_loading, task, argv, expected
):
    status, _out, err = _finetune(
        capsys,
        "--task",
        task,
        "--model_name_or_path",
        tiny_bert_dir,
        "--data_dir",
        str(tmp_path),
        "--output_dir",
        str(tmp_path / "out"),
        *argv,
    )
    assert status == 2
    assert err.count("\n") == 1 and expected in err and argv[0] in err


# ---------------------------------------------------------------------------------- works: run end to end

#: the run groups of the table; a group's flags run together
GROUPS = sorted({flag.group for flag in TABLE.values() if flag.status == WORKS and flag.argv})
FAST_GROUPS = [g for g in GROUPS if not g.startswith("slow")]
#: family -> (task, data folder maker, its primary eval key)
FAMILIES = ("mrpc", "stsb", "mnli", "squad_v1", "squad_v2", "swag", "conll2003")
MODES = ("finetune", "lora", "feature_based")
SMALL = [
    "--max_train_samples",
    "16",
    "--max_eval_samples",
    "10",
    "--max_predict_samples",
    "6",
    "--max_seq_length",
    "48",
    "--report_to",
    "none",
    "--per_device_eval_batch_size",
    "3",
]


def group_argv(group: str, task: str) -> list[str]:
    """The command-line words of ``group``'s flags, less those ``task`` refuses (checked above)."""
    from transformers import TrainingArguments

    installed = {f.name for f in dataclasses.fields(TrainingArguments)}
    argv: list[str] = []
    for name, flag in TABLE.items():
        if flag.status != WORKS or flag.group != group or not flag.argv or name not in installed:
            continue  # a field of another supported transformers version (VERSION_DEPENDENT) runs where it exists
        if name == "label_smoothing_factor" and task == "stsb":
            continue
        argv += flag.argv
    if group != "core":  # few steps (the core group sets its own): 4 steps, or 2 epochs of batches of 4
        argv += ["--per_device_train_batch_size", "4"] + (["--max_steps", "4"] if group != "epochs" else [])
    return argv


@pytest.fixture(scope="module")
def data_dirs(tmp_path_factory):
    """A small data folder per family, written by the families' own test helpers (fixture text of this repo)."""
    from tests.test_conll2003 import _three_files, fixture_corpus
    from tests.test_squad_recipe import write_folder
    from tests.test_swag import _swag_dir

    root = tmp_path_factory.mktemp("flag-data")
    mnli = root / "MNLI"
    shutil.copytree(os.path.join(SAMPLES, "MNLI"), mnli)
    shutil.copy(mnli / "dev_matched.jsonl", mnli / "dev_mismatched.jsonl")  # m and mm both scored
    conll = root / "conll"
    conll.mkdir()
    _three_files(conll, fixture_corpus(0), fixture_corpus(1), fixture_corpus(2))
    swag = root / "swag"
    swag.mkdir()
    return {
        "mrpc": os.path.join(SAMPLES, "MRPC"),
        "stsb": os.path.join(SAMPLES, "STS-B"),
        "mnli": str(mnli),
        "squad_v1": write_folder(root, "1.1", test_split=True),
        "squad_v2": write_folder(root, "2.0"),
        "swag": str(_swag_dir(swag)),
        "conll2003": str(conll),
    }


PRIMARY = {
    "mrpc": "eval_f1",
    "stsb": "eval_pearson",
    "mnli": "eval_accuracy",
    "squad_v1": "eval_f1",
    "squad_v2": "eval_f1",
    "swag": "eval_accuracy",
    "conll2003": "eval_f1",
}


def run_group(capsys, tmp_path, tiny_bert_dir, data_dirs, task, mode, group):
    out = tmp_path / f"{task}-{mode}-{group}"
    argv = [
        "--task",
        task,
        "--data_dir",
        data_dirs[task],
        "--model_name_or_path",
        tiny_bert_dir,
        "--output_dir",
        str(out),
        "--mode",
        mode,
        *SMALL,
        *group_argv(group, task),
    ]
    if task.startswith("squad"):  # windows of 64: a 16-token question, strides of 24
        argv += ["--max_seq_length", "64", "--max_query_length", "16", "--doc_stride", "24"]
    status, stdout, err = _finetune(capsys, *argv)
    assert status == 0, err[-3000:]
    assert stdout.rstrip().splitlines()[-1] == f"outputs in {out}"
    with open(out / "all_results.json") as f:
        results = json.load(f)
    return out, results, err


def check_run(out, results, task, group):
    """What every run must show: the dev set scored in full (10 examples, MNLI m and mm), its metric (or, with
    --prediction_loss_only, the loss only and no prediction file)."""
    assert results["eval_samples"] == (10 if not task.startswith("squad") else results["eval_samples"])
    if task == "mnli":
        assert "eval_samples_mm" in results
    if group == "loss_only":
        assert PRIMARY[task] not in results and "eval_loss" in results
        assert not [n for n in os.listdir(out) if "predictions" in n]
        return
    assert PRIMARY[task] in results
    if task in ("mrpc", "stsb", "mnli"):  # one prediction row per dev example, whatever the batch layout
        name = "validation_matched" if task == "mnli" else "validation"
        with open(out / f"{name}_predictions.tsv") as f:
            assert len(f.read().splitlines()) == 1 + 10


FAST_CASES = [(task, "finetune", "core") for task in FAMILIES]
FAST_CASES += [("mrpc", mode, "core") for mode in MODES if mode != "finetune"]
FAST_CASES += [("squad_v2", "lora", "core"), ("swag", "feature_based", "core")]
FAST_CASES += [("mrpc", "finetune", g) for g in FAST_GROUPS if g != "core"]
FAST_CASES += [
    ("squad_v1", "finetune", "epochs"),
    ("conll2003", "finetune", "batch_metrics"),
    ("stsb", "finetune", "loss_only"),
]
#: SQuAD refuses --prediction_loss_only (test_a_flag_the_task_refuses_is_one_line_and_exit_2_before_loading)
#: torch.compile costs ~1 min per run on CPU: each mode on MRPC and the QA model on SQuAD, not all 21 pairs
COMPILE_CASES = {("mrpc", "finetune"), ("mrpc", "lora"), ("mrpc", "feature_based"), ("squad_v1", "finetune")}
SLOW_CASES = [
    (t, m, g)
    for t in FAMILIES
    for m in MODES
    for g in GROUPS
    if (t, m, g) not in FAST_CASES
    and not (t.startswith("squad") and g == "loss_only")
    and (g != "slow_compile" or (t, m) in COMPILE_CASES)
]


@pytest.mark.parametrize(("task", "mode", "group"), FAST_CASES)
def test_working_flags_run_end_to_end(capsys, tmp_path, tiny_bert_dir, data_dirs, task, mode, group):
    out, results, _ = run_group(capsys, tmp_path, tiny_bert_dir, data_dirs, task, mode, group)
    check_run(out, results, task, group)


@pytest.mark.slow
@pytest.mark.parametrize(("task", "mode", "group"), SLOW_CASES)
def test_working_flags_run_end_to_end_on_every_family_and_mode(
    capsys, tmp_path, tiny_bert_dir, data_dirs, task, mode, group
):
    out, results, _ = run_group(capsys, tmp_path, tiny_bert_dir, data_dirs, task, mode, group)
    check_run(out, results, task, group)


def test_counts_of_the_table():
    """The closing note's counts (kept true by this test): works / refused / not applicable."""
    counts = {s: len(flags_with(s)) for s in (WORKS, REFUSED, NOT_APPLICABLE)}
    assert sum(counts.values()) == len(TABLE)
    assert counts[REFUSED] == 3
