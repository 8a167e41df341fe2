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
from dbr.links.connection.bilinear import Bilinear


def _make(dtype, *args, **kwargs):
    link = make_link(Bilinear, dtype, *args, **kwargs)
    if not link.nobias:
        link.b.array[...] = numpy.random.uniform(-1, 1, link.b.shape)
    return link


def _reference(e1, e2, W, V1=None, V2=None, b=None):
    e1 = e1.reshape(len(e1), -1).astype(numpy.float64)
    e2 = e2.reshape(len(e2), -1).astype(numpy.float64)
    y = numpy.einsum("ij,ik,jkl->il", e1, e2, W.astype(numpy.float64))
    if V1 is not None:
        y += e1 @ V1.astype(numpy.float64) + e2 @ V2.astype(numpy.float64) + b
    return y


def test_positional_and_keyword_forms():
    link = Bilinear(2, 3, 4)
    assert link.in_sizes == (2, 3) and link.nobias is False
    assert (link.W.shape, link.V1.shape, link.V2.shape, link.b.shape) == (
        (2, 3, 4),
        (2, 4),
        (3, 4),
        (4,),
    )
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros(4, numpy.float32))
    W = numpy.random.rand(2, 3, 4).astype(numpy.float32)
    V1 = numpy.random.rand(2, 4).astype(numpy.float32)
    V2 = numpy.random.rand(3, 4).astype(numpy.float32)
    link = Bilinear(
        left_size=2, right_size=3, out_size=4, nobias=False, initialW=W, initial_bias=(V1, V2, 1.5)
    )
    numpy.testing.assert_array_equal(link.W.array, W)
    numpy.testing.assert_array_equal(link.V1.array, V1)
    numpy.testing.assert_array_equal(link.V2.array, V2)
    numpy.testing.assert_array_equal(link.b.array, numpy.full(4, 1.5, numpy.float32))
    link = Bilinear(2, 3, 4, True, initializers.One())
    assert link.V1 is None and link.V2 is None and link.b is None
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((2, 3, 4), numpy.float32))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_forward_values(dtype, nobias):
    link = _make(dtype, 2, 3, 4, nobias=nobias)
    e1 = numpy.random.uniform(-1, 1, (5, 2)).astype(dtype)
    e2 = numpy.random.uniform(-1, 1, (5, 3)).astype(dtype)
    y = link(e1, e2)
    assert y.shape == (5, 4) and y.dtype == dtype
    params = [link.W.array] if nobias else [p.array for p in (link.W, link.V1, link.V2, link.b)]
    assert_allclose(y.array, _reference(e1, e2, *params), **tolerances(dtype))


def test_forward_multi_axis_inputs():
    link = _make(numpy.float32, 4, 3, 2)
    e1 = numpy.random.rand(5, 2, 2).astype(numpy.float32)
    e2 = numpy.random.rand(5, 3).astype(numpy.float32)
    params = [p.array for p in (link.W, link.V1, link.V2, link.b)]
    assert_allclose(link(e1, e2).array, _reference(e1, e2, *params), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(dtype, nobias):
    link = _make(dtype, 2, 3, 2, nobias=nobias)
    e1 = numpy.random.uniform(-1, 1, (3, 2)).astype(dtype)
    e2 = numpy.random.uniform(-1, 1, (3, 3)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (3, 2)).astype(dtype)
    params = (link.W,) if nobias else (link.W, link.V1, link.V2, link.b)
    check_backward(
        link, (e1, e2), gy, params=params, dtype=numpy.float64, **tolerances(dtype, "backward")
    )


def test_param_names():
    assert param_names(Bilinear(2, 3, 4)) == ["/V1", "/V2", "/W", "/b"]
    assert param_names(Bilinear(2, 3, 4, nobias=True)) == ["/W"]
    assert persistent_names(Bilinear(2, 3, 4)) == []


def test_round_trip():
    link = _make(numpy.float32, 2, 3, 4)
    check_round_trip(link, Bilinear(2, 3, 4))


def test_copy_modes():
    check_copy_modes(Bilinear(2, 3, 4))


_BILINEAR = Bilinear(2, 3, 4)

test_bad_input = bad_input_test(
    [
        (
            _BILINEAR,
            (numpy.ones((1, 3), numpy.float32), numpy.ones((1, 3), numpy.float32)),
            {},
            InvalidType,
            ("BilinearFunction", "prod(e1.shape[1:]) == W.shape[0]"),
        ),
        (
            _BILINEAR,
            (numpy.ones((1, 2), numpy.float64), numpy.ones((1, 3), numpy.float64)),
            {},
            InvalidType,
            ("BilinearFunction", "W.dtype == e1.dtype"),
        ),
        (
            (2, 3, 4),
            {"initialW": numpy.zeros((3, 2, 4))},
            AssertionError,
            "Bilinear: initialW must have shape (2, 3, 4)",
        ),
        (
            (2, 3, 4),
            {"initial_bias": (0, numpy.zeros((2, 4)), 0)},
            AssertionError,
            "Bilinear: initial_bias[1] must have shape (3, 4), got shape (2, 4)",
        ),
        (
            (2, 3, 4),
            {"initial_bias": [0, 0, 0]},
            ValueError,
            "Bilinear: initial_bias must be None or a tuple",
        ),
        (
            (2, 3, 4),
            {"initial_bias": 0.0},
            ValueError,
            ("Bilinear: initial_bias must be None or a tuple ", "got 0.0"),
        ),
        ((2, 0, 4), ValueError, "Bilinear: right_size must be a positive int, got 0"),
    ],
    function=Bilinear,
)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"initialW": numpy.zeros((3, 3, 4))},
        {"initialW": numpy.zeros((3, 3, 4)), "nobias": True},
        {"initial_bias": (numpy.zeros((3, 4)), numpy.zeros((3, 4)), numpy.zeros(4))},
        {"initial_bias": (numpy.zeros((2, 4)), numpy.zeros((3, 4)), numpy.zeros(5))},
    ],
)
@pytest.mark.parametrize("error", [ValueError, AssertionError])
def test_wrong_initial_shape_is_a_value_and_an_assertion_error(kwargs, error):
    with pytest.raises(error, match=r"Bilinear: initial"):
        Bilinear(2, 3, 4, **kwargs)
