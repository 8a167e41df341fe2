import numpy
import pytest

from dbr.core import InvalidType, initializers
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.embed_id import EmbedID


def test_positional_and_keyword_forms():
    link = EmbedID(5, 3)
    assert link.W.shape == (5, 3) and link.W.dtype == numpy.float32 and link.ignore_label is None
    W = numpy.arange(15, dtype=numpy.float32).reshape(5, 3)
    link = EmbedID(in_size=5, out_size=3, initialW=W, ignore_label=-1)
    assert link.ignore_label == -1
    numpy.testing.assert_array_equal(link.W.array, W)
    link = EmbedID(5, 3, initializers.One(), 2)
    assert link.ignore_label == 2
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((5, 3), numpy.float32))


def test_default_initializer_is_unit_normal():
    numpy.random.seed(1)
    link = EmbedID(500, 200)
    assert abs(float(link.W.array.std()) - 1.0) < 0.01
    assert abs(float(link.W.array.mean())) < 0.01


def test_from_params():
    W = numpy.random.rand(4, 2).astype(numpy.float32)
    link = EmbedID.from_params(W, ignore_label=0)
    assert link.W.shape == (4, 2) and link.W.dtype == numpy.float32 and link.ignore_label == 0
    assert link.W.array is not W
    numpy.testing.assert_array_equal(link.W.array, W)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_values(dtype):
    link = make_link(EmbedID, dtype, 5, 3)
    x = numpy.array([[0, 4, 2], [1, 1, 3]], numpy.int32)
    y = link(x)
    assert y.shape == (2, 3, 3) and y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, link.W.array[x])


def test_ignore_label():
    link = EmbedID(5, 3, ignore_label=-1)
    x = numpy.array([0, -1, 4], numpy.int32)
    y = link(x).array
    numpy.testing.assert_array_equal(y[1], numpy.zeros(3, numpy.float32))
    numpy.testing.assert_array_equal(y[[0, 2]], link.W.array[[0, 4]])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ignore_label", [None, 1])
def test_backward(dtype, ignore_label):
    link = make_link(EmbedID, dtype, 4, 2, ignore_label=ignore_label)
    x = numpy.array([0, 1, 3, 3], numpy.int32)
    gy = numpy.random.uniform(-1, 1, (4, 2)).astype(dtype)
    check_backward(
        link, x, gy, params=(link.W,), dtype=numpy.float64, **tolerances(dtype, "backward")
    )


def test_gradient_of_ignored_row_is_zero():
    link = EmbedID(4, 2, ignore_label=1)
    link.cleargrads()
    y = link(numpy.array([0, 1, 1], numpy.int32))
    y.grad = numpy.ones((3, 2), numpy.float32)
    y.backward()
    expected = numpy.array([[1, 1], [0, 0], [0, 0], [0, 0]], numpy.float32)
    assert_allclose(link.W.grad, expected, **tolerances("float32"))


def test_param_names():
    assert param_names(EmbedID(5, 3)) == ["/W"]
    assert persistent_names(EmbedID(5, 3)) == []


def test_round_trip():
    check_round_trip(EmbedID(5, 3), EmbedID(5, 3))


def test_copy_modes():
    check_copy_modes(EmbedID(5, 3))


_EMBED = EmbedID(3, 2)

test_bad_input = bad_input_test(
    [
        (
            _EMBED,
            (numpy.array([0, 3], numpy.int32),),
            {},
            ValueError,
            ("embed_id: ", "0 <= x < len(W) == 3, got 3"),
        ),
        (
            _EMBED,
            (numpy.array([0.0, 1.0], numpy.float32),),
            {},
            InvalidType,
            ("EmbedIDFunction", "x.dtype.kind == 'i'"),
        ),
        ((0, 2), ValueError, "EmbedID: in_size must be a positive int, got"),
        ((3, None), ValueError, "EmbedID: out_size must be a positive int, got"),
    ],
    function=EmbedID,
)
