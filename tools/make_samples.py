"""Write the built-in sample data (hf_bert_tasks/samples/) used by the quickstart and the tests.

Every sentence is generated from the small word lists below (written for this project), with a fixed seed, so the
files are reproducible: ``python tools/make_samples.py``. The tasks are designed so that a tiny BERT (L=2, H=128)
learns them in a minute on a CPU, but not from one word: each label is a *composition* of cues.

* SST-2 format (sentiment): the label is the polarity of the deciding adjective, flipped by a negation
  ("not", "never", "hardly", "did not find"); with "but", the clause after it decides
  ("the plot was dull but the cast was superb" is positive). Two thirds of the adjectives (``*_SEEN``) occur in the
  training split; 10 % of the dev sentences (half of the test sentences) use the others (``*_HELD_OUT``), whose
  polarity only the pretraining corpus reveals.
* MRPC format (paraphrase, half positive): sentence 2 restates the person, object and place of sentence 1 with a
  synonym verb (30 % in another word order); a non-paraphrase reports another event in the same template (another
  person, object and place: found only by comparing the two sentences), or negates the verb ("never"). When only
  the person differed, the tiny model fine-tuned from the quickstart's checkpoint learned the "never" cue alone on
  some seeds (dev F1 0.75 at every epoch): pretraining on a corpus where any person does anything leaves the 24
  names' embeddings close together (mean cosine 0.53 vs 0.00 at random init), and one differing word among nine
  was not found in the budget (docs/results.md#quickstart).
* MNLI format (jsonl premise/hypothesis/label): the label depends on whether the hypothesis's slot matches the
  premise AND on its negation (match: entailment, negated match: contradiction, "only at" another place:
  contradiction, "(never) at" another place: neutral), plus neutral claims the premise does not touch.
* STS-B format: the score grows with the number of slots the two sentences share (0-5, plus small noise).
* CoNLL-2003 format (NER, IOB2; ``word POS chunk NER`` per line, ``-DOCSTART-`` between documents): a person
  (``B-PER``, a surname after it ``I-PER``) does something with an object at a town (``B-LOC``) or for a company
  (``B-ORG I-ORG``) or at an event (``B-MISC I-MISC``); the town, company and event names are invented, and a tenth of
  the names in dev are kept out of train, so the tag comes from the context ("in", "for", "at the") as well as the word.
* SQuAD v1.1 / v2.0 format (the official JSON layout): a paragraph of two or three events; a question asks who did
  something, where, or what; the answer is the span of the context naming it. v2.0 adds a third of unanswerable
  questions (about an object or a person the paragraph does not mention: ``is_impossible``, no answer).
* SWAG format (swagaf CSV): the start is an event, the gold ending continues it with the same person and object
  ("then anna carried the kettle home"); the three distractors change the person or the object or contradict the
  place, so the right ending is found by matching the slots, not from one word.
* Pretraining corpus: one sentence per line, a blank line between documents; each document follows one person
  through episodes: what they did (person, object, place and a synonym of the verb recur within an episode, so a
  masked word can often be copied, and NSP can match names across segments) and what they watched (the consequence,
  "so everyone cheered" / "so everyone left early", reveals the polarity of every adjective, the held-out ones
  included, through negation as in the SST-2 sample).
"""

import json
import os
import random

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "hf_bert_tasks", "samples")

