"""Fine-tune recipe: the same code path as ``hf-bert-tasks finetune`` (see its docstring for commands).

python recipes/finetune.py --task mrpc --model_name_or_path bert-base-uncased --output_dir runs/mrpc
python recipes/finetune.py --config recipes/configs/mrpc.yaml
"""

import sys

from hf_bert_tasks.cli import run_subcommand
from hf_bert_tasks.finetune.recipe import main  # noqa: F401  (the code path; run_subcommand adds the error boundary)

if __name__ == "__main__":
    sys.exit(run_subcommand("finetune"))
