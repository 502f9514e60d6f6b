"""A quiet console for every recipe: progress bars only on a terminal, one line per expected head swap, and none of
the library messages our own load paths trigger but the user cannot act on.

:func:`log_filters` (``cli.main`` runs every subcommand inside it; it imports nothing) attaches
:class:`LibraryNoiseFilter` to three transformers loggers:

- ``transformers.modeling_utils``: the LOAD REPORT table (``transformers/utils/loading_report.py``) of a load that
  is an expected head swap becomes one line (:func:`head_swap_text`): a pretraining checkpoint under a task head
  drops its ``cls.*`` heads (and the pooler under a token head: UNEXPECTED) and initialises the task head
  (MISSING). A report with any other status (MISMATCH, CONVERSION), a MISSING ``embeddings``/``encoder``/``pooler``
  weight (randomly initialised encoder) or an UNEXPECTED ``embeddings``/``encoder`` weight (a checkpoint bigger than
  the config, e.g. 12 layers into 6) is left as transformers prints it.
- ``transformers.distributed.tensor_parallel``: "The following layers were not sharded" / "TP rules were not
  applied" (``verify_tp_plan``). The package never passes a tensor-parallel plan; the check runs when the level of
  the ``transformers.modeling_utils`` logger is set to WARNING or above (``modeling_utils`` tests ``logger.level``),
  which is what silencing the load report by level did (the quickstart's ``quiet_load_report`` until this module).
- ``transformers.trainer_utils``: "The tokenizer has new PAD/BOS/EOS tokens ..." when the only token aligned is
  ``pad_token_id`` (``align_special_tokens``; a BERT encoder does not generate, the pad id only matters there).

:func:`quiet_console` (around a recipe's run) turns datasets', transformers' and huggingface_hub's progress bars off
when stderr is not a terminal (a log file, a pipe, CI), and ignores peft's use of the deprecated
``is_gradient_checkpointing`` (a ``FutureWarning`` from transformers). Trainer's own bars follow
``--disable_tqdm`` (``cli`` passes ``--disable_tqdm true`` off a terminal unless the flag is given); with it Trainer
prints one line per logging step (``PrinterCallback``).
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import warnings

#: loggers whose records :class:`LibraryNoiseFilter` rewrites or drops
NOISY_LOGGERS = ("transformers.modeling_utils", "transformers.distributed.tensor_parallel",
                 "transformers.trainer_utils")
#: a key under one of these is a real problem, never an expected head swap: MISSING (random encoder weights) or
#: UNEXPECTED (checkpoint weights the model drops); a MISSING pooler is one too, an UNEXPECTED one is not (token heads)
ENCODER_KEY = re.compile(r"(^|\.)(embeddings|encoder)\.")
_MISSING_ENCODER_KEY = re.compile(r"(^|\.)(embeddings|encoder|pooler)\.")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def interactive() -> bool:
    """True when stderr (where tqdm draws) is a terminal."""
    return sys.stderr.isatty()


def head_swap_text(unexpected, missing) -> str:
    """``head swap (expected): 7 checkpoint tensors dropped (cls.predictions.*, cls.seq_relationship.*), 2 new head
    tensors initialised (classifier.*)``: the key names grouped by their first two parts."""

    def heads(keys):
        return ", ".join(sorted({".".join(k.split(".")[:2]) + ".*" if k.count(".") > 1 else k for k in keys}))

    parts = [f"{len(unexpected)} checkpoint tensors dropped ({heads(unexpected)})" if unexpected else "",
             f"{len(missing)} new head tensors initialised ({heads(missing)})" if missing else ""]
    return "head swap (expected): " + ", ".join(p for p in parts if p)


def load_report_keys(message: str) -> dict[str, list[str]] | None:
    """``{status: [key, ...]}`` from the text of a transformers LOAD REPORT (``None`` when ``message`` is not one).
    Rows are ``key | STATUS | details`` (ANSI colours removed)."""
    if "LOAD REPORT" not in message:
        return None
    keys: dict[str, list[str]] = {}
    for line in _ANSI.sub("", message).splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) >= 2 and cells[1].isupper() and cells[1] != "STATUS":
            keys.setdefault(cells[1], []).append(cells[0])
    return keys


class LibraryNoiseFilter(logging.Filter):
    """The ``logging.Filter`` described in the module docstring (a filter may rewrite the record it passes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name.endswith("tensor_parallel"):
            return not message.startswith(("The following layers were not sharded", "The following TP rules"))
        if record.name.endswith("trainer_utils"):
            return not re.search(r"new PAD/BOS/EOS tokens.*Updated tokens: \{'pad_token_id': [^,}]*\}", message)
        keys = load_report_keys(message)
        if keys and set(keys) <= {"UNEXPECTED", "MISSING"} and not any(
                ENCODER_KEY.search(k) for k in keys.get("UNEXPECTED", [])) and not any(
                _MISSING_ENCODER_KEY.search(k) for k in keys.get("MISSING", [])):
            source = _ANSI.sub("", message.splitlines()[0]).replace(" LOAD REPORT from:", " from").strip()
            record.msg, record.args = f"{source}: {head_swap_text(keys.get('UNEXPECTED', []), keys.get('MISSING', []))}", ()
        return True


@contextlib.contextmanager
def log_filters():
    """Attach a :class:`LibraryNoiseFilter` to each of :data:`NOISY_LOGGERS` that has none, for the duration of the
    block (so a test process keeps transformers' own messages outside it). Imports nothing: transformers' loggers
    are ``logging.getLogger`` objects, the same before and after it is imported."""
    added = []
    for name in NOISY_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, LibraryNoiseFilter) for f in logger.filters):
            added.append((logger, LibraryNoiseFilter()))
            logger.addFilter(added[-1][1])
    try:
        yield
    finally:
        for logger, noise_filter in added:
            logger.removeFilter(noise_filter)


@contextlib.contextmanager
def quiet_console(progress_bars: bool | None = None):
    """Run a recipe with the console described in the module docstring; the libraries' progress-bar settings are
    restored afterwards. ``progress_bars``: keep the bars (default: :func:`interactive`). Imports datasets and
    transformers (call it where the recipe is about to import them anyway)."""
    import datasets
    import huggingface_hub.utils as hub
    import transformers

    bars = interactive() if progress_bars is None else progress_bars
    states = (not datasets.utils.are_progress_bars_disabled(), transformers.utils.logging.is_progress_bar_enabled(),
              hub.are_progress_bars_disabled())
    with log_filters(), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        if not bars:
            datasets.disable_progress_bars()
            transformers.utils.logging.disable_progress_bar()
            hub.disable_progress_bars()
        try:
            yield
        finally:
            if not bars:
                (datasets.enable_progress_bars if states[0] else datasets.disable_progress_bars)()
                (transformers.utils.logging.enable_progress_bar if states[1] else
                 transformers.utils.logging.disable_progress_bar)()
                if not states[2]:
                    hub.enable_progress_bars()