PEOPLE = [
    "anna",
    "bruno",
    "chloe",
    "dmitri",
    "elena",
    "farid",
    "greta",
    "hiro",
    "ines",
    "jonas",
    "kemal",
    "lotte",
    "marek",
    "nadia",
    "oskar",
    "priya",
    "quentin",
    "rosa",
    "sven",
    "talia",
    "umar",
    "vera",
    "wim",
    "yusuf",
]
OBJECTS = [
    "kettle",
    "bicycle",
    "lantern",
    "violin",
    "notebook",
    "umbrella",
    "telescope",
    "basket",
    "compass",
    "blanket",
    "teapot",
    "ladder",
    "camera",
    "helmet",
    "mirror",
    "saddle",
    "canoe",
    "clock",
    "drum",
    "map",
]
PLACES = [
    "harbour",
    "market",
    "library",
    "garden",
    "station",
    "museum",
    "bakery",
    "workshop",
    "village",
    "meadow",
    "castle",
    "orchard",
    "bridge",
    "island",
    "valley",
    "tower",
]
VERBS = [
    ("repaired", "fixed"),
    ("bought", "purchased"),
    ("painted", "coloured"),
    ("found", "discovered"),
    ("sold", "traded"),
    ("cleaned", "washed"),
    ("borrowed", "took"),
    ("carried", "moved"),
]
POS_SEEN = ["wonderful", "delightful", "charming", "brilliant", "lovely", "gripping", "superb", "moving"]
POS_HELD_OUT = ["joyful", "clever", "splendid", "tender"]
NEG_SEEN = ["dull", "tedious", "clumsy", "bland", "awful", "boring", "messy", "shallow"]
NEG_HELD_OUT = ["grim", "stale", "sloppy", "hollow"]
THINGS = ["film", "story", "plot", "ending", "cast", "script", "soundtrack", "opening", "finale", "performance"]
NEGATIONS = ["was not {adj}", "was never {adj}", "was hardly {adj}"]
#: consequences in the pretraining corpus that reveal polarity (positive, negative)
GOOD_THEN = [
    "so everyone cheered",
    "so {p} told all friends about it",
    "so {p} smiled all evening",
    "so the critics praised it",
]
BAD_THEN = [
    "so everyone left early",
    "so {p} asked for a refund",
    "so {p} sighed all evening",
    "so the critics mocked it",
]


def _adjective(rng, positive: bool, held_out: bool) -> str:
    if positive:
        return rng.choice(POS_HELD_OUT if held_out else POS_SEEN)
    return rng.choice(NEG_HELD_OUT if held_out else NEG_SEEN)


def sst2(rng, n, held_out_share=0.0):
    """``n`` (sentence, label) rows; ``held_out_share`` of them use the held-out adjectives."""
    rows = []
    for _ in range(n):
        positive = rng.random() < 0.5
        held = rng.random() < held_out_share
        kind = rng.choices(["plain", "negated", "contrast"], weights=[0.45, 0.35, 0.2])[0]
        thing, other = rng.sample(THINGS, 2)
        if kind == "plain":
            adj = _adjective(rng, positive, held)
            text = rng.choice(
                [
                    f"the {thing} was {adj} .",
                    f"what a {adj} {thing} .",
                    f"i found the {thing} {adj} .",
                    f"a {adj} {thing} from start to end .",
                ]
            )
        elif kind == "negated":
            adj = _adjective(rng, not positive, held)
            text = rng.choice(
                [f"the {thing} " + rng.choice(NEGATIONS).format(adj=adj) + " .", f"i did not find the {thing} {adj} ."]
            )
        else:
            first = _adjective(rng, not positive, held)
            last = _adjective(rng, positive, held)
            text = f"the {other} was {first} but the {thing} was {last} ."
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
        label = int(rng.random() < 0.5)
        negated = False
        if not label:
            if rng.random() < 0.25:
                negated = True
            else:  # another event: person, object and place all differ (found only by comparing the sentences)
                person, obj, place = _other(rng, PEOPLE, person), _other(rng, OBJECTS, obj), _other(rng, PLACES, place)
        did = "never " if negated else ""
        s2 = rng.choices(
            [
                f"{person} {did}{syn} the {obj} near the {place} yesterday .",
                f"yesterday , near the {place} , {person} {did}{syn} the {obj} .",
            ],
            weights=[0.7, 0.3],
        )[0]
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
        rows.append(
            (f"{person} {verb} a {obj} at the {place} .", f"at the {l2} , {p2} {syn} a {o2} .", round(score, 2))
        )
    return rows


