"""Every GLUE ``eval_*`` metric in ``all_results.json`` recomputes from the ``<split>_predictions.tsv`` the recipe writes.

The recomputation is independent of the package's metric code: scikit-learn (accuracy, F1, Matthews correlation),
scipy (Pearson, Spearman) and numpy (the loss: mean cross-entropy of the written logits, or mean squared error).
"""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest
from scipy.stats import pearsonr, spearmanr
from sklearn.metrics import accuracy_score, f1_score, matthews_corrcoef

from hf_bert_tasks.finetune import recipe as finetune
from tests.conftest import SAMPLES

#: Trainer-reported measurements that are not functions of the predictions.
NOT_METRICS = {"runtime", "samples_per_second", "steps_per_second", "samples", "model_preparation_time"}


def read_predictions(path) -> dict[str, np.ndarray]:
    """Columns of a ``<split>_predictions.tsv`` file as float arrays (``index`` too)."""
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    header, body = rows[0], rows[1:]
    return {name: np.array([float(r[i]) for r in body]) for i, name in enumerate(header)}


def recompute(cols: dict[str, np.ndarray], regression: bool) -> dict[str, float]:
    """Every GLUE metric and the loss, from the file's columns alone."""
    pred, label = cols["prediction"], cols["label"]
    if regression:
        return {
            "pearson": pearsonr(pred, label)[0],
            "spearmanr": spearmanr(pred, label)[0],
            "loss": float(np.mean((pred - label) ** 2)),
        }
    logits = np.stack([cols[k] for k in cols if k.startswith("logit_")], axis=1)
    assert np.array_equal(pred, logits.argmax(1))  # the prediction is the arg-max of the written logits
    log_z = np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1)) + logits.max(1)
    y = label.astype(int)
    out = {
        "accuracy": accuracy_score(y, pred),
        "matthews_correlation": matthews_corrcoef(y, pred),
        "loss": float(np.mean(log_z - logits[np.arange(len(y)), y])),
    }
    if logits.shape[1] == 2:  # GLUE's F1 is of the positive class (id 1) of binary tasks
        out["f1"] = f1_score(y, pred, zero_division=0)
    return out


def _cola_dir(tmp_path):
    folder = tmp_path / "cola"
    folder.mkdir()
    with open(os.path.join(SAMPLES, "SST-2", "dev.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()[1:49]
    rows = [f"src\t{label}\t\t{sentence}" for sentence, label in (line.split("\t") for line in lines)]
    (folder / "dev.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")  # CoLA files have no header
    return str(folder)


def _mnli_dir(tmp_path):
    folder = tmp_path / "mnli"
    folder.mkdir()
    with open(os.path.join(SAMPLES, "MNLI", "dev_matched.jsonl"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    (folder / "dev_matched.jsonl").write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    (folder / "dev_mismatched.jsonl").write_text("\n".join(lines[40:70]) + "\n", encoding="utf-8")
    return str(folder)


@pytest.mark.parametrize("task", ["mrpc", "stsb", "cola", "mnli"])
def test_every_reported_glue_metric_recomputes_from_the_written_predictions(tiny_bert_dir, tmp_path, task):
    data = {
        "mrpc": os.path.join(SAMPLES, "MRPC"),
        "stsb": os.path.join(SAMPLES, "STS-B"),
        "cola": _cola_dir(tmp_path),
        "mnli": _mnli_dir(tmp_path),
    }[task]
    out = tmp_path / "out"
    finetune.main(
        [
            "--task",
            task,
            "--data_dir",
            data,
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--do_eval",
            "--max_eval_samples",
            "48",
            "--disable_tqdm",
            "true",
            "--report_to",
            "none",
        ]
    )
    results = json.loads((out / "all_results.json").read_text())
    splits = {"": "validation"} if task != "mnli" else {"": "validation_matched", "_mm": "validation_mismatched"}
    checked = set()
    for suffix, split in splits.items():
        cols = read_predictions(out / f"{split}_predictions.tsv")
        assert results[f"eval_samples{suffix}"] == len(cols["prediction"])
        for name, value in recompute(cols, regression=task == "stsb").items():
            key = f"eval_{name}{suffix}"
            if key in results:
                # loss: Trainer averages float32 per-batch losses, we recompute in float64 -> rtol 1e-5;
                # the other metrics read back the same predictions and labels -> 1e-12
                tol = {"rtol": 1e-5} if name == "loss" else {"rtol": 0, "atol": 1e-12}
                np.testing.assert_allclose(results[key], value, err_msg=key, **tol)
                checked.add(key)
    reported = {
        k for k in results if k.startswith("eval_") and k.removeprefix("eval_").removesuffix("_mm") not in NOT_METRICS
    }
    assert reported == checked  # every reported metric was recomputed
