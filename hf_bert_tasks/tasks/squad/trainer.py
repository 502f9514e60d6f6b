"""SQuAD's ``Trainer``: evaluation inside the training loop with the task's post-processing, as transformers'
examples do it (``examples/pytorch/question-answering/trainer_qa.py``, ``QuestionAnsweringTrainer``):
:meth:`QuestionAnsweringTrainer.evaluate` predicts start/end logits, post-processes them over whole examples and
scores them, so ``eval_f1`` / ``eval_exact_match`` (v2.0: ``eval_best_f1`` ... too) are logged during training and
``--load_best_model_at_end --metric_for_best_model f1`` selects by F1. Why a subclass: docs/design.md, 'Trainer
hooks and the overrides left'."""

from __future__ import annotations

import math
import time
from collections.abc import Callable

from transformers.trainer_utils import speed_metrics

from ...finetune.trainer import GlobalLossTrainer
from ..metrics import join_batches


class QuestionAnsweringTrainer(GlobalLossTrainer):
    """:class:`~hf_bert_tasks.finetune.trainer.GlobalLossTrainer` whose :meth:`evaluate` scores post-processed answers.

    Args:
        eval_examples: the raw examples (``id``, ``context``, ``answers`` ...) of ``eval_dataset``'s windows.
        eval_features: the windows with their offsets, row for row ``eval_dataset`` (which may hold a training
            mode's cached inputs instead, ``--mode feature_based``); ``None``: ``eval_dataset``.
        post_process: ``(examples, features, predictions) -> (result, metrics)``; ``predictions``: Trainer's
            ``(start_logits, end_logits)``, float ``[F, L]`` each in feature order; ``metrics``: ``{name: float}``
            without prefix (``f1``, ``exact_match`` ...). ``None``: Trainer's own ``evaluate``.
        the rest: as :class:`~hf_bert_tasks.finetune.trainer.GlobalLossTrainer`.
    """

    def __init__(self, *args, eval_examples=None, eval_features=None, post_process: Callable | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.eval_examples = eval_examples
        self.eval_features = eval_features
        self.post_process = post_process
        #: the post-processed answers of the latest :meth:`evaluate` (``QAPredictions``), else ``None``
        self.last_result = None

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval", eval_examples=None):
        """Trainer's ``evaluate`` with SQuAD's scores: ``{prefix}_{metric}`` of ``post_process`` plus the loss (when
        the features carry answer positions) and the speed keys; logged and passed to ``on_evaluate`` as Trainer
        does. ``eval_examples``: the raw examples of ``eval_dataset`` (default: the constructor's)."""
        dataset = self.eval_dataset if eval_dataset is None else eval_dataset
        examples = self.eval_examples if eval_examples is None else eval_examples
        if self.post_process is None or examples is None or isinstance(dataset, dict):
            return super().evaluate(eval_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)
        loader = self.get_eval_dataloader(dataset)
        start = time.time()
        compute_metrics, self.compute_metrics = self.compute_metrics, None  # scored after post-processing
        try:
            # "Prediction": Trainer keeps every batch's logits also under --batch_eval_metrics (post-processing
            # needs whole examples, whose windows may span two batches)
            output = self.evaluation_loop(
                loader,
                description="Prediction",
                prediction_loss_only=False,
                ignore_keys=ignore_keys,
                metric_key_prefix=metric_key_prefix,
            )
        finally:
            self.compute_metrics = compute_metrics
        features = dataset if eval_dataset is not None or self.eval_features is None else self.eval_features
        self.last_result, scores = self.post_process(examples, features, join_batches(output.predictions))
        metrics = {f"{metric_key_prefix}_{k}": v for k, v in scores.items()}
        metrics.update(output.metrics)
        steps = math.ceil(output.num_samples / (self.args.eval_batch_size * self.args.world_size))
        metrics.update(speed_metrics(metric_key_prefix, start, num_samples=output.num_samples, num_steps=steps))
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics
