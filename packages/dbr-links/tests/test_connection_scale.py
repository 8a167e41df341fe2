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
from dbr.links.connection.scale import Scale


def _make(dtype, *args, **kwargs):
    link = make_link(Scale, dtype, *args, **kwargs)
    for param in link.params():
        param.array[...] = numpy.random.uniform(0.5, 1.5, param.shape)
    return link


def test_positional_and_keyword_forms():
    link = Scale(1, (3,), True)
    assert link.axis == 1 and link.W.shape == (3,)
    numpy.testing.assert_array_equal(link.W.array, numpy.ones(3, numpy.float32))
    assert isinstance(link.bias, Bias) and link.bias.b.shape == (3,) and link.bias.axis == 1
    numpy.testing.assert_array_equal(link.bias.b.array, numpy.zeros(3, numpy.float32))
    link = Scale(axis=0, W_shape=None, bias_term=True, bias_shape=(2, 3))
    assert not hasattr(link, "W") and link.bias.b.shape == (2, 3) and link.bias.axis == 0
    link = Scale()
    assert link.axis == 1 and not hasattr(link, "bias") and not hasattr(link, "W")
    assert not hasattr(Scale(W_shape=3), "bias")


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("bias_term", [False, True])
def test_forward_with_parameter(dtype, bias_term):
    link = _make(dtype, 1, (3, 4), bias_term)
    x = numpy.random.uniform(-1, 1, (2, 3, 4, 5)).astype(dtype)
    y = link(x)
    assert y.shape == x.shape and y.dtype == dtype
    expected = x * link.W.array[None, :, :, None]
    if bias_term:
        expected = expected + link.bias.b.array[None, :, :, None]
    assert_allclose(y.array, expected, **tolerances(dtype))


def test_forward_with_given_scale_and_learnt_bias():
    link = _make(numpy.float32, 1, None, True, 3)
    x = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    s = numpy.random.rand(3).astype(numpy.float32)
    expected = x * s[:, None] + link.bias.b.array[:, None]
    assert_allclose(link(x, s).array, expected, **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    link = _make(dtype, 1, 3, True)
    x = numpy.random.uniform(-1, 1, (2, 3, 2)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (2, 3, 2)).astype(dtype)
    check_backward(
        link,
        x,
        gy,
        params=(link.W, link.bias.b),
        dtype=numpy.float64,
        **tolerances(dtype, "backward"),
    )


def test_backward_given_scale():
    link = Scale(axis=1)
    x = numpy.random.rand(2, 3)
    s = numpy.random.rand(3)
    check_backward(link, (x, s), numpy.random.rand(2, 3), atol=1e-6, rtol=1e-6)


def test_param_names():
    assert param_names(Scale(W_shape=3, bias_term=True)) == ["/W", "/bias/b"]
    assert param_names(Scale(W_shape=3)) == ["/W"]
    assert param_names(Scale(bias_term=True, bias_shape=3)) == ["/bias/b"]
    assert persistent_names(Scale(W_shape=3)) == []


def test_round_trip():
    link = _make(numpy.float32, 1, (3, 2), True)
    check_round_trip(link, Scale(1, (3, 2), True))


def test_copy_modes():
    link = _make(numpy.float32, 1, 3, True)
    check_copy_modes(link)


def test_bias_term_needs_a_shape():
    with pytest.raises(ValueError, match=r"Scale: bias_shape must be given .*got bias_shape=None"):
        Scale(bias_term=True)
