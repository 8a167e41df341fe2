import numpy
import pytest

from dbr.datasets.dataset_mixin import DatasetMixin
from dbr.datasets.tuple_dataset import TupleDataset


class Doubles(DatasetMixin):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def get_example(self, i):
        return 2 * i


@pytest.fixture
def dataset():
    x = numpy.arange(12, dtype=numpy.float32).reshape(4, 3)
    t = numpy.array([0, 1, 2, 3], dtype=numpy.int32)
    return TupleDataset(x, t, ["a", "b", "c", "d"], Doubles(4))


def test_len(dataset):
    assert len(dataset) == 4


def test_int_index_returns_tuple(dataset):
    x, t, s, d = dataset[1]
    numpy.testing.assert_array_equal(x, [3, 4, 5])
    assert (t, s, d) == (1, "b", 2)


def test_negative_index(dataset):
    x, t, s, d = dataset[-1]
    numpy.testing.assert_array_equal(x, [9, 10, 11])
    assert (t, s, d) == (3, "d", 6)


@pytest.mark.parametrize("index", [4, -5])
def test_out_of_range(dataset, index):
    with pytest.raises(IndexError, match="TupleDataset: index .* length 4"):
        dataset[index]


def test_slice_returns_list_of_tuples(dataset):
    batch = dataset[1:3]
    assert isinstance(batch, list)
    assert [(t, s, d) for _, t, s, d in batch] == [(1, "b", 2), (2, "c", 4)]
    assert all(isinstance(example, tuple) for example in batch)
    numpy.testing.assert_array_equal(batch[1][0], [6, 7, 8])


def test_reverse_and_empty_slices(dataset):
    assert [t for _, t, _, _ in dataset[::-1]] == [3, 2, 1, 0]
    assert dataset[3:1] == []


@pytest.mark.parametrize("index", [[3, 0, -1], numpy.array([3, 0, -1])])
def test_list_and_array_indices(dataset, index):
    batch = dataset[index]
    assert [(t, s, d) for _, t, s, d in batch] == [(3, "d", 6), (0, "a", 0), (3, "d", 6)]


def test_single_dataset_gives_one_tuples():
    dataset = TupleDataset([5, 6])
    assert dataset[0] == (5,)
    assert dataset[:] == [(5,), (6,)]


def test_empty_datasets():
    dataset = TupleDataset([], numpy.zeros((0, 2)))
    assert len(dataset) == 0
    assert dataset[:] == []
    with pytest.raises(IndexError):
        dataset[0]


def test_mismatched_lengths_name_the_lengths():
    with pytest.raises(ValueError, match=r"same length, got lengths \[3, 2\]"):
        TupleDataset([1, 2, 3], [1, 2])


def test_no_datasets():
    with pytest.raises(ValueError, match="no datasets"):
        TupleDataset()
