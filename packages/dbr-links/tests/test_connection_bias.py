import numpy
import pytest

from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.bias import Bias


def _make(dtype, *args, **kwargs):
    link = make_link(Bias, dtype, *args, **kwargs)
    if hasattr(link, "b"):
        link.b.array[...] = numpy.random.uniform(-1, 1, link.b.shape)
    return link


def test_positional_and_keyword_forms():
    link = Bias(2, (3, 4))
    assert link.axis == 2 and link.b.shape == (3, 4)
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros((3, 4), numpy.float32))
    link = Bias(axis=0, shape=5)
    assert link.axis == 0 and link.b.shape == (5,)
    link = Bias()
    assert link.axis == 1 and not hasattr(link, "b")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_with_parameter(dtype):
    link = _make(dtype, 1, (3, 4))
    x = numpy.random.uniform(-1, 1, (2, 3, 4, 5)).astype(dtype)
    y = link(x)
    assert y.shape == x.shape and y.dtype == dtype
    assert_allclose(y.array, x + link.b.array[None, :, :, None], **tolerances(dtype))


def test_forward_negative_axis():
    link = _make(numpy.float32, -1, 5)
    x = numpy.random.rand(2, 3, 5).astype(numpy.float32)
    assert_allclose(link(x).array, x + link.b.array, **tolerances("float32"))


def test_forward_with_given_bias():
    link = Bias(axis=1)
    x = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    y = numpy.random.rand(3).astype(numpy.float32)
    assert_allclose(link(x, y).array, x + y[:, None], **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    link = _make(dtype, 1, 3)
    x = numpy.random.uniform(-1, 1, (2, 3, 2)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (2, 3, 2)).astype(dtype)
    check_backward(
        link, x, gy, params=(link.b,), dtype=numpy.float64, **tolerances(dtype, "backward")
    )


def test_backward_given_bias():
    link = Bias(axis=1)
    x = numpy.random.rand(2, 3)
    y = numpy.random.rand(3)
    gy = numpy.random.rand(2, 3)
    check_backward(link, (x, y), gy, atol=1e-6, rtol=1e-6)


def test_param_names():
    assert param_names(Bias(shape=3)) == ["/b"]
    assert param_names(Bias()) == []
    assert persistent_names(Bias(shape=3)) == []


def test_round_trip():
    link = _make(numpy.float32, 1, (3, 2))
    check_round_trip(link, Bias(1, (3, 2)))


def test_copy_modes():
    link = _make(numpy.float32, 1, 3)
    check_copy_modes(link)
