"""Keep Hub tokens (and other secrets) out of everything a recipe writes, ``training_args.bin`` included.

Every recipe scrubs them from its training arguments before a ``Trainer`` exists
(:func:`hf_bert_tasks.run.arguments.scrub_secrets`, with the arguments' other finishing steps; with
``--push_to_hub`` :func:`hf_bert_tasks.run.hub.pop_push_settings` takes the token out for the push). Why:
docs/design.md, "why secrets are scrubbed from TrainingArguments".
"""

from __future__ import annotations

import re

#: Attribute names holding secrets: transformers' rule (names ending in ``_token``) plus API keys and passwords.
SECRET_NAME = re.compile(r"(^|_)(token|api_key|apikey|secret|password)$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for an argument name that holds a secret (see :data:`SECRET_NAME`)."""
    return bool(SECRET_NAME.search(name))


def redact(text: str, secrets) -> str:
    """``text`` with every non-empty string of ``secrets`` replaced by ``***`` (for error messages and logs)."""
    for secret in filter(None, secrets):
        text = text.replace(secret, "***")
    return text


def __getattr__(name: str):
    if name == "scrub_secrets":  # its 0.1.0 place; it lives with the arguments it scrubs (imports transformers)
        from .arguments import scrub_secrets

        return scrub_secrets
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["SECRET_NAME", "is_secret_name", "redact"]
