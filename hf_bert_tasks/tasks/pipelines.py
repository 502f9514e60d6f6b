"""Which ``transformers.pipeline`` serves a task's models in the installed transformers (a card's ``pipeline_tag``):
transformers' own, or the one this package registers where transformers 5 has none (:func:`served_pipeline`)."""

from __future__ import annotations

import importlib

#: Hub task -> ``(pipeline, module registering it)``: the pipeline this package registers where the installed
#: transformers serves none for that task (transformers 5 removed ``question-answering``; the package's pipeline
#: applies the recipe's windows, n-best and null-answer rules)
PACKAGE_PIPELINES = {"question-answering": ("extractive-question-answering", "hf_bert_tasks.tasks.squad.pipeline")}


def served_pipeline(hub_task: str) -> str | None:
    """The card's ``pipeline_tag`` for a task whose Hub category is ``hub_task``: ``hub_task`` itself when the
    installed ``transformers.pipeline`` serves it, else the package's registered pipeline
    (:data:`PACKAGE_PIPELINES`; ``extractive-question-answering`` for SQuAD), else ``None`` (no tag: multiple
    choice, which no pipeline serves; the Hub category stays among the card's tags)."""
    from transformers.pipelines import PIPELINE_REGISTRY

    if hub_task in PIPELINE_REGISTRY.get_supported_tasks():
        return hub_task
    if hub_task in PACKAGE_PIPELINES:
        name, module = PACKAGE_PIPELINES[hub_task]
        importlib.import_module(module)  # registers it
        return name
    return None
