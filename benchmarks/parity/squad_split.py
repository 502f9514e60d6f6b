"""Write the issue-59 SQuAD v1.1 parity split: train = articles [0, 8) of dev-v1.1 (2,804 questions), dev =
articles [40, 44) (Prime_number, Rhine, Scottish_Parliament, Islamism: 833 questions), in the official layout.

    python benchmarks/parity/squad_split.py SRC_DEV_JSON OUT_DIR [--train_articles 0:8] [--dev_articles 40:44]
        [--train_questions N]   # keep only the first N training questions (a smaller budget)

Writes OUT_DIR/train-v1.1.json and OUT_DIR/dev-v1.1.json (the names the package's --data_dir reads).
"""

from __future__ import annotations

import argparse
import json
import os


def _slice(text: str) -> slice:
    start, stop = (int(x) for x in text.split(":"))
    return slice(start, stop)


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
    os.makedirs(args.out_dir, exist_ok=True)
    splits = {
        "train": cut_questions(src["data"][args.train_articles], args.train_questions),
        "dev": src["data"][args.dev_articles],
    }
    for name, articles in splits.items():
        with open(os.path.join(args.out_dir, f"{name}-v1.1.json"), "w", encoding="utf-8") as f:
            json.dump({"version": src["version"], "data": articles}, f)
        n = sum(len(p["qas"]) for a in articles for p in a["paragraphs"])
        print(f"{name}: {len(articles)} articles, {n} questions")


if __name__ == "__main__":
    main()
