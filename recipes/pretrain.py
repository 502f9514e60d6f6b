"""Pretrain recipe: the same code path as ``hf-bert-tasks pretrain`` (see its docstring for commands).

python recipes/pretrain.py --train_files corpus.txt --preset tiny --max_steps 2000 --output_dir runs/pretrain
python recipes/pretrain.py --config recipes/configs/pretrain_tiny.yaml
"""

import sys

from hf_bert_tasks.cli import run_subcommand
from hf_bert_tasks.pretraining.recipe import main  # noqa: F401  (the code path; run_subcommand adds the error boundary)

if __name__ == "__main__":
    sys.exit(run_subcommand("pretrain"))
