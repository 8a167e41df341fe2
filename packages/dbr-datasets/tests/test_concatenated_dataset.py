import numpy
import pytest

from dbr.datasets.concatenated_dataset import ConcatenatedDataset


@pytest.fixture
def dataset():
    return ConcatenatedDataset([0, 1], [], numpy.array([2, 3, 4]), [5])


def test_len(dataset):
    assert len(dataset) == 6


def test_every_index_and_empty_parts(dataset):
    assert [int(dataset[i]) for i in range(6)] == [0, 1, 2, 3, 4, 5]


def test_negative_index(dataset):
    assert dataset[-1] == 5
    assert dataset[-4] == 2


@pytest.mark.parametrize("index", [6, -7])
def test_out_of_range(dataset, index):
    with pytest.raises(IndexError, match="ConcatenatedDataset: index"):
        dataset[index]


def test_slices_and_lists(dataset):
    assert [int(x) for x in dataset[1:4]] == [1, 2, 3]
    assert [int(x) for x in dataset[[5, 0]]] == [5, 0]


def test_get_example_rejects_negative(dataset):
    with pytest.raises(IndexError):
        dataset.get_example(-1)


def test_no_datasets():
    dataset = ConcatenatedDataset()
    assert len(dataset) == 0
    assert dataset[:] == []
    with pytest.raises(IndexError):
        dataset[0]
