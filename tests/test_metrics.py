"""GLUE metrics on hand-computed cases and their degenerate inputs."""

import math

import numpy as np
import pytest

from hf_bert_tasks.tasks import metrics as M


def test_accuracy_and_f1_on_a_hand_computed_case():
    preds = np.array([1, 1, 0, 0, 1])
    refs = np.array([1, 0, 0, 1, 1])
    assert M.accuracy(preds, refs) == 0.6
    # tp=2, fp=1, fn=1 -> P=R=2/3 -> F1=2/3
    assert M.binary_f1(preds, refs) == pytest.approx(2 / 3)


def test_matthews_correlation_hand_computed():
    preds = np.array([1, 1, 0, 0, 1])
    refs = np.array([1, 0, 0, 1, 1])
    # tp=2 tn=1 fp=1 fn=1: (2*1 - 1*1) / sqrt(3*3*2*2) = 1/6
    assert M.matthews_correlation(preds, refs) == pytest.approx(1 / 6)


def test_matthews_correlation_of_constant_predictions_is_zero_not_nan():
    assert M.matthews_correlation(np.array([1, 1, 1, 1]), np.array([0, 1, 0, 1])) == 0.0


def test_pearson_and_spearman_hand_computed():
    preds = np.array([1.0, 2.0, 3.0, 4.0])
    refs = np.array([2.0, 4.0, 6.0, 9.0])
    assert M.spearman(preds, refs) == pytest.approx(1.0)
    # deviations (-1.5, -0.5, 0.5, 1.5) x (-3.25, -1.25, 0.75, 3.75): 11.5 / sqrt(5 * 26.75)
    assert M.pearson(preds, refs) == pytest.approx(11.5 / math.sqrt(5 * 26.75))


def test_pearson_of_constant_predictions_is_nan_with_a_warning():
    with pytest.warns(UserWarning, match="constant"):
        value = M.pearson(np.array([3.0, 3.0, 3.0]), np.array([1.0, 2.0, 5.0]))
    assert math.isnan(value)


def test_shape_mismatch_is_a_clear_error():
    with pytest.raises(ValueError, match="shape"):
        M.accuracy(np.array([1, 0]), np.array([1, 0, 1]))
