"""Every CoNLL-2003 word-level metric the recipe reports recomputes from the ``<split>_predictions.txt`` it writes.

* ``perl conlleval < FILE`` -> ``eval_accuracy``, ``eval_conlleval_precision/recall/f1`` (2 printed decimals);
* the strict IOB2 numbers (``eval_precision/recall/f1``, ``eval_<TYPE>_*``) -> conlleval on the file with every
  predicted ``I-X`` that does not continue a ``B-X``/``I-X`` run set to ``O``, and exactly by counting entity spans
  by hand; ``eval_<TYPE>_number`` -> the gold ``B-<TYPE>`` tags.

``eval_loss`` (Trainer's WordPiece-level loss) needs the logits and is not in the file.
"""

from __future__ import annotations

import json

from hf_bert_tasks.finetune import recipe as finetune
from tests import oracles
from tests.conftest import tiny_run_argv
from tests.test_oracle_conlleval import strict_repair
from tests.test_recompute_glue import NOT_METRICS

WORDS = [
    ("nadia", "B-PER"),
    ("met", "O"),
    ("hiro", "B-PER"),
    ("tanaka", "I-PER"),
    ("at", "O"),
    ("the", "O"),
    ("red", "B-ORG"),
    ("cross", "I-ORG"),
    ("in", "O"),
    ("new", "B-LOC"),
    ("york", "I-LOC"),
    ("during", "O"),
    ("the", "O"),
    ("world", "B-MISC"),
    ("cup", "I-MISC"),
    (".", "O"),
]


def _corpus(shift: int) -> str:
    lines = []
    for doc in range(2):
        lines += ["-DOCSTART- -X- -X- O", ""]
        for k in range(4):
            n = 4 + (doc * 4 + k + shift) % 12  # sentences of different lengths, cut inside entities too
            lines += [f"{w} NN O {t if i or t == 'O' else 'B' + t[1:]}" for i, (w, t) in enumerate(WORDS[:n])]
            lines.append("")
    return "\n".join(lines) + "\n"


def read_columns(path):
    """Sentences of (gold, pred) tags from a ``token gold pred`` file."""
    sentences, current = [], []
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for line in text.split("\n"):
        if line:
            _, gold, pred = line.split(" ")
            current.append((gold, pred))
        elif current:
            sentences.append(current)
            current = []
    return [[g for g, _ in s] for s in sentences], [[p for _, p in s] for s in sentences]


def spans(tags):
    """Entities of well-formed IOB2 tags: ``(start, end, type)``, an entity starting at each ``B-``."""
    out, start = set(), None
    for i, tag in enumerate([*tags, "O"]):
        if start is not None and not (tag.startswith("I-") and tag[2:] == tags[start][2:]):
            out.add((start, i, tags[start][2:]))
            start = None
        if tag.startswith("B-"):
            start = i
    return out


def exact_strict(gold, pred) -> dict[str, float]:
    """Strict entity precision / recall / F1, overall and per type, by counting spans (fractions)."""
    found = {(s, *e) for s, p in enumerate(pred) for e in spans(strict_repair(p))}
    true = {(s, *e) for s, g in enumerate(gold) for e in spans(g)}

    def prf(f, t):
        p = len(f & t) / len(f) if f else 0.0
        r = len(f & t) / len(t) if t else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    out = dict(zip(("precision", "recall", "f1"), prf(found, true)))
    for kind in {e[3] for e in found | true}:
        out.update(
            zip(
                (f"{kind}_precision", f"{kind}_recall", f"{kind}_f1"),
                prf({e for e in found if e[3] == kind}, {e for e in true if e[3] == kind}),
            )
        )
    return out


def test_every_reported_conll_metric_recomputes_from_the_written_predictions(tiny_bert_dir, tmp_path):
    oracles.shared_file("oracles", "conlleval")  # skip before the recipe runs when it is absent
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.txt").write_text(_corpus(2) + _corpus(7), encoding="utf-8")
    (data / "valid.txt").write_text(_corpus(0), encoding="utf-8")
    (data / "test.txt").write_text(_corpus(5), encoding="utf-8")
    out = tmp_path / "out"
    finetune.main(
        tiny_run_argv(
            "conll2003",
            tiny_bert_dir,
            out,
            data_dir=data,
            max_seq_length=24,
            max_steps=6,
            learning_rate="3e-3",
            per_device_train_batch_size=8,
            warmup_steps=0,
            disable_tqdm="true",
            seed=0,
        )
    )  # half-trained: some right
    results = json.loads((out / "all_results.json").read_text())
    checked = set()
    for split, suffix in (("validation", ""), ("test", "_test")):
        path = out / f"{split}_predictions.txt"
        gold, pred = read_columns(path)
        official = oracles.conlleval(str(path))
        for key, printed in (
            ("accuracy", official.accuracy),
            ("conlleval_precision", official.precision),
            ("conlleval_recall", official.recall),
            ("conlleval_f1", official.f1),
        ):
            oracles.assert_two_decimals(results[f"eval_{key}{suffix}"], printed, key)
            checked.add(f"eval_{key}{suffix}")
        repaired = tmp_path / f"{split}_strict.txt"
        repaired.write_text(
            "".join(
                "".join(f"w {g} {p}\n" for g, p in zip(gs, strict_repair(ps))) + "\n" for gs, ps in zip(gold, pred)
            )
        )
        strict = oracles.conlleval(str(repaired))
        exact = exact_strict(gold, pred)
        assert {k for k in exact if k.count("_") == 1} == {f"{t}_f1" for t in strict.per_type} | {
            f"{t}_{m}" for t in strict.per_type for m in ("precision", "recall")
        }
        for key, value in exact.items():
            kind, _, metric = key.rpartition("_")
            printed = strict.per_type[kind][metric] if kind else getattr(strict, metric)
            oracles.assert_two_decimals(value, printed, key)  # the hand count agrees with conlleval
            assert abs(results[f"eval_{key}{suffix}"] - value) <= 1e-12, key  # and with the report, exactly
            checked.add(f"eval_{key}{suffix}")
        for kind in strict.per_type:
            gold_count = sum(t == f"B-{kind}" for s in gold for t in s)
            assert results[f"eval_{kind}_number{suffix}"] == gold_count
            checked.add(f"eval_{kind}_number{suffix}")
    assert official.tokens == sum(len(s) for s in gold)  # every word once, no -DOCSTART- line
    reported = {
        k
        for k in results
        if k.startswith("eval_") and k.removeprefix("eval_").removesuffix("_test") not in NOT_METRICS | {"loss"}
    }
    assert reported == checked
