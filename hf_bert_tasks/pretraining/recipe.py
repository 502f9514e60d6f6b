"""The pretraining recipe (``hf-bert-tasks pretrain`` = ``recipes/pretrain.py`` = :func:`main`): :func:`run_pretrain`
loads the corpus, gets a tokenizer and runs each phase with :func:`run_phase`. ``output_dir`` gets the
``BertForPreTraining`` weights, the tokenizer, ``trainer_state.json``, ``pretraining_summary.json`` and
``pretraining_curves.png``; with ``--phase2_max_steps`` the paper's second phase (§A.2: 128 then 512 tokens) goes from
``output_dir/phase1`` to it.

    hf-bert-tasks pretrain --train_files corpus.txt --preset tiny --vocab_size 8000 --max_steps 2000 \
        --output_dir runs/pretrain-tiny          # one sentence per line, blank line between documents
    hf-bert-tasks pretrain --train_files wiki.test.tokens --document_boundary heading --split_sentences \
        --whole_word_mask --max_steps 900 --phase2_max_steps 100 --output_dir runs/pretrain-wiki   # two phases
    hf-bert-tasks pretrain --train_files "shards/*.parquet" --preprocessing_num_workers 4 ...   # cached by datasets
    hf-bert-tasks pretrain --train_files "shards/*.jsonl" --streaming --streaming_eval_documents 500 ...
    hf-bert-tasks pretrain --dataset_name wikimedia/wikipedia --dataset_config_name 20231101.en --streaming ...
    hf-bert-tasks pretrain --config recipes/configs/pretrain_cpu_hour.yaml   # one CPU-hour, small batches
    hf-bert-tasks pretrain ... --no_next_sentence_prediction --mlm_probability 0.4 --dropout 0   # small budgets

Dynamic masks are a function of (seed, epoch, example index): the same for any number of workers or processes, new
each epoch, redrawn identically after ``--resume_from_checkpoint auto``. Checkpoints stay only when asked for
(``--save_steps`` ...). Fine-tune the result: ``hf-bert-tasks finetune --model_name_or_path runs/pretrain-tiny``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import os
import pathlib
import shutil
from itertools import chain
from operator import itemgetter

import numpy as np
import pyarrow.compute as pc
import torch
from datasets import Dataset, IterableDataset
from transformers import AutoTokenizer, BertConfig, BertForPreTraining, set_seed

from ..hub.cards import framework_versions, model_origin, write_card
from ..hub.push import pop_push_settings, push_output_dir
from ..padding_free import apply_padding_free
from ..utils.checkpoints import is_auto, resolve_resume
from ..utils.modeling import BERT_PRESETS
from ..utils.tokenizers import fit_tokenizer_to_model, train_wordpiece_tokenizer
from .card import PRETRAINING_CURVES_FILE as CURVES_FILE
from .card import build_pretraining_card, plot_pretraining_curves, pretraining_curves
from .chance import chance_levels, model_hidden_size, warn_at_chance
from .collators import DataCollatorForBertPretraining
from .config import PretrainDataArguments, PretrainModelArguments, PretrainTrainingArguments
from .data import add_example_index, build_pretraining_dataset
from .documents import load_documents, resolve_corpus_files
from .trainer import (
    BertForPreTrainingMaskedOnly,
    MaskingEpochCallback,
    PretrainingTrainer,
)

logger = logging.getLogger(__name__)

SUMMARY_FILE = "pretraining_summary.json"
PHASE_FILE = "phase_summary.json"


def run_pretrain(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, training_args: PretrainTrainingArguments
) -> dict:
    """Pretrain BERT (MLM + NSP, or MLM only) in one or two phases; returns the summary.

    ``--resume_from_checkpoint PATH`` resumes the phase whose folder holds ``PATH``; ``auto`` (or ``True``) each
    phase from its newest complete checkpoint (:func:`hf_bert_tasks.utils.checkpoints.resolve_resume`); a finished phase
    (``phase_summary.json``) is not trained again. ``--hub_token`` never reaches ``Trainer``.

    Raises:
        FileExistsError: ``output_dir`` holds a finished run, without ``--overwrite_output_dir`` or a resume.
        ValueError: an empty corpus, too few documents for NotNext pairs, a checkpoint with too few positions,
            ``--push_to_hub`` without ``--hub_model_id``, or a checkpoint that cannot be resumed.
        HubPushError: ``--push_to_hub`` failed (the run is complete; push it with ``hf-bert-tasks push``).
    """
    out, resume = training_args.output_dir, training_args.resume_from_checkpoint
    summary_path = os.path.join(out, SUMMARY_FILE)
    if os.path.isfile(summary_path) and not training_args.overwrite_output_dir and not resume:
        raise FileExistsError(
            f"--output_dir {out} already holds a finished pretraining run ({SUMMARY_FILE}); pass "
            "--overwrite_output_dir to replace it or choose another folder"
        )
    push = pop_push_settings(training_args)  # before any Trainer (token popped): our push and card replace Trainer's
    train_docs, eval_docs, corpus = _corpus(data_args, training_args.seed)
    os.makedirs(out, exist_ok=True)
    tokenizer, tokenizer_source = _tokenizer(model_args, resume, out, train_docs)
    start = model_args.model_name_or_path  # model_origin: the Hub id it starts from (None for a local folder)
    model = {
        "preset": model_args.preset,
        "overrides": model_args.config_overrides(),
        "vocab_size": len(tokenizer),
        "init": start or "random",
        "base_model": model_origin(start)["base_model"] if start else None,
    }
    nsp = data_args.next_sentence_prediction
    summary = {
        "corpus": corpus,
        "model": model,
        "tokenizer": tokenizer_source,
        "seed": training_args.seed,
        "phases": [],
        "objective": "MLM + NSP (BertForPreTraining)" if nsp else "MLM only (no NSP; RoBERTa, Liu et al. 2019)",
    }
    for number, (t_args, d_args, m_args) in enumerate(_phases(model_args, data_args, training_args), 1):
        phase_file = os.path.join(t_args.output_dir, PHASE_FILE)
        # a checkpoint path resumes only the phase whose folder holds it, auto each phase
        holds = os.path.dirname(os.path.abspath(str(resume))) == os.path.abspath(t_args.output_dir)
        mine = resume and (is_auto(resume) or holds)
        t_args.resume_from_checkpoint = resolve_resume(resume, t_args.output_dir) if mine else None
        if resume and not t_args.resume_from_checkpoint and os.path.isfile(phase_file):  # finished: keep it
            summary["phases"].append(json.loads(pathlib.Path(phase_file).read_text(encoding="utf-8")))
            continue
        os.makedirs(t_args.output_dir, exist_ok=True)
        if t_args.should_save:  # main process only: two ranks writing one file interleave their bytes
            tokenizer.save_pretrained(t_args.output_dir)
        logger.info(
            "pretraining phase %d: seq %d, %d steps -> %s",
            number,
            d_args.max_seq_length,
            t_args.max_steps,
            t_args.output_dir,
        )
        result = run_phase(m_args, d_args, t_args, tokenizer, train_docs, eval_docs, number)
        if t_args.should_save:
            pathlib.Path(phase_file).write_text(json.dumps(result, indent=2), encoding="utf-8")
        summary["phases"].append(result)
    last = summary["phases"][-1]
    summary.update(
        steps=sum(map(itemgetter("steps"), summary["phases"])),
        masking_recipe=last["masking_recipe"],
        final_mlm_accuracy=last["final_eval"].get("eval_mlm_accuracy"),
        final_nsp_accuracy=last["final_eval"].get("eval_nsp_accuracy"),
        chance=last.get("chance", {}),
        framework_versions=framework_versions(),  # recorded while training: the card's versions
    )
    if training_args.should_log:  # below the most frequent token or at NSP's 0.5: one warning, with what helps
        warn_at_chance(summary, hidden_size=model_hidden_size(out), learning_rate=last["learning_rate"])
    if training_args.should_save:
        pathlib.Path(summary_path).write_text(json.dumps(summary, indent=2), encoding="utf-8")
        plot_pretraining_curves(pretraining_curves(summary), os.path.join(out, CURVES_FILE))
        write_card(out, build_pretraining_card)  # README.md: the pretraining card, from the summary
        if push is not None:  # --push_to_hub: weights, tokenizer, summary and the pretraining card, one commit
            pushed = push_output_dir(
                out, push["repo_id"], private=push["private"], revision=push["revision"], token=push["token"]
            )
            logger.info("pushed to %s (commit %s)", pushed.repo_url, pushed.commit_oid)
    return summary


def _phases(
    model_args: PretrainModelArguments, data_args: PretrainDataArguments, training_args: PretrainTrainingArguments
) -> list[tuple[PretrainTrainingArguments, PretrainDataArguments, PretrainModelArguments]]:
    """The run's phases as ``(training, data, model)`` arguments: one, or with ``--phase2_max_steps`` two (BERT §A.2):
    phase 1 into ``output_dir/phase1``, phase 2 into ``output_dir`` from phase 1's checkpoint with its own steps,
    sequence length, masked-position cap and batch size."""
    if not training_args.phase2_max_steps:
        return [(training_args, data_args, model_args)]
    args1 = copy.deepcopy(training_args)
    args1.output_dir = os.path.join(training_args.output_dir, "phase1")
    args2 = copy.deepcopy(training_args)
    args2.max_steps = training_args.phase2_max_steps
    args2.per_device_train_batch_size = (
        training_args.phase2_per_device_train_batch_size or training_args.per_device_train_batch_size
    )
    data2 = dataclasses.replace(
        data_args,
        max_seq_length=training_args.phase2_max_seq_length,
        max_predictions_per_seq=training_args.phase2_max_predictions_per_seq,
    )
    return [
        (args1, data_args, model_args),
        (args2, data2, dataclasses.replace(model_args, model_name_or_path=args1.output_dir)),
    ]


def _corpus(data_args: PretrainDataArguments, seed: int):
    """``(train_docs, eval_docs or None, corpus summary)``: the documents split by :func:`split_documents` (streamed:
    the first ``streaming_eval_documents`` eval; all train with ``--validation_files``). ``ValueError``: < 2 with NSP."""
    keys = (
        "dataset_name",
        "dataset_config_name",
        "dataset_split",
        "text_column",
        "document_boundary",
        "split_sentences",
        "streaming",
    )
    options = {k: getattr(data_args, k) for k in keys}
    files = resolve_corpus_files(data_args.train_files) if data_args.train_files else []  # FileNotFoundError
    cache = data_args.dataset_cache_dir
    documents = load_documents(data_args.train_files, cache_dir=cache, **options)
    streamed, n_train = data_args.streaming, data_args.max_train_documents
    stats = _corpus_stats(documents)
    n_docs = stats["documents"]
    if n_docs is not None and n_docs < (2 if data_args.next_sentence_prediction else 1):
        raise ValueError(
            f"{data_args.train_files or data_args.dataset_name}: found {n_docs} document(s); "
            "NSP needs at least 2 (documents are separated by blank lines, or by headings with "
            "--document_boundary heading)"
        )
    if data_args.validation_files:  # a fixed held-out set (the same documents across corpora); train on all
        resolve_corpus_files(data_args.validation_files, flag="--validation_files")  # an error naming this flag
        train_docs, eval_docs = (
            documents,
            load_documents(data_args.validation_files, cache_dir=cache, **{**options, "dataset_name": None}),
        )
    elif streamed:
        n_eval = data_args.streaming_eval_documents
        eval_docs = documents.take(n_eval) if n_eval else None
        train_docs = documents.skip(n_eval) if n_eval else documents
    else:
        train_docs, eval_docs = split_documents(documents, data_args.validation_split_percentage, seed)
    if n_train:
        train_docs = train_docs.take(n_train) if streamed else train_docs.select(range(min(n_train, len(train_docs))))
    return (
        train_docs,
        eval_docs,
        {
            "files": files,
            "dataset_name": data_args.dataset_name,
            "documents": n_docs,
            "train_documents": None if streamed else len(train_docs),
            "eval_documents": len(eval_docs or [])
            if not streamed
            else None
            if data_args.validation_files
            else data_args.streaming_eval_documents,
            "sentences": stats["sentences"],
            "document_boundary": data_args.document_boundary,
        },
    )


def _corpus_stats(documents) -> dict:
    """Documents and sentences of a document table, by Arrow compute (no Python lists); ``None`` for a stream."""
    if isinstance(documents, IterableDataset):
        return {"documents": None, "sentences": None}
    column = documents.data.column("sentences")
    return {"documents": len(documents), "sentences": int(pc.sum(pc.list_value_length(column)).as_py() or 0)}


def split_documents(documents, percentage: float, seed: int):
    """``(train, eval or None)``: seeded document-level split of a table of documents (no text read); ``round(n *
    percentage / 100)`` documents (>= 2 when ``percentage > 0``), by ``default_rng(seed).permutation(n)``, go to
    eval; both keep corpus order."""
    n = len(documents)
    n_eval = round(n * percentage / 100.0)
    if percentage > 0 and n_eval < 2:
        n_eval = min(2, n - 2)
    if n_eval <= 0:
        return documents, None
    order = np.random.default_rng(seed).permutation(n)
    return documents.select(np.sort(order[n_eval:])), documents.select(np.sort(order[:n_eval]))


def _tokenizer(model_args: PretrainModelArguments, resume, output_dir: str, train_docs):
    """``(tokenizer, where it came from)``: ``--tokenizer_name``, else a resumed run's (the checkpoint's, else the
    run's), else ``model_name_or_path``'s, else a WordPiece vocabulary trained on ``train_docs``."""
    described = (
        model_args.tokenizer_name
        or model_args.model_name_or_path
        or (f"WordPiece trained on the corpus (vocab_size={model_args.vocab_size}, lowercase={model_args.lowercase})")
    )
    saved = None
    if resume:
        folders = ([] if is_auto(resume) else [str(resume)]) + [os.path.join(output_dir, "phase1"), output_dir]
        saved = next((d for d in folders if os.path.isfile(os.path.join(d, "tokenizer.json"))), None)
    source = model_args.tokenizer_name or saved or model_args.model_name_or_path
    if source:
        return AutoTokenizer.from_pretrained(source), described

    def sentences():  # read twice (alphabet, then training); no Python frame per sentence
        return chain.from_iterable(chain.from_iterable(map(itemgetter("sentences"), train_docs.iter(batch_size=1000))))

    return train_wordpiece_tokenizer(
        sentences, vocab_size=model_args.vocab_size, lowercase=model_args.lowercase
    ), described


def run_phase(model_args, data_args, training_args, tokenizer, train_docs, eval_docs, phase: int) -> dict:
    """Build instances at ``data_args.max_seq_length`` from ``datasets`` tables (or streams) of documents, train
    ``BertForPreTraining`` and save it; returns the summary. Training instances get an ``idx`` column keying their
    masks, the eval set static masks drawn with ``seed + 1``."""
    set_seed(training_args.seed)
    seed, streaming = training_args.seed, isinstance(train_docs, IterableDataset)
    instances = {
        k: getattr(data_args, k)
        for k in ("max_seq_length", "short_seq_prob", "nsp_probability", "next_sentence_prediction")
    }
    instances.update(batch_size=data_args.preprocessing_batch_size, num_proc=data_args.preprocessing_num_workers)
    masking = {
        k: getattr(data_args, k)
        for k in ("mlm_probability", "selection", "max_predictions_per_seq", "whole_word_mask")
    }
    indexed = {"batched": True, "with_indices": True, **({} if streaming else {"desc": "masks and example index"})}
    with training_args.main_process_first(desc="pretraining instances"):
        train_ds = build_pretraining_dataset(
            train_docs, tokenizer, seed=seed, dupe_factor=data_args.dupe_factor, **instances
        ).map(add_example_index, **indexed)
        eval_ds = (
            None
            if eval_docs is None
            else build_pretraining_dataset(eval_docs, tokenizer, seed=seed + 1, **{**instances, "num_proc": None})
        )
        collator = DataCollatorForBertPretraining(tokenizer, seed=seed, **masking)
        if data_args.masking == "static":  # keyed by the row index, as the example index: the order does not matter
            train_ds = train_ds.map(collator.static_mask_map, **indexed)
        if eval_ds is not None:
            eval_masks = DataCollatorForBertPretraining(tokenizer, seed=seed + 1, **masking).static_mask_map
            eval_ds = eval_ds.map(eval_masks, **indexed)
            eval_ds = Dataset.from_list(list(eval_ds)) if streaming else eval_ds  # small (--streaming_eval_documents)
        train_ds = train_ds.shuffle(seed=seed, buffer_size=10_000) if streaming else train_ds
    if eval_ds is None:
        training_args.eval_strategy = "no"
    model, batches = _model(model_args, tokenizer, data_args.max_seq_length, training_args), collator
    if training_args.padding_free:  # masks drawn as padded, then flattened (hf_bert_tasks.padding_free)
        batches = apply_padding_free(model, collator)
    trainer = PretrainingTrainer(
        model=model,
        args=training_args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        data_collator=batches,
        processing_class=tokenizer,
        callbacks=[MaskingEpochCallback(collator)],
    )
    trainer.train(resume_from_checkpoint=training_args.resume_from_checkpoint)
    trainer.save_model()
    trainer.save_state()
    if not getattr(training_args, "keep_checkpoints", True) and trainer.is_world_process_zero():  # none asked for
        for folder in pathlib.Path(training_args.output_dir).glob("checkpoint-*"):  # the saved model is the copy
            shutil.rmtree(folder, ignore_errors=True)
    log, step = trainer.state.log_history, trainer.state.global_step
    final = {}
    if eval_ds is not None:  # no second evaluation at a step already evaluated
        final = next((h for h in reversed(log) if "eval_mlm_accuracy" in h and h["step"] == step), None)
        final = final or trainer.evaluate()
    args = training_args
    chance = chance_levels(eval_ds, tokenizer) if eval_ds is not None else {}
    return {
        "phase": phase,
        "max_seq_length": data_args.max_seq_length,
        "steps": step,
        "train_instances": None if streaming else len(train_ds),
        "eval_instances": len(eval_ds or []),
        "batch_size": args.per_device_train_batch_size * args.gradient_accumulation_steps * args.world_size,
        "learning_rate": args.learning_rate,
        "masked_only_decoder": args.masked_only_decoder,
        "masking_recipe": masking_recipe(data_args, collator),
        "final_eval": {k: v for k, v in final.items() if k.startswith("eval_")},
        "chance": chance,  # what a model that learnt nothing scores (pretraining/chance.py)
        "mlm_most_frequent_token_accuracy": chance.get("mlm_accuracy"),  # the curves' MLM baseline line
        "history": [h for h in log if "mlm_accuracy" in h or "eval_mlm_accuracy" in h],
    }


def _model(model_args: PretrainModelArguments, tokenizer, max_len: int, training_args: PretrainTrainingArguments):
    """``BertForPreTraining`` (or its masked-only head, ``--masked_only_decoder``) from ``model_name_or_path`` (with
    ``--dropout``), else seeded random init from the preset, its overrides and the tokenizer's vocabulary; the
    tokenizer's ``model_max_length`` is fitted to the model's positions.

    Raises:
        ValueError: a checkpoint with fewer positions than ``max_len``.
    """
    cls = BertForPreTrainingMaskedOnly if training_args.masked_only_decoder else BertForPreTraining
    overrides = model_args.config_overrides()
    if model_args.model_name_or_path:
        dropout = {k: v for k, v in overrides.items() if k.endswith("dropout_prob")}
        model = cls.from_pretrained(model_args.model_name_or_path, **dropout)
        if model.config.max_position_embeddings < max_len:
            raise ValueError(
                f"{model_args.model_name_or_path} has {model.config.max_position_embeddings} positions, "
                f"fewer than max_seq_length={max_len}"
            )
    else:  # hf_bert_tasks.utils.modeling.bert_config's rule, without a call into that module (tests/test_pretrain_trace.py)
        config = BertConfig(
            **{
                **BERT_PRESETS[model_args.preset],
                "vocab_size": len(tokenizer),
                "pad_token_id": tokenizer.pad_token_id,
                "max_position_embeddings": max(model_args.max_position_embeddings, max_len),
                **overrides,
            }
        )
        torch.manual_seed(training_args.seed)
        model = cls(config)
    fit_tokenizer_to_model(tokenizer, model.config)  # saved folders carry model_max_length = the model's positions
    return model


def masking_recipe(data_args: PretrainDataArguments, collator) -> dict:
    """The masking settings of the summary (and model card): the ``collator``'s that drew the masks (probabilities,
    selection, cap, whole words) and ``data_args``' of instance creation (NSP, short sequences, passes)."""
    mask, random, nsp = collator.mask_replace_prob, collator.random_replace_prob, data_args.next_sentence_prediction
    return {
        "masking": data_args.masking,
        "mlm_probability": collator.mlm_probability,
        "selection": collator.selection,
        "max_predictions_per_seq": collator.max_predictions_per_seq,
        "whole_word_mask": collator.whole_word_mask,
        "mask/random/keep": [mask, random, round(1.0 - mask - random, 10)],
        "next_sentence_prediction": nsp,
        "nsp_probability": data_args.nsp_probability if nsp else None,
        "short_seq_prob": data_args.short_seq_prob,
        "dupe_factor": data_args.dupe_factor,
    }


