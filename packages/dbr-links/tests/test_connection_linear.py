import numpy
import pytest

from dbr.core import InvalidType, initializers
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_link_backward,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.linear import Linear


def _reference(x, W, b, n_batch_axes=1):
    x64 = x.astype(numpy.float64).reshape(x.shape[:n_batch_axes] + (-1,))
    y = x64 @ W.astype(numpy.float64).T
    if b is not None:
        y += b.astype(numpy.float64)
    return y


def test_positional_and_keyword_forms():
    link = Linear(3, 2)
    assert (link.in_size, link.out_size) == (3, 2)
    assert link.W.shape == (2, 3) and link.b.shape == (2,)
    link = Linear(in_size=3, out_size=2, nobias=True, initialW=0.5)
    assert link.b is None
    numpy.testing.assert_array_equal(link.W.array, numpy.full((2, 3), 0.5, numpy.float32))
    link = Linear(3, 2, False, initializers.One(), 2.0)
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((2, 3), numpy.float32))
    numpy.testing.assert_array_equal(link.b.array, numpy.full((2,), 2.0, numpy.float32))


def test_default_initializers():
    numpy.random.seed(0)
    link = Linear(400, 300)
    assert link.W.dtype == numpy.float32
    assert abs(link.W.array.std() - (1 / 400) ** 0.5) < 0.005
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros(300, numpy.float32))


def test_short_form_is_lazy():
    link = Linear(4)
    assert link.in_size is None and link.out_size == 4
    assert link.W.array is None and link.W.dtype == numpy.float32
    assert link.b.shape == (4,)
    x = numpy.random.rand(2, 3, 5).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (4, 15)
    assert y.shape == (2, 4)
    assert_allclose(y.array, _reference(x, link.W.array, link.b.array), **tolerances("float32"))


def test_lazy_none_in_size_keyword():
    link = Linear(None, 3, nobias=True)
    assert link.W.array is None
    x = numpy.random.rand(2, 7).astype(numpy.float32)
    link(x)
    assert link.W.shape == (3, 7)
    assert link.in_size is None


def test_lazy_with_n_batch_axes():
    link = Linear(None, 3)
    x = numpy.random.rand(2, 4, 5).astype(numpy.float32)
    y = link(x, n_batch_axes=2)
    assert link.W.shape == (3, 5)
    assert y.shape == (2, 4, 3)
    assert_allclose(y.array, _reference(x, link.W.array, link.b.array, 2), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_forward_values(dtype, nobias):
    link = make_link(Linear, dtype, 4, 3, nobias=nobias, initial_bias=initializers.Normal(1.0))
    x = numpy.random.uniform(-1, 1, (5, 4)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype and y.shape == (5, 3)
    b = None if nobias else link.b.array
    assert_allclose(y.array, _reference(x, link.W.array, b), **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(dtype, nobias):
    link = make_link(Linear, dtype, 3, 2, nobias=nobias, initial_bias=initializers.Normal(1.0))
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (4, 2)).astype(dtype)
    # Without a bias, link.params() holds W alone.
    check_link_backward(link, x, gy, link.params(), dtype)


def test_backward_n_batch_axes():
    link = make_link(Linear, numpy.float64, 3, 2)
    x = numpy.random.uniform(-1, 1, (2, 2, 3))
    gy = numpy.random.uniform(-1, 1, (2, 2, 2))
    check_backward(
        lambda v: link(v, n_batch_axes=2), x, gy, params=(link.W, link.b), atol=1e-6, rtol=1e-6
    )


def test_param_names():
    assert param_names(Linear(3, 2)) == ["/W", "/b"]
    assert param_names(Linear(3, 2, nobias=True)) == ["/W"]
    assert persistent_names(Linear(3, 2)) == []


def test_round_trip_into_lazy_link():
    link = Linear(3, 2, initial_bias=initializers.Normal(1.0))
    x = numpy.random.rand(2, 3).astype(numpy.float32)
    check_round_trip(link, Linear(2), (x,))


def test_round_trip_uninitialized():
    check_round_trip(Linear(2), Linear(2))


def test_copy_modes():
    link = Linear(3, 2)
    check_copy_modes(link)


def test_from_params():
    W = numpy.random.rand(2, 3).astype(numpy.float32)
    b = numpy.random.rand(2).astype(numpy.float32)
    link = Linear.from_params(W, b)
    assert (link.in_size, link.out_size) == (3, 2)
    assert link.W.array is not W
    numpy.testing.assert_array_equal(link.W.array, W)
    numpy.testing.assert_array_equal(link.b.array, b)
    link = Linear.from_params(W, nobias=True)
    assert link.b is None
    with pytest.raises(ValueError, match=r"Linear.from_params: b must have 2 elements"):
        Linear.from_params(W, numpy.zeros(3, numpy.float32))


_LINEAR = Linear(3, 2)

test_bad_input = bad_input_test(
    [
        (
            _LINEAR,
            (numpy.zeros((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("LinearFunction", "prod(x.shape[1:]) == W.shape[1]", "4 != 3"),
        ),
        (
            _LINEAR,
            (numpy.zeros((2, 3), numpy.int32),),
            {},
            InvalidType,
            ("LinearFunction", "x.dtype.kind == 'f'"),
        ),
        ((0, 2), ValueError, "Linear: in_size must be a positive int or None, got 0"),
        ((3, -1), ValueError, "Linear: out_size must be a positive int, got -1"),
        ((-2,), ValueError, "Linear: out_size must be a positive int, got -2"),
        ((3.0, 2), ValueError, "Linear: in_size must be a positive int or None, got 3.0"),
    ],
    function=Linear,
)
