"""The shape of one fine-tune run: which of the package's modules it calls into and how often it changes module.

Every module is imported first (module bodies run at import do not count), then an in-process
``hf-bert-tasks finetune --task mrpc`` on the bundled MRPC sample (tiny BERT, ``--max_steps 2``) is traced with
``sys.setprofile``; only calls whose code lives in the package directory are recorded. The run must stay in the
modules of its own mode (``finetune``) and task family (GLUE) and enter at most MAX_MODULES package modules. Module changes
(consecutive recorded calls in different modules): 119 before the recipe's rework (28 modules), 66 after it, 81 with
main at d698431 (15 modules), 63 since the GLUE reader reads its header and rows in ``tasks/glue.py``, 43 (15
modules) since ``--mode``'s choices are a live view of the registry's names (argparse never calls into ``modes``),
the base ``Task.read_local`` finds every split's file before ``GlueTask.read_file`` reads them (one change, was 7),
the task is configured right before it loads its data, the tokenizer is checked against the checkpoint's config
before tokenizing, the collator and metric function are made with the features (``prepare_data``), the run record
gets the training mode from the recipe, ``GlueTask.compute_metrics`` is ``metrics.compute_task_metrics`` itself,
the evaluation loop restores the length-sorted predictions once, the submission file is written vectorised, the test
predictions come before the dev evaluation (both end in ``tasks/base.py``) and ``hub.finish_run`` runs only with
``--push_to_hub``; 51 since issue 44's trivial baselines (``baselines.py``: the
best constant answer's score beside every dev metric, and the end-of-run warning at chance level: 11 changes, through
``tasks/base.py`` and ``metrics.py``) and issue 40's evaluation path, bound 52 (issue 41's route target, at most 30
from the CLI entry, is open); 40 (issue 22's target) since the task looked up when the arguments are made is the one the recipe
runs (``DataArguments.registered_task``, no second ``tasks/registry.py`` lookup), the output-dir guard also resolves
the checkpoint to resume from (``checkpoints.start_run``, before any data is read) and the run record starts from the
built Trainer's arguments (``trainer.add_callback``; no ``on_init_end`` round trip through ``batching.py``). The seams
left are between roles: parsing (``arguments.py`` -> ``tasks/registry.py`` for ``--task``, -> ``modes`` for
``--mode``), the Hub settings / secrets (``hub.py`` -> ``credentials.py``: every recipe scrubs secrets, with or
without ``--push_to_hub``), the task's model config inside the mode's ``build_model``, and per evaluation
``batching.py`` -> ``tasks/base.py`` -> ``metrics.py`` -> ``run_record.py``. Traced from the CLI entry (the parse and
the console included; a plain process, see MAX_CHANGES): 23 modules / 107 changes after the plug-in layout and the
card every run writes; 17 / 55 since
the console is part of ``cli.py``, the trivial baselines of ``tasks/metrics.py``, the path checks of
``run/args_parser.py`` and ``scrub_secrets`` of ``run/arguments.py``, the card step is one call that reads the run's
files and groups every number (``model_card_index.card_inputs``), ``checkpoints`` is entered only for an existing
folder or a resume and ``hub`` only with ``--push_to_hub``; 12 / 49 (2026-12-06) since the one parser and the
fine-tune dataclasses are one module (``run/command_line.py``; the path checks moved to ``cli``), the data step is
``run/tokenization.prepare_data`` (beside the tokenizer's fit) and the recipe looks its task up in the registry. The
seams left: docs/design.md, "A fine-tune run's path".
"""

import gc
import importlib
import itertools
import json
import os
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import hf_bert_tasks
from hf_bert_tasks import cli
from tests.conftest import SAMPLES

PACKAGE_DIR = os.path.dirname(os.path.abspath(hf_bert_tasks.__file__))
#: Regression bounds, as measured from the CLI entry (2026-12-07): 21 modules, 102 module changes (99 in a plain process,
#: ``tools/finetune_route.py``; under pytest its log-capture handlers add calls into ``cli.py``). The layout before the
#: recipe rooms entered 12 modules in 52 changes: the shared helpers now live outside the recipe room (``flags/``,
#: ``hub/``, ``utils/``), and every flag value is checked against the machine and the task before any model is loaded
#: (``flags/values.py`` with the flag table), the card names a pipeline transformers serves (``tasks/pipelines.py``)
#: and the chance warning suggests a learning rate for the model's size (``utils/modeling.py``); GLUE pairs take the
#: tokenizer's own special tokens (``utils/tokenizers.pair_template``, once per split): issue 55's target of 12
#: modules is not met (docs/design.md, "Known gaps").
MAX_MODULES = 21
MAX_CHANGES = 102
#: folders of the other modes, task families and pretraining: a GLUE fine-tune run must not execute their code.
FORBIDDEN = (
    "modes/lora/",
    "modes/feature_based/",
    "tasks/squad/",
    "tasks/swag/",
    "tasks/conll2003/",
    "pretraining/",
)


def import_everything() -> None:
    for info in pkgutil.walk_packages(hf_bert_tasks.__path__, "hf_bert_tasks."):
        if ".samples" not in info.name and ".templates" not in info.name and "metrics_evaluate" not in info.name:
            importlib.import_module(info.name)


