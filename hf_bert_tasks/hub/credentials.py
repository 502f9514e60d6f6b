"""Keep Hub tokens (and other secrets) out of everything a recipe writes, ``training_args.bin`` included.

Every recipe scrubs them from its training arguments before a ``Trainer`` exists
(:func:`hf_bert_tasks.flags.training.scrub_secrets`, with the arguments' other finishing steps; with
``--push_to_hub`` :func:`hf_bert_tasks.hub.push.pop_push_settings` takes the token out for the push). Why:
docs/design.md, "why secrets are scrubbed from TrainingArguments".
"""

from __future__ import annotations


def redact(text: str, secrets) -> str:
    """``text`` with every non-empty string of ``secrets`` replaced by ``***`` (for error messages and logs)."""
    for secret in filter(None, secrets):
        text = text.replace(secret, "***")
    return text
