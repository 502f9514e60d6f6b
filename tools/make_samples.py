"""Write the built-in sample data (hf_bert_tasks/samples/) used by the quickstart and the tests.

Every sentence is generated from the small word lists below (written for this project), with a fixed seed, so the
files are reproducible: ``python tools/make_samples.py``. The tasks are designed to be *learnable* by a tiny BERT in
a minute on a CPU, so the quickstart can show that fine-tuning beats the majority-class baseline:

* SST-2 format: the label follows the polarity of the adjectives, flipped by "not".
* MRPC format: a paraphrase keeps the person, object and place of sentence 1 in another word order with a
  synonym verb; a non-paraphrase swaps two of them.
* STS-B format: the score grows with the number of slots the two sentences share (0-5, plus small noise).
* MNLI format (jsonl, premise/hypothesis/label): entailment restates a slot, contradiction negates it, neutral adds
  an unrelated claim.
* Pretraining corpus: one sentence per line, a blank line between documents; each document follows one person.
"""

import json
import os
import random

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hf_bert_tasks", "samples")

PEOPLE = ["anna", "bruno", "chloe", "dmitri", "elena", "farid", "greta", "hiro", "ines", "jonas", "kemal", "lotte",
          "marek", "nadia", "oskar", "priya", "quentin", "rosa", "sven", "talia", "umar", "vera", "wim", "yusuf"]
OBJECTS = ["kettle", "bicycle", "lantern", "violin", "notebook", "umbrella", "telescope", "basket", "compass",
           "blanket", "teapot", "ladder", "camera", "helmet", "mirror", "saddle", "canoe", "clock", "drum", "map"]
PLACES = ["harbour", "market", "library", "garden", "station", "museum", "bakery", "workshop", "village",
          "meadow", "castle", "orchard", "bridge", "island", "valley", "tower"]
VERBS = [("repaired", "fixed"), ("bought", "purchased"), ("painted", "coloured"), ("found", "discovered"),
         ("sold", "traded"), ("cleaned", "washed"), ("borrowed", "took"), ("carried", "moved")]
POS = ["wonderful", "delightful", "charming", "brilliant", "warm", "lovely", "gripping", "clever", "joyful", "superb"]
NEG = ["dull", "tedious", "clumsy", "bland", "awful", "boring", "messy", "shallow", "grim", "weak"]
THINGS = ["film", "story", "plot", "ending", "cast", "script", "soundtrack", "opening", "finale", "performance"]


def sst2(rng, n):
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        negated = rng.random() < 0.25
        adj = rng.choice(POS if positive != negated else NEG)
        thing = rng.choice(THINGS)
        if negated:
            text = f"the {thing} was not {adj} at all ."
        else:
            text = rng.choice([f"the {thing} was {adj} .", f"a {adj} {thing} , truly {adj} .", f"what a {adj} {thing} ."])
        rows.append((text, int(positive)))
    return rows


def _slots(rng):
    return rng.choice(PEOPLE), rng.choice(OBJECTS), rng.choice(PLACES), rng.choice(VERBS)


def _other(rng, pool, value):
    return rng.choice([x for x in pool if x != value])


def mrpc(rng, n):
    rows = []
    for _ in range(n):
        person, obj, place, (verb, syn) = _slots(rng)
        s1 = f"{person} {verb} the {obj} near the {place} yesterday ."
        label = int(rng.random() < 0.6)
        if not label:
            which = rng.sample(["person", "obj", "place"], 2)
            person = _other(rng, PEOPLE, person) if "person" in which else person
            obj = _other(rng, OBJECTS, obj) if "obj" in which else obj
            place = _other(rng, PLACES, place) if "place" in which else place
        s2 = f"yesterday , near the {place} , {person} {syn} the {obj} ."
        rows.append((label, s1, s2))
    return rows