def mnli(rng, n):
    rows = []
    for _ in range(n):
        person, obj, place, (verb, syn) = _slots(rng)
        premise = f"{person} {verb} the {obj} at the {place} ."
        label = rng.choice(["entailment", "neutral", "contradiction"])
        form = rng.choice(
            ["place", "place", "object", "object", "claim"] if label == "neutral" else ["place", "object"]
        )
        if form == "place":
            other = _other(rng, PLACES, place)
            hyp = {
                "entailment": f"{person} was at the {place} .",
                "contradiction": rng.choice(
                    [f"{person} was never at the {place} .", f"{person} was only at the {other} ."]
                ),
                "neutral": rng.choice([f"{person} was never at the {other} .", f"{person} was at the {other} ."]),
            }[label]
        elif form == "object":
            other = _other(rng, OBJECTS, obj)
            hyp = {
                "entailment": f"someone {syn} the {obj} .",
                "contradiction": rng.choice([f"nobody {syn} the {obj} .", f"{person} only {syn} the {other} ."]),
                "neutral": rng.choice([f"nobody {syn} the {other} .", f"someone {syn} the {other} ."]),
            }[label]
        else:
            hyp = rng.choice([f"{person} also likes the {rng.choice(OBJECTS)} .", f"the {place} is very old ."])
        rows.append({"premise": premise, "hypothesis": hyp, "label": label})
    return rows


def review(rng, person, thing):
    """One pretraining sentence whose consequence reveals the adjective's polarity (negation included)."""
    positive = rng.random() < 0.5
    held = rng.random() < 0.5  # held-out adjectives are as frequent here as the others
    then = rng.choice(GOOD_THEN if positive else BAD_THEN).format(p=person)
    if rng.random() < 0.35:
        adj = _adjective(rng, not positive, held)
        return f"the {thing} " + rng.choice(NEGATIONS).format(adj=adj) + f" , {then} ."
    adj = _adjective(rng, positive, held)
    return rng.choice([f"the {thing} was {adj} , {then} .", f"it was a {adj} {thing} , {then} ."])


def corpus(rng, n_docs):
    """Documents of episodes about one person: what they did (the object, place and a synonym verb recur, so a
    masked one can be copied) and what they watched (the consequence reveals the adjective's polarity)."""
    docs = []
    for _ in range(n_docs):
        person = rng.choice(PEOPLE)
        home = rng.choice(PLACES)
        lines = [f"{person} lives close to the {home} ."]
        for _ in range(rng.randint(2, 4)):
            _, obj, place, (verb, syn) = _slots(rng)
            if rng.random() < 0.5:
                lines += [
                    f"one morning {person} {verb} a {obj} at the {place} .",
                    f"later {person} {syn} the {obj} again .",
                    f"after that {person} walked back from the {place} to the {home} .",
                ]
            else:
                thing = rng.choice(THINGS)
                lines += [f"in the evening {person} watched a {thing} at the {place} .", review(rng, person, thing)]
        docs.append(lines)
    return docs


TOWNS = [
    "varnholm",
    "kesterby",
    "lundmere",
    "ostravik",
    "pellardy",
    "quorrin",
    "sandovar",
    "tillbrook",
    "wexmoor",
    "yarrowdale",
]
COMPANIES = [
    ("varn", "rail"),
    ("kester", "mills"),
    ("lantern", "press"),
    ("northwind", "trading"),
    ("copper", "works"),
    ("meadow", "dairy"),
    ("harbour", "lines"),
    ("orchard", "foods"),
]
EVENTS = [
    ("midsummer", "fair"),
    ("harvest", "cup"),
    ("lantern", "parade"),
    ("river", "regatta"),
    ("winter", "market"),
    ("kite", "festival"),
]
SURNAMES = ["berg", "castell", "dovrin", "ellery", "forsyth", "galloway", "holm", "ivers", "jansen", "kovac"]


def _kept(rng, pool, held_out: bool, share: float = 0.1):
    """A name of ``pool``: its last tenth (``share``) only when ``held_out`` (dev), else the rest (train)."""
    cut = max(1, int(len(pool) * share))
    return rng.choice(pool[-cut:] if held_out else pool[:-cut])


