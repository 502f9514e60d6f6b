"""A quiet console for every recipe: progress bars only on a terminal (:func:`quiet_console`, which also ignores
peft's use of the deprecated ``is_gradient_checkpointing`` and shows a repeated warning once: :class:`RepeatFilter`) and, through :func:`log_filters`'
:class:`LibraryNoiseFilter`, none of the library messages our own load paths trigger but the user cannot act on:

- ``transformers.modeling_utils``: a LOAD REPORT that is an expected head swap (UNEXPECTED checkpoint heads, MISSING
  task-head weights) becomes one line (:func:`head_swap_text`); other statuses, a MISSING ``embeddings``/``encoder``/
  ``pooler`` or an UNEXPECTED ``embeddings``/``encoder`` weight stay as transformers prints them.
- ``transformers.distributed.tensor_parallel``: ``verify_tp_plan``'s "not sharded" / "TP rules" lines (the package
  passes no tensor-parallel plan).
- ``transformers.trainer_utils``: "The tokenizer has new PAD/BOS/EOS tokens ..." when only ``pad_token_id`` changed.
"""

from __future__ import annotations

import contextlib
import logging
import re
import sys
import warnings

#: loggers whose records :class:`LibraryNoiseFilter` rewrites or drops
NOISY_LOGGERS = (
    "transformers.modeling_utils",
    "transformers.distributed.tensor_parallel",
    "transformers.trainer_utils",
)
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

    parts = [
        f"{len(unexpected)} checkpoint tensors dropped ({heads(unexpected)})" if unexpected else "",
        f"{len(missing)} new head tensors initialised ({heads(missing)})" if missing else "",
    ]
    return "head swap (expected): " + ", ".join(p for p in parts if p)


class RepeatFilter(logging.Filter):
    """Drops a WARNING (or worse) record whose logger and text were already shown (a warning raised once per batch,
    per worker or per phase is shown once)."""

    def __init__(self):
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


class LibraryNoiseFilter(logging.Filter):
    """The ``logging.Filter`` described in the module docstring (a filter may rewrite the record it passes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.name.endswith("tensor_parallel"):
            return not message.startswith(("The following layers were not sharded", "The following TP rules"))
        if record.name.endswith("trainer_utils"):
            return not re.search(r"new PAD/BOS/EOS tokens.*Updated tokens: \{'pad_token_id': [^,}]*\}", message)
        if "LOAD REPORT" not in message:
            return True
        keys: dict[str, list[str]] = {}  # {status: [key, ...]} from the report's ``key | STATUS | details`` rows
        for line in _ANSI.sub("", message).splitlines():
            cells = [c.strip() for c in line.split("|")]
            if len(cells) >= 2 and cells[1].isupper() and cells[1] != "STATUS":
                keys.setdefault(cells[1], []).append(cells[0])
        unexpected, missing = keys.get("UNEXPECTED", []), keys.get("MISSING", [])
        if (
            keys
            and set(keys) <= {"UNEXPECTED", "MISSING"}
            and not any(ENCODER_KEY.search(k) for k in unexpected)
            and not any(_MISSING_ENCODER_KEY.search(k) for k in missing)
        ):
            source = _ANSI.sub("", message.splitlines()[0]).replace(" LOAD REPORT from:", " from").strip()
            record.msg = f"{source}: {head_swap_text(unexpected, missing)}"
            record.args = ()
        return True


@contextlib.contextmanager
def log_filters():
    """Attach a :class:`LibraryNoiseFilter` to each of :data:`NOISY_LOGGERS` that has none, for the duration of the
    block. Imports nothing (transformers' loggers are plain ``logging.getLogger`` objects)."""
    with contextlib.ExitStack() as added:
        for logger in map(logging.getLogger, NOISY_LOGGERS):
            if not any(isinstance(f, LibraryNoiseFilter) for f in logger.filters):
                logger.addFilter(noise_filter := LibraryNoiseFilter())
                added.callback(logger.removeFilter, noise_filter)
        yield


@contextlib.contextmanager
def quiet_console(progress_bars: bool | None = None):
    """Run a recipe with the console described in the module docstring, restoring the progress-bar settings after.
    ``progress_bars``: keep the bars (default: :func:`interactive`). Imports datasets and transformers."""
    import datasets
    import huggingface_hub.utils as hub
    import transformers

    bars = interactive() if progress_bars is None else progress_bars
    tf = transformers.utils.logging
    switches = [
        (
            datasets.enable_progress_bars,
            datasets.disable_progress_bars,
            not datasets.utils.are_progress_bars_disabled(),
        ),
        (tf.enable_progress_bar, tf.disable_progress_bar, tf.is_progress_bar_enabled()),
        (hub.enable_progress_bars, hub.disable_progress_bars, not hub.are_progress_bars_disabled()),
    ]
    with log_filters(), warnings.catch_warnings(), contextlib.ExitStack() as restore:
        warnings.simplefilter("once")  # a repeated warning (same text and category) is shown once
        warnings.filterwarnings("ignore", message="`is_gradient_checkpointing` is deprecated", category=FutureWarning)
        tf.get_verbosity()  # sets up transformers' handler now, if it has none yet
        # the same for logged warnings, on the handlers there are (transformers' own included): one filter per
        # handler, since a record passes every handler's filters in turn (a shared one would let only the first show it)
        for handler in {h for name in ("", "transformers", "datasets") for h in logging.getLogger(name).handlers}:
            handler.addFilter(once := RepeatFilter())
            restore.callback(handler.removeFilter, once)
        for enable, disable, was_on in [] if bars else switches:
            disable()
            restore.callback(enable if was_on else disable)  # each back as it was
        yield
