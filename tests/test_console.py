"""``hf_bert_tasks.cli``'s console: a load report that is an expected head swap becomes one line, library messages our
load paths trigger are dropped, and a recipe run off a terminal prints no progress-bar frames (issue 27 item 3)."""

import logging
import os
import subprocess
import sys

import pytest

from hf_bert_tasks.cli import LibraryNoiseFilter, log_filters
from tests.conftest import REPO, tiny_run_argv

#: the text transformers 5.24 logs (``loading_report.log_state_dict_report``) for a pretraining checkpoint loaded
#: under a sequence-classification head, as printed by ``hf-bert-tasks finetune`` before this module
HEAD_SWAP_REPORT = (
    "\x1b[1mBertForSequenceClassification LOAD REPORT\x1b[0m from: /tmp/tiny\n"
    "Key                                        | Status     | \n"
    "-------------------------------------------+------------+-\n"
    "cls.predictions.transform.dense.weight     | UNEXPECTED | \n"
    "cls.seq_relationship.bias                  | UNEXPECTED | \n"
    "cls.predictions.bias                       | UNEXPECTED | \n"
    "classifier.weight                          | MISSING    | \n"
    "classifier.bias                            | MISSING    | \n"
    "\nNotes:\n- UNEXPECTED:\tcan be ignored when loading from different task/architecture; not ok if you expect "
    "identical arch.\n- MISSING:\tthose params were newly initialized because missing from the checkpoint."
)


def filtered(logger: str, message: str) -> str | None:
    """The message ``LibraryNoiseFilter`` lets through for a WARNING of ``logger`` (``None``: dropped)."""
    record = logging.LogRecord(logger, logging.WARNING, __file__, 1, message, None, None)
    return record.getMessage() if LibraryNoiseFilter().filter(record) else None


def test_an_expected_head_swap_report_becomes_one_line():
    assert filtered("transformers.modeling_utils", HEAD_SWAP_REPORT) == (
        "BertForSequenceClassification from /tmp/tiny: head swap (expected): 3 checkpoint tensors dropped "
        "(cls.predictions.*, cls.seq_relationship.*), 2 new head tensors initialised (classifier.bias, "
        "classifier.weight)"
    )


@pytest.mark.parametrize(
    "key, status",
    [
        ("bert.encoder.layer.0.output.dense.bias", "MISSING"),  # a randomly initialised encoder weight
        ("bert.pooler.dense.bias               ", "MISSING"),  # a random pooler under a sequence head
        ("bert.encoder.layer.6.output.dense.bias", "UNEXPECTED"),  # a 12-layer checkpoint under a 6-layer config
        ("embeddings.word_embeddings.weight    ", "UNEXPECTED"),
    ],
)
def test_an_encoder_weight_missing_or_dropped_keeps_the_full_report(key, status):
    report = HEAD_SWAP_REPORT.replace(
        "classifier.bias                            | MISSING    |", f"{key:<42} | {status:<10} |"
    )
    assert key.strip() in report and filtered("transformers.modeling_utils", report) == report


def test_a_pooler_dropped_under_a_token_head_is_an_expected_swap():
    # transformers 5.24, all-MiniLM-L6-v2 loaded into BertForTokenClassification (checkpoint keys have no "bert.")
    report = HEAD_SWAP_REPORT.replace(
        "cls.predictions.bias                       | UNEXPECTED |",
        "pooler.dense.bias                          | UNEXPECTED |",
    )
    assert filtered("transformers.modeling_utils", report).endswith(
        "3 checkpoint tensors dropped (cls.predictions.*, cls.seq_relationship.*, pooler.dense.*), 2 new head "
        "tensors initialised (classifier.bias, classifier.weight)"
    )


def test_a_size_mismatch_keeps_the_full_report():
    report = HEAD_SWAP_REPORT.replace("| MISSING    |", "| MISMATCH   |")
    assert filtered("transformers.modeling_utils", report) == report


