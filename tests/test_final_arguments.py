"""A fine-tune run's arguments are final after one function (issue 41, item 2): ``finetune_arguments`` fills the
task's and the mode's defaults, refuses the flags the task refuses and scrubs secrets; what ``__post_init__`` derives
from the command line lives in declared ``init=False`` fields, not in attributes set on the side."""

import dataclasses

import pytest

from hf_bert_tasks.finetune.args import finetune_parser, parse_finetune_argv
from hf_bert_tasks.finetune.config import FinetuneTrainingArguments, finalize_arguments, finetune_arguments
from hf_bert_tasks.tasks import get_task


def built(*flags: str):
    return finetune_arguments(parse_finetune_argv(["--output_dir", "o", *flags]))


def test_the_paper_glue_defaults_are_filled_when_the_arguments_are_made():
    # BERT §4.1 / Appendix A.3: batch 32, 3 epochs; 128 WordPieces (run_glue.py's default max_seq_length)
    _, data, training = built("--task", "rte")
    assert (training.per_device_train_batch_size, training.num_train_epochs, data.max_seq_length) == (32, 3.0, 128)


def test_a_given_flag_wins_over_the_task_default():
    _, data, training = built("--task", "rte", "--per_device_train_batch_size", "16", "--max_seq_length", "64")
    assert (training.per_device_train_batch_size, data.max_seq_length) == (16, 64)


def test_a_regression_task_gets_random_batches_when_no_sampler_is_given():
    assert built("--task", "stsb")[2].train_sampling_strategy == "random"


def test_a_bare_lr_grid_is_the_paper_grid_when_the_arguments_are_made():
    assert built("--task", "rte", "--lr_grid")[2].lr_grid == "5e-05,4e-05,3e-05,2e-05"  # §4.1


def test_a_flag_the_task_refuses_fails_when_the_arguments_are_made():
    with pytest.raises(ValueError, match="--label_smoothing_factor 0.1: task 'stsb' is a regression"):
        built("--task", "stsb", "--label_smoothing_factor", "0.1")


def test_a_secret_is_scrubbed_without_push_to_hub():
    training = built("--task", "rte", "--hub_token", "hf_not_a_real_token")[2]
    assert training.hub_token is None


def test_making_the_arguments_final_twice_changes_nothing():
    _, data, training = built("--task", "stsb", "--lr_grid")
    before = (dataclasses.asdict(data), training.to_dict())
    finalize_arguments(get_task("stsb"), data, training)
    assert (dataclasses.asdict(data), training.to_dict()) == before


def test_what_post_init_derives_is_three_declared_fields_that_are_not_flags():
    derived = {f.name for f in dataclasses.fields(FinetuneTrainingArguments) if not f.init}
    assert derived == {"from_task", "splits_asked", "keep_checkpoints"}
    flags = {a.dest for a in finetune_parser()._actions}
    assert not derived & flags


def test_the_derived_fields_stay_out_of_the_saved_arguments():
    training = built("--task", "rte", "--do_eval")[2]
    assert training.splits_asked == (False, True, False)
    assert not {"from_task", "splits_asked", "keep_checkpoints"} & set(training.to_dict())