def conll_sentence(rng, held_out: bool = False) -> list[tuple[str, str, str, str]]:
    """One sentence as ``(word, POS, chunk, NER)`` rows (IOB2), from the templates in the module docstring."""
    person, obj, _, (verb, _) = _slots(rng)
    rows = [(person, "NNP", "B-NP", "B-PER")]
    if rng.random() < 0.5:
        rows.append((rng.choice(SURNAMES), "NNP", "I-NP", "I-PER"))
    rows += [(verb, "VBD", "B-VP", "O"), ("the", "DT", "B-NP", "O"), (obj, "NN", "I-NP", "O")]
    kind = rng.choice(["loc", "org", "misc"])
    if kind == "loc":
        rows += [
            ("in", "IN", "B-PP", "O"),
            (_kept(rng, TOWNS, held_out and rng.random() < 0.5), "NNP", "B-NP", "B-LOC"),
        ]
    elif kind == "org":
        first, second = _kept(rng, COMPANIES, held_out and rng.random() < 0.5)
        rows += [("for", "IN", "B-PP", "O"), (first, "NNP", "B-NP", "B-ORG"), (second, "NNP", "I-NP", "I-ORG")]
    else:
        first, second = _kept(rng, EVENTS, held_out and rng.random() < 0.5)
        rows += [
            ("at", "IN", "B-PP", "O"),
            ("the", "DT", "B-NP", "O"),
            (first, "NN", "I-NP", "B-MISC"),
            (second, "NN", "I-NP", "I-MISC"),
        ]
    return rows + [(".", ".", "O", "O")]


def write_conll(path: str, rng, n_docs: int, held_out: bool) -> None:
    """``n_docs`` documents of 3-6 sentences each, ``-DOCSTART-`` before each, a blank line after each sentence."""
    lines = []
    for _ in range(n_docs):
        lines += ["-DOCSTART- -X- -X- O", ""]
        for _ in range(rng.randint(3, 6)):
            lines += [" ".join(row) for row in conll_sentence(rng, held_out)] + [""]
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def squad_article(rng, index: int, v2: bool) -> dict:
    """One article of the official layout: paragraphs of two or three events, each with its questions (answers are
    spans of the context, ``answer_start`` their character offset); v2.0 adds unanswerable ones."""
    paragraphs = []
    for p in range(4):
        events, sentences = [], []
        for _ in range(rng.randint(2, 3)):
            person, obj, place, (verb, _) = _slots(rng)
            events.append((person, obj, place, verb))
            sentences.append(f"{person} {verb} the {obj} near the {place} .")
        context = " ".join(sentences)
        qas = []
        for k, (person, obj, place, verb) in enumerate(events):
            start = context.index(sentences[k])
            for form in rng.sample(["who", "where", "what"], 2):
                if form == "who":
                    question, answer, offset = f"who {verb} the {obj} ?", person, start
                elif form == "where":
                    question, answer = f"where did {person} go with the {obj} ?", place
                    offset = start + sentences[k].index(f"the {place}") + 4
                else:
                    question, answer = f"which thing was {verb} by {person} near the {place} ?", obj
                    offset = start + sentences[k].index(f"the {obj}") + 4
                assert context[offset : offset + len(answer)] == answer
                qas.append(
                    {
                        "id": f"s{index}-{p}-{len(qas)}",
                        "question": question,
                        "answers": [{"text": answer, "answer_start": offset}],
                        "is_impossible": False,
                    }
                )
        if v2:
            mentioned = {e[1] for e in events} | {e[0] for e in events}
            for _ in range(len(qas) // 2):
                obj = rng.choice([o for o in OBJECTS if o not in mentioned])
                verb = rng.choice(VERBS)[0]
                qas.append(
                    {
                        "id": f"s{index}-{p}-{len(qas)}",
                        "question": f"who {verb} the {obj} ?",
                        "answers": [],
                        "is_impossible": True,
                    }
                )
        if not v2:
            for qa in qas:
                del qa["is_impossible"]
        paragraphs.append({"context": context, "qas": qas})
    return {"title": f"sample_{index}", "paragraphs": paragraphs}


def write_squad(path: str, rng, n_articles: int, v2: bool) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    data = {"version": "v2.0" if v2 else "1.1", "data": [squad_article(rng, i, v2) for i in range(n_articles)]}
    with open(path, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1)
        f.write("\n")


def swag(rng, n):
    """swagaf rows: the gold ending keeps the start's person and object; distractors change one or contradict."""
    rows = []
    for i in range(n):
        person, obj, place, (verb, _) = _slots(rng)
        sent1 = f"{person} {verb} the {obj} near the {place} ."
        sent2 = "then"
        action = rng.choice(["carried", "took", "brought", "sent", "drove"])
        gold = f"{person} {action} the {obj} home ."
        distractors = [
            f"{_other(rng, PEOPLE, person)} {action} the {obj} home .",
            f"{person} {action} the {_other(rng, OBJECTS, obj)} home .",
            f"{person} never saw the {obj} .",
        ]
        label = rng.randrange(4)
        endings = distractors[:label] + [gold] + distractors[label:]
        rows.append([f"sample{i // 4}", str(i), f"{sent1} {sent2}", sent1, sent2, "gold", *endings, str(label)])
    return rows


def write_csv(path: str, header, rows) -> None:
    import csv

    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)


