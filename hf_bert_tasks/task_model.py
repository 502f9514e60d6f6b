"""The task model of full fine-tuning: a checkpoint loaded under the task's head, optional re-initialisation of the
pooler / top layers, and the batch-mean-loss declaration ``Trainer`` needs. Used by the ``finetune`` and ``lora``
training modes (:mod:`hf_bert_tasks.modes`)."""

from __future__ import annotations

import logging

logger = logging.getLogger(__name__)


def load_task_model(task, model_args):
    """Load ``model_args.model_name_or_path`` with ``task``'s head (``task.model_class()``) and label names in its
    config (``task.model_config_kwargs()``): the model of full fine-tuning, and the base of LoRA.

    Attention runs through ``torch.nn.functional.scaled_dot_product_attention`` (``--attn_implementation sdpa``, the
    default: fused/flash kernels on GPU, same numbers as ``eager`` up to float rounding); a model class without SDPA
    support falls back to its default implementation with a warning.

    Raises:
        ValueError: when the checkpoint's head does not fit the task (e.g. a 3-label MNLI model for 2-label MRPC);
            the message says which sizes differ and how to start from the encoder instead.
    """
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(
        model_args.model_name_or_path, revision=model_args.model_revision, cache_dir=model_args.cache_dir,
        **task.model_config_kwargs(),
    )
    model_class = task.model_class()
    attn = getattr(model_args, "attn_implementation", None)
    try:
        try:
            return model_class.from_pretrained(
                model_args.model_name_or_path, config=config, revision=model_args.model_revision,
                cache_dir=model_args.cache_dir, **({"attn_implementation": attn} if attn else {}),
            )
        except ValueError as err:
            # An architecture without an SDPA kernel refuses attn_implementation="sdpa": use its default instead.
            if attn != "sdpa" or "sdpa" not in str(err).lower():
                raise
            logger.warning("%s does not support SDPA attention; using its default", model_args.model_name_or_path)
            return model_class.from_pretrained(
                model_args.model_name_or_path, config=config, revision=model_args.model_revision,
                cache_dir=model_args.cache_dir,
            )
    except RuntimeError as err:
        # transformers 4 said "size mismatch for classifier.weight ..."; 5.x logs a report and raises
        # "You set `ignore_mismatched_sizes` to `False` ...": name the sizes ourselves.
        if "size mismatch" not in str(err) and "ignore_mismatched_sizes" not in str(err):
            raise
        from transformers import AutoConfig

        saved = AutoConfig.from_pretrained(model_args.model_name_or_path, revision=model_args.model_revision,
                                           cache_dir=model_args.cache_dir)
        raise ValueError(
            f"{model_args.model_name_or_path}: its classification head does not fit task {task.name!r} "
            f"({task.num_labels} label(s)); the checkpoint's head has {saved.num_labels} output(s) "
            f"({list(saved.id2label.values())}) — fine-tune from the base encoder checkpoint instead"
        ) from None


def reinit_top_layers(model, n: int, pooler: bool = False):
    """Re-initialise the top ``n`` encoder layers (and the pooler when ``pooler``) of ``model`` as BERT initialises
    them (every ``nn.Linear`` weight ~ normal(0, ``config.initializer_range``), biases 0, LayerNorm 1/0); returns
    ``model``.

    Source: Zhang et al. 2021, "Revisiting Few-sample BERT Fine-tuning" (ICLR), §5: the pooler and the top layers
    are specialised to the pretraining objectives (NSP, MLM); re-initialising them speeds up and stabilises
    fine-tuning on small data. Done by hand: transformers 5's ``_init_weights`` skips loaded tensors.

    Raises:
        ValueError: ``n`` < 0 or more than the model's ``num_hidden_layers``.
    """
    import torch

    layers = model.config.num_hidden_layers
    if not 0 <= n <= layers:
        raise ValueError(f"--reinit_layers {n}: expected 0 <= N <= {layers} (the model's num_hidden_layers)")
    base = model.base_model
    modules = list(base.encoder.layer[layers - n:]) if n else []
    if pooler and getattr(base, "pooler", None) is not None:
        modules.append(base.pooler)
    with torch.no_grad():
        for module in (m for top in modules for m in top.modules()):
            if isinstance(module, torch.nn.Linear):
                module.weight.normal_(0.0, model.config.initializer_range)
                if module.bias is not None:
                    module.bias.zero_()
            elif isinstance(module, torch.nn.LayerNorm):
                module.weight.fill_(1.0)
                module.bias.zero_()
    return model


def declare_batch_mean_loss(model):
    """Mark ``model`` (or the base model inside a peft wrapper) as returning a batch-mean loss; returns ``model``.

    BERT's heads (sequence/token classification, QA, multiple choice, pretraining) average their loss over the batch
    and ignore ``num_items_in_batch``, but their ``forward`` takes ``**kwargs``; ``Trainer`` (transformers 5.24)
    then passes ``num_items_in_batch`` and multiplies the loss by the number of processes under DDP — 2x gradients
    and a 2x logged/eval loss on 2 processes. With ``accepts_loss_kwargs = False`` Trainer treats the loss as a
    per-batch mean, which is what it is. The recipe's trainer then normalises the training loss over the global
    batch itself (per labelled token for NER, per example otherwise:
    :class:`hf_bert_tasks.loss_normalisation.GlobalLossTrainer`). ``tests/test_distributed.py`` compares a
    2-process run with the 1-process one.
    """
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    base.accepts_loss_kwargs = False
    return model
