"""benchmarks/padding_fraction.py's arithmetic on literal lengths (the corpus run itself is a benchmark)."""

import os
import sys

import pytest

from tests.conftest import REPO

sys.path.insert(0, os.path.join(REPO, "benchmarks"))
from padding_fraction import padding_fractions


def test_fixed_and_one_batch_dynamic_padding():
    r = padding_fractions([128, 64, 128, 32], seq=128, batch=4)
    assert r["fixed"] == pytest.approx(1 - 352 / 512)  # 160 of 512 positions are padding
    assert r["dynamic"] == pytest.approx(1 - 352 / 512)  # the one batch's longest is 128
    assert r["short_share"] == 0.5 and r["mean_length"] == 88.0 and r["batches"] == 1


def test_dynamic_padding_pads_each_batch_to_its_longest():
    r = padding_fractions([32, 32, 32, 32], seq=128, batch=2)
    assert r["fixed"] == pytest.approx(0.75) and r["dynamic"] == 0.0


def test_batch_of_one_has_no_dynamic_padding():
    assert padding_fractions([10, 20, 128], seq=128, batch=1)["dynamic"] == 0.0


def test_instances_longer_than_seq_or_too_few_are_refused():
    with pytest.raises(ValueError, match="each <= 128 tokens"):
        padding_fractions([129], seq=128, batch=1)
    with pytest.raises(ValueError, match="no full batch of 4"):
        padding_fractions([10, 20], seq=128, batch=4)
