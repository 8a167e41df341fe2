import numpy
import pytest

from dbr.core import InvalidType, initializers
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip, param_names
from dbr.links.activation.maxout import Maxout
from dbr.links.connection.linear import Linear


def _reference(x, W, b, out_size, pool_size):
    """W of shape (out_size, pool_size, in_size), b of shape (out_size, pool_size) or None."""
    x64 = x.astype(numpy.float64).reshape(len(x), -1)
    h = numpy.einsum("ni,opi->nop", x64, W.astype(numpy.float64))
    if b is not None:
        h += b.astype(numpy.float64)
    return h.max(axis=2)


def test_positional_and_keyword_forms():
    link = Maxout(3, 2, 4)
    assert isinstance(link.linear, Linear)
    assert (link.out_size, link.pool_size) == (2, 4)
    assert link.linear.W.shape == (8, 3) and link.linear.b.shape == (8,)
    numpy.testing.assert_array_equal(link.linear.b.array, numpy.zeros(8, numpy.float32))
    link = Maxout(in_size=3, out_size=2, pool_size=4, initialW=0.5, initial_bias=None)
    assert link.linear.b is None
    numpy.testing.assert_array_equal(link.linear.W.array, numpy.full((8, 3), 0.5, numpy.float32))


def test_names():
    assert param_names(Maxout(3, 2, 4)) == ["/linear/W", "/linear/b"]
    assert param_names(Maxout(3, 2, 4, initial_bias=None)) == ["/linear/W"]


def test_array_initializers_use_grouped_layout():
    W = numpy.arange(24, dtype=numpy.float32).reshape(2, 4, 3)
    b = numpy.arange(8, dtype=numpy.float32).reshape(2, 4)
    link = Maxout(3, 2, 4, initialW=W, initial_bias=b)
    numpy.testing.assert_array_equal(link.linear.W.array[5], W[1, 1])
    numpy.testing.assert_array_equal(link.linear.b.array[6], b[1, 2])


def test_callable_initializer_sees_grouped_shape():
    seen = []

    def initializer(array):
        seen.append(array.shape)
        array[...] = numpy.arange(array.size).reshape(array.shape)

    link = Maxout(3, 2, 4, initialW=initializer)
    assert seen == [(2, 4, 3)]
    numpy.testing.assert_array_equal(link.linear.W.array.ravel(), numpy.arange(24))


def test_lazy_in_size():
    link = Maxout(None, 2, 3, initialW=initializers.Normal(1.0))
    assert link.linear.W.array is None
    x = numpy.random.randn(4, 5, 2).astype(numpy.float32)
    y = link(x)
    assert link.linear.W.shape == (6, 10) and y.shape == (4, 2)
    W = link.linear.W.array.reshape(2, 3, 10)
    expected = _reference(x, W, link.linear.b.array.reshape(2, 3), 2, 3)
    assert_allclose(y.array, expected, **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_values(dtype):
    W = numpy.random.randn(3, 2, 4)
    b = numpy.random.randn(3, 2)
    link = make_link(Maxout, dtype, 4, 3, 2, initialW=W, initial_bias=b)
    x = numpy.random.randn(5, 4).astype(dtype)
    y = link(x)
    assert y.dtype == dtype and y.shape == (5, 3)
    expected = _reference(x, W.astype(dtype), b.astype(dtype), 3, 2)
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == numpy.float16 else tolerances(dtype)
    assert_allclose(y.array, expected, **tol)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_gradients(dtype):
    # Well separated pool members keep the maximum's position fixed near x.
    W = numpy.zeros((2, 3, 4))
    W[:, :, 0] = [[0.0, 3.0, 6.0], [6.0, 0.0, 3.0]]
    W += numpy.random.uniform(-0.1, 0.1, W.shape)
    link = make_link(Maxout, dtype, 4, 2, 3, initialW=W, initial_bias=initializers.Normal(0.1))
    x = numpy.random.uniform(0.5, 1, (3, 4)).astype(dtype)
    gy = numpy.random.randn(3, 2).astype(dtype)
    check_backward(
        link,
        x,
        gy,
        params=(link.linear.W, link.linear.b),
        dtype=numpy.float64,
        **tolerances(dtype, "backward"),
    )


def test_round_trip_and_copy():
    link = Maxout(3, 2, 2)
    check_round_trip(link, Maxout(None, 2, 2))
    check_copy_modes(link)


test_bad_input = bad_input_test(
    [
        ((3, 2, 0), ValueError, "Maxout: pool_size must be a positive int, got 0"),
        (
            (3, 2, 4),
            {"initialW": numpy.zeros((8, 3))},
            ValueError,
            "initialW must have shape (2, 4, 3), got (8, 3)",
        ),
        (
            (3, 2, 4),
            {"initial_bias": numpy.zeros(8)},
            ValueError,
            "initial_bias must have shape (2, 4), got (8,)",
        ),
        (
            Maxout(3, 2, 2),
            (numpy.zeros((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("LinearFunction", "Actual: 4 != 3"),
        ),
    ],
    function=Maxout,
)
