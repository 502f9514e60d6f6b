"""Does our pretraining transfer? Pretrain a small BERT from scratch, then fine-tune it and a random init of it.

The paper's central claim (Devlin et al. 2018, §5 / Table 6 context: pretrained > random init) checked on this
machine's budget (issue 12 item 4). Three stages, each a committed command, run one after the other:

    python tools/pretraining_transfer.py corpus   --shared ../shared --out runs/transfer/corpus.txt
    python tools/pretraining_transfer.py pretrain --out runs/transfer [pretrain flags after --]
    python tools/pretraining_transfer.py finetune --out runs/transfer --seeds 1,2,3
    python tools/pretraining_transfer.py report   --out runs/transfer   # markdown table, mean ± std

``corpus`` writes google's pretraining format (one sentence per line, a blank line between documents) from the
unlabelled text in ``../shared/data``: WikiText-2 valid (``.tokens``, ``<unk>`` kept) and test (raw), tiny
Shakespeare, and the *training* splits of SST-2, CoLA, MRPC, RTE, STS-B, WNLI and CoNLL-2003 — text only, never a
label and never a dev/test sentence, so the fine-tuning evaluation stays held out.

``corpus --corpus books+text`` (or ``books``, or comma-separated globs of google-format / ``.txt.xz`` book files)
adds the Project Gutenberg shards of ``../shared/data/pretraining_books`` (one paragraph per line, a blank line
between books; read through ``datasets``, xz decompressed, paragraphs split into sentences by
``pretraining_documents.split_into_sentences``: one document per book) and writes, beside ``corpus.txt``:
``heldout.txt`` (the documents the text-only run held out: ``split_documents(corpus.txt, 5 %, seed 42)``, the
pretrain recipe's own split), ``train.txt`` (the text-only run's training documents plus the books, the books spread
evenly so ``--preprocessing_num_workers`` shares them) and ``tokenizer/`` (the WordPiece vocabulary the text-only run
trains on its training documents: the same vocabulary, so held-out MLM nats compare across corpora at equal tokens);
``--text_copies K`` puts the old text's training documents in ``train.txt`` K times (a mix that keeps its passes).
``pretrain`` then reads ``train.txt`` with ``--validation_files heldout.txt --tokenizer_name tokenizer``.

``finetune`` runs SST-2 (full train, dev accuracy) and CoNLL-2003 (entity-level F1 on dev) for both arms with the
same tokenizer, config, seeds, steps and hyperparameters; the random arm is ``BertForPreTraining`` re-initialised
from the pretrained folder's config (``hf_bert_tasks.scripts.quickstart_steps.random_init_copy``).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import time

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])")


def _sentences(paragraph: str) -> list[str]:
    """Split a paragraph after ``. ! ?`` followed by a capital (google's data is one sentence per line)."""
    return [s.strip() for s in _SENTENCE_END.split(paragraph) if s.strip()]


def _wikitext(path: str) -> list[list[str]]:
    """Articles (`` = Title = `` headings start one) as lists of sentences; sub-headings are dropped."""
    docs, doc = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            if re.fullmatch(r"= [^=].* =", line):  # a top-level heading starts a new article
                if doc:
                    docs.append(doc)
                doc = []
                continue
            if line.startswith("="):
                continue
            doc.extend(_sentences(line))
    if doc:
        docs.append(doc)
    return docs


def _shakespeare(path: str) -> list[list[str]]:
    """Speeches (blocks between blank lines, speaker line dropped) grouped 10 per document (scenes in order)."""
    blocks, block = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line:
                if block:
                    blocks.append(block)
                block = []
            elif not (line.endswith(":") and len(line.split()) <= 4):
                block.append(line)
    if block:
        blocks.append(block)
    docs = []
    for i in range(0, len(blocks), 10):
        speech = " ".join(" ".join(b) for b in blocks[i : i + 10])
        docs.append(_sentences(speech))
    return docs


def _tsv_rows(path: str, header: bool = True):
    with open(path, encoding="utf-8-sig") as f:  # MRPC carries a BOM
        reader = csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE)  # GLUE TSVs: quoting off (MANIFEST)
        if header:
            names = next(reader)
            for row in reader:
                yield dict(zip(names, row))
        else:
            yield from reader


