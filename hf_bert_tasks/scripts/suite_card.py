"""The suite's model card (``README.md`` in the suite's folder, :func:`build_suite_card`), rendered from
``templates/suite.md`` with what the suite recorded: ``suite.json`` (the encoder, the flags, every run and its status,
the rows of ``suite.md``, the GLUE zip) and each finished run's own files. Its ``model-index`` holds every finished
run's results, built as the run's own card builds them (:func:`hf_bert_tasks.finetune.card.card_inputs`: the dataset
the run recorded in ``run_info.json``); a feature-based run's results are told apart from the fine-tuning run's on
the same split (:func:`approach_results`). No network call here; pushing: :func:`hf_bert_tasks.hub.push.push_output_dir`.
"""

from __future__ import annotations

import dataclasses
import os

from ..hub.cards import (
    RUN_INFO_FILE,
    SUITE_SUMMARY_FILE,
    framework_versions,
    markdown_table,
    read_record,
    render_card,
)

#: ``suite.json``'s fields the card reads, with their types
SUMMARY_FIELDS = {
    "model": str,
    "model_origin": str,
    "flags": dict,
    "run_specs": list,
    "status": dict,
    "rows": list,
}
#: the flags that cut a run's budget below the paper's protocol (the card says so when any was given)
BUDGET_FLAGS = ("samples", "max_train_samples", "max_eval_samples", "max_steps", "num_train_epochs")


def read_summary(output_dir: str) -> dict:
    """``output_dir``'s ``suite.json``, its fields checked (:data:`SUMMARY_FIELDS`; each run spec a ``{"run",
    "task", "strategy"}``).

    Raises:
        FileNotFoundError: no ``suite.json`` in ``output_dir``.
        ValueError: not valid JSON (names the file and line), or a field missing or of another type (names the file
            and the field; a ``suite.json`` of an older version: run the suite again on the folder to rewrite it, its
            finished runs are read back, not run again).
    """
    path = os.path.join(output_dir, SUITE_SUMMARY_FILE)
    summary = read_record(output_dir, SUITE_SUMMARY_FILE, "expected the --output_dir of hf-bert-tasks suite")
    rerun = "run hf-bert-tasks suite on the folder again to rewrite it (finished runs are read back, not rerun)"
    if not isinstance(summary, dict):
        raise ValueError(f"{path}: expected a JSON object; {rerun}")
    for name, kind in SUMMARY_FIELDS.items():
        if not isinstance(summary.get(name), kind):
            raise ValueError(f"{path}: field {name!r} missing or not a {kind.__name__}; {rerun}")
    for i, spec in enumerate(summary["run_specs"]):
        if not isinstance(spec, dict) or not {"run", "task", "strategy"} <= set(spec):
            raise ValueError(f"{path}: field 'run_specs'[{i}]: expected {{'run', 'task', 'strategy'}}, got {spec!r}")
    return summary


def approach_results(results: list, strategy: str | None) -> list:
    """``results`` (``huggingface_hub.EvalResult``) of a run, told apart by approach: unchanged for fine-tuning
    (``strategy`` ``None``); for a feature-based run, ``metric_config`` ``feature-based: <strategy>`` (after the
    metric's own config, e.g. ``conlleval; feature-based: last``) and the strategy in ``metric_name``. The config is
    part of the key a push merges results by (:func:`hf_bert_tasks.hub.push.eval_result_key`), so a feature-based F1
    never replaces the fine-tuning F1 on the same split."""
    if strategy is None:
        return list(results)
    approach = f"feature-based: {strategy}"
    return [
        dataclasses.replace(
            r,
            metric_config=approach if r.metric_config is None else f"{r.metric_config}; {approach}",
            metric_name=f"{r.metric_name or r.metric_type} ({approach})",
        )
        for r in results
    ]


def finished_runs(output_dir: str, summary: dict) -> list[dict]:
    """Every finished run of ``summary`` (``suite.json``'s; a run whose folder holds ``all_results.json``, as the
    rows of ``suite.md`` are read), in table order: its spec plus ``info`` (its ``run_info.json``, ``{}`` without
    one) and ``eval_results`` (:func:`hf_bert_tasks.finetune.card.card_inputs`' ``eval_results`` through
    :func:`approach_results`). Errors: ``card_inputs``' (a malformed JSON file, named with its line)."""
    from ..finetune.card import card_inputs

    runs = []
    for spec in summary["run_specs"]:
        folder = os.path.join(output_dir, spec["run"])
        if not os.path.isfile(os.path.join(folder, "all_results.json")):
            continue
        inputs = card_inputs(folder, spec["task"], grid=False)
        results = approach_results(inputs["eval_results"], spec["strategy"])
        runs.append({**spec, "info": inputs["info"], "dataset": inputs["dataset"], "eval_results": results})
    return runs


