"""Model cards shared by both recipes: the run record's file (:data:`RUN_INFO_FILE`) and provenance
(:func:`framework_versions`, :func:`model_origin`), rendering ``templates/<kind>.md`` (:func:`render_card`), tables and
cells, the card's SHA-256 line (:func:`card_text`, :func:`readme_edited`) and writing ``README.md`` beside the model
(:func:`write_card`). The fine-tune card is built by :mod:`hf_bert_tasks.finetune.card`, the pretraining card by
:mod:`hf_bert_tasks.pretraining.card`; merging with the Hub's card and pushing: :mod:`hf_bert_tasks.hub.push`. No
network call here."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import re
from contextlib import suppress
from fnmatch import fnmatch
from typing import Any

from transformers.modelcard import make_markdown_table

logger = logging.getLogger(__name__)


#: The run record (written by :class:`hf_bert_tasks.finetune.record.RunRecordCallback`), next to the run's outputs.
RUN_INFO_FILE = "run_info.json"


def framework_versions() -> dict[str, str]:
    """Versions of the libraries a checkpoint depends on (those installed; read from package metadata, no import)."""
    from importlib import metadata

    from .. import __version__

    versions = {"hf_bert_tasks": __version__, "python": platform.python_version()}
    for name in ("transformers", "torch", "datasets", "tokenizers", "accelerate", "peft", "huggingface_hub"):
        with suppress(metadata.PackageNotFoundError):
            versions[name] = metadata.version(name)
    return versions


def model_origin(model_name_or_path: str | None, base_model: str | None = None) -> dict[str, Any]:
    """Where the checkpoint a run starts from came from; call it when the model is loaded (same current directory).
    An existing folder is ``"local"`` (as ``from_pretrained`` reads it), else a valid Hub repo id is ``"hub"``
    (``huggingface_hub.utils.validate_repo_id``); a local folder has no Hub id unless ``base_model`` gives it.
    Returns ``{"model_name_or_path", "model_origin" ("hub"/"local"/"random"), "base_model", "base_model_source"}``
    (a local folder's last two path parts only: no home directories in a pushed file)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    name = model_name_or_path
    origin = "random" if not name else "local" if os.path.isdir(name) else "hub"
    if origin == "hub":
        try:
            validate_repo_id(name)
        except HFValidationError:
            origin = "local"  # not a Hub id, so not loaded from the Hub
    if origin == "local":
        name = "/".join(os.path.normpath(os.path.abspath(name)).split(os.sep)[-2:])
    source = {
        "hub": "the Hub id the run started from",
        "random": "random initialisation",
        "local": f"a local folder (`{name}`) with no Hub id recorded",
    }[origin]
    return {
        "model_name_or_path": name,
        "model_origin": origin,
        "base_model": base_model or (name if origin == "hub" else None),
        "base_model_source": "given with --base_model" if base_model else source,
    }


#: Written by the pretraining recipe (:mod:`hf_bert_tasks.pretraining.recipe`).
PRETRAINING_SUMMARY_FILE = "pretraining_summary.json"


#: The card, written into a run's output dir with its model (:func:`write_card`) and pushed with it.
README_FILE = "README.md"


#: Files pushed with a card, described in its file list (shell patterns; the first that matches wins).
FILE_DESCRIPTIONS = {
    "model.safetensors": "weights (safetensors)",
    "adapter_model.safetensors": "LoRA adapter weights (safetensors)",
    "config.json": "model configuration (label names in `id2label`)",
    "vocab.txt": "WordPiece vocabulary",
    **dict.fromkeys(
        ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json"), "tokenizer"
    ),
    "all_results.json": "all train / eval metrics",
    "eval_results.json": "eval metrics",
    "train_results.json": "train metrics",
    RUN_INFO_FILE: "the run record (task, data, arguments, training log)",
    "comparison.md": "fine-tuning vs frozen-feature comparison report",
    "comparison.json": "comparison numbers",
    "lr_grid_results.json": "every (learning rate, seed) run of the §4.1 selection, mean ± std per learning rate",
    PRETRAINING_SUMMARY_FILE: "pretraining summary (corpus, masking, steps, accuracies)",
    "trainer_state.json": "training log history",
    "training_curves.png": "loss and eval metric against step",
    "*.png": "comparison chart",
    "*.tsv": "predictions",
    "*predictions*": "predictions",
    **dict.fromkeys(("modeling.py", "heads.py", "strategies.py"), "frozen-feature model code (`trust_remote_code`)"),
}


def format_cell(value: Any, digits: int = 4) -> str:
    """A table cell: floats with ``digits`` decimals (significant digits below 1e-3), anything else as ``str``."""
    if not isinstance(value, float) or math.isnan(value):
        return "nan" if isinstance(value, float) else str(value)
    return f"{value:.{digits}g}" if value and abs(value) < 1e-3 else f"{value:.{digits}f}"


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """``make_markdown_table`` of ``rows`` under ``header`` (floats shown with :func:`format_cell`)."""
    return make_markdown_table([dict(zip(header, (format_cell(v) for v in row))) for row in rows]).rstrip("\n")


def read_record(output_dir: str, name: str = RUN_INFO_FILE, missing: str | None = None) -> Any:
    """The JSON file ``output_dir/name`` (the run record by default); ``None`` when there is none, or with ``missing``
    ``FileNotFoundError`` (``<path>: not found; <missing>``); ``ValueError`` (naming the file and line) when it is not
    valid JSON."""
    path = os.path.join(output_dir, name)
    if not os.path.isfile(path):
        if missing:
            raise FileNotFoundError(f"{path}: not found; {missing}")
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: line {err.lineno}: not valid JSON ({err.msg})") from None


#: the last line of every card this package writes: the SHA-256 of the text above it (an edit changes the text)
CARD_HASH = re.compile(r"<!-- hf_bert_tasks card sha256:([0-9a-f]{64}) -->\n?\Z")


def card_text(card) -> str:
    """``card`` as the ``README.md`` this package writes: its text (less an earlier hash line), then a line with the
    text's SHA-256."""
    text = CARD_HASH.sub("", str(card)).rstrip("\n") + "\n"
    return f"{text}<!-- hf_bert_tasks card sha256:{hashlib.sha256(text.encode('utf-8')).hexdigest()} -->\n"


def readme_edited(text: str) -> bool:
    """True when a ``README.md`` was not written by :func:`card_text` or was edited since (its hash line missing or
    no longer the hash of the text above it)."""
    found = CARD_HASH.search(text)
    return not found or hashlib.sha256(text[: found.start()].encode("utf-8")).hexdigest() != found.group(1)


def render_card(
    kind: str,
    output_dir: str,
    repo_id: str | None,
    tags: list[str],
    files: list[str] | None,
    versions: dict[str, str],
    recorded: bool,
    data: dict,
    **fields,
):
    """``templates/<kind>.md`` filled with ``ModelCardData(**data)`` and ``fields``, plus what both cards share:
    the name (``repo_id``'s or the folder's), the usage target, tags, the described ``files`` (default: the folder's
    listing) and versions. ``FileNotFoundError`` for a ``kind`` with no template."""
    from huggingface_hub import ModelCard, ModelCardData

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "templates", f"{kind}.md")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"model card template {kind!r}: {path} not found (expected finetuned or pretrained)")

    name = (repo_id or os.path.basename(os.path.normpath(output_dir))).split("/")[-1]
    tags = list(dict.fromkeys(["bert", "hf_bert_tasks", *tags]))
    listed = files if files is not None else sorted(os.listdir(output_dir))
    described = [(n, next((d for p, d in FILE_DESCRIPTIONS.items() if fnmatch(n, p)), None)) for n in listed]
    return ModelCard.from_template(
        ModelCardData(model_name=name, language="en", tags=tags, **data),
        template_path=path,
        name=name,
        target=repo_id or output_dir,
        fmt=format_cell,
        files=[(n, d) for n, d in described if d],
        versions=versions,
        recorded=recorded,
        **fields,
    )