def _glue_train(data: str) -> list[list[str]]:
    """Sentences of the GLUE training splits. A pair task gives a 2-sentence document per example (its two
    sentences are related, as consecutive sentences are); single-sentence tasks are grouped 8 per document."""
    docs: list[list[str]] = []
    singles: list[str] = []
    for row in _tsv_rows(os.path.join(data, "glue/SST-2/train.tsv")):
        # SST-2 train holds every sub-phrase of its parse trees; phrases under 4 words add little text
        if len(row["sentence"].split()) >= 4:
            singles.append(row["sentence"].strip())
    for row in _tsv_rows(os.path.join(data, "glue/CoLA/train.tsv"), header=False):
        singles.append(row[3].strip())
    for i in range(0, len(singles), 8):
        docs.append(singles[i : i + 8])
    for task, a, b in (
        ("MRPC", "#1 String", "#2 String"),
        ("RTE", "sentence1", "sentence2"),
        ("STS-B", "sentence1", "sentence2"),
        ("WNLI", "sentence1", "sentence2"),
    ):
        for row in _tsv_rows(os.path.join(data, f"glue/{task}/train.tsv")):
            docs.append(_sentences(row[a]) + _sentences(row[b]))
    return docs


def _conll_train(path: str) -> list[list[str]]:
    """CoNLL-2003 train documents (``-DOCSTART-``), one sentence per line, tokens joined by spaces; no tags."""
    docs, doc, sent = [], [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if not parts:
                if sent:
                    doc.append(" ".join(sent))
                sent = []
            elif parts[0] == "-DOCSTART-":
                if doc:
                    docs.append(doc)
                doc = []
            else:
                sent.append(parts[0])
    if sent:
        doc.append(" ".join(sent))
    if doc:
        docs.append(doc)
    return docs


def build_corpus(shared: str, out: str) -> dict:
    data = os.path.join(shared, "data")
    sources = {
        "wikitext-2 valid": _wikitext(os.path.join(data, "pretraining_text/wikitext-2.valid.tokens")),
        "wikitext-2 test (raw)": _wikitext(os.path.join(data, "pretraining_text/wikitext-2-raw.test.raw")),
        "tiny shakespeare": _shakespeare(os.path.join(data, "pretraining_text/tinyshakespeare.txt")),
        "GLUE train splits (text only)": _glue_train(data),
        "CoNLL-2003 train (text only)": _conll_train(os.path.join(data, "conll2003/train.txt")),
    }
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    stats = {}
    with open(out, "w", encoding="utf-8") as f:
        for name, docs in sources.items():
            docs = [d for d in docs if d]
            f.writelines("\n".join(doc) + "\n\n" for doc in docs)
            stats[name] = {
                "documents": len(docs),
                "sentences": sum(map(len, docs)),
                "words": sum(len(s.split()) for d in docs for s in d),
            }
    with open(out + ".stats.json", "w") as f:
        json.dump(stats, f, indent=2)
    return stats


#: the text-only run's held-out split: the pretrain recipe's default 5 % of the documents, seed 42 (gpu.sh's run)
HELDOUT_PERCENT, HELDOUT_SEED = 5.0, 42
BOOKS_GLOB = "data/pretraining_books/books-*.txt.xz"


def book_documents(files: list[str], num_proc: int | None = None) -> list[list[str]]:
    """Book shards (one paragraph per line, a blank line between books; ``.xz`` read by ``datasets``) as one document
    per book, each a list of sentences (``pretraining_documents.split_into_sentences``)."""
    from hf_bert_tasks.pretraining.documents import load_documents

    docs = load_documents(files, document_boundary="blank_line", split_sentences=True, num_proc=num_proc)
    return docs["sentences"]


def _corpus_files(spec: str, shared: str) -> tuple[bool, list[str]]:
    """``--corpus`` → (keep the old text, extra files): ``text``, ``books``, ``books+text`` or comma-separated globs
    (the old text is kept unless the spec is ``books`` alone). Raises ``FileNotFoundError`` for a glob without files."""
    import glob

    if spec == "text":
        return True, []
    keep_text = spec != "books"
    patterns = [os.path.join(shared, BOOKS_GLOB)] if spec in ("books", "books+text") else spec.split(",")
    files = []
    for pattern in patterns:
        matched = sorted(glob.glob(pattern))
        if not matched:
            raise FileNotFoundError(f"--corpus: {pattern} matches no file")
        files += matched
    return keep_text, files


def _write_documents(path: str, docs) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines("\n".join(doc) + "\n\n" for doc in docs if doc)


def check_text_copies(text_copies: int, keep_text: bool, extra_files: list[str]) -> None:
    """``--text_copies`` repeats the old text beside added books: ``ValueError`` for fewer than 1 copy, or for more
    than 1 where there is no old text or nothing added to it (``--corpus books`` / ``text``)."""
    if text_copies < 1:
        raise ValueError(f"--text_copies: expected a whole number >= 1, got {text_copies}")
    if text_copies > 1 and not (keep_text and extra_files):
        raise ValueError(f"--text_copies {text_copies}: needs the old text and books beside it (--corpus books+text)")


def build_training_corpus(
    out_dir: str,
    extra_files: list[str],
    keep_text: bool,
    vocab_size: int,
    num_proc: int | None = None,
    text_copies: int = 1,
) -> dict:
    """From ``out_dir/corpus.txt`` (:func:`build_corpus`): ``heldout.txt``, ``train.txt`` (old training documents if
    ``keep_text``, ``text_copies`` times in a row, plus the documents of ``extra_files``: ``.xz`` / ``.txt`` book
    shards split into sentences), ``tokenizer/`` (WordPiece of ``vocab_size`` trained on the old training documents,
    once: the same vocabulary for every ``text_copies``). Returns statistics.

    ``text_copies`` upsamples the old text against the books (google's ``dupe_factor`` for one source; the collator
    masks each copy anew): at one CPU core-hour the x 9 mix kept the old text's CoNLL-2003 gain that adding the books
    once lost (docs/results.md, "Books kept out, books added to the old text"). Raises ``ValueError`` for
    ``text_copies`` < 1 or > 1 without both the old text and ``extra_files`` (:func:`check_text_copies`)."""
    check_text_copies(text_copies, keep_text, extra_files)
    import itertools

    from hf_bert_tasks.pretraining.documents import load_documents
    from hf_bert_tasks.pretraining.recipe import split_documents
    from hf_bert_tasks.utils.tokenizers import train_wordpiece_tokenizer

    start = time.time()
    documents = load_documents(os.path.join(out_dir, "corpus.txt"))  # as the pretrain recipe reads it
    train_docs, eval_docs = split_documents(documents, HELDOUT_PERCENT, HELDOUT_SEED)
    _write_documents(os.path.join(out_dir, "heldout.txt"), eval_docs["sentences"])
    old = train_docs["sentences"]
    tokenizer = train_wordpiece_tokenizer(
        lambda: itertools.chain.from_iterable(old), vocab_size=vocab_size, lowercase=True
    )
    tokenizer.save_pretrained(os.path.join(out_dir, "tokenizer"))
    split_start = time.time()
    books = book_documents(extra_files, num_proc) if extra_files else []
    split_s = time.time() - split_start
    base = list(old) * text_copies if keep_text else []
    # book j goes after the first floor((j + 1) * len(base) / (len(books) + 1)) old documents: spread evenly, in order
    keyed = [(i + 1.0, 0, d) for i, d in enumerate(base)]
    keyed += [((j + 1) * len(base) / (len(books) + 1), 1, d) for j, d in enumerate(books)]
    merged = [d for *_, d in sorted(keyed, key=lambda t: t[:2])]
    _write_documents(os.path.join(out_dir, "train.txt"), merged)
    words = lambda docs: sum(len(s.split()) for d in docs for s in d)
    stats = {
        "heldout": {"documents": len(eval_docs), "words": words(eval_docs["sentences"])},
        "train_text": {"documents": len(base), "words": words(base), "copies": text_copies if keep_text else 0},
        "books": {
            "files": extra_files,
            "documents": len(books),
            "sentences": sum(map(len, books)),
            "words": words(books),
            "read_and_split_s": round(split_s, 2),
        },
        "vocab_size": vocab_size,
        "wall_s": round(time.time() - start, 2),
    }
    with open(os.path.join(out_dir, "train.txt.stats.json"), "w") as f:
        json.dump(stats, f, indent=2)
    return stats


TASKS = {
    # task -> (metric key in all_results.json, extra fine-tuning flags)
    "sst2": ("eval_accuracy", ["--num_train_epochs", "1"]),
    "conll2003": ("eval_f1", ["--num_train_epochs", "3"]),
}


def _run(cmd: list[str], log: str) -> float:
    start = time.time()
    with open(log, "w") as f:
        subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, check=True)
    return time.time() - start