@pytest.mark.parametrize(
    "logger, message, kept",
    [
        (
            "transformers.distributed.tensor_parallel",
            "The following layers were not sharded: bert.pooler.dense.bias",
            False,
        ),
        (
            "transformers.distributed.tensor_parallel",
            "The following TP rules were not applied on any of the layers: {}",
            False,
        ),
        (
            "transformers.trainer_utils",
            (
                "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config "
                "and generation config. Updated tokens: {'pad_token_id': 0}."
            ),
            False,
        ),
        (
            "transformers.trainer_utils",
            (
                "The tokenizer has new PAD/BOS/EOS tokens that differ from the model config "
                "and generation config. Updated tokens: {'eos_token_id': 2, 'pad_token_id': 0}."
            ),
            True,
        ),
        ("transformers.trainer_utils", "some other warning", True),
    ],
)
def test_library_messages_of_our_load_paths_are_dropped(logger, message, kept):
    assert (filtered(logger, message) == message) is kept


def test_filters_hold_only_inside_the_block_and_nest():
    def count():
        return sum(isinstance(f, LibraryNoiseFilter) for f in logging.getLogger("transformers.modeling_utils").filters)

    with log_filters():
        with log_filters():
            assert count() == 1
        assert count() == 1
    assert count() == 0


def test_a_finetune_run_off_a_terminal_prints_no_bar_frames_and_no_load_table(tmp_path, tiny_bert_dir):
    env = {**os.environ, "PYTHONPATH": REPO, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    sizes = {"max_train_samples": 16, "max_eval_samples": 8, "per_device_train_batch_size": 8, "num_train_epochs": 1}
    argv = tiny_run_argv("mrpc", tiny_bert_dir, tmp_path, logging_steps=1, **sizes)  # no --disable_tqdm
    proc = subprocess.run(
        [sys.executable, "-m", "hf_bert_tasks.cli", "finetune", *argv],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=600,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-2000:]
    assert "\r" not in output and "LOAD REPORT" not in output and "| UNEXPECTED |" not in output
    assert output.count("head swap (expected)") == 1
    assert sum(line.startswith("{'loss':") for line in output.splitlines()) == 2  # 16 examples / 8 per step


def test_repeated_warnings_are_shown_once():
    """Issue 44 item 5: the same warning raised many times (per batch, per worker) is shown once."""
    import logging
    import warnings

    from hf_bert_tasks.cli import RepeatFilter, quiet_console

    with warnings.catch_warnings(record=True) as shown, quiet_console(progress_bars=False):
        for line in range(16):  # 16 places, as 16 workers or batches would raise it
            warnings.warn_explicit("the same thing again", UserWarning, "loader.py", line)
    assert [str(w.message) for w in shown] == ["the same thing again"]
    once = RepeatFilter()
    records = [logging.LogRecord("x", logging.WARNING, __file__, 1, "repeat %d", (1,), None) for _ in range(3)]
    assert [once.filter(r) for r in records] == [True, False, False]
    info = logging.LogRecord("x", logging.INFO, __file__, 1, "progress", (), None)
    assert once.filter(info) and once.filter(info)  # INFO lines (progress) are never dropped


def test_a_repeated_warning_reaches_every_handler_once():
    """Two handlers on one logger: each shows a warning the first time and drops its repeat (a filter per handler)."""
    import logging

    from hf_bert_tasks.cli import quiet_console

    class Keep(logging.Handler):
        def __init__(self):
            super().__init__()
            self.messages = []

        def emit(self, record):
            self.messages.append(record.getMessage())

    first, second = Keep(), Keep()
    root = logging.getLogger()
    root.addHandler(first)
    root.addHandler(second)
    try:
        with quiet_console(progress_bars=False):
            for _ in range(3):
                logging.getLogger("hf_bert_tasks.test_console").warning("the same warning")
    finally:
        root.removeHandler(first)
        root.removeHandler(second)
    assert first.messages == ["the same warning"]
    assert second.messages == ["the same warning"]
