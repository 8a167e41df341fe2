import numpy
import pytest

from dbr.datasets.dict_dataset import DictDataset


@pytest.fixture
def dataset():
    return DictDataset(x=numpy.arange(8).reshape(4, 2), t=[10, 11, 12, 13])


def test_len(dataset):
    assert len(dataset) == 4


def test_int_index_returns_dict(dataset):
    example = dataset[2]
    assert set(example) == {"x", "t"}
    numpy.testing.assert_array_equal(example["x"], [4, 5])
    assert example["t"] == 12


def test_negative_index(dataset):
    assert dataset[-4]["t"] == 10


@pytest.mark.parametrize("index", [4, -5])
def test_out_of_range(dataset, index):
    with pytest.raises(IndexError, match="DictDataset: index"):
        dataset[index]


def test_slice_returns_list_of_dicts(dataset):
    batch = dataset[1::2]
    assert [example["t"] for example in batch] == [11, 13]
    numpy.testing.assert_array_equal(batch[1]["x"], [6, 7])
    assert dataset[2:2] == []


@pytest.mark.parametrize("index", [[2, -1], numpy.array([2, -1])])
def test_list_and_array_indices(dataset, index):
    assert [example["t"] for example in dataset[index]] == [12, 13]


def test_empty():
    dataset = DictDataset(a=[], b=numpy.zeros(0))
    assert len(dataset) == 0
    assert dataset[:] == []
    with pytest.raises(IndexError):
        dataset[-1]


def test_mismatched_lengths_name_the_keys_and_lengths():
    with pytest.raises(ValueError, match=r"same length, got \{'a': 2, 'b': 3\}"):
        DictDataset(a=[1, 2], b=[1, 2, 3])


def test_no_datasets():
    with pytest.raises(ValueError, match="no datasets"):
        DictDataset()
