"""hf_bert_tasks: the BERT paper (Devlin et al., 2018) runnable on today's Hugging Face stack.

Public API:
    get_task(name), list_tasks(), register_task(task), Task — the task registry (see ``hf_bert_tasks.tasks``).
    get_training_mode(name), list_training_modes(), register_training_mode(mode), TrainingMode — the training-mode
    registry (``--mode``; see ``hf_bert_tasks.modes``).
    create_pretraining_examples, DataCollatorForBertPretraining — BERT pretraining data (MLM + NSP, whole-word masking).
    metric_path(name) — folder of a task's metric as an ``evaluate`` module: ``evaluate.load(metric_path("squad_v2"))``.
"""

__version__ = "0.1.0"

from .modes import TrainingMode, get_training_mode, list_training_modes, register_training_mode
from .tasks import PaperDefaults, Task, get_task, list_tasks, register_task

__all__ = [
    "PaperDefaults",
    "Task",
    "TrainingMode",
    "__version__",
    "get_task",
    "get_training_mode",
    "list_tasks",
    "list_training_modes",
    "metric_path",
    "register_task",
    "register_training_mode",
]

#: ``evaluate`` modules shipped in ``hf_bert_tasks/metrics_evaluate/<name>/<name>.py`` (they call the package's own
#: metric functions); other accepted names -> module.
METRIC_MODULES = ("glue", "squad", "squad_v2", "conll2003", "swag")
_METRIC_ALIASES = {"squad_v1": "squad", "seqeval": "conll2003"}


def metric_path(name: str) -> str:
    """Local folder of the ``evaluate`` module for ``name``, for ``evaluate.load(metric_path(name)[, config])``
    (offline): ``glue`` (configuration = the GLUE task), ``squad`` (v1.1; alias ``squad_v1``), ``squad_v2``,
    ``conll2003`` (seqeval entity metrics; alias ``seqeval``) or ``swag``. Raises ``ValueError`` for an unknown name.
    """
    import os

    module = _METRIC_ALIASES.get(name, name)
    if module not in METRIC_MODULES:
        raise ValueError(
            f"metric_path: unknown metric {name!r}; expected one of {list(METRIC_MODULES) + list(_METRIC_ALIASES)}"
        )
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "metrics_evaluate", module)


# Pretraining (lazy: importing hf_bert_tasks stays cheap; these pull in torch/transformers on first use).
_LAZY = {
    "create_pretraining_examples": "pretraining.data",
    "DataCollatorForBertPretraining": "pretraining.collators",
}
__all__ += list(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Modules of 0.1.0 moved by the plug-in layout (issue 41): old path -> new module. ``import hf_bert_tasks.qa_pipeline``
# (as pushed cards and user scripts wrote it) returns the new module object, with a FutureWarning; no alias files.
_MOVED_MODULES = {
    "arguments": "run.arguments",
    "baselines": "tasks.metrics",
    "batching": "run.batching",
    "checkpoints": "run.checkpoints",
    "collators": "pretraining.collators",
    "config_file": "run.config_file",
    "console": "cli",
    "credentials": "run.credentials",
    "feature_based": "modes.feature_based.mode",
    "feature_based.cache": "modes.feature_based.cache",
    "feature_based.heads": "modes.feature_based.heads",
    "feature_based.modeling": "modes.feature_based.modeling",
    "feature_based.strategies": "modes.feature_based.strategies",
    "finetuning": "scripts.finetune",
    "flags": "run.flags",
    "hub": "run.hub",
    "lora": "modes.lora.mode",
    "loss_normalisation": "run.batching",
    "lr_grid": "run.lr_grid",
    "metrics": "tasks.metrics",
    "model_card": "run.model_card",
    "modeling": "run.modeling",
    "modes.base": "modes",
    "modes.finetune": "modes",
    "modes.registry": "modes",
    "ner": "tasks.conll2003.features",
    "ner_metrics": "tasks.conll2003.metrics",
    "plots": "run.run_record",
    "run.plots": "run.run_record",
    "run.model_card_index": "run.model_card",
    "pretraining_config": "pretraining.config",
    "pretraining_data": "pretraining.data",
    "pretraining_trainer": "pretraining.trainer",
    "qa": "tasks.squad.features",
    "qa_pipeline": "tasks.squad.pipeline",
    "qa_postprocess": "tasks.squad.postprocess",
    "qa_trainer": "tasks.squad.trainer",
    "resources": "run.resources",
    "run_record": "run.run_record",
    "squad_metrics": "tasks.squad.metrics",
    "task_model": "modes",
    "threads": "run.threads",
    "tokenization": "run.tokenization",
    "tasks.registry": "tasks.base",
    "tokenized_cache": "run.tokenization",
    "run.tokenized_cache": "run.tokenization",
    "run.args_parser": "run.command_line",
    "run.args_finetune": "run.command_line",
    "trainer_flags": "run.trainer_flags",
}


class _MovedModuleFinder:
    """``sys.meta_path`` finder for :data:`_MOVED_MODULES`: the old name is bound to the new module object (one
    module, one state: a registry or a monkeypatch seen through either name)."""

    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        prefix = __name__ + "."
        if not fullname.startswith(prefix) or fullname[len(prefix) :] not in _MOVED_MODULES:
            return None
        import importlib.util

        return importlib.util.spec_from_loader(fullname, cls)

    @staticmethod
    def create_module(spec):
        import importlib
        import warnings

        new = f"{__name__}.{_MOVED_MODULES[spec.name[len(__name__) + 1 :]]}"
        warnings.warn(f"{spec.name} moved to {new} (0.2.0); import it from there", FutureWarning, stacklevel=2)
        module = importlib.import_module(new)
        if spec.name == f"{__name__}.feature_based":
            import sys

            # the old package's submodules resolve through it too
            module.__path__ = list(getattr(sys.modules[new.rsplit(".", 1)[0]], "__path__", []))
        return module

    @staticmethod
    def exec_module(module):
        pass


def _install_moved_module_finder():
    import sys

    # last: asked only for names no other finder resolves (the old ones), not on every import of the process
    if not any(f is _MovedModuleFinder for f in sys.meta_path):
        sys.meta_path.append(_MovedModuleFinder)


_install_moved_module_finder()
