"""hf_bert_tasks: the BERT paper (Devlin et al., 2018) runnable on today's Hugging Face stack.

Public API:
    get_task(name), list_tasks(), register_task(task), Task — the task registry (see ``hf_bert_tasks.tasks``).
    get_training_mode(name), list_training_modes(), register_training_mode(mode), TrainingMode — the training-mode
    registry (``--mode``; see ``hf_bert_tasks.modes``).
    create_pretraining_examples, DataCollatorForBertPretraining — BERT pretraining data (MLM + NSP, whole-word masking).
    metric_path(name) — folder of a task's metric as an ``evaluate`` module: ``evaluate.load(metric_path("squad_v2"))``.
"""

__version__ = "0.2.0.dev0"

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


def load_entry_points(group: str) -> list[str]:
    """Import every installed plug-in of ``group`` (``hf_bert_tasks.tasks`` or ``hf_bert_tasks.modes``): each entry
    point names a module (``name = "package.module"`` in the plug-in's ``[project.entry-points."<group>"]``) whose
    import registers its tasks (:func:`register_task`) or modes (``register_training_mode``), as the built-in family
    folders do; returns the names loaded, in the order ``importlib.metadata`` lists them (one per distribution, so a
    plug-in installed twice on the path loads once). A plug-in that fails to import is skipped with a warning naming
    it, its entry point and the error: a broken third-party package must not take the command line down."""
    import importlib.metadata
    import logging
    import warnings

    loaded = []
    for entry in dict.fromkeys(importlib.metadata.entry_points(group=group)):
        try:
            entry.load()
        except Exception as err:  # noqa: BLE001 - any failure of third-party code is reported, not raised
            message = f"plug-in {entry.name!r} ({entry.value}, entry point group {group}) failed to load: {err}"
            logging.getLogger(__name__).warning(message)
            warnings.warn(message, RuntimeWarning, stacklevel=2)
            continue
        loaded.append(entry.name)
    return loaded


def _load_plugins() -> dict[str, list[str]]:
    """Installed third-party task families and training modes (entry point groups ``hf_bert_tasks.tasks`` and
    ``hf_bert_tasks.modes``: a module that registers its tasks or modes when imported), loaded after the built-ins
    and once this package's public names exist, so a plug-in may import them (``from hf_bert_tasks import
    register_task``). They join ``hf-bert-tasks finetune``, its ``--help`` and ``tasks``."""
    return {group: load_entry_points(f"hf_bert_tasks.{group}") for group in ("tasks", "modes")}


#: the plug-ins loaded, by group
PLUGINS = _load_plugins()
