"""Split an official SQuAD JSON file into two halves by article (deterministic), for fine-tuning without a train set.

There is no SQuAD train set on the project's machines, so the real-data check fine-tunes on the articles of one half
of a dev file and evaluates on the other half. Articles alternate: article 0, 2, 4 … go to the training half,
1, 3, 5 … to the evaluation half (neighbouring Wikipedia articles of the dev file differ in topic, so both halves
mix topics). No article, and so no paragraph or question, is in both halves. The outputs keep the official layout
and ``version``, named as the task's local files so that ``--data_dir`` reads them:

    python tools/split_squad_by_article.py ../shared/data/squad/dev-v1.1.json runs/squad_v1_split --version 1.1
    # -> runs/squad_v1_split/train-v1.1.json, runs/squad_v1_split/dev-v1.1.json

Existing output files are never overwritten (the script stops with an error naming them).
"""

from __future__ import annotations

import argparse
import json
import os


def split_by_article(data: dict) -> tuple[dict, dict]:
    """``(train_half, eval_half)`` of an official SQuAD JSON object: even-indexed articles vs odd-indexed ones.

    Raises:
        ValueError: when ``data`` has fewer than two articles (no split possible).
    """
    articles = data.get("data") if isinstance(data, dict) else None
    if not isinstance(articles, list) or len(articles) < 2:
        raise ValueError("expected an official SQuAD JSON object with at least two articles in 'data'")
    version = data.get("version", "")
    return (
        {"version": version, "data": articles[0::2]},
        {"version": version, "data": articles[1::2]},
    )


def main(argv: list[str] | None = None) -> tuple[str, str]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("input", help="official SQuAD JSON (e.g. dev-v1.1.json)")
    parser.add_argument("output_dir", help="folder for train-v<version>.json and dev-v<version>.json")
    parser.add_argument("--version", required=True, choices=("1.1", "2.0"), help="names the output files")
    args = parser.parse_args(argv)
    with open(args.input, encoding="utf-8") as f:
        data = json.load(f)
    train, dev = split_by_article(data)
    os.makedirs(args.output_dir, exist_ok=True)
    paths = (
        os.path.join(args.output_dir, f"train-v{args.version}.json"),
        os.path.join(args.output_dir, f"dev-v{args.version}.json"),
    )
    existing = [p for p in paths if os.path.exists(p)]
    if existing:
        raise SystemExit(f"refusing to overwrite {existing}; remove them or choose another output_dir")
    for path, half in zip(paths, (train, dev)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(half, f, ensure_ascii=False)
        n_q = sum(len(p["qas"]) for a in half["data"] for p in a["paragraphs"])
        print(f"{path}: {len(half['data'])} articles, {n_q} questions")
    return paths


if __name__ == "__main__":
    main()