def trace_run(argv: list[str]) -> list[str]:
    """The package files (relative to the package dir) of every Python call made while
    ``hf-bert-tasks finetune ARGV`` runs from the CLI entry (:func:`hf_bert_tasks.cli.main`), in call order."""
    calls: list[str] = []

    def profile(frame, event, arg):
        # the import system asks the moved-module finder (package ``__init__``) about every name no other finder
        # knows (a library's optional import): import machinery, not the run's route
        if event == "call" and frame.f_code.co_name != "find_spec":
            path = frame.f_code.co_filename
            if path.startswith(PACKAGE_DIR + os.sep):
                calls.append(os.path.relpath(path, PACKAGE_DIR).replace(os.sep, "/"))

    gc.collect()  # a generator left suspended by an earlier test (in its traceback) is closed now, not in the trace
    sys.setprofile(profile)
    try:
        status = cli.main(["finetune", *argv])
    finally:
        sys.setprofile(None)
    assert status == 0
    return calls


def mrpc_route_argv(model_dir: str, output_dir: str, cache_dir: str) -> list[str]:
    """The traced run's flags (after ``finetune``): the bundled MRPC sample, 2 steps, 8 dev and 4 test examples, no
    checkpoints; also ``tools/finetune_route.py``'s."""
    argv = ["--task", "mrpc", "--data_dir", os.path.join(SAMPLES, "MRPC"), "--model_name_or_path", model_dir]
    argv += ["--output_dir", output_dir, "--max_steps", "2", "--per_device_train_batch_size", "4"]
    argv += ["--max_eval_samples", "8", "--max_predict_samples", "4", "--save_strategy", "no"]
    return argv + ["--disable_tqdm", "true", "--tokenized_cache_dir", cache_dir]


@pytest.fixture(scope="module")
def traced_mrpc_run(tmp_path_factory, tiny_bert_dir) -> tuple[list[str], int]:
    """``(modules entered, module changes)`` of one traced MRPC run (run once for the tests below)."""
    tmp_path, model_dir = tmp_path_factory.mktemp("trace"), tiny_bert_dir
    import_everything()
    argv = mrpc_route_argv(model_dir, str(tmp_path / "out"), str(tmp_path / "cache"))
    calls = trace_run(argv)
    assert os.path.isfile(tmp_path / "out" / "all_results.json")
    return sorted(set(calls)), sum(a != b for a, b in itertools.pairwise(calls))


def test_a_glue_finetune_run_stays_in_few_modules_of_its_own_mode_and_task(traced_mrpc_run):
    modules, changes = traced_mrpc_run
    forbidden = sorted({m for m in modules if any(m == f or (f.endswith("/") and m.startswith(f)) for f in FORBIDDEN)})
    report = f"{len(modules)} modules, {changes} module changes: {modules}"
    assert not forbidden, f"code of another mode or task ran: {forbidden}; {report}"
    assert len(modules) <= MAX_MODULES, report


def test_a_glue_finetune_run_changes_module_at_most_max_changes_times(traced_mrpc_run):
    modules, changes = traced_mrpc_run
    assert changes <= MAX_CHANGES, f"{len(modules)} modules, {changes} module changes: {modules}"


#: a fresh process parses a ``finetune`` command line, builds its training arguments for ``--mode finetune`` (the
#: class every mode's flags once joined at import), and prints which of the other modes' modules it imported
_FRESH_PARSE = textwrap.dedent(
    """
    import json, sys
    from hf_bert_tasks.finetune.args import parse_finetune_argv
    command_line = parse_finetune_argv(sys.argv[1:])
    if command_line.training["mode"] == "finetune":
        from hf_bert_tasks.finetune.config import finetune_arguments
        finetune_arguments(command_line)
    print(json.dumps(sorted(m for m in sys.modules if m.startswith(("hf_bert_tasks.modes.lora", "hf_bert_tasks.modes.feature_based")))))
    """
)


def modes_imported_by_a_fresh_parse(*flags: str) -> list[str]:
    """The ``hf_bert_tasks.modes.lora*`` / ``feature_based*`` modules a fresh process imported to parse
    ``finetune --task mrpc --output_dir o FLAGS`` (and, for ``--mode finetune``, build its training arguments)."""
    root = os.path.dirname(PACKAGE_DIR)
    env = {**os.environ, "PYTHONPATH": root, "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", _FRESH_PARSE, "--task", "mrpc", "--output_dir", "o", *flags]
    done = subprocess.run(argv, check=False, capture_output=True, text=True, env=env, cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_a_fresh_finetune_mode_run_imports_no_module_of_another_mode():
    assert modes_imported_by_a_fresh_parse("--mode", "finetune") == []


def test_a_fresh_lora_parse_imports_the_lora_flags_and_nothing_of_feature_based():
    assert modes_imported_by_a_fresh_parse("--mode", "lora", "--lora_r", "4") == [
        "hf_bert_tasks.modes.lora",
        "hf_bert_tasks.modes.lora.arguments",
    ]
