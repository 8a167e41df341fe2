import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.activation.prelu import PReLU


def _reference(x, W):
    w = W.reshape((1,) + W.shape + (1,) * (x.ndim - 1 - W.ndim)).astype(numpy.float64)
    x64 = x.astype(numpy.float64)
    return numpy.where(x64 >= 0, x64, w * x64)


def test_positional_and_keyword_forms():
    link = PReLU()
    assert link.W.shape == () and link.W.dtype == numpy.float32
    assert float(link.W.array) == 0.25
    link = PReLU((2, 3), 0.5)
    numpy.testing.assert_array_equal(link.W.array, numpy.full((2, 3), 0.5, numpy.float32))
    link = PReLU(shape=(3,), init=initializers.Normal(1.0))
    assert link.W.shape == (3,)


def test_names():
    assert param_names(PReLU()) == ["/W"]
    assert persistent_names(PReLU()) == []


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, x_shape", [((), (4, 3)), ((3,), (4, 3, 2)), ((3, 2), (4, 3, 2))])
def test_values(dtype, shape, x_shape):
    link = make_link(PReLU, dtype, shape, initializers.Uniform(1.0))
    x = numpy.random.uniform(-1, 1, x_shape).astype(dtype)
    y = link(x)
    assert y.dtype == dtype and y.shape == x_shape
    assert_allclose(y.array, _reference(x, link.W.array), **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gradients(dtype):
    link = make_link(PReLU, dtype, (3,), initializers.Uniform(1.0))
    x = numpy.random.uniform(0.1, 1, (4, 3, 2)) * numpy.random.choice([-1, 1], (4, 3, 2))
    x = x.astype(dtype)
    gy = numpy.random.randn(4, 3, 2).astype(dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else tolerances(dtype, "backward")
    check_backward(link, x, gy, params=(link.W,), dtype=numpy.float64, **tol)


def test_learns_slope():
    link = PReLU((2,))
    x = -numpy.ones((8, 2), numpy.float32)
    target = numpy.array([-0.8, -0.1], numpy.float32)
    for _ in range(100):
        link.cleargrads()
        diff = link(x) - target
        loss = F.sum(diff * diff) / 8
        loss.backward()
        link.W.array -= 0.2 * link.W.grad
    assert_allclose(link.W.array, [0.8, 0.1], atol=1e-3, rtol=0)


def test_round_trip_and_copy():
    link = PReLU((3,), initializers.Normal(1.0))
    check_round_trip(link, PReLU((3,)))
    check_copy_modes(link)


test_bad_input = bad_input_test(
    [
        ((numpy.zeros((2, 4), numpy.float32),), InvalidType, ("PReLU", "Actual: (4,) != (3,)")),
        (
            (numpy.zeros((2, 3), numpy.float64),),
            InvalidType,
            ("W.dtype == x.dtype", "float32 != float64"),
        ),
    ],
    function=PReLU((3,)),
)
