"""What a pretraining run reports beside its model: the card (``pretraining_summary.json`` -> ``fill-mask``
results in ``model-index``; rendered with the fine-tune card's template machinery,
:func:`hf_bert_tasks.hub.cards.render_card`; written by :func:`hf_bert_tasks.hub.cards.write_card` with
:func:`build_pretraining_card`) and ``pretraining_curves.png`` (:func:`pretraining_curves`,
:func:`plot_pretraining_curves`)."""

from __future__ import annotations

import json
import logging
import math
import os

from ..hub.cards import PRETRAINING_SUMMARY_FILE, framework_versions, markdown_table, read_record, render_card
from ..utils.modeling import suggested_learning_rate
from ..utils.plots import plot_panels

logger = logging.getLogger(__name__)

PRETRAINING_CURVES_FILE = "pretraining_curves.png"
#: the four panels of ``pretraining_curves.png``; each is logged as ``<metric>`` (train) and ``eval_<metric>``.
CURVE_METRICS = ("mlm_loss", "mlm_accuracy", "nsp_loss", "nsp_accuracy")


def pretraining_eval_results(summary: dict, corpus_files: list[str]) -> list:
    """The final MLM and NSP accuracies of ``pretraining_summary.json`` (``final_mlm_accuracy``,
    ``final_nsp_accuracy``; 0-1) as ``fill-mask`` results on the held-out documents; a missing or NaN one is left
    out."""
    from huggingface_hub import EvalResult

    return [
        EvalResult(
            task_type="fill-mask",
            task_name="Masked language modelling + next sentence prediction",
            dataset_type="text",
            dataset_name=", ".join(corpus_files) or "pretraining corpus",
            dataset_split="held-out documents",
            metric_type="accuracy",
            metric_name=f"{config.upper()} accuracy",
            metric_config=config,
            metric_value=round(float(summary[f"final_{config}_accuracy"]), 6),
        )
        for config in ("mlm", "nsp")
        if isinstance(value := summary.get(f"final_{config}_accuracy"), (int, float)) and not math.isnan(value)
    ]


def build_pretraining_card(
    output_dir: str,
    *,
    repo_id: str | None = None,
    license: str = "apache-2.0",
    tags: list[str] | None = None,
    files: list[str] | None = None,
    base_model: str | None = None,
):
    """The card of a pretraining output dir from its ``pretraining_summary.json`` (no network call).

    Shows the corpus (file names only, no local paths), the masking recipe, the steps per phase and the final MLM /
    NSP accuracy, which ``model-index`` holds (``fill-mask``, dataset ``text``, held-out documents); its "fine-tune
    it" command carries the learning rate a model of its size learns with (``utils.modeling.suggested_learning_rate``,
    from ``config.json``'s ``hidden_size``: 1e-3 for the ``tiny`` preset; none for larger ones). ``base_model``:
    ``--base_model``, else the summary's ``model.base_model`` (:func:`hf_bert_tasks.hub.cards.model_origin`).
    ``FileNotFoundError`` without ``pretraining_summary.json`` in ``output_dir``.
    """
    summary = read_record(output_dir, PRETRAINING_SUMMARY_FILE, "expected a finished pretraining run")
    recorded = bool(summary.get("framework_versions"))  # written by the recipe while training
    versions = summary.get("framework_versions") or framework_versions()
    corpus, model, recipe = summary.get("corpus", {}), summary.get("model", {}), summary.get("masking_recipe") or {}
    corpus_files = [os.path.basename(p) for p in corpus.get("files", [])]
    init, base = model.get("init"), base_model or model.get("base_model")
    if not base and init not in (None, "random") and "base_model" not in model:
        logger.warning(
            "%s does not record whether %r was a Hub id; the card names no base model (pass --base_model)",
            PRETRAINING_SUMMARY_FILE,
            init,
        )
    columns = ("phase", "max_seq_length", "steps", "batch_size", "learning_rate", "train_instances")
    phase_rows = [
        [p.get(c) for c in columns] + [p.get("final_eval", {}).get(f"eval_{k}_accuracy", "") for k in ("mlm", "nsp")]
        for p in summary.get("phases", [])
    ]
    model_rows = [
        ["preset", model.get("preset", "?")],
        ["vocab_size", model.get("vocab_size", "?")],
        ["initialisation", init or "?"],
    ] + [[k, v] for k, v in (model.get("overrides") or {}).items()]
    recipe_rows = [[k, json.dumps(v) if isinstance(v, (list, dict)) else v] for k, v in recipe.items()]
    header = ["phase", "max_seq_length", "steps", "batch", "learning rate", "train instances", "MLM acc.", "NSP acc."]
    results = pretraining_eval_results(summary, corpus_files)
    hidden_size = _config(output_dir).get("hidden_size")
    finetune_lr = suggested_learning_rate(hidden_size) if hidden_size else None
    return render_card(
        "pretrained",
        output_dir,
        repo_id,
        ["pretraining", "fill-mask", *(tags or [])],
        files,
        versions,
        recorded,
        {
            "base_model": base,
            "license": license,
            "library_name": "transformers",
            "pipeline_tag": "fill-mask",
            "eval_results": results or None,
        },
        summary=summary,
        corpus=corpus,
        corpus_files=corpus_files,
        init=init,
        base=base,
        pretraining_table=markdown_table(header, phase_rows) if phase_rows else "",
        masking_table=markdown_table(["setting", "value"], recipe_rows) if recipe_rows else "",
        model_table=markdown_table(["setting", "value"], model_rows),
        hidden_size=hidden_size,
        finetune_lr=f"{finetune_lr:g}" if finetune_lr else None,
    )


