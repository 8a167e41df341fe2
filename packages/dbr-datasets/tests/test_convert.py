import pickle

import numpy
import pytest

from dbr.core import backend
from dbr.datasets.convert import (
    ConcatWithAsyncTransfer,
    Converter,
    call_converter,
    concat_examples,
    converter,
    to_device,
)


def assert_same(actual, expected):
    assert type(actual) is type(expected)
    if isinstance(expected, tuple):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e)
    elif isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            assert_same(actual[key], expected[key])
    else:
        assert actual.dtype == expected.dtype
        numpy.testing.assert_array_equal(actual, expected)


def test_arrays_are_stacked():
    batch = [numpy.full((2, 3), i, dtype=numpy.float32) for i in range(4)]
    result = concat_examples(batch)
    assert result.shape == (4, 2, 3) and result.dtype == numpy.float32
    numpy.testing.assert_array_equal(result[:, 0, 0], [0, 1, 2, 3])


def test_numbers_and_lists():
    assert_same(concat_examples([1, 2, 3]), numpy.array([1, 2, 3]))
    assert_same(concat_examples([[1.0, 2.0], [3.0, 4.0]]), numpy.array([[1.0, 2.0], [3.0, 4.0]]))


def test_tuples():
    batch = [(numpy.array([i, i]), numpy.int32(i)) for i in range(3)]
    assert_same(
        concat_examples(batch),
        (numpy.array([[0, 0], [1, 1], [2, 2]]), numpy.array([0, 1, 2], dtype=numpy.int32)),
    )


def test_dicts():
    batch = [{"x": numpy.ones(2) * i, "t": i} for i in range(2)]
    assert_same(
        concat_examples(batch),
        {"x": numpy.array([[0.0, 0.0], [1.0, 1.0]]), "t": numpy.array([0, 1])},
    )


def test_padding():
    batch = [numpy.ones((1, 3), numpy.int32), numpy.ones((2, 1), numpy.int32) * 2]
    expected = numpy.array([[[1, 1, 1], [-1, -1, -1]], [[2, -1, -1], [2, -1, -1]]], numpy.int32)
    assert_same(concat_examples(batch, padding=-1), expected)


def test_padding_per_field():
    batch = [(numpy.ones(1), numpy.ones(2)), (numpy.ones(2), numpy.ones(1))]
    x, t = concat_examples(batch, padding=(0, 9))
    numpy.testing.assert_array_equal(x, [[1, 0], [1, 1]])
    numpy.testing.assert_array_equal(t, [[1, 1], [1, 9]])
    result = concat_examples(
        [{"a": numpy.ones(1), "b": numpy.ones(2)}, {"a": numpy.ones(2), "b": numpy.ones(1)}],
        padding={"a": 5, "b": 7},
    )
    numpy.testing.assert_array_equal(result["a"], [[1, 5], [1, 1]])
    numpy.testing.assert_array_equal(result["b"], [[1, 1], [1, 7]])
    numpy.testing.assert_array_equal(
        concat_examples([(numpy.ones(1), 1), (numpy.ones(2), 2)], padding=0)[0], [[1, 0], [1, 1]]
    )


def test_padding_numbers():
    assert_same(concat_examples([1, 2], padding=0), numpy.array([1, 2]))


def test_device():
    batch = [(numpy.zeros(2), 1)]
    for device in ("@numpy", -1, backend.cpu):
        x, t = concat_examples(batch, device)
        assert isinstance(x, numpy.ndarray) and isinstance(t, numpy.ndarray)


