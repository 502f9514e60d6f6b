"""The shape of one ``pretrain`` run: how many of the package's modules it calls into, and how often it changes module.

An in-process ``hf-bert-tasks pretrain`` (the recipe main, as tests/test_pretrain_recipe.py runs it; the built-in
sample corpus, tiny sizes, 2 steps) runs under ``sys.setprofile``. Every Python ``call`` event whose code lives in the
package directory is recorded by module; module bodies (code named ``<module>``, i.e. imports) are not counted, and
everything the run imports is imported before the trace starts. A "module change" is two consecutive recorded calls
in different modules. Budgets (docs/design.md, "Pretraining"): at most 14 modules, at most 33 changes (12 / 30 before
issue 41's one parse: the command line is now parsed by ``args_pretrain`` / ``args_parser``, not by
``HfArgumentParser``, whose calls were not traced); no module of fine-tuning, LoRA, feature-based or task code is
entered.
"""

import gc
import itertools
import os
import sys

import hf_bert_tasks
from tests.conftest import SAMPLES

PACKAGE_DIR = os.path.dirname(os.path.abspath(hf_bert_tasks.__file__))
MAX_MODULES = 14
MAX_CHANGES = 33


def _module(filename: str) -> str | None:
    """Dotted module of a code file inside the package, else ``None``."""
    path = os.path.abspath(filename)
    if not path.startswith(PACKAGE_DIR + os.sep) or not path.endswith(".py"):
        return None
    rel = os.path.relpath(path, os.path.dirname(PACKAGE_DIR))[: -len(".py")]
    return rel.replace(os.sep, ".").removesuffix(".__init__")


def _traced_calls(fn) -> tuple[list[str], list[str]]:
    """Run ``fn()`` under ``sys.setprofile``; the package module of every Python call it makes, in order:
    ``(the run's, those inside model_card.write_card)``."""
    calls, card_calls, card_frame = [], [], []

    def profile(frame, event, _arg):
        if event == "call" and frame.f_code.co_name != "<module>":
            module = _module(frame.f_code.co_filename)
            if module is not None:
                if (
                    not card_frame
                    and module == "hf_bert_tasks.run.model_card"
                    and frame.f_code.co_name == "write_card"
                ):
                    card_frame.append(frame)
                (card_calls if card_frame else calls).append(module)
        elif event == "return" and card_frame and frame is card_frame[0]:
            card_frame.clear()

    gc.collect()  # a generator an earlier test left suspended is closed now, not inside the trace
    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return calls, card_calls


def test_pretrain_run_stays_within_its_module_budget(tmp_path):
    import datasets  # noqa: F401  (everything the run imports, imported before the trace)
    import matplotlib.figure  # noqa: F401
    import torch  # noqa: F401
    import transformers  # noqa: F401

    from hf_bert_tasks.scripts.pretrain import main

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
    calls, card_calls = _traced_calls(
        lambda: main(
            args + ["--output_dir", str(tmp_path / "traced"), "--dataset_cache_dir", str(tmp_path / "cache-traced")]
        )
    )
    modules = list(dict.fromkeys(calls))
    changes = sum(a != b for a, b in itertools.pairwise(calls))
    message = f"{len(modules)} modules, {changes} module changes over {len(calls)} calls: {modules}"
    assert len(modules) <= MAX_MODULES and changes <= MAX_CHANGES, message
    foreign = [m for m in modules if m.split(".")[1] in {"finetuning", "lora", "modes", "feature_based", "tasks"}]
    assert not foreign, message
    card_modules = list(dict.fromkeys(card_calls))
    card_changes = sum(a != b for a, b in itertools.pairwise(card_calls))
    assert card_modules == CARD_MODULES, card_modules
    assert card_changes <= MAX_CARD_CHANGES, f"the card step: {card_changes} module changes: {card_modules}"
