import numpy
import pytest

from dbr.datasets.dataset_mixin import DatasetMixin


class Squares(DatasetMixin):
    def __init__(self, n):
        self.n = n
        self.calls = []

    def __len__(self):
        return self.n

    def get_example(self, i):
        self.calls.append(i)
        return i * i


def test_int_index_calls_get_example():
    dataset = Squares(5)
    assert dataset[3] == 9
    assert dataset.calls == [3]


def test_numpy_integer_index():
    assert Squares(5)[numpy.int64(2)] == 4


def test_negative_index_is_resolved_before_get_example():
    dataset = Squares(5)
    assert dataset[-1] == 16
    assert dataset[-5] == 0
    assert dataset.calls == [4, 0]


@pytest.mark.parametrize("index", [5, -6, 100])
def test_out_of_range_index_raises_index_error(index):
    with pytest.raises(IndexError, match=rf"Squares: index {index} is out of range .* length 5"):
        Squares(5)[index]


@pytest.mark.parametrize(
    "index, expected",
    [
        (slice(1, 4), [1, 4, 9]),
        (slice(None, None, 2), [0, 4, 16]),
        (slice(None, None, -1), [16, 9, 4, 1, 0]),
        (slice(-2, None), [9, 16]),
        (slice(3, 100), [9, 16]),
        (slice(4, 1), []),
    ],
)
def test_slice_returns_list(index, expected):
    assert Squares(5)[index] == expected


def test_list_and_array_of_indices():
    dataset = Squares(5)
    assert dataset[[4, 0, -1]] == [16, 0, 16]
    assert dataset[numpy.array([1, 2], dtype=numpy.int32)] == [1, 4]
    assert dataset[[]] == []


def test_list_with_out_of_range_index_raises():
    with pytest.raises(IndexError):
        Squares(3)[[0, 3]]


def test_bad_index_types_raise_type_error():
    dataset = Squares(3)
    with pytest.raises(TypeError, match="Squares: an index must be an int"):
        dataset["1"]
    with pytest.raises(TypeError, match="Squares: an index must be an int"):
        dataset[1.0]
    with pytest.raises(TypeError, match="1-d and of an integer dtype"):
        dataset[numpy.array([True, False, True])]
    with pytest.raises(TypeError, match="1-d and of an integer dtype"):
        dataset[numpy.zeros((1, 2), dtype=int)]


def test_empty_dataset():
    dataset = Squares(0)
    assert len(dataset) == 0
    assert dataset[:] == []
    assert list(dataset) == []
    with pytest.raises(IndexError):
        dataset[0]


def test_iteration_stops_at_the_end():
    assert list(Squares(4)) == [0, 1, 4, 9]


def test_abstract_methods_raise_not_implemented():
    class Bare(DatasetMixin):
        pass

    with pytest.raises(NotImplementedError, match="Bare must implement __len__"):
        len(Bare())
    with pytest.raises(NotImplementedError, match="Bare must implement get_example"):
        Bare().get_example(0)