def write_card(output_dir: str, builder, **kwargs) -> str | None:
    """Write the card of a finished run (``builder(output_dir, **kwargs)``: the fine-tune recipe's
    :func:`hf_bert_tasks.finetune.card.build_finetune_card`, e.g. with ``task``; the pretraining recipe passes :func:`hf_bert_tasks.pretraining.card.build_pretraining_card`;
    its file list: the folder's listing) to ``output_dir/README.md`` with :func:`card_text` (last line: the text's SHA-256); returns the
    path, or ``None`` when a ``README.md`` there was edited or not written by this package (:func:`readme_edited`):
    it is kept and a warning says so. Errors: the builder's. Call it on the main process only.

    The recipes call it right after their final metrics are saved: ``all_results.json`` complete
    (:func:`hf_bert_tasks.finetune.recipe.train_evaluate_predict`), the grid's table and top-level results
    (:func:`hf_bert_tasks.finetune.grid.run_grid`), ``pretraining_summary.json``
    (:func:`hf_bert_tasks.pretraining.recipe.run_pretrain`). As in sentence-transformers, the card data is recorded while
    training (:class:`~hf_bert_tasks.finetune.record.RunRecordCallback`) and the card written with the model; not by the
    callback itself: ``Trainer`` has no event after the recipe's final evaluation (it runs after ``save_model``),
    and ``model-index`` must hold exactly those final numbers.
    """
    path = os.path.join(output_dir, README_FILE)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            if readme_edited(f.read()):
                logger.warning(
                    "%s was edited or not written by hf_bert_tasks: kept, this run's card not written", path
                )
                return None
    card = builder(output_dir, **kwargs)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        f.write(card_text(card))
    os.replace(path + ".tmp", path)
    return path
