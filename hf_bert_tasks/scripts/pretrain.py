"""Pretrain BERT with MLM + NSP (``hf-bert-tasks pretrain`` = ``recipes/pretrain.py``).

A tiny BERT on a text file (one sentence per line, blank line between documents), WordPiece vocabulary trained on it:

    hf-bert-tasks pretrain --train_files corpus.txt --preset tiny --vocab_size 8000 --max_steps 2000 \\
        --output_dir runs/pretrain-tiny

WikiText (articles start with `` = Title = ``; paragraphs split into sentences), whole-word masking, the paper's two
phases (seq 128, then 512 from the phase-1 checkpoint in ``output_dir/phase1``):

    hf-bert-tasks pretrain --train_files wiki.test.tokens --document_boundary heading --split_sentences \\
        --whole_word_mask --max_steps 900 --phase2_max_steps 100 --output_dir runs/pretrain-wiki

From a YAML config: ``hf-bert-tasks pretrain --config recipes/configs/pretrain_tiny.yaml``. Resume an interrupted
run with ``--resume_from_checkpoint auto`` (the newest complete checkpoint; ``True`` means the same). Fine-tune
the result: ``hf-bert-tasks finetune --model_name_or_path runs/pretrain-tiny ...``.
"""

from __future__ import annotations

import logging


def main(argv: list[str] | None = None) -> dict:
    from ..arguments import parse_args
    from ..pretraining import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments, run_pretrain

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    model_args, data_args, training_args = parse_args(
        (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments), argv
    )
    summary = run_pretrain(model_args, data_args, training_args)
    print(
        {
            "steps": summary["steps"],
            "final_mlm_accuracy": summary["final_mlm_accuracy"],
            "final_nsp_accuracy": summary["final_nsp_accuracy"],
        }
    )
    return summary


if __name__ == "__main__":
    main()
