"""get_order: whether COO entries are sorted by row ('C'), by column ('F') or neither."""

import numpy
import pytest

from dbr.functions.math.sparse_matmul import get_order


@pytest.mark.parametrize(
    ("row", "col", "expected"),
    [
        ([0, 0, 1, 2], [0, 2, 1, 0], "C"),
        ([1, 0, 2, 0], [0, 1, 1, 2], "F"),
        ([1, 0, 0], [0, 2, 1], "other"),
        ([0, 1, -1], [1, 0, -1], "C"),
        ([[0, 1], [1, 0]], [[0, 0], [0, 1]], "F"),
    ],
)
def test_get_order(row, col, expected):
    assert get_order(numpy.array(row), numpy.array(col)) == expected


def test_get_order_rejects_shapes_that_differ():
    with pytest.raises(ValueError, match=r"get_order: expected row and col of one shape"):
        get_order(numpy.zeros(3, numpy.int32), numpy.zeros(2, numpy.int32))


def test_get_order_rejects_half_unused_entries():
    with pytest.raises(ValueError, match="-1 \\(unused\\) in only one of row and col"):
        get_order(numpy.array([0, 2, -1]), numpy.array([1, 3, 4]))