def finetune(
    out: str, seeds: list[int], shared: str, lr: float, batch: int, tasks: list[str], subdir: str = "finetune"
) -> None:
    from hf_bert_tasks.scripts.quickstart_steps import random_init_copy

    pretrained = os.path.join(out, "pretrain")
    arms = {"pretrained": pretrained}
    random_dir = os.path.join(out, "random-init")
    if not os.path.isdir(random_dir):
        random_init_copy(pretrained, random_dir, seed=0)
    arms["random init"] = random_dir
    cli = [sys.executable, "-m", "hf_bert_tasks.cli", "finetune"]
    for task in tasks:
        key, extra = TASKS[task]
        data_dir = os.path.join(shared, "data", "conll2003" if task == "conll2003" else "glue/SST-2")
        for arm, model in arms.items():
            for seed in seeds:
                run_dir = os.path.join(out, subdir, task, arm.replace(" ", "-"), f"seed_{seed}")
                if os.path.isfile(os.path.join(run_dir, "all_results.json")):
                    continue
                cmd = cli + [
                    "--task",
                    task,
                    "--model_name_or_path",
                    model,
                    "--data_dir",
                    data_dir,
                    "--output_dir",
                    run_dir,
                    "--seed",
                    str(seed),
                    "--learning_rate",
                    str(lr),
                    "--per_device_train_batch_size",
                    str(batch),
                    "--max_seq_length",
                    "128",
                    "--eval_strategy",
                    "no",
                    "--save_strategy",
                    "no",
                    "--logging_steps",
                    "50",
                    "--no_cache_tokenized",
                    *extra,
                ]
                os.makedirs(run_dir, exist_ok=True)
                wall = _run(cmd, os.path.join(run_dir, "..", f"seed_{seed}.log"))
                with open(os.path.join(run_dir, "all_results.json")) as f:
                    value = json.load(f)[key]
                print(f"{subdir} {task} {arm} seed {seed} lr {lr}: {key} {value:.4f} ({wall:.0f} s)", flush=True)