def _flag_text(flags: dict) -> list[str]:
    """``["--max_steps 2", "--samples", "--data_dir mrpc=glue_data/MRPC"]`` from ``suite.json``'s ``flags``."""
    out = []
    for name, value in flags.items():
        values = value if isinstance(value, list) else [value]
        out += [f"--{name}" if v is True else f"--{name} {v}" for v in values]
    return out


def _versions(runs: list[dict]) -> tuple[dict, bool]:
    """The framework versions every finished run recorded while training, and ``True``; the installed ones and
    ``False`` when a run recorded none or two runs differ."""
    recorded = [r["info"].get("framework_versions") for r in runs]
    if recorded and all(recorded) and all(v == recorded[0] for v in recorded):
        return recorded[0], True
    return framework_versions(), False


def build_suite_card(
    output_dir: str,
    *,
    repo_id: str | None = None,
    base_model: str | None = None,
    license: str = "apache-2.0",
    tags: list[str] | None = None,
    files: list[str] | None = None,
):
    """The model card of a suite's folder (``hf-bert-tasks suite --output_dir``), from its ``suite.json``
    (:func:`read_summary`) and its finished runs' files (:func:`finished_runs`); no network call.

    Args:
        output_dir: the suite's folder: ``suite.json``; each finished run's folder with its ``all_results.json``
            (and ``run_info.json``, the dataset its results name).
        repo_id: the Hub repo the card is for (its name); default: the folder name.
        base_model: Hub id of the encoder, overriding ``suite.json``'s (none for a local folder:
            :func:`hf_bert_tasks.hub.cards.model_origin`).
        license, tags: the card's license and extra tags.
        files: the files being pushed (for the file list); default: the folder's listing.

    Returns:
        ``huggingface_hub.ModelCard`` whose ``data`` holds ``model-index`` with every finished run's results.

    Raises:
        FileNotFoundError: no ``suite.json`` in ``output_dir``.
        ValueError: a malformed ``suite.json`` (names the field) or run file (names it and the line).
    """
    from .suite_report import NOTE, SUITE_CHART, _glue_zip_line, glue_average_line, suite_table

    summary = read_summary(output_dir)
    runs = finished_runs(output_dir, summary)
    results = [r for run in runs for r in run["eval_results"]]
    versions, recorded = _versions(runs)
    flags = summary["flags"]
    status = summary["status"]
    runs_table = markdown_table(
        ["run", "task", "approach", "status", "model-index results"],
        [
            [
                spec["run"],
                spec["task"],
                "fine-tuning" if spec["strategy"] is None else f"feature-based: {spec['strategy']}",
                status.get(spec["run"], "not run"),
                next((len(r["eval_results"]) for r in runs if r["run"] == spec["run"]), 0),
            ]
            for spec in summary["run_specs"]
        ],
    )
    tasks = list(dict.fromkeys(spec["task"] for spec in summary["run_specs"]))
    return render_card(
        "suite",
        output_dir,
        repo_id,
        ["bert-paper-suite", *tasks, *(tags or [])],
        files,
        versions,
        recorded,
        {
            "base_model": base_model or summary.get("base_model"),
            "datasets": list(dict.fromkeys(r["dataset"]["id"] for r in runs if r["dataset"].get("id"))) or None,
            "license": license,
            "metrics": list(dict.fromkeys(r.metric_type for r in results)) or None,
            "eval_results": results or None,
        },
        encoder=summary["model"],
        base=base_model or summary.get("base_model"),
        origin=summary["model_origin"],
        note=NOTE,
        suite_table=suite_table(summary["rows"]) if summary["rows"] else "",
        chart=SUITE_CHART if os.path.isfile(os.path.join(output_dir, SUITE_CHART)) else None,
        glue_line=" ".join(_glue_zip_line(summary.get("glue_submission"))).strip(),
        average_line=" ".join(glue_average_line(summary.get("glue_average"))).strip(),
        runs_table=runs_table,
        finished=len(runs),
        total=len(summary["run_specs"]),
        feature_based=any(spec["strategy"] for spec in summary["run_specs"]),
        flags=_flag_text(flags),
        budget=_flag_text({k: v for k, v in flags.items() if k in BUDGET_FLAGS}),
        num_results=len(results),
        run_info=RUN_INFO_FILE,
    )
