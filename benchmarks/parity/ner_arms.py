"""CoNLL-2003 NER parity against transformers' ``run_ner.py`` (issue 59 item 2): one run per side and seed.

    python benchmarks/parity/ner_arms.py --model DIR --script PATH/run_ner.py --work DIR --results FILE.jsonl \
        [--sides reference,ours] [--seeds 42,43,44] [--max_train_samples 3000] [--epochs 1] [--lr 5e-5] \
        [--batch 32] [--max_seq_length 128] [--warmup 0.1] [--weight_decay 0.01]

Data: ``../shared/data/conll2003/{train,valid}.txt`` (``token POS chunk NER`` per line, IOB2, ``-DOCSTART-``
lines, a blank line after each sentence; MANIFEST.md note 5). :func:`convert` writes, once per invocation:

- ``WORK/data/train.json`` and ``WORK/data/validation.json``: JSON Lines, one sentence a row, ``tokens`` and
  ``ner_tags`` (tag names), what ``run_ner.py`` reads with ``--train_file`` / ``--validation_file``;
- ``WORK/columns/train.txt`` and ``WORK/columns/valid.txt``: links to the two original files, the ``--data_dir``
  of ours (no ``test.txt`` there, so neither side touches the test split).

Both sides then see the same sentences in the same order: ``-DOCSTART-`` lines are document marks, not sentences
(the package's reader drops them the same way; :func:`check_same_sentences` compares the two readers on every
sentence of both files before any run), and ``--max_train_samples N`` keeps the first N sentences on both sides
(``Dataset.select(range(N))`` in ``run_ner.py`` and in the package).

Sides, with the same model, data, max_seq_length, batch, lr, epochs, warmup, weight decay and seed:

- ``reference``: ``--script``, transformers' ``examples/pytorch/token-classification/run_ner.py`` adapted only to
  run offline (docs/parity.md lists the changes; it is not kept in this repository), recorded as ``$RUN_NER``;
  its defaults otherwise: the first WordPiece of a word labelled, the others ``-100`` (``label_all_tokens``
  false), dynamic padding, a sentence truncated to ``max_seq_length`` (its later words are neither trained on nor
  scored), labels in sorted order (``B-LOC`` … ``O``), seqeval's default mode (as conlleval) on dev;
- ``ours``: ``hf-bert-tasks finetune --task conll2003 --data_dir WORK/columns`` with the package's defaults
  otherwise: the same first-WordPiece rule, long sentences split into windows (no word lost), labels in the Hub
  dataset's order (``O``, ``B-PER`` …), word-level dev metrics;
- ``ours_random`` / ``ours_grouped`` (diagnostic arms, not in the default ``--sides``): ours with
  ``--train_sampling_strategy random`` (run_ner's sampler, the package's NER default since these runs) or
  ``group_by_length`` (the default they replaced), so that the sampler's share of a difference can be read off, as
  ``glue_arms.py``'s arms of those names.

The row's ``metrics`` (x100) are the same scorer on both sides: ``f1``, ``precision``, ``recall`` from seqeval's
default mode (run_ner's ``evaluate`` seqeval call; ours' ``eval_conlleval_*``) and word ``accuracy``; ours adds
``strict_f1`` / ``strict_precision`` / ``strict_recall`` (seqeval strict IOB2, the package's headline F1).

One run at a time as ``glue_arms.py`` (fresh process and datasets cache, seed-major order, finished rows skipped,
one JSON line per run with wall time and peak RSS; ``family`` ``ner``, ``task`` ``conll2003``); ``report.py``
renders them.
"""

from __future__ import annotations

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import glue_arms  # the shared runner: one process, wall time, peak RSS, the row

CONLL = os.path.join(glue_arms.SHARED, "data", "conll2003")
#: our split name -> (the original file, the JSON Lines file run_ner reads)
FILES = {"train": ("train.txt", "train.json"), "validation": ("valid.txt", "validation.json")}
DOCSTART = "-DOCSTART-"
SIDES = ("reference", "ours", "ours_random", "ours_grouped")


def read_sentences(path: str) -> list[dict]:
    """The sentences of one CoNLL-2003 column file (``token POS chunk NER`` per line; a blank line or a
    ``-DOCSTART-`` line ends a sentence, ``-DOCSTART-`` lines are no sentence) as rows ``{"tokens": [...],
    "ner_tags": [...]}`` (the first and fourth columns, tag names as written), in file order.

    Raises:
        ValueError: a line that is neither blank, ``-DOCSTART-`` nor 4 space-separated fields, an NER tag that is
            not ``O``, ``B-TYPE`` or ``I-TYPE`` (file and line named), or a file without a sentence.
    """
    rows: list[dict] = []
    tokens: list[str] = []
    tags: list[str] = []
    with open(path, encoding="utf-8") as f:
        lines = [*enumerate(f, 1), (None, "")]  # a last blank line ends the last sentence
    for number, text in lines:
        fields = text.split()
        if fields and fields[0] != DOCSTART:
            if len(fields) != 4:
                raise ValueError(
                    f"{path}, line {number}: found {len(fields)} field(s) in {text.rstrip()!r}; expected 4 "
                    "space-separated fields 'token POS chunk NER', a blank line or a -DOCSTART- line"
                )
            if fields[3] != "O" and not (fields[3][:2] in ("B-", "I-") and len(fields[3]) > 2):
                raise ValueError(f"{path}, line {number}: NER tag {fields[3]!r}; expected 'O', 'B-TYPE' or 'I-TYPE'")
            tokens.append(fields[0])
            tags.append(fields[3])
        elif tokens:
            rows.append({"tokens": tokens, "ner_tags": tags})
            tokens, tags = [], []
    if not rows:
        raise ValueError(f"{path}: no sentence found; expected 'token POS chunk NER' lines")
    return rows


