"""SQuAD trains on random batches by default, as transformers' ``run_qa.py`` (issue 59, docs/parity-squad.md):
length-grouped batches were the one training difference left against run_qa."""

from hf_bert_tasks.finetune import recipe as finetune
from hf_bert_tasks.finetune.args import parse_finetune_argv
from hf_bert_tasks.finetune.config import finetune_arguments
from tests.conftest import tiny_run_argv
from tests.test_squad_recipe import write_folder


def sampler(*flags: str) -> tuple[str, bool]:
    training = finetune_arguments(parse_finetune_argv(["--output_dir", "o", *flags]))[2]
    return training.train_sampling_strategy, training.group_by_length


def test_squad_v1_defaults_to_random_batches():
    assert sampler("--task", "squad_v1") == ("random", False)


def test_squad_v2_defaults_to_random_batches():
    assert sampler("--task", "squad_v2") == ("random", False)


def test_a_given_length_grouped_sampler_wins_over_the_squad_default():
    assert sampler("--task", "squad_v1", "--train_sampling_strategy", "group_by_length") == ("group_by_length", True)


def test_token_classification_defaults_to_random_batches():
    assert sampler("--task", "conll2003") == ("random", False)


def test_a_squad_run_trains_with_a_random_sampler(tiny_bert_dir, tmp_path, monkeypatch):
    from hf_bert_tasks.finetune.trainer import GlobalLossTrainer

    seen, original = [], GlobalLossTrainer._get_train_sampler

    def recording(self, train_dataset=None):  # the sampler the recipe's Trainer chose
        chosen = original(self, train_dataset)
        seen.append(type(chosen).__name__)
        return chosen

    monkeypatch.setattr(GlobalLossTrainer, "_get_train_sampler", recording)
    argv = tiny_run_argv(
        "squad_v1",
        tiny_bert_dir,
        tmp_path / "run",
        "--do_train",
        data_dir=write_folder(tmp_path, "1.1"),
        max_seq_length=32,
        doc_stride=8,
        max_query_length=12,
        max_steps=1,
        per_device_train_batch_size=2,
    )
    finetune.main(argv)
    # transformers' shuffling sampler (SeedableRandomSampler, a RandomSampler), not EpochLengthGroupedSampler
    assert seen and all(name.endswith("RandomSampler") for name in seen), seen
