import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_backward_clear_of_kinks,
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.functions.activation.relu import ReLU
from dbr.links.connection.highway import Highway
from dbr.links.connection.linear import Linear


def _reference(x, link, activate=lambda h: numpy.maximum(h, 0)):
    x = x.astype(numpy.float64)

    def affine(sub):
        y = x @ sub.W.array.astype(numpy.float64).T
        return y if sub.b is None else y + sub.b.array

    gate = 1 / (1 + numpy.exp(-affine(link.transform)))
    return activate(affine(link.plain)) * gate + x * (1 - gate)


def test_positional_and_keyword_forms():
    link = Highway(3)
    assert isinstance(link.plain, Linear) and isinstance(link.transform, Linear)
    assert link.plain.W.shape == (3, 3) and link.transform.W.shape == (3, 3)
    assert link.activate is F.relu
    numpy.testing.assert_array_equal(link.plain.b.array, numpy.zeros(3, numpy.float32))
    numpy.testing.assert_array_equal(link.transform.b.array, numpy.full(3, -1, numpy.float32))
    link = Highway(
        in_out_size=2,
        nobias=False,
        activate=F.tanh,
        init_Wh=initializers.One(),
        init_Wt=2.0,
        init_bh=0.5,
        init_bt=initializers.Zero(),
    )
    assert link.activate is F.tanh
    numpy.testing.assert_array_equal(link.plain.W.array, numpy.ones((2, 2), numpy.float32))
    numpy.testing.assert_array_equal(link.transform.W.array, numpy.full((2, 2), 2, numpy.float32))
    numpy.testing.assert_array_equal(link.plain.b.array, numpy.full(2, 0.5, numpy.float32))
    numpy.testing.assert_array_equal(link.transform.b.array, numpy.zeros(2, numpy.float32))
    link = Highway(2, True)
    assert link.plain.b is None and link.transform.b is None


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_forward_values(dtype, nobias):
    link = make_link(Highway, dtype, 4, nobias=nobias)
    x = numpy.random.uniform(-1, 1, (3, 4)).astype(dtype)
    y = link(x)
    assert y.shape == (3, 4) and y.dtype == dtype
    assert_allclose(y.array, _reference(x, link), **tolerances(dtype))


def test_forward_custom_activation():
    link = Highway(3, activate=F.tanh)
    x = numpy.random.uniform(-1, 1, (2, 3)).astype(numpy.float32)
    assert_allclose(link(x).array, _reference(x, link, numpy.tanh), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    link = make_link(Highway, dtype, 3, init_bh=initializers.Normal(1.0))
    params = tuple(p for _, p in sorted(link.namedparams()))

    def draw():
        x = numpy.random.uniform(0.1, 1, (2, 3)).astype(dtype)
        return x, numpy.random.uniform(-1, 1, (2, 3)).astype(dtype)

    # The ReLU of the plain path: inputs putting its kink within a step are redrawn.
    check_backward_clear_of_kinks(draw, link, params, dtype, kinked=(ReLU,))


def test_param_names():
    assert param_names(Highway(3)) == [
        "/plain/W",
        "/plain/b",
        "/transform/W",
        "/transform/b",
    ]
    assert param_names(Highway(3, nobias=True)) == ["/plain/W", "/transform/W"]
    assert persistent_names(Highway(3)) == []


def test_round_trip():
    check_round_trip(Highway(3), Highway(3))


def test_copy_modes():
    check_copy_modes(Highway(3))


test_bad_input = bad_input_test(
    [
        (
            Highway(3),
            (numpy.ones((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("LinearFunction", "prod(x.shape[1:]) == W"),
        ),
        ((0,), ValueError, "Linear: in_size must be a positive int or None, got 0"),
    ],
    function=Highway,
)