def convert(source_dir: str, work: str) -> dict[str, int]:
    """Write ``work/data/{train,validation}.json`` (JSON Lines of :func:`read_sentences`) and link the original
    ``train.txt`` / ``valid.txt`` of ``source_dir`` into ``work/columns``; returns the sentence count per split."""
    counts = {}
    for folder in ("data", "columns"):
        os.makedirs(os.path.join(work, folder), exist_ok=True)
    for split, (original, json_name) in FILES.items():
        rows = read_sentences(os.path.join(source_dir, original))
        with open(os.path.join(work, "data", json_name), "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
        link = os.path.join(work, "columns", original)
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(os.path.join(source_dir, original)), link)
        counts[split] = len(rows)
    return counts


def check_same_sentences(source_dir: str, work: str) -> None:
    """Raise ``ValueError`` unless every row of ``work/data/*.json`` equals, in order, the sentence the package's
    reader (``hf_bert_tasks.tasks.conll2003.read_conll_file``, what ours trains and scores on) gives for it."""
    from hf_bert_tasks.tasks.conll2003 import read_conll_file

    for original, json_name in FILES.values():
        ours = read_conll_file(os.path.join(source_dir, original))
        with open(os.path.join(work, "data", json_name), encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        if len(rows) != len(ours["tokens"]):
            raise ValueError(f"{json_name}: {len(rows)} sentences, the package reads {len(ours['tokens'])}")
        for i, (row, tokens, tags) in enumerate(zip(rows, ours["tokens"], ours["ner_tags"])):
            if row != {"tokens": tokens, "ner_tags": tags}:
                raise ValueError(f"{json_name}: sentence {i} differs from the package's reading of {original}")


def command(side: str, task: str, seed: int, args, out: str) -> list[str]:
    """The command line of one CoNLL-2003 run of ``side`` with ``seed``, writing into ``out`` (``task``:
    ``conll2003``)."""
    common = glue_arms.common_flags(args, seed, out) + ["--max_train_samples", str(args.max_train_samples)]
    if side == "reference":
        data = os.path.join(args.work, "data")
        return [
            sys.executable, args.script, "--train_file", os.path.join(data, "train.json"),
            "--validation_file", os.path.join(data, "validation.json"), "--do_train", "--do_eval",
            "--report_to", "none", *common,
        ]  # fmt: skip
    return [sys.executable, "-m", "hf_bert_tasks.cli", "finetune", "--task", "conll2003",
            "--data_dir", os.path.join(args.work, "columns"), "--disable_tqdm", "true", *common,
            *(["--train_sampling_strategy", "random"] if side == "ours_random" else []),
            *(["--train_sampling_strategy", "group_by_length"] if side == "ours_grouped" else [])]  # fmt: skip


def ner_metrics(out: str, side: str) -> dict[str, float]:
    """A run's dev metrics x100 under one scorer (seqeval's default mode; module docstring) from
    ``out/all_results.json``; ours adds its strict-IOB2 ``strict_*``. Raises ``KeyError`` naming a missing key."""
    with open(os.path.join(out, "all_results.json"), encoding="utf-8") as f:
        res = json.load(f)
    names = {k: f"eval_{k}" for k in ("precision", "recall", "f1", "accuracy")}
    if side != "reference":
        names.update({k: f"eval_conlleval_{k}" for k in ("precision", "recall", "f1")})
        names.update({f"strict_{k}": f"eval_{k}" for k in ("precision", "recall", "f1")})
    missing = [key for key in names.values() if key not in res]
    if missing:
        raise KeyError(f"{out}/all_results.json: no {missing} (keys: {sorted(res)})")
    return {name: 100.0 * res[key] for name, key in names.items()}


def main(argv=None):
    parser = glue_arms.runner_parser(__doc__, epochs=1.0, lr=5e-5, batch=32, script="run_ner.py")
    parser.add_argument("--max_train_samples", type=int, default=3000, help="the first N training sentences")
    args, sides = glue_arms.parse_runner_args(parser, argv, SIDES)
    args.portable_names = {args.script: "$RUN_NER"}  # recorded commands: no path of this machine
    counts = convert(CONLL, args.work)
    check_same_sentences(CONLL, args.work)
    if not 0 < args.max_train_samples <= counts["train"]:
        parser.error(f"--max_train_samples {args.max_train_samples}: expected 1..{counts['train']}")
    budget = dict(glue_arms.budget(args), dev_sentences=counts["validation"])
    done = {(r["side"], r["seed"]) for r in glue_arms.load(args.results) if r.get("budget") == budget}
    env = glue_arms.offline_env()
    for seed in (int(s) for s in args.seeds.split(",")):
        for side in sides:
            if (side, seed) in done:
                continue
            row = glue_arms.run_one(side, "conll2003", seed, args, env, command=command, family="ner")
            if row is None:
                continue
            out = os.path.join(args.work, f"{side}-conll2003-s{seed}")
            row.update(budget=budget, metrics=ner_metrics(out, side))
            glue_arms.append(args.results, row)


if __name__ == "__main__":
    main()
