"""SQuAD parity, step 1 (no training): the package's training windows vs transformers' ``run_qa.py``
``prepare_train_features`` on the same questions and tokenizer (issue 59).

    python benchmarks/parity/squad_features.py --model DIR --train TRAIN.json [--max_seq_length 256] [--doc_stride 96]

``--train``: SQuAD JSON (official layout), e.g. the first 8 articles of dev-v1.1 (``squad_split.py``). Prints, for
both sides: windows, windows labelled with the answer / with ``[CLS]``, questions whose answer is in no window,
windows per question, mean context tokens per window, and how many questions were cut by ``max_query_length``; then
the package's windows with run_qa's meaning of ``doc_stride`` (the tokenizer's overlap), to show which setting
matches. run_qa's function is copied from ``shared/baselines/qa/run_qa.py`` lines 408-488 (upstream
``examples/pytorch/question-answering/run_qa.py``), unchanged but for its closure variables made arguments.
"""

from __future__ import annotations

import argparse
import json
import statistics


def flat_questions(path: str) -> dict[str, list]:
    """One row per question of a SQuAD JSON file (official layout), in file order: id, question, context, answers."""
    rows = {"id": [], "question": [], "context": [], "answers": []}
    with open(path, encoding="utf-8") as f:
        articles = json.load(f)["data"]
    for article in articles:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                rows["id"].append(qa["id"])
                rows["question"].append(qa["question"])
                rows["context"].append(paragraph["context"])
                rows["answers"].append(
                    {
                        "text": [a["text"] for a in qa["answers"]],
                        "answer_start": [a["answer_start"] for a in qa["answers"]],
                    }
                )
    return rows


def run_qa_train_features(examples: dict, tokenizer, max_seq_length: int, doc_stride: int, pad: bool = False):
    """transformers' ``run_qa.py`` ``prepare_train_features`` (pad_on_right, a BERT tokenizer), verbatim logic."""
    examples = dict(examples, question=[q.lstrip() for q in examples["question"]])
    tok = tokenizer(
        examples["question"],
        examples["context"],
        truncation="only_second",
        max_length=max_seq_length,
        stride=doc_stride,
        return_overflowing_tokens=True,
        return_offsets_mapping=True,
        padding="max_length" if pad else False,
    )
    sample_mapping = tok.pop("overflow_to_sample_mapping")
    offset_mapping = tok.pop("offset_mapping")
    tok["start_positions"], tok["end_positions"], tok["example_index"] = [], [], []
    for i, offsets in enumerate(offset_mapping):
        input_ids = tok["input_ids"][i]
        cls_index = input_ids.index(tokenizer.cls_token_id)
        sequence_ids = tok.sequence_ids(i)
        answers = examples["answers"][sample_mapping[i]]
        tok["example_index"].append(sample_mapping[i])
        if len(answers["answer_start"]) == 0:
            tok["start_positions"].append(cls_index)
            tok["end_positions"].append(cls_index)
            continue
        start_char = answers["answer_start"][0]
        end_char = start_char + len(answers["text"][0])
        token_start_index = 0
        while sequence_ids[token_start_index] != 1:
            token_start_index += 1
        token_end_index = len(input_ids) - 1
        while sequence_ids[token_end_index] != 1:
            token_end_index -= 1
        if not (offsets[token_start_index][0] <= start_char and offsets[token_end_index][1] >= end_char):
            tok["start_positions"].append(cls_index)
            tok["end_positions"].append(cls_index)
        else:
            while token_start_index < len(offsets) and offsets[token_start_index][0] <= start_char:
                token_start_index += 1
            tok["start_positions"].append(token_start_index - 1)
            while offsets[token_end_index][1] >= end_char:
                token_end_index -= 1
            tok["end_positions"].append(token_end_index + 1)
    return dict(tok)