def write_tsv(path, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        if header:
            f.write("\t".join(header) + "\n")
        f.writelines("\t".join(map(str, row)) + "\n" for row in rows)


SEED = 20181011  # the BERT paper's arXiv date; any fixed seed would do


def rng_for(name: str) -> random.Random:
    """One generator per file, so changing one task's design leaves the other files as they were."""
    return random.Random(f"{SEED}-{name}")


def main():
    sizes = {"train": 1600, "dev": 400}
    for split, n in sizes.items():
        held = 0.0 if split == "train" else 0.1
        write_tsv(f"{HERE}/SST-2/{split}.tsv", ["sentence", "label"], sst2(rng_for(f"sst2-{split}"), n, held))
        write_tsv(
            f"{HERE}/MRPC/{split}.tsv",
            ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"],
            [(lab, 1000 + i, 5000 + i, a, b) for i, (lab, a, b) in enumerate(mrpc(rng_for(f"mrpc-{split}"), n))],
        )
        write_tsv(
            f"{HERE}/STS-B/{split}.tsv",
            [
                "index",
                "genre",
                "filename",
                "year",
                "old_index",
                "source1",
                "source2",
                "sentence1",
                "sentence2",
                "score",
            ],
            [
                (i, "sample", "gen", "2026", i, "none", "none", a, b, s)
                for i, (a, b, s) in enumerate(stsb(rng_for(f"stsb-{split}"), n // 2))
            ],
        )
        name = "train.jsonl" if split == "train" else "dev_matched.jsonl"
        os.makedirs(f"{HERE}/MNLI", exist_ok=True)
        with open(f"{HERE}/MNLI/{name}", "w", encoding="utf-8") as f:
            f.writelines(json.dumps(row) + "\n" for row in mnli(rng_for(f"mnli-{split}"), n))
    write_tsv(
        f"{HERE}/SST-2/test.tsv",
        ["index", "sentence"],
        [(i, s) for i, (s, _) in enumerate(sst2(rng_for("sst2-test"), 50, 0.5))],
    )
    write_tsv(
        f"{HERE}/MRPC/test.tsv",
        ["index", "#1 ID", "#2 ID", "#1 String", "#2 String"],
        [(i, 9000 + i, 9500 + i, a, b) for i, (_, a, b) in enumerate(mrpc(rng_for("mrpc-test"), 50))],
    )
    for split, (docs, held) in {"train": (120, False), "valid": (30, True), "test": (20, True)}.items():
        write_conll(f"{HERE}/CoNLL-2003/{split}.txt", rng_for(f"conll-{split}"), docs, held)
    for version, v2 in (("v1.1", False), ("v2.0", True)):
        for split, n in (("train", 40), ("dev", 10)):
            folder = "SQuAD-v2.0" if v2 else "SQuAD-v1.1"
            write_squad(f"{HERE}/{folder}/{split}-{version}.json", rng_for(f"squad-{version}-{split}"), n, v2)
    header = [
        "video-id",
        "fold-ind",
        "startphrase",
        "sent1",
        "sent2",
        "gold-source",
        "ending0",
        "ending1",
        "ending2",
        "ending3",
        "label",
    ]
    for split, n in (("train", 800), ("val", 200)):
        write_csv(f"{HERE}/SWAG/{split}.csv", header, swag(rng_for(f"swag-{split}"), n))
    os.makedirs(f"{HERE}/pretraining", exist_ok=True)
    with open(f"{HERE}/pretraining/corpus.txt", "w", encoding="utf-8") as f:
        f.write("\n\n".join("\n".join(doc) for doc in corpus(rng_for("corpus"), 1200)) + "\n")


if __name__ == "__main__":
    main()
