import functools

import numpy
import pytest

from dbr.core import InvalidType, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.normalization.layer_normalization import LayerNormalization

_make = functools.partial(make_link, LayerNormalization)


def _reference(x, gamma, beta, eps=1e-6):
    x64 = x.astype(numpy.float64)
    mean = x64.mean(axis=1, keepdims=True)
    var = x64.var(axis=1, keepdims=True)
    return (x64 - mean) / numpy.sqrt(var + eps) * gamma + beta


def test_positional_and_keyword_forms():
    ln = LayerNormalization(3, 1e-3, 2.0, numpy.array([1.0, 2.0, 3.0]))
    assert ln.eps == 1e-3
    numpy.testing.assert_array_equal(ln.gamma.array, numpy.full(3, 2.0, numpy.float32))
    numpy.testing.assert_array_equal(ln.beta.array, numpy.array([1, 2, 3], numpy.float32))
    ln = LayerNormalization(size=4)
    assert ln.eps == 1e-6
    numpy.testing.assert_array_equal(ln.gamma.array, numpy.ones(4, numpy.float32))
    numpy.testing.assert_array_equal(ln.beta.array, numpy.zeros(4, numpy.float32))


def test_names():
    assert param_names(LayerNormalization()) == ["/beta", "/gamma"]
    assert persistent_names(LayerNormalization()) == []


def test_lazy_size():
    ln = LayerNormalization(initial_beta=initializers.Normal(1.0))
    assert ln.gamma.array is None and ln.beta.array is None
    x = numpy.random.randn(3, 5).astype(numpy.float32)
    y = ln(x)
    assert ln.gamma.shape == (5,) and ln.beta.shape == (5,)
    assert_allclose(y.array, _reference(x, ln.gamma.array, ln.beta.array), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_values_same_in_train_and_test(dtype):
    ln = _make(
        dtype, 4, initial_gamma=initializers.Normal(1.0), initial_beta=initializers.Normal()
    )
    x = (numpy.random.randn(3, 4) * 3 + 1).astype(dtype)
    expected = _reference(x, ln.gamma.array, ln.beta.array)
    tol = {"atol": 1e-2, "rtol": 1e-2} if dtype == numpy.float16 else tolerances(dtype)
    y = ln(x)
    assert y.dtype == dtype
    assert_allclose(y.array, expected, **tol)
    with using_config("train", False):
        assert_allclose(ln(x).array, expected, **tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gradients(dtype):
    ln = _make(
        dtype, 4, initial_gamma=initializers.Uniform(1.0), initial_beta=initializers.Normal()
    )
    x = numpy.random.randn(3, 4).astype(dtype)
    gy = numpy.random.randn(3, 4).astype(dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else tolerances(dtype, "backward")
    check_backward(ln, x, gy, params=(ln.gamma, ln.beta), dtype=numpy.float64, **tol)


def test_round_trip_and_copy():
    ln = LayerNormalization(4, initial_gamma=initializers.Normal(1.0))
    check_round_trip(ln, LayerNormalization())
    check_copy_modes(ln)


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 6), numpy.float32),),
            InvalidType,
            ("LayerNormalization", "Actual: 6 != 4"),
        ),
        (
            (numpy.zeros((2, 4), numpy.float64),),
            InvalidType,
            ("gamma.dtype == x.dtype", "float32 != float64"),
        ),
    ],
    function=LayerNormalization(4),
)
