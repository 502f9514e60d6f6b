"""qa_postprocess.features_to_arrays: evaluation features (a datasets.Dataset or plain columns) -> padded numpy arrays."""

import numpy as np
import pytest
from datasets import Dataset

from hf_bert_tasks.tasks.squad.postprocess import features_to_arrays

# Three features of two examples; rows have 3, 2 and 4 positions (ragged, as windows of different lengths are).
COLUMNS = {
    "example_id": ["b", "a", "b"],
    "offset_mapping": [[[-1, -1], [0, 3], [4, 7]], [[-1, -1], [2, 5]], [[-1, -1], [8, 9], [10, 12], [-1, -1]]],
    "token_is_max_context": [[False, True, True], [False, True], [False, True, False, False]],
}
IDS = ["a", "b"]
EXPECTED_INDEX = np.array([1, 0, 1])
EXPECTED_OFFSETS = np.array(
    [
        [[-1, -1], [0, 3], [4, 7], [-1, -1]],
        [[-1, -1], [2, 5], [-1, -1], [-1, -1]],
        [[-1, -1], [8, 9], [10, 12], [-1, -1]],
    ]
)
EXPECTED_MAX_CONTEXT = np.array(
    [
        [False, True, True, False],
        [False, True, False, False],
        [False, True, False, False],
    ]
)


def assert_arrays(got, index, offsets, max_context):
    got_index, got_offsets, got_max_context = got
    np.testing.assert_array_equal(got_index, index)
    np.testing.assert_array_equal(got_offsets, offsets)
    np.testing.assert_array_equal(got_max_context, max_context)
    assert got_index.dtype == np.int64 and got_offsets.dtype == np.int64 and got_max_context.dtype == bool


def test_plain_columns_are_padded_to_the_longest_feature():
    assert_arrays(features_to_arrays(COLUMNS, IDS), EXPECTED_INDEX, EXPECTED_OFFSETS, EXPECTED_MAX_CONTEXT)


def test_a_dataset_gives_the_same_arrays_as_its_columns():
    assert_arrays(
        features_to_arrays(Dataset.from_dict(COLUMNS), IDS), EXPECTED_INDEX, EXPECTED_OFFSETS, EXPECTED_MAX_CONTEXT
    )


def test_a_selected_dataset_is_read_in_its_own_row_order():
    # select() keeps the table and adds an indices mapping: rows 2 then 0, and the width is theirs (4)
    selected = Dataset.from_dict(COLUMNS).select([2, 0])
    assert_arrays(
        features_to_arrays(selected, IDS),
        EXPECTED_INDEX[[2, 0]],
        EXPECTED_OFFSETS[[2, 0]],
        EXPECTED_MAX_CONTEXT[[2, 0]],
    )


def test_a_dataset_slice_pads_to_its_own_longest_row():
    # rows 0-1 only: the longest has 3 positions, so the arrays are 3 wide
    sliced = Dataset.from_dict(COLUMNS).select(range(2))
    _, offsets, max_context = features_to_arrays(sliced, IDS)
    np.testing.assert_array_equal(offsets, EXPECTED_OFFSETS[:2, :3])
    np.testing.assert_array_equal(max_context, EXPECTED_MAX_CONTEXT[:2, :3])


def test_an_offset_entry_that_is_not_a_pair_names_the_column_and_row():
    bad = dict(
        COLUMNS,
        offset_mapping=[[[-1, -1], [0, 3], [4, 7]], [[-1, -1], [2, 5, 6]], [[-1, -1], [8, 9], [10, 12], [-1, -1]]],
    )
    with pytest.raises(ValueError, match=r"'offset_mapping', row 1: .*pair.*length 3"):
        features_to_arrays(Dataset.from_dict(bad), IDS)


def test_rows_whose_two_columns_differ_in_length_are_named():
    bad = dict(COLUMNS, token_is_max_context=[[False, True, True], [False, True, True], [False, True, False, False]])
    with pytest.raises(ValueError, match=r"row 1: 'offset_mapping' has 2 positions but 'token_is_max_context' 3"):
        features_to_arrays(Dataset.from_dict(bad), IDS)


def test_an_unknown_example_id_is_a_key_error():
    with pytest.raises(KeyError, match="c"):
        features_to_arrays(Dataset.from_dict(dict(COLUMNS, example_id=["b", "a", "c"])), IDS)
