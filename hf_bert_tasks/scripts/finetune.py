"""Fine-tune a BERT checkpoint on one of the paper's tasks (``hf-bert-tasks finetune`` = ``recipes/finetune.py``).

Connected machine (Hub model and data), the paper's GLUE recipe (§4.1: batch 32, 3 epochs, lr from the grid):

    hf-bert-tasks finetune --task mrpc --model_name_or_path bert-base-uncased --output_dir runs/mrpc \\
        --lr_grid 5e-5,4e-5,3e-5,2e-5

Original GLUE files on disk, offline:

    HF_HUB_OFFLINE=1 hf-bert-tasks finetune --task mrpc --data_dir glue_data/MRPC \\
        --model_name_or_path path/to/bert --output_dir runs/mrpc

From a YAML config (command-line flags override it): ``hf-bert-tasks finetune --config recipes/configs/mrpc.yaml``.
Without ``--do_train/--do_eval/--do_predict`` every available split is used. Under ``torchrun`` only the main
process logs INFO and prints the metrics. The recipe itself is :mod:`hf_bert_tasks.finetuning` (``main`` is its).
"""

from __future__ import annotations

import sys

from ..finetuning import main

PROG = "hf-bert-tasks finetune"
__all__ = ["PROG", "main"]

if __name__ == "__main__":
    from ..cli import run_subcommand

    sys.exit(run_subcommand("finetune"))
