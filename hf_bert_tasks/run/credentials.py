"""Keep Hub tokens (and other secrets) out of everything a recipe writes, ``training_args.bin`` included.

Every recipe scrubs them (:func:`scrub_secrets`, through :func:`hf_bert_tasks.run.hub.pop_push_settings`). Why:
docs/design.md, "why secrets are scrubbed from TrainingArguments".
"""

from __future__ import annotations

import re

#: Attribute names holding secrets: transformers' rule (names ending in ``_token``) plus API keys and passwords.
SECRET_NAME = re.compile(r"(^|_)(token|api_key|apikey|secret|password)$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for an argument name that holds a secret (see :data:`SECRET_NAME`)."""
    return bool(SECRET_NAME.search(name))


def scrub_secrets(args) -> dict[str, str]:
    """Set every secret-named attribute of ``args`` that holds a string to ``None``; returns ``{name: value}`` of the
    removed secrets (``{}``: none). ``args``: a ``TrainingArguments`` (any object with a ``__dict__``), changed in
    place; every instance attribute is scanned (a pickle holds them all)."""
    removed = {
        name: value for name, value in vars(args).items() if isinstance(value, str) and value and is_secret_name(name)
    }
    for name in removed:
        setattr(args, name, None)
    return removed


def redact(text: str, secrets) -> str:
    """``text`` with every non-empty string of ``secrets`` replaced by ``***`` (for error messages and logs)."""
    for secret in filter(None, secrets):
        text = text.replace(secret, "***")
    return text


__all__ = ["SECRET_NAME", "is_secret_name", "redact", "scrub_secrets"]