def report(out: str, subdir: str = "finetune") -> str:
    lines = ["| task (dev metric) | pretrained (ours) | random init | gain | seeds |", "|---|---|---|---|---|"]
    summary = {}
    for task, (key, _) in TASKS.items():
        cells = {}
        for arm in ("pretrained", "random-init"):
            root = os.path.join(out, subdir, task, arm)
            values = []
            for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
                path = os.path.join(root, name, "all_results.json")
                if os.path.isfile(path):
                    with open(path) as f:
                        values.append(100 * json.load(f)[key])
            cells[arm] = values
        if not cells["pretrained"] or not cells["random-init"]:
            continue
        fmt = lambda v: f"{statistics.mean(v):.1f} ± {statistics.stdev(v) if len(v) > 1 else float('nan'):.1f}"
        gain = statistics.mean(cells["pretrained"]) - statistics.mean(cells["random-init"])
        lines.append(
            f"| {task} ({key}) | {fmt(cells['pretrained'])} | {fmt(cells['random-init'])} | {gain:+.1f} | "
            f"{len(cells['pretrained'])} / {len(cells['random-init'])} |"
        )
        summary[task] = {"metric": key, **{arm: v for arm, v in cells.items()}, "gain": gain}
    with open(os.path.join(out, subdir, "transfer_results.json"), "w") as f:
        json.dump(summary, f, indent=2)
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("stage", choices=["corpus", "pretrain", "finetune", "report"])
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared"))
    parser.add_argument("--out", default="runs/transfer")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--tasks", default="sst2,conll2003")
    parser.add_argument("--learning_rate", type=float, default=1e-4)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument(
        "--corpus",
        default="text",
        help="corpus: text (the old 1.9 M words), books, books+text, or comma-separated globs of "
        "book / google-format files added to the old text",
    )
    parser.add_argument("--vocab_size", type=int, default=8192, help="corpus with books: the WordPiece vocabulary")
    parser.add_argument(
        "--text_copies",
        type=int,
        default=1,
        help="corpus --corpus books+text: the old text's training documents this many times (upsampled against the "
        "books; the vocabulary and held-out documents do not change)",
    )
    parser.add_argument("--num_proc", type=int, default=None, help="corpus: processes reading the book shards")
    parser.add_argument(
        "--finetune_dir",
        default="finetune",
        help="sub-folder of --out for the fine-tuning runs (one per learning rate, say)",
    )
    args, rest = parser.parse_known_args(argv)
    rest = rest[1:] if rest[:1] == ["--"] else rest  # pretrain flags after a bare --
    if args.stage == "corpus":
        keep_text, extra = _corpus_files(args.corpus, args.shared)  # FileNotFoundError before any writing
        check_text_copies(args.text_copies, keep_text, extra)  # ValueError before any writing
        stats = build_corpus(args.shared, os.path.join(args.out, "corpus.txt"))
        if extra or not keep_text:
            stats["training corpus"] = build_training_corpus(
                args.out, extra, keep_text, args.vocab_size, args.num_proc, args.text_copies
            )
        else:  # text only: an earlier books corpus in this folder must not be what pretrain reads
            import shutil

            for name in ("train.txt", "heldout.txt", "train.txt.stats.json"):
                if os.path.exists(os.path.join(args.out, name)):
                    os.remove(os.path.join(args.out, name))
            shutil.rmtree(os.path.join(args.out, "tokenizer"), ignore_errors=True)
        print(json.dumps(stats, indent=2))
    elif args.stage == "pretrain":
        corpus = ["--train_files", os.path.join(args.out, "corpus.txt")]
        if os.path.isfile(os.path.join(args.out, "train.txt")):  # corpus --corpus books...: fixed held-out, vocab
            corpus = [
                "--train_files",
                os.path.join(args.out, "train.txt"),
                "--validation_files",
                os.path.join(args.out, "heldout.txt"),
                "--tokenizer_name",
                os.path.join(args.out, "tokenizer"),
            ]
        cmd = [
            sys.executable,
            "-m",
            "hf_bert_tasks.cli",
            "pretrain",
            *corpus,
            "--output_dir",
            os.path.join(args.out, "pretrain"),
            *rest,
        ]
        os.makedirs(args.out, exist_ok=True)
        wall = _run(cmd, os.path.join(args.out, "pretrain.log"))
        print(f"pretraining: {wall:.0f} s")
    elif args.stage == "finetune":
        finetune(
            args.out,
            [int(s) for s in args.seeds.split(",")],
            args.shared,
            args.learning_rate,
            args.batch_size,
            args.tasks.split(","),
            args.finetune_dir,
        )
    else:
        print(report(args.out, args.finetune_dir))


if __name__ == "__main__":
    main()
