"""Fine-tune a BERT checkpoint on one of the paper's tasks (``hf-bert-tasks finetune`` = ``recipes/finetune.py``).

Connected machine (Hub model and data), the paper's GLUE recipe (§4.1: batch 32, 3 epochs, lr from the grid):

    hf-bert-tasks finetune --task mrpc --model_name_or_path bert-base-uncased --output_dir runs/mrpc \\
        --lr_grid 5e-5,4e-5,3e-5,2e-5

Original GLUE files on disk, offline:

    HF_HUB_OFFLINE=1 hf-bert-tasks finetune --task mrpc --data_dir glue_data/MRPC \\
        --model_name_or_path path/to/bert --output_dir runs/mrpc

From a YAML config (command-line flags override it): ``hf-bert-tasks finetune --config recipes/configs/mrpc.yaml``.
Without ``--do_train/--do_eval/--do_predict`` every available split is used. Under ``torchrun`` only the main
process logs INFO and prints the metrics.
"""

from __future__ import annotations

import logging
import sys

PROG = "hf-bert-tasks finetune"


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Parse ``argv`` (the flags above), run the recipe, print the eval metrics; returns every metric.

    Raises:
        ValueError: bad flags or data (``docs/bad_inputs.md``); the CLI prints it as one ``error:`` line.
    """
    from ..arguments import DataArguments, FinetuneTrainingArguments, ModelArguments, parse_args, setup_process_logging
    from ..finetuning import run_finetune

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    model_args, data_args, training_args = parse_args(
        (ModelArguments, DataArguments, FinetuneTrainingArguments), argv, prog=PROG
    )
    setup_process_logging(training_args)
    metrics = run_finetune(model_args, data_args, training_args)
    if training_args.should_log:
        print({k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if k.startswith("eval_")})
    return metrics


if __name__ == "__main__":
    from ..cli import run_subcommand

    sys.exit(run_subcommand("finetune"))
