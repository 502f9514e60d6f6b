"""The fine-tune recipe (``hf-bert-tasks finetune`` = ``recipes/finetune.py``), one file per role as
:mod:`hf_bert_tasks.pretraining`: ``args`` (the light flags and the one parse), ``config`` (``TrainingArguments`` with the
paper's defaults, finished once with the task and mode), ``data`` (tokenized features, cached), ``trainer`` (the
``Trainer`` subclass: length-aware batches, the global loss), ``recipe`` (:func:`hf_bert_tasks.finetune.recipe.main`, top
to bottom), ``grid`` (``--lr_grid`` x ``--seeds``), ``record`` (``run_info.json`` and the curves, written while training)
and ``card`` (the fine-tuned model's card). Imports nothing itself."""
