"""``hf_bert_tasks.flags.config_file``: the one reader of ``--config`` files and the ``compare`` arms' YAML settings."""

import argparse

import pytest

from hf_bert_tasks.flags.config_file import read_config, settings_argv, unrecognized


def test_yaml_and_json_files_give_the_same_mapping(tmp_path):
    (tmp_path / "a.yaml").write_text("task: mrpc\nlearning_rate: 2.0e-5\nseeds: [1, 2]\n")
    (tmp_path / "a.json").write_text('{"task": "mrpc", "learning_rate": 2e-05, "seeds": [1, 2]}')
    expected = {"task": "mrpc", "learning_rate": 2e-5, "seeds": [1, 2]}
    assert read_config(str(tmp_path / "a.yaml")) == read_config(str(tmp_path / "a.json")) == expected


def test_inline_mapping_only_when_allowed(tmp_path):
    assert read_config("{lora_r: 4}", "--lora_args", inline=True) == {"lora_r": 4}
    with pytest.raises(FileNotFoundError, match=r"^--config \{lora_r: 4\}: no such file$"):
        read_config("{lora_r: 4}")
    with pytest.raises(FileNotFoundError, match="--lora_args arm.yaml: no such file"):
        read_config("arm.yaml", "--lora_args", inline=True)


def test_bad_json_is_a_value_error_naming_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"task": ')
    with pytest.raises(ValueError, match="bad.json.*not valid JSON"):
        read_config(str(path))


def _parser():
    parser = argparse.ArgumentParser()
    parser.add_argument("--learning_rate", type=float)
    parser.add_argument("--train_files", nargs="+")
    parser.add_argument("--do_train", type=str)
    parser.add_argument("--rerun", action="store_true")
    return parser


def test_settings_become_the_tokens_of_the_command_line():
    argv = settings_argv(
        {"learning_rate": "1e-3", "train_files": ["a.txt", "b.txt"], "do_train": True, "rerun": True, "skipped": None},
        _parser(),
    )
    assert argv == ["--learning_rate", "1e-3", "--train_files", "a.txt", "b.txt", "--do_train", "true", "--rerun"]


def test_unknown_setting_suggests_the_closest_flag():
    with pytest.raises(
        ValueError,
        match=r"^unrecognized arguments: --learning_rat 0\.1 \(did you mean "
        r"--learning_rate\?\)$",
    ):
        settings_argv({"learning_rat": 0.1}, _parser())
    assert unrecognized(["--seed"], ["extra"]) == "unrecognized arguments: extra"