def ours_train_features(examples: dict, tokenizer, max_seq_length: int, doc_stride: int, max_query_length: int):
    """The package's training windows (``hf_bert_tasks.tasks.squad.features.create_features``) plus the index of
    each window's question (recomputed per question, since ``create_features`` has no such column)."""
    from hf_bert_tasks.tasks.squad import features as qa

    config = qa.WindowConfig(max_seq_length, doc_stride, max_query_length)
    out = {k: [] for k in ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")}
    out["example_index"] = []
    for i in range(len(examples["question"])):
        one = qa.create_features(
            [examples["question"][i]], [examples["context"][i]], tokenizer, config, answers=[examples["answers"][i]]
        )
        for k in one:
            out[k] += one[k]
        out["example_index"] += [i] * len(one["input_ids"])
    return out


def summary(feats: dict, n_questions: int) -> dict:
    """Counts of one side's windows (see the module docstring)."""
    labelled = [s != 0 for s in feats["start_positions"]]
    answered = {i for i, ok in zip(feats["example_index"], labelled) if ok}
    per_q = [0] * n_questions
    for i in feats["example_index"]:
        per_q[i] += 1
    ctx = [sum(t) - 1 for t in feats["token_type_ids"]]  # context tokens + final [SEP] have type 1
    return {
        "windows": len(labelled),
        "windows_with_answer": sum(labelled),
        "windows_cls": len(labelled) - sum(labelled),
        "cls_fraction": round(1 - sum(labelled) / len(labelled), 4),
        "questions_without_answer_window": n_questions - len(answered),
        "max_windows_per_question": max(per_q),
        "questions_with_>1_window": sum(p > 1 for p in per_q),
        "mean_context_tokens": round(statistics.mean(ctx), 1),
        "mean_tokens": round(statistics.mean(len(x) for x in feats["input_ids"]), 1),
    }


def same_windows(a: dict, b: dict) -> dict:
    """How many windows of ``a`` and ``b`` are identical (input_ids, token_type_ids, start/end), when both sides
    made the same number of windows per question; else ``None``."""
    if a["example_index"] != b["example_index"]:
        return {"same_window_layout": False}
    keys = ("input_ids", "token_type_ids", "attention_mask", "start_positions", "end_positions")
    same = {k: sum(x == y for x, y in zip(a[k], b[k])) for k in keys}
    return {"same_window_layout": True, "identical_of": len(a["input_ids"]), **same}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--train", required=True)
    parser.add_argument("--max_seq_length", type=int, default=256)
    parser.add_argument("--doc_stride", type=int, default=96)
    parser.add_argument("--max_query_length", type=int, default=64)
    args = parser.parse_args(argv)
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    ex = flat_questions(args.train)
    n = len(ex["question"])
    q_len = [len(x) for x in tokenizer(ex["question"], add_special_tokens=False)["input_ids"]]
    ref = run_qa_train_features(ex, tokenizer, args.max_seq_length, args.doc_stride)
    ours = ours_train_features(ex, tokenizer, args.max_seq_length, args.doc_stride, args.max_query_length)
    report = {
        "questions": n,
        "questions_longer_than_max_query_length": sum(q > args.max_query_length for q in q_len),
        "max_question_tokens": max(q_len),
        "run_qa": summary(ref, n),
        "ours (google doc_stride = step)": summary(ours, n),
    }
    # the package with run_qa's meaning: step between window starts = window length - overlap, per question
    from hf_bert_tasks.tasks.squad import features as qa

    alt = {k: [] for k in ours}
    for i in range(n):
        room = args.max_seq_length - min(q_len[i], args.max_query_length) - 3
        one = qa.create_features(
            [ex["question"][i]],
            [ex["context"][i]],
            tokenizer,
            qa.WindowConfig(args.max_seq_length, max(1, room - args.doc_stride), args.max_query_length),
            answers=[ex["answers"][i]],
        )
        for k in one:
            alt[k] += one[k]
        alt["example_index"] += [i] * len(one["input_ids"])
    report["ours with step = room - doc_stride (run_qa's overlap)"] = summary(alt, n)
    report["ours(overlap) vs run_qa"] = same_windows(alt, ref)
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
