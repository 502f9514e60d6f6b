"""What the quickstart shows: a :class:`Row` per claim with its baseline and verdict (works only with a margin,
:data:`MARGIN`), the baselines themselves (best constant prediction, most frequent WordPiece), the closing
``pipeline()`` demo on dev sentences (:func:`dev_showcase`), the final table (:func:`print_table`) and its PNG
(:func:`plot_summary`). Rules: docs/design.md (the quickstart)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..utils.resources import sample_path

#: a row "works" when value >= baseline + MARGIN[kind] (metrics on the 0-1 scale)
MARGIN = {"above": 0.10, "gain": 0.05}
#: what the quickstart says when a row misses its margin (pointers to measured runs)
NOT_SHOWN_GAIN = (
    "Pretraining's gain grows with pretraining compute and shrinks with the number of labels; "
    "docs/results.md#quickstart has the measured runs."
)
NOT_SHOWN = "Runs of this quickstart measured on a 2-core CPU, with every row, are in docs/results.md#quickstart."


@dataclass
class Row:
    """One line of the final table. ``kind``: "above" (value vs a baseline) or "gain" (value vs another run)."""

    step: str
    metric: str
    value: float
    baseline: float
    baseline_name: str
    kind: str = "above"
    note: str = ""
    verdict: str = field(init=False, default="")
    works: bool = field(init=False, default=False)

    def __post_init__(self):
        margin, diff = MARGIN[self.kind], self.value - self.baseline
        self.works = self.value >= self.baseline + margin
        self.verdict = (
            f"works ({diff:+.3f} vs {self.baseline_name})"
            if self.works
            else f"NOT shown: {diff:+.3f} vs {self.baseline_name}, needs {margin:+.2f}"
        )


def constant_baseline(task, raw_dev) -> tuple[float, str]:
    """Best dev score of a constant prediction for ``task``'s primary metric (every label tried: accuracy's best is
    the majority class, F1's the positive class; regression: 0.0, no correlation), and its name."""
    import numpy as np

    if task.problem_type == "regression":
        return 0.0, "no correlation"
    labels = np.asarray(raw_dev[task.label_column])
    scores = {
        value: task.compute_metrics(np.full_like(labels, value), labels)[task.primary_metric]
        for value in set(labels.tolist())
    }
    best = max(scores, key=scores.get)
    majority = Counter(labels.tolist()).most_common(1)[0][0]
    return float(scores[best]), "majority class" if best == majority else f"always {task.label_names[best]!r}"


def unigram_baseline(tokenizer, path: str) -> float:
    """Share of the most frequent WordPiece among all pieces of the corpus at ``path`` (MLM's guess-one-token chance)."""
    with open(path, encoding="utf-8") as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    counts = Counter(i for ids in tokenizer(lines, add_special_tokens=False)["input_ids"] for i in ids)
    return counts.most_common(1)[0][1] / sum(counts.values())


def held_out_rows(train_texts: list[str], dev_texts: list[str]) -> list[int]:
    """Indices of the ``dev_texts`` holding a word (whitespace-separated, lowercased) that no training text holds:
    on the SST-2 sample, a held-out adjective whose polarity only the pretraining corpus shows."""
    seen = {word for text in train_texts for word in text.lower().split()}
    return [i for i, text in enumerate(dev_texts) if not set(text.lower().split()) <= seen]


