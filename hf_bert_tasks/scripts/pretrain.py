"""Pretrain BERT with MLM + NSP (``hf-bert-tasks pretrain`` = ``recipes/pretrain.py``; the recipe is
:func:`hf_bert_tasks.pretraining.recipe.run_pretrain`).

    hf-bert-tasks pretrain --train_files corpus.txt --preset tiny --vocab_size 8000 --max_steps 2000 \
        --output_dir runs/pretrain-tiny          # one sentence per line, blank line between documents
    hf-bert-tasks pretrain --train_files wiki.test.tokens --document_boundary heading --split_sentences \
        --whole_word_mask --max_steps 900 --phase2_max_steps 100 --output_dir runs/pretrain-wiki   # two phases
    hf-bert-tasks pretrain --train_files "shards/*.parquet" --preprocessing_num_workers 4 ...   # cached by datasets
    hf-bert-tasks pretrain --train_files "shards/*.jsonl" --streaming --streaming_eval_documents 500 ...
    hf-bert-tasks pretrain --dataset_name wikimedia/wikipedia --dataset_config_name 20231101.en --streaming ...
    hf-bert-tasks pretrain --config recipes/configs/pretrain_cpu_hour.yaml   # one CPU-hour, small batches
    hf-bert-tasks pretrain ... --no_next_sentence_prediction --mlm_probability 0.4 --dropout 0   # small budgets

The run writes the model, the tokenizer, ``pretraining_summary.json`` and ``pretraining_curves.png``. Dynamic masks
are a function of (seed, epoch, example index): the same for any number of workers or processes, new each epoch,
redrawn identically after ``--resume_from_checkpoint auto``. Fine-tune the result with
``hf-bert-tasks finetune --model_name_or_path runs/pretrain-tiny ...``.
"""

from __future__ import annotations

import logging


def main(argv=None) -> dict:
    """``hf-bert-tasks pretrain``: parse ``argv`` (a list of strings, default ``sys.argv[1:]``, or a command line
    parsed by :func:`hf_bert_tasks.pretraining.args.parse_pretrain_argv`), run the recipe, print the final accuracies
    on the main process; returns the run's summary. ``ValueError`` for bad flags or data."""
    import sys

    from ..pretraining.args import parse_pretrain_argv
    from ..run.command_line import CommandLine

    argv = argv if isinstance(argv, CommandLine) else list(sys.argv[1:] if argv is None else argv)
    if not isinstance(argv, CommandLine) and any(a in ("-h", "--help", "--help_all") for a in argv):
        from ..pretraining.config import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments
        from ..run.arguments import parse_args

        classes = (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments)
        return parse_args(classes, argv, prog="hf-bert-tasks pretrain")  # every flag: HfArgumentParser's help
    command_line = argv if isinstance(argv, CommandLine) else parse_pretrain_argv(argv)  # the one parse
    from ..pretraining.config import PretrainTrainingArguments
    from ..pretraining.recipe import run_pretrain
    from ..run.arguments import setup_process_logging, training_arguments
    from ..run.threads import use_threads

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    model_args, data_args, training_args = training_arguments(PretrainTrainingArguments, command_line)
    setup_process_logging(training_args)
    if not model_args.model_name_or_path and (threads := use_threads(None, model_args.preset)):
        logging.getLogger(__name__).info(threads)  # tiny/mini: one thread unless OMP_NUM_THREADS says otherwise
    summary = run_pretrain(model_args, data_args, training_args)
    if training_args.should_log:
        print(
            {
                "steps": summary["steps"],
                "final_mlm_accuracy": summary["final_mlm_accuracy"],
                "final_nsp_accuracy": summary["final_nsp_accuracy"],
            }
        )
    return summary


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("pretrain"))
