"""Comparison recipe: the same code path as ``hf-bert-tasks compare`` (see its docstring for commands).

    python recipes/compare.py --task conll2003 --data_dir ../shared/data/conll2003 \
        --model_name_or_path bert-base-cased --output_dir runs/compare/conll2003 \
        --modes finetune,lora,feature_based --strategies last,concat_last_four,scalar_mix --seeds 1,2,3
"""

import sys

from hf_bert_tasks.cli import run_subcommand
from hf_bert_tasks.scripts.compare import main  # noqa: F401  (the code path; run_subcommand adds the error boundary)

if __name__ == "__main__":
    sys.exit(run_subcommand("compare"))
