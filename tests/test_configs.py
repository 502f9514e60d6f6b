"""Every YAML in ``recipes/configs`` parses, and the fine-tune ones give the paper's hyperparameters.

The fine-tune configs name only the task, the output folder and what differs from the defaults: the hyperparameters
come from one place (the task's ``PaperDefaults`` and ``FinetuneTrainingArguments``). The expected values below are
the paper's (Devlin et al., 2018), quoted by section, not read from the package.
"""

import glob
import os

import pytest

from tests.conftest import REPO, SAMPLES

CONFIGS = os.path.join(REPO, "recipes", "configs")

# task -> (learning rate, batch size, epochs, max_seq_length), with the paper's words
PAPER = {
    # §4.1: "batch size of 32 and fine-tune for 3 epochs"; the recipe's lr is 2e-5 from the grid {5e-5 … 2e-5};
    # Appendix A.3 / run_classifier.py: max_seq_length 128
    **{t: (2e-5, 32, 3.0, 128) for t in ("cola", "sst2", "mrpc", "stsb", "qqp", "mnli", "qnli", "rte", "wnli")},
    "squad_v1": (5e-5, 32, 3.0, 384),  # §4.2: "3 epochs with a learning rate of 5e-5 and a batch size of 32"
    "squad_v2": (5e-5, 48, 2.0, 384),  # §4.3: "2 epochs with a learning rate of 5e-5 and a batch size of 48"
    "swag": (2e-5, 16, 3.0, 128),  # §4.4: "3 epochs with a learning rate of 2e-5 and a batch size of 16"
    "conll2003": (5e-5, 32, 3.0, 128),  # Appendix A.3 grid: batch 32, lr 5e-5, 3 epochs
}

FINETUNE_CONFIGS = sorted(
    p for p in glob.glob(os.path.join(CONFIGS, "*.yaml")) if "pretrain" not in os.path.basename(p)
)
PRETRAIN_CONFIGS = sorted(glob.glob(os.path.join(CONFIGS, "pretrain_*.yaml")))


def test_every_task_config_is_there():
    assert sorted(os.path.basename(p)[:-5] for p in FINETUNE_CONFIGS) == sorted(PAPER)


@pytest.mark.parametrize("path", FINETUNE_CONFIGS, ids=os.path.basename)
def test_finetune_config_gives_the_papers_hyperparameters(path, tmp_path):
    from hf_bert_tasks import get_task
    from hf_bert_tasks.finetune.args import DataArguments, ModelArguments
    from hf_bert_tasks.finetune.config import FinetuneTrainingArguments, apply_task_defaults
    from hf_bert_tasks.flags.training import parse_args

    _, data, training = parse_args(
        (ModelArguments, DataArguments, FinetuneTrainingArguments), ["--config", path, "--output_dir", str(tmp_path)]
    )
    apply_task_defaults(get_task(data.task), data, training)
    lr, batch, epochs, max_len = PAPER[data.task]
    assert (
        training.learning_rate,
        training.per_device_train_batch_size,
        training.num_train_epochs,
        data.max_seq_length,
    ) == (lr, batch, epochs, max_len)
    # Appendix A.2 (weight decay 0.01) and run_classifier.py's warmup_proportion 0.1
    assert (training.weight_decay, training.warmup_steps, training.seed) == (0.01, 0.1, 42)


@pytest.mark.parametrize("path", PRETRAIN_CONFIGS, ids=os.path.basename)
def test_pretrain_config_parses(path, tmp_path):
    from hf_bert_tasks.flags.training import parse_args
    from hf_bert_tasks.pretraining.args import PretrainDataArguments, PretrainModelArguments
    from hf_bert_tasks.pretraining.config import PretrainTrainingArguments

    corpus = os.path.join(SAMPLES, "pretraining", "corpus.txt")  # pretrain_base.yaml names a placeholder path
    model, data, training = parse_args(
        (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments),
        ["--config", path, "--train_files", corpus, "--output_dir", str(tmp_path)],
    )
    assert data.train_files == [corpus] and training.max_steps > 0 and model.preset in ("tiny", "base")
