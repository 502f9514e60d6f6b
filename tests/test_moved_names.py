"""Names moved by the split of ``qa.py`` / ``ner.py`` (and ``arguments.read_config_file``) keep their old spelling
(the old modules are the deprecated location; new code imports from ``qa_postprocess`` / ``ner_metrics``):
the old import path gives the very object of the new module."""

import pytest


@pytest.mark.parametrize(
    "old_module, new_module, names",
    [
        (
            "hf_bert_tasks.qa",
            "hf_bert_tasks.qa_postprocess",
            ["QAPredictions", "features_to_arrays", "pad_2d", "postprocess_qa_predictions"],
        ),
        (
            "hf_bert_tasks.ner",
            "hf_bert_tasks.ner_metrics",
            ["IGNORE_INDEX", "entity_metrics", "token_level_metrics", "word_predictions", "write_conll"],
        ),
    ],
)
def test_old_import_path_gives_the_moved_object(old_module, new_module, names):
    import importlib

    old, new = importlib.import_module(old_module), importlib.import_module(new_module)
    for name in names:
        assert getattr(old, name) is getattr(new, name), name


def test_read_config_file_is_the_config_reader(tmp_path):
    from hf_bert_tasks.arguments import read_config_file
    from hf_bert_tasks.config_file import read_config

    path = tmp_path / "c.yaml"
    path.write_text("learning_rate: 3.0e-5\n", encoding="utf-8")
    assert read_config_file is read_config and read_config_file(str(path)) == {"learning_rate": 3.0e-5}


def test_names_dropped_by_the_slimming_pass_still_work_with_a_deprecation_warning(tmp_path):
    from types import SimpleNamespace

    from hf_bert_tasks import qa
    from hf_bert_tasks.feature_based import heads
    from hf_bert_tasks.finetuning import resolve_resume_checkpoint

    assert qa.TRAIN_COLUMNS == ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
    with pytest.warns(DeprecationWarning, match="HEADS"):
        assert heads.head_names() == heads.HEADS
    args = SimpleNamespace(resume_from_checkpoint=None, output_dir=str(tmp_path))
    with pytest.warns(DeprecationWarning, match="resolve_resume"):
        assert resolve_resume_checkpoint(args) is None
