"""SWAG's reported ``eval_accuracy`` and ``eval_loss`` recompute from ``validation_predictions.tsv`` (numpy only)."""

from __future__ import annotations

import csv
import io
import json

import numpy as np

from hf_bert_tasks.finetune import recipe as finetune
from tests.test_recompute_glue import NOT_METRICS, read_predictions

HEADER = [
    "",
    "video-id",
    "fold-ind",
    "startphrase",
    "sent1",
    "sent2",
    "gold-source",
    "ending0",
    "ending1",
    "ending2",
    "ending3",
    "label",
]


def _val_csv(folder) -> None:
    people, places = ["nadia", "hiro", "priya", "ines"], ["castle", "village", "orchard", "valley"]
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    for i in range(24):
        p, q = people[i % 4], places[(i * 3) % 4]
        endings = [f"walked back to the {q} .", "was delightful , really .", f"the {q} sold a map .", "coloured it ."]
        writer.writerow(
            [i, f"clip_{i}", i, "", f"{p} lives close to the {q} .", f"later {p}", "gold", *endings, i % 4]
        )
    (folder / "val.csv").write_text(buf.getvalue(), encoding="utf-8")


def test_swag_accuracy_and_loss_recompute_from_the_written_predictions(tiny_bert_dir, tmp_path):
    data = tmp_path / "swag"
    data.mkdir()
    _val_csv(data)
    out = tmp_path / "out"
    finetune.main(
        [
            "--task",
            "swag",
            "--data_dir",
            str(data),
            "--model_name_or_path",
            tiny_bert_dir,
            "--output_dir",
            str(out),
            "--do_eval",
            "--max_seq_length",
            "32",
            "--disable_tqdm",
            "true",
            "--report_to",
            "none",
        ]
    )
    results = json.loads((out / "all_results.json").read_text())
    cols = read_predictions(out / "validation_predictions.tsv")
    assert list(cols) == ["index", "prediction", "label", "logit_0", "logit_1", "logit_2", "logit_3"]
    assert list(cols["label"]) == [i % 4 for i in range(24)]  # the gold choices of val.csv, in file order
    logits = np.stack([cols[f"logit_{i}"] for i in range(4)], axis=1)
    assert np.array_equal(cols["prediction"], logits.argmax(1))
    y = cols["label"].astype(int)
    accuracy = float(np.mean(cols["prediction"] == y))
    shifted = logits - logits.max(1, keepdims=True)
    loss = float(np.mean(np.log(np.exp(shifted).sum(1)) - shifted[np.arange(len(y)), y]))
    assert results["eval_samples"] == 24
    assert abs(results["eval_accuracy"] - accuracy) <= 1e-12  # same predictions and labels read back
    np.testing.assert_allclose(results["eval_loss"], loss, rtol=1e-5)  # Trainer: float32 batch means
    reported = {k for k in results if k.startswith("eval_") and k[len("eval_") :] not in NOT_METRICS}
    assert reported == {"eval_accuracy", "eval_loss"}
