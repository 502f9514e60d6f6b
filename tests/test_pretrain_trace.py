"""The shape of one ``pretrain`` run: how many of the package's modules it calls into, and how often it changes module.

An in-process ``hf-bert-tasks pretrain`` (the recipe main, as tests/test_pretrain_recipe.py runs it; the built-in
sample corpus, tiny sizes, 2 steps) runs under ``sys.setprofile``. Every Python ``call`` event whose code lives in the
package directory is recorded by module; module bodies (code named ``<module>``, i.e. imports) are not counted, and
everything the run imports is imported before the trace starts. A "module change" is two consecutive recorded calls
in different modules. Budgets (docs/design.md, "Pretraining"): :data:`MAX_MODULES`, :data:`MAX_CHANGES`; no module of
fine-tuning, LoRA, feature-based or task code is entered.
"""

import gc
import itertools
import os
import sys

import hf_bert_tasks
from tests.conftest import SAMPLES

PACKAGE_DIR = os.path.dirname(os.path.abspath(hf_bert_tasks.__file__))
#: Regression bounds, as measured (issue 54, 55 and 58, 2026-12-07): 19 modules, 54 module changes. The route was 16 / 44
#: before the recipe rooms (the shared parser, TrainingArguments, cards, plots and tokenizers now live in ``flags/``,
#: ``hub/`` and ``utils/``) and before every flag value is checked against the machine (``flags/values.py``, with the
#: flag table), the held-out chance levels are kept and warned about (``pretraining/chance.py``) and each phase's
#: checkpoints are removed unless asked for (``flags/training.keeps_checkpoints``).
MAX_MODULES = 19
MAX_CHANGES = 54


def _module(filename: str) -> str | None:
    """Dotted module of a code file inside the package, else ``None``."""
    path = os.path.abspath(filename)
    if not path.startswith(PACKAGE_DIR + os.sep) or not path.endswith(".py"):
        return None
    rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[: -len(".py")]
    return rel.replace(os.sep, ".").removesuffix(".__init__")


def _traced_calls(fn) -> list[str]:
    """Run ``fn()`` under ``sys.setprofile``; the package module of every Python call it makes, in order."""
    calls = []

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code.co_name != "<module>":
            module = _module(frame.f_code.co_filename)
            if module is not None:
                calls.append(module)

    gc.collect()  # a generator an earlier test left suspended is closed now, not inside the trace
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls


def test_pretrain_run_stays_within_its_module_budget(tmp_path):
    import datasets  # noqa: F401  (everything the run imports, imported before the trace)
    import matplotlib.figure  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401

    from hf_bert_tasks.pretraining.recipe import main

    args = [
        "--train_files",
        os.path.join(SAMPLES, "pretraining", "corpus.txt"),
        "--max_train_documents",
        "20",
        "--validation_split_percentage",
        "0.1",
        "--vocab_size",
        "200",
        "--max_seq_length",
        "32",
        "--num_hidden_layers",
        "1",
        "--hidden_size",
        "32",
        "--num_attention_heads",
        "2",
        "--intermediate_size",
        "64",
        "--per_device_train_batch_size",
        "8",
        "--per_device_eval_batch_size",
        "32",
        "--max_steps",
        "2",
        "--logging_steps",
        "1",
        "--eval_steps",
        "2",
        "--save_strategy",
        "no",
        "--disable_tqdm",
        "True",
        "--report_to",
        "none",
        "--seed",
        "3",
    ]
    # a first run imports every lazily imported module; the traced run has its own datasets cache, so it reads the
    # corpus and builds the instances itself (no cache hit hides a call)
    main(args + ["--output_dir", str(tmp_path / "warm"), "--dataset_cache_dir", str(tmp_path / "cache-warm")])
    calls = _traced_calls(
        lambda: main(
            args + ["--output_dir", str(tmp_path / "traced"), "--dataset_cache_dir", str(tmp_path / "cache-traced")]
        )
    )
    modules = list(dict.fromkeys(calls))
    changes = sum(a != b for a, b in itertools.pairwise(calls))
    message = f"{len(modules)} modules, {changes} module changes over {len(calls)} calls: {modules}"
    assert len(modules) <= MAX_MODULES and changes <= MAX_CHANGES, message
    foreign = [
        m
        for m in modules
        if m.startswith(("hf_bert_tasks.finetune.recipe", "hf_bert_tasks.modes", "hf_bert_tasks.tasks"))
    ]
    assert not foreign, message