def test_bad_batches():
    with pytest.raises(ValueError, match="concat_examples: batch is empty"):
        concat_examples([])
    with pytest.raises(
        ValueError,
        match=r"example 2 has shape \(3,\), but example 0 has shape \(2,\); pass padding=",
    ):
        concat_examples([numpy.ones(2), numpy.ones(2), numpy.ones(3)])
    with pytest.raises(ValueError, match=r"element 1 of example 1 has shape \(2,\)"):
        concat_examples([(1, numpy.ones(1)), (2, numpy.ones(2))])
    with pytest.raises(
        ValueError, match="example 0 is a tuple of 2 elements, but example 1 is a tuple of 1"
    ):
        concat_examples([(1, 2), (1,)])
    with pytest.raises(ValueError, match=r"example 1 is a dict with keys \['a', 'b'\]"):
        concat_examples([{"a": 1}, {"a": 1, "b": 2}])
    with pytest.raises(ValueError, match="example 1 has 2 dimensions, but example 0 has 1"):
        concat_examples([numpy.ones(2), numpy.ones((2, 2))], padding=0)
    with pytest.raises(ValueError, match="padding has 3 values, but the examples have 2"):
        concat_examples([(1, 2)], padding=(0, 0, 0))
    with pytest.raises(ValueError, match=r"padding has no value for the keys \['b'\]"):
        concat_examples([{"a": 1, "b": 2}], padding={"a": 0})


def test_to_device():
    x = numpy.ones(3)
    assert to_device(None, x) is x
    nested = to_device("@numpy", {"a": (x, [x])})
    assert nested["a"][0] is x and nested["a"][1][0] is x
    assert to_device(-1, x) is x


def test_converter_protocol():
    seen = []

    @converter()
    def new_style(batch, device=None):
        seen.append(device)
        return batch

    def old_style(batch, device=None):
        seen.append(device)
        return batch

    assert isinstance(new_style, Converter)
    assert isinstance(concat_examples, Converter)
    assert new_style.__name__ == "new_style"
    assert call_converter(new_style, [1], "@numpy") == [1]
    assert call_converter(new_style, [1], None) == [1]
    call_converter(old_style, [1], backend.cpu)
    call_converter(old_style, [1], None)
    assert seen == [backend.cpu, None, -1, None]

    def old_style_device_required(batch, device):
        seen.append(("required", device))
        return batch

    call_converter(old_style_device_required, [1], None)
    assert seen[-1] == ("required", None)
    with pytest.raises(TypeError, match="converter: expected a callable"):
        converter()(3)
    with pytest.raises(NotImplementedError):
        Converter()([1], None)


def test_async_transfer_cpu_path_matches_concat_examples():
    convert = ConcatWithAsyncTransfer()
    batches = [
        [(numpy.ones(2) * i, i) for i in range(3)],
        [{"x": numpy.ones(i + 1)} for i in range(2)],
        [numpy.ones(3)],
    ]
    for batch in batches:
        assert_same(convert(batch, padding=0), concat_examples(batch, padding=0))
    with pytest.raises(ValueError, match="ConcatWithAsyncTransfer: batch is empty"):
        convert([])


def test_async_transfer_keeps_its_device():
    convert = ConcatWithAsyncTransfer()
    assert_same(convert([numpy.ones(2)], "@numpy"), numpy.ones((1, 2)))
    with pytest.raises(
        ValueError, match="sends to @numpy, fixed at its first call; got device None"
    ):
        convert([numpy.ones(2)])


def _stack(batch, device=None):
    return numpy.stack(batch)


def test_decorated_converters_pickle_by_name():
    # concat_examples is a Converter object its module holds under the function's name.
    assert pickle.loads(pickle.dumps(concat_examples)) is concat_examples
    wrapped = converter()(_stack)  # bound to another name: pickled with its function
    clone = pickle.loads(pickle.dumps(wrapped))
    assert isinstance(clone, Converter) and clone.function is _stack
    assert_same(clone([numpy.ones(2)], None), numpy.ones((1, 2)))


def test_async_transfer_pickles_with_its_device():
    fresh = pickle.loads(pickle.dumps(ConcatWithAsyncTransfer()))
    assert_same(fresh([numpy.ones(2)], None), numpy.ones((1, 2)))
    used = ConcatWithAsyncTransfer()
    used([numpy.ones(2)], "@numpy")
    clone = pickle.loads(pickle.dumps(used))
    with pytest.raises(ValueError, match="sends to @numpy, fixed at its first call"):
        clone([numpy.ones(2)])
