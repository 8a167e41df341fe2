import numpy
import pytest

from dbr.datasets.transform_dataset import TransformDataset
from dbr.datasets.tuple_dataset import TupleDataset


def test_transform_applied_on_each_access():
    calls = []

    def transform(example):
        calls.append(example)
        return example + 100

    dataset = TransformDataset([1, 2, 3], transform)
    assert len(dataset) == 3
    assert calls == []
    assert dataset[0] == 101
    assert dataset[0] == 101
    assert calls == [1, 1]


def test_indexing_kinds():
    dataset = TransformDataset(numpy.arange(5), lambda x: int(x) * 2)
    assert dataset[-1] == 8
    assert dataset[1:4] == [2, 4, 6]
    assert dataset[[4, 0]] == [8, 0]
    with pytest.raises(IndexError):
        dataset[5]


def test_tuple_examples():
    base = TupleDataset(numpy.arange(3), numpy.arange(3) * 10)
    dataset = TransformDataset(base, lambda example: (example[1], example[0]))
    assert dataset[2] == (20, 2)


def test_empty():
    dataset = TransformDataset([], lambda x: x)
    assert len(dataset) == 0
    assert dataset[:] == []


def test_transform_must_be_callable():
    with pytest.raises(TypeError, match="transform must be callable, got int"):
        TransformDataset([1], 3)
