"""``--mode finetune`` (the default): every weight of the encoder and of the new task head is trained (paper §3.2).

Defaults are the paper's per task (§4, Appendix A.3; :class:`~hf_bert_tasks.tasks.base.PaperDefaults`): learning
rate, batch size, epochs, and the learning-rate grid a bare ``--lr_grid`` searches (§4.1: {5e-5, 4e-5, 3e-5, 2e-5}
for GLUE). The only mode that allows ``--reinit_pooler`` / ``--reinit_layers`` (Zhang et al. 2021, §5).
"""

from __future__ import annotations

from .. import paper
from . import TrainingMode, register_training_mode

NAME = "finetune"


class FinetuneMode(TrainingMode):
    """Full fine-tuning of ``task.model_class()`` loaded from the checkpoint (:mod:`hf_bert_tasks.task_model`)."""

    name = NAME
    help = "all weights trained (paper §3.2)"
    card_text = ("Training mode: **fine-tuning** — every weight of the encoder and the task head was trained "
                 "(paper §3.2).")
    allows_reinit = True

    def default_lr_grid(self, task) -> tuple[float, ...]:
        """The task's paper grid (:attr:`PaperDefaults.lr_grid <hf_bert_tasks.tasks.base.PaperDefaults>`)."""
        return tuple(task.paper_defaults.lr_grid)

    def build_model(self, task, model_args, training_args):
        """``task.model_class()`` from ``model_args.model_name_or_path``, with ``--reinit_layers`` /
        ``--reinit_pooler`` applied and the batch-mean loss declared."""
        from ..task_model import declare_batch_mean_loss, load_task_model, reinit_top_layers

        model = load_task_model(task, model_args)
        model = reinit_top_layers(model, getattr(model_args, "reinit_layers", 0),
                                  getattr(model_args, "reinit_pooler", False))
        return declare_batch_mean_loss(model)

    def paper_number(self, task, config: dict) -> tuple[float | None, str]:
        """CoNLL-2003: Table 7's fine-tuning row (dev F1, BERT-BASE); other tasks: the task's ``paper_results``
        for BERT-base (GLUE: Table 1, test server)."""
        if task.name == paper.TABLE7_TASK:
            return paper.TABLE7_FINETUNE_DEV_F1["BERT-BASE"], paper.TABLE7_SOURCE
        value = task.paper_results.get("BERT-base", {}).get(task.primary_metric)
        return value, task.paper_source if value is not None else ""


register_training_mode(FinetuneMode())