def _config(output_dir: str) -> dict:
    path = os.path.join(output_dir, "config.json")
    if not os.path.isfile(path):
        return {}
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def pretraining_curves(summary: dict) -> dict:
    """The series of ``pretraining_curves.png`` from a summary's phase histories (steps continue across phases):
    ``{metric: {"train": (steps, values), "eval": (steps, values)}}`` per :data:`CURVE_METRICS` entry, from the
    logged ``metric`` and ``eval_<metric>`` (lists in log order; empty for NSP in an MLM-only run), and ``"phases"``:
    ``{"start", "end", "max_seq_length", "mlm_most_frequent_token_accuracy"}`` per phase (steps; the baseline
    ``None`` where the phase did not record it)."""
    data: dict = {m: {"train": ([], []), "eval": ([], [])} for m in CURVE_METRICS}
    data["phases"] = []
    offset = 0
    for phase in summary.get("phases", []):
        for entry in phase.get("history", []):
            for metric in CURVE_METRICS:
                for split, key in (("train", metric), ("eval", f"eval_{metric}")):
                    if key in entry:
                        data[metric][split][0].append(offset + entry["step"])
                        data[metric][split][1].append(entry[key])
        data["phases"].append(
            {
                "start": offset,
                "end": offset + phase.get("steps", 0),
                "max_seq_length": phase.get("max_seq_length"),
                "mlm_most_frequent_token_accuracy": phase.get("mlm_most_frequent_token_accuracy"),
            }
        )
        offset += phase.get("steps", 0)
    return data


#: NSP's chance level: half the pairs are random next sentences (``nsp_probability`` 0.5, BERT §3.1)
NSP_CHANCE = 0.5


def plot_pretraining_curves(curves: dict, path: str):
    """Write :func:`pretraining_curves` data as a 2 x 2 PNG (MLM loss, MLM accuracy, NSP loss, NSP accuracy against
    the optimizer step; train and eval lines, each phase drawn apart with markers so a phase's single point shows).
    Each panel with data marks where a later phase starts (dotted, "phase 2: seq 512"); NSP accuracy has its chance
    line (:data:`NSP_CHANCE`), MLM accuracy each phase's most-frequent-token line (dashed). Returns the ``Figure``."""
    phases = curves.get("phases") or [{"start": 0, "end": math.inf}]
    panels = []
    for metric in CURVE_METRICS:
        drawn = any(curves[metric][split][0] for split in ("train", "eval"))
        references = [
            (
                "axvline",
                (p["start"],),
                {"color": "black", "linestyle": ":", "label": f"phase {n}: seq {p['max_seq_length']}"},
            )
            for n, p in enumerate(phases[1:] if drawn else [], 2)
        ]
        if drawn and metric == "nsp_accuracy":
            dashed = {"color": "grey", "linestyle": "--", "linewidth": 1, "label": f"chance {NSP_CHANCE:g}"}
            references.append(("axhline", (NSP_CHANCE,), dashed))
        mft = [p for p in phases if p.get("mlm_most_frequent_token_accuracy") is not None]
        for k, p in enumerate(mft if drawn and metric == "mlm_accuracy" else []):
            dashed = {"colors": "grey", "linestyles": "--", "linewidth": 1}
            label = "most frequent token" if k == 0 else "_nolegend_"
            references.append(
                ("hlines", (p["mlm_most_frequent_token_accuracy"], p["start"], p["end"]), {**dashed, "label": label})
            )
        lines = [
            (label if n == 0 else "_nolegend_", _within(curves[metric][split], phase, first=n == 0), style)
            for split, label, style in (("train", "train", "C0.-"), ("eval", "eval", "C1o-"))
            for n, phase in enumerate(phases)
        ]
        title = metric.replace("_", " ").replace("mlm", "MLM").replace("nsp", "NSP")
        panels.append(
            (title, lines, "not logged (MLM only)" if metric.startswith("nsp") else "not logged", references)
        )
    return plot_panels(path, panels, 2, 2, figsize=(10, 7))


def _within(series: tuple[list, list], phase: dict, first: bool) -> tuple[list, list]:
    """The points of ``series`` (steps, values) with ``phase["start"] < step <= phase["end"]`` (``first``: from
    step 0 on)."""
    start = -math.inf if first else phase["start"]
    pairs = [(s, v) for s, v in zip(*series) if start < s <= phase["end"]]
    return [s for s, _ in pairs], [v for _, v in pairs]