def main(argv=None) -> dict:
    """``hf-bert-tasks pretrain``: parse ``argv`` (a list of strings, default ``sys.argv[1:]``, or a command line
    parsed by :func:`hf_bert_tasks.pretraining.args.parse_pretrain_argv`), run the recipe, print the final accuracies
    on the main process; returns the run's summary. ``ValueError`` for bad flags or data."""
    import sys

    from ..flags.parser import CommandLine
    from .args import parse_pretrain_argv

    argv = argv if isinstance(argv, CommandLine) else list(sys.argv[1:] if argv is None else argv)
    if not isinstance(argv, CommandLine) and any(a in ("-h", "--help", "--help_all") for a in argv):
        from ..flags.training import parse_args
        from .args import PretrainDataArguments, PretrainModelArguments

        classes = (PretrainModelArguments, PretrainDataArguments, PretrainTrainingArguments)
        return parse_args(classes, argv, prog="hf-bert-tasks pretrain")  # every flag: HfArgumentParser's help
    command_line = argv if isinstance(argv, CommandLine) else parse_pretrain_argv(argv)  # the one parse
    from ..flags.training import setup_process_logging, training_arguments
    from ..utils.threads import use_threads

    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)
    model_args, data_args, training_args = training_arguments(PretrainTrainingArguments, command_line)
    setup_process_logging(training_args)
    if not model_args.model_name_or_path and (threads := use_threads(None, model_args.preset)):
        logging.getLogger(__name__).info(threads)  # tiny/mini: one thread unless OMP_NUM_THREADS says otherwise
    summary = run_pretrain(model_args, data_args, training_args)
    if training_args.should_log:
        print({k: summary[k] for k in ("steps", "final_mlm_accuracy", "final_nsp_accuracy")})
    return summary


if __name__ == "__main__":
    import sys

    from ..cli import run_subcommand

    sys.exit(run_subcommand("pretrain"))
