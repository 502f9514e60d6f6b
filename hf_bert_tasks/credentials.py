"""Keep Hub tokens (and other secrets) out of everything a recipe writes.

``Trainer`` pickles its ``TrainingArguments`` whole into ``training_args.bin`` — in the output dir and in every
``checkpoint-*`` folder (``Trainer.save_model`` / ``_save``, transformers 5.24) — so a ``--hub_token`` left in the
arguments ends up on disk (and on the Hub, for anyone who uploads a checkpoint folder). ``TrainingArguments.to_dict``
and ``__repr__`` mask fields ending in ``_token`` (``"<HUB_TOKEN>"``), but a pickle is not masked.

:func:`scrub_secrets` takes the secrets out of the arguments object before ``Trainer`` sees it and returns them to the
caller (the recipe keeps the token in memory for its own push at the end). Every recipe goes through it via
:func:`hf_bert_tasks.hub.pop_push_settings` (fine-tune in every mode, hence compare and quickstart, and pretrain).
``tests/test_no_token_leak.py`` runs each recipe with a sentinel token and greps every byte written.
"""

from __future__ import annotations

import re

#: Attribute names holding secrets: transformers' own rule (``to_dict`` / ``__repr__`` mask names ending in
#: ``_token``: ``hub_token``) plus the usual names of API keys and passwords. ``include_num_input_tokens_seen`` or
#: ``average_tokens_across_devices`` do not match (they are settings, not secrets).
SECRET_NAME = re.compile(r"(^|_)(token|api_key|apikey|secret|password)$", re.IGNORECASE)


def is_secret_name(name: str) -> bool:
    """True for an argument name that holds a secret (see :data:`SECRET_NAME`)."""
    return bool(SECRET_NAME.search(name))


def scrub_secrets(args) -> dict[str, str]:
    """Set every secret-named attribute of ``args`` that holds a string to ``None``; return what was removed.

    Args:
        args: a ``TrainingArguments`` (or any object with a ``__dict__``); changed in place. All instance attributes
            are scanned, not only dataclass fields, because a pickle holds them all.

    Returns:
        ``{name: value}`` of the removed secrets (e.g. ``{"hub_token": "hf_..."}``); ``{}`` when there were none.
    """
    removed = {}
    for name, value in list(vars(args).items()):
        if isinstance(value, str) and value and is_secret_name(name):
            removed[name] = value
            setattr(args, name, None)
    return removed


def redact(text: str, secrets) -> str:
    """``text`` with every non-empty string of ``secrets`` replaced by ``***`` (for error messages and logs)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


__all__ = ["SECRET_NAME", "is_secret_name", "redact", "scrub_secrets"]