def dev_showcase(task, folder: str, models: dict[str, str], per_group: int = 3) -> dict:
    """Classify the dev split of sample ``folder`` with each single-sentence classifier of ``models`` (name ->
    folder). Returns each model's accuracy on the sentences with a word never seen in training (:func:`held_out_rows`)
    and on the others, the first ``per_group`` of each group with the first model's answer, and ``lines`` to print."""
    from transformers import pipeline

    raw = task.read_local(sample_path(folder))
    text_column = task.text_columns[0]
    dev = raw[task.eval_splits[0]]
    texts, gold = list(dev[text_column]), [task.label_names[i] for i in dev[task.label_column]]
    held = set(held_out_rows(list(raw[task.train_split][text_column]), texts))
    answers = {
        name: [p["label"] for p in pipeline(task.pipeline_tag, model=path)(texts, batch_size=64)]
        for name, path in models.items()
    }
    groups = {"held-out words": sorted(held), "seen words": [i for i in range(len(texts)) if i not in held]}
    held_acc, seen_acc = (
        {name: sum(answers[name][i] == gold[i] for i in rows) / max(len(rows), 1) for name in models}
        for rows in groups.values()
    )
    first = next(iter(models))
    examples = [
        {"text": texts[i], "label": gold[i], "answer": answers[first][i], "group": group}
        for group, rows in groups.items()
        for i in rows[:per_group]
    ]
    shown = [", ".join(f"{n} {a:.3f}" for n, a in acc.items()) for acc in (held_acc, seen_acc)]
    lines = [
        f"  {e['text']!r}: sample's label {e['label']}, {first} model {e['answer']}"
        f"{'' if e['answer'] == e['label'] else ' (WRONG)'} [{e['group']}]"
        for e in examples
    ]
    lines.append(
        f"  dev accuracy on sentences with a word never seen in training ({len(held)}): {shown[0]}; on the "
        f"others ({len(texts) - len(held)}): {shown[1]}"
    )
    return {
        "n_held_out": len(held),
        "n_seen": len(texts) - len(held),
        "held_out_accuracy": held_acc,
        "seen_accuracy": seen_acc,
        "examples": examples,
        "lines": lines,
    }


def plot_summary(rows: list[Row], path: str) -> str:
    """Bar per row (value), a black tick at its baseline, green when the row works; saved as PNG ``path``."""
    from ..utils.plots import new_figure

    fig, ax = new_figure(figsize=(8, 0.42 * len(rows) + 1.4))
    ys = list(range(len(rows)))[::-1]
    ax.barh(ys, [r.value for r in rows], color=["tab:green" if r.works else "tab:red" for r in rows], alpha=0.8)
    ax.scatter([r.baseline for r in rows], ys, marker="|", s=300, color="black", zorder=3, label="baseline")
    ax.set_yticks(ys, [f"{r.step}: {r.metric}" for r in rows], fontsize=8)
    ax.set(xlim=(0, 1), xlabel="value (green: beats its baseline by the margin)")
    ax.set_title("hf-bert-tasks quickstart", fontsize=10)
    ax.legend(loc="lower right", fontsize=8)
    fig.savefig(path, dpi=110)
    return path


def table_lines(rows: list[Row], summary: dict, output_dir: str, width: int | None = None) -> list[str]:
    """The final table as printed, fitting ``width`` columns (:func:`hf_bert_tasks.console.render_table`; the
    terminal's when ``None``): the rule, a line per row (value, baseline, verdict), a pointer to measured runs for
    each row that missed its margin, and the run's wall and CPU seconds (``summary``'s) with the written files."""
    from ..console import render_table, terminal_width, wrap_words

    width = terminal_width() if width is None else width

    rule = (
        f"A row works when value >= baseline + {MARGIN['above']:.2f} (vs a baseline) or + {MARGIN['gain']:.2f} "
        "(vs another run)."
    )
    table = [(r.step, r.metric, f"{r.value:.4f}", f"{r.baseline:.4f} ({r.baseline_name})", r.verdict) for r in rows]
    missed = [
        f"NOT shown here: {r.step} ({r.metric}). " + (NOT_SHOWN_GAIN if r.kind == "gain" else NOT_SHOWN)
        for r in rows
        if not r.works
    ]
    files = (
        f"wall {summary['total_wall_seconds']:.0f} s, CPU {summary['cpu_seconds']:.0f} s (this process); "
        f"{output_dir}/quickstart_summary.png, {output_dir}/quickstart_summary.json (every number, for scripts)"
    )
    return [
        "",
        *wrap_words(rule, width),
        "",
        *render_table(("step", "metric", "value", "baseline", "verdict"), table, width=width),
        *(line for text in missed for line in wrap_words(text, width)),
        "",
        *wrap_words(files, width),
    ]


def print_table(rows: list[Row], summary: dict, output_dir: str) -> None:
    """Print :func:`table_lines` at the terminal's width."""
    print("\n".join(table_lines(rows, summary, output_dir)))
