"""Reference numbers from the BERT paper (Devlin et al., 2018, arXiv:1810.04805v2): code that prints or plots a paper
number (cards, reports, plots) imports it from here."""

from __future__ import annotations

#: Table 7, feature-based approach (BERT-BASE, frozen, two-layer 768-unit BiLSTM head): CoNLL-2003 **dev** F1 (x100)
#: per layer strategy, keyed by our ``--feature_strategy`` names. ``scalar_mix`` has no row in the paper.
TABLE7_FEATURE_BASED_DEV_F1: dict[str, float] = {
    "embeddings": 91.0,
    "second_to_last": 95.6,
    "last": 94.9,
    "sum_last_four": 95.9,
    "concat_last_four": 96.1,
    "sum_all": 95.5,
}

#: Table 7, fine-tuning approach: CoNLL-2003 dev F1 (x100).
TABLE7_FINETUNE_DEV_F1: dict[str, float] = {"BERT-LARGE": 96.6, "BERT-BASE": 96.4}

#: The task Table 7 reports on (our registered name) and how reports cite it.
TABLE7_TASK = "conll2003"
TABLE7_SOURCE = "Table 7 (dev F1, BERT-BASE)"