def stsb(rng, n):
    rows = []
    for _ in range(n):
        person, obj, place, (verb, syn) = _slots(rng)
        keep = rng.randint(0, 3)
        kept = set(rng.sample(["person", "obj", "place"], keep))
        p2 = person if "person" in kept else _other(rng, PEOPLE, person)
        o2 = obj if "obj" in kept else _other(rng, OBJECTS, obj)
        l2 = place if "place" in kept else _other(rng, PLACES, place)
        score = min(5.0, max(0.0, keep * 5 / 3 + rng.uniform(-0.3, 0.3)))
        rows.append((f"{person} {verb} a {obj} at the {place} .", f"at the {l2} , {p2} {syn} a {o2} .", round(score, 2)))
    return rows


def mnli(rng, n):
    rows = []
    for _ in range(n):
        person, obj, place, (verb, syn) = _slots(rng)
        premise = f"{person} {verb} the {obj} at the {place} ."
        label = rng.choice(["entailment", "neutral", "contradiction"])
        if label == "entailment":
            hyp = rng.choice([f"{person} was at the {place} .", f"someone {syn} the {obj} ."])
        elif label == "contradiction":
            hyp = rng.choice([f"{person} was never at the {place} .", f"nobody {syn} the {obj} ."])
        else:
            hyp = rng.choice([f"{person} also likes the {_other(rng, OBJECTS, obj)} .", f"the {place} is very old ."])
        rows.append({"premise": premise, "hypothesis": hyp, "label": label})
    return rows


def corpus(rng, n_docs):
    docs = []
    for _ in range(n_docs):
        person = rng.choice(PEOPLE)
        home = rng.choice(PLACES)
        lines = [f"{person} lives close to the {home} ."]
        for _ in range(rng.randint(3, 9)):
            _, obj, place, (verb, syn) = _slots(rng)
            adj = rng.choice(POS + NEG)
            lines.append(rng.choice([
                f"one morning {person} {verb} a {adj} {obj} at the {place} .",
                f"later the {obj} was {adj} , so {person} {syn} it again .",
                f"people at the {place} said the {obj} looked {adj} .",
                f"after that {person} walked back from the {place} to the {home} .",
            ]))
        docs.append(lines)
    return docs


def write_tsv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if header:
            f.write("\t".join(header) + "\n")
        for row in rows:
            f.write("\t".join(map(str, row)) + "\n")


def main():
    rng = random.Random(20181011)  # the BERT paper's arXiv date; any fixed seed would do
    for split, n in (("train", 600), ("dev", 200)):
        write_tsv(f"{HERE}/SST-2/{split}.tsv", ["sentence", "label"], sst2(rng, n))
        write_tsv(f"{HERE}/MRPC/{split}.tsv", ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
                  [(lab, 1000 + i, 5000 + i, a, b) for i, (lab, a, b) in enumerate(mrpc(rng, n))])
        write_tsv(f"{HERE}/STS-B/{split}.tsv",
                  ["index", "genre", "filename", "year", "old_index", "source1", "source2", "sentence1", "sentence2", "score"],
                  [(i, "sample", "gen", "2026", i, "none", "none", a, b, s) for i, (a, b, s) in enumerate(stsb(rng, n))])
        name = "train.jsonl" if split == "train" else "dev_matched.jsonl"
        os.makedirs(f"{HERE}/MNLI", exist_ok=True)
        with open(f"{HERE}/MNLI/{name}", "w", encoding="utf-8") as f:
            for row in mnli(rng, n):
                f.write(json.dumps(row) + "\n")
    write_tsv(f"{HERE}/SST-2/test.tsv", ["index", "sentence"], [(i, s) for i, (s, _) in enumerate(sst2(rng, 50))])
    write_tsv(f"{HERE}/MRPC/test.tsv", ["index", "#1 ID", "#2 ID", "#1 String", "#2 String"],
              [(i, 9000 + i, 9500 + i, a, b) for i, (_, a, b) in enumerate(mrpc(rng, 50))])
    os.makedirs(f"{HERE}/pretraining", exist_ok=True)
    with open(f"{HERE}/pretraining/corpus.txt", "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(doc) for doc in corpus(rng, 400)) + "\n")


if __name__ == "__main__":
    main()
