"""The shape of one fine-tune run: which of the package's modules it calls into and how often it changes module.

Every module is imported first (module bodies run at import do not count), then an in-process
``hf-bert-tasks finetune --task mrpc`` on the bundled MRPC sample (tiny BERT, ``--max_steps 2``) is traced with
``sys.setprofile``; only calls whose code lives in the package directory are recorded. The run must stay in the
modules of its own mode (``finetune``) and task family (GLUE), enter at most 16 package modules and change module at
most 40 times (consecutive recorded calls in different modules).
"""

import importlib
import itertools
import os
import pkgutil
import sys

import hf_bert_tasks
from hf_bert_tasks.scripts import finetune
from tests.conftest import SAMPLES

PACKAGE_DIR = os.path.dirname(os.path.abspath(hf_bert_tasks.__file__))
MAX_MODULES = 16
MAX_CHANGES = 40
#: modules of other modes and other task families: a GLUE fine-tune run must not execute their code.
FORBIDDEN = ("modes/lora.py", "modes/feature_based.py", "lora.py", "feature_based/", "tasks/squad.py",
             "tasks/swag.py", "tasks/conll2003.py", "qa.py", "ner.py", "pretraining.py", "pretraining_data.py")


def import_everything() -> None:
    for info in pkgutil.walk_packages(hf_bert_tasks.__path__, "hf_bert_tasks."):
        if ".samples" not in info.name and ".templates" not in info.name and "metrics_evaluate" not in info.name:
            importlib.import_module(info.name)


def trace_run(argv: list[str]) -> list[str]:
    """The package files (relative to the package dir) of every Python call made while ``finetune.main(argv)`` runs,
    in call order."""
    calls: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            path = frame.f_code.co_filename
            if path.startswith(PACKAGE_DIR + os.sep):
                calls.append(os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/"))

    sys.setprofile(profile)
    try:
        finetune.main(argv)
    finally:
        sys.setprofile(None)
    return calls


def test_a_glue_finetune_run_stays_in_few_modules_of_its_own_mode_and_task(tmp_path, tiny_bert_dir):
    import_everything()
    argv = ["--task", "mrpc", "--data_dir", os.path.join(SAMPLES, "MRPC"), "--model_name_or_path", tiny_bert_dir,
            "--output_dir", str(tmp_path / "out"), "--max_steps", "2", "--per_device_train_batch_size", "4",
            "--max_eval_samples", "8", "--max_predict_samples", "4", "--save_strategy", "no",
            "--disable_tqdm", "true", "--no_cache_tokenized"]
    calls = trace_run(argv)
    modules = sorted(set(calls))
    changes = sum(a != b for a, b in itertools.pairwise(calls))
    forbidden = sorted({m for m in modules if any(m == f or (f.endswith("/") and m.startswith(f)) for f in FORBIDDEN)})
    report = f"{len(modules)} modules, {changes} module changes: {modules}"
    assert not forbidden, f"code of another mode or task ran: {forbidden}; {report}"
    assert len(modules) <= MAX_MODULES, report
    assert changes <= MAX_CHANGES, report
    assert os.path.isfile(tmp_path / "out" / "all_results.json")
