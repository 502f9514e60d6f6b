"""Names kept at their old spelling: ``arguments.read_config_file`` (the config reader) and the names dropped by
the slimming pass, which still work with a deprecation warning. (The re-exports of ``qa.py`` / ``ner.py`` for old
imports are gone since issue 41: ``qa_postprocess`` / ``ner_metrics`` are the only place of those names.)"""

import pytest


def test_read_config_file_is_the_config_reader(tmp_path):
    from hf_bert_tasks.run.arguments import read_config_file
    from hf_bert_tasks.run.config_file import read_config

    path = tmp_path / "c.yaml"
    path.write_text("learning_rate: 3.0e-5\n", encoding="utf-8")
    assert read_config_file is read_config and read_config_file(str(path)) == {"learning_rate": 3.0e-5}


def test_names_dropped_by_the_slimming_pass_still_work_with_a_deprecation_warning(tmp_path):
    from types import SimpleNamespace

    from hf_bert_tasks.modes.feature_based import heads
    from hf_bert_tasks.scripts.finetune import resolve_resume_checkpoint
    from hf_bert_tasks.tasks.squad import features as qa

    assert qa.TRAIN_COLUMNS == ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
    with pytest.warns(DeprecationWarning, match="HEADS"):
        assert heads.head_names() == heads.HEADS
    args = SimpleNamespace(resume_from_checkpoint=None, output_dir=str(tmp_path))
    with pytest.warns(DeprecationWarning, match="resolve_resume"):
        assert resolve_resume_checkpoint(args) is None


#: (old module, function, its module now): the functions the route pass of issue 41 moved (2026-12-05); the old module
#: paths ``run.model_card_index`` and ``run.plots`` resolve to the modules that took them in (the moved-module finder)
MOVED_BY_THE_ROUTE_PASS = [
    ("hf_bert_tasks.run.model_card", "build_card", "hf_bert_tasks.run.hub"),
    ("hf_bert_tasks.run.model_card", "merge_eval_results", "hf_bert_tasks.run.hub"),
    ("hf_bert_tasks.run.model_card", "build_pretraining_card", "hf_bert_tasks.pretraining.card"),
    ("hf_bert_tasks.run.model_card", "load_seed_runs", "hf_bert_tasks.run.lr_grid"),
    ("hf_bert_tasks.run.model_card", "non_default_arguments", "hf_bert_tasks.run.run_record"),
    ("hf_bert_tasks.run.model_card_index", "metric_keys", "hf_bert_tasks.tasks.metrics"),
    ("hf_bert_tasks.run.model_card_index", "split_of_key", "hf_bert_tasks.tasks.metrics"),
    ("hf_bert_tasks.run.model_card_index", "paper_rows", "hf_bert_tasks.tasks.metrics"),
    ("hf_bert_tasks.run.model_card_index", "pretraining_eval_results", "hf_bert_tasks.pretraining.card"),
    ("hf_bert_tasks.run.model_card_index", "eval_result_key", "hf_bert_tasks.run.hub"),
    ("hf_bert_tasks.run.run_record", "read_record", "hf_bert_tasks.run.model_card"),
    ("hf_bert_tasks.run.plots", "pretraining_curves", "hf_bert_tasks.pretraining.card"),
    ("hf_bert_tasks.run.plots", "plot_pretraining_curves", "hf_bert_tasks.pretraining.card"),
    ("hf_bert_tasks.run.hub", "card_text", "hf_bert_tasks.run.model_card"),
    ("hf_bert_tasks.run.hub", "readme_edited", "hf_bert_tasks.run.model_card"),
    ("hf_bert_tasks.scripts.finetune", "check_model_fits", "hf_bert_tasks.run.tokenization"),
    # 2026-12-06: args_parser + args_finetune merged into run.command_line, the path checks into cli, `tasks` a script
    ("hf_bert_tasks.run.args_parser", "check_inputs", "hf_bert_tasks.cli"),
    ("hf_bert_tasks.run.args_parser", "check_model", "hf_bert_tasks.cli"),
    ("hf_bert_tasks.run.flags", "check_inputs", "hf_bert_tasks.cli"),
    ("hf_bert_tasks.run.flags", "check_model", "hf_bert_tasks.cli"),
    ("hf_bert_tasks.cli", "list_tasks_command", "hf_bert_tasks.scripts.tasks"),
]


@pytest.mark.parametrize("old, name, new", MOVED_BY_THE_ROUTE_PASS)
def test_a_function_the_route_pass_moved_still_works_from_its_old_module_with_a_warning(old, name, new, monkeypatch):
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the old module path itself (model_card_index, plots)
        module = importlib.import_module(old)
    calls = []
    monkeypatch.setattr(importlib.import_module(new), name, lambda *a, **k: calls.append((a, k)) or "result")
    with pytest.warns(DeprecationWarning, match=f"{old.rsplit('.', 1)[0]}.* moved to {new}"):
        assert getattr(module, name)(1, x=2) == "result"
    assert calls == [((1,), {"x": 2})]


@pytest.mark.parametrize("old", ["hf_bert_tasks.run.args_parser", "hf_bert_tasks.run.args_finetune"])
def test_the_merged_argument_modules_import_as_command_line_with_a_warning(old):
    import importlib
    import sys

    from hf_bert_tasks.run import command_line

    sys.modules.pop(old, None)
    with pytest.warns(FutureWarning, match=f"{old} moved to hf_bert_tasks.run.command_line"):
        module = importlib.import_module(old)
    assert module is command_line


def test_the_offline_checkpoint_hint_keeps_its_old_homes():
    import warnings

    from hf_bert_tasks import cli
    from hf_bert_tasks.run import flags

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the old module path itself
        from hf_bert_tasks.run.args_parser import OFFLINE_CHECKPOINT_HINT
    assert OFFLINE_CHECKPOINT_HINT == flags.OFFLINE_CHECKPOINT_HINT == cli.OFFLINE_CHECKPOINT_HINT
    assert OFFLINE_CHECKPOINT_HINT == "runs/quickstart/pretrained-bert"  # the folder `hf-bert-tasks quickstart` writes
