"""Write the issue-59 SQuAD parity split: train = articles [0, 8) of dev-v1.1 (2,804 questions), dev =
articles [40, 44) (Prime_number, Rhine, Scottish_Parliament, Islamism: 833 questions), in the official layout.

    python benchmarks/parity/squad_split.py SRC_DEV_JSON OUT_DIR [--train_articles 0:8] [--dev_articles 40:44]
        [--train_questions N]   # keep only the first N training questions (a smaller budget)

Writes OUT_DIR/train-v1.1.json and OUT_DIR/dev-v1.1.json (the names the package's --data_dir reads), or
train-v2.0.json / dev-v2.0.json when SRC_DEV_JSON is SQuAD v2.0 (its ``version`` field, :func:`split_names`). The
same split of dev-v2.0.json (35 articles, in another order) is made with article ranges of that file, e.g.
``--train_articles 0:2 --dev_articles 27:29`` (Prime_number, Rhine: the v1.1 split's dev articles 40-41).
"""

from __future__ import annotations

import argparse
import json
import os


def _slice(text: str) -> slice:
    start, stop = (int(x) for x in text.split(":"))
    return slice(start, stop)


def split_names(version: str) -> tuple[str, str]:
    """The (train, dev) file names for a SQuAD file's ``version`` field (``"1.1"`` in dev-v1.1.json, ``"v2.0"`` in
    dev-v2.0.json): the names the package's ``--task squad_v1`` / ``squad_v2`` read from ``--data_dir``. Raises
    ``ValueError`` for any other version."""
    names = {"1.1": "v1.1", "v1.1": "v1.1", "2.0": "v2.0", "v2.0": "v2.0"}
    if version not in names:
        raise ValueError(f"'version' field {version!r}: expected 1.1 or v2.0 (an official SQuAD dev file)")
    return f"train-{names[version]}.json", f"dev-{names[version]}.json"


def cut_questions(articles: list, n: int | None) -> list:
    """``articles`` with only the first ``n`` questions (file order); paragraphs left empty are dropped."""
    if n is None:
        return articles
    out, left = [], n
    for article in articles:
        paragraphs = []
        for p in article["paragraphs"]:
            if left <= 0:
                break
            qas = p["qas"][:left]
            left -= len(qas)
            paragraphs.append(dict(p, qas=qas))
        if paragraphs:
            out.append(dict(article, paragraphs=paragraphs))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("src")
    parser.add_argument("out_dir")
    parser.add_argument("--train_articles", type=_slice, default=slice(0, 8))
    parser.add_argument("--dev_articles", type=_slice, default=slice(40, 44))
    parser.add_argument("--train_questions", type=int, default=None)
    args = parser.parse_args(argv)
    with open(args.src, encoding="utf-8") as f:
        src = json.load(f)
    try:
        names = split_names(src.get("version"))
    except ValueError as err:
        parser.error(f"{args.src}: {err}")
    os.makedirs(args.out_dir, exist_ok=True)
    splits = {
        names[0]: cut_questions(src["data"][args.train_articles], args.train_questions),
        names[1]: src["data"][args.dev_articles],
    }
    for name, articles in splits.items():
        with open(os.path.join(args.out_dir, name), "w", encoding="utf-8") as f:
            json.dump({"version": src["version"], "data": articles}, f)
        qas = [q for a in articles for p in a["paragraphs"] for q in p["qas"]]
        impossible = sum(bool(q.get("is_impossible")) for q in qas)
        print(f"{name}: {len(articles)} articles ({', '.join(a['title'] for a in articles)}), {len(qas)} questions"
              + (f", {impossible} unanswerable" if impossible else ""))  # fmt: skip


if __name__ == "__main__":
    main()
