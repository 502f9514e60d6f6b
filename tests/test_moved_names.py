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
