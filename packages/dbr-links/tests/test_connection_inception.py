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
from dbr.links.connection.inception import Inception

# in_channels, out1, proj3, out3, proj5, out5, proj_pool
SIZES = (3, 2, 2, 3, 2, 3, 2)


def _reference(link, x):
    """The Inception output written as a composition of dbr.functions calls."""

    def conv(name, h, pad=0):
        child = getattr(link, name)
        return F.convolution_2d(h, child.W.array, child.b.array, pad=pad)

    branch1 = conv("conv1", x)
    branch3 = conv("conv3", F.relu(conv("proj3", x)), pad=1)
    branch5 = conv("conv5", F.relu(conv("proj5", x)), pad=2)
    pooled = F.max_pooling_2d(x, 3, stride=1, pad=1)
    branchp = conv("projp", pooled)
    return F.relu(F.concat((branch1, branch3, branch5, branchp), axis=1)).array


def test_param_names_and_shapes():
    link = Inception(*SIZES)
    assert param_names(link) == [
        "/conv1/W",
        "/conv1/b",
        "/conv3/W",
        "/conv3/b",
        "/conv5/W",
        "/conv5/b",
        "/proj3/W",
        "/proj3/b",
        "/proj5/W",
        "/proj5/b",
        "/projp/W",
        "/projp/b",
    ]
    assert persistent_names(link) == []
    shapes = {name: p.shape for name, p in link.namedparams()}
    assert shapes == {
        "/conv1/W": (2, 3, 1, 1),
        "/conv1/b": (2,),
        "/proj3/W": (2, 3, 1, 1),
        "/proj3/b": (2,),
        "/conv3/W": (3, 2, 3, 3),
        "/conv3/b": (3,),
        "/proj5/W": (2, 3, 1, 1),
        "/proj5/b": (2,),
        "/conv5/W": (3, 2, 5, 5),
        "/conv5/b": (3,),
        "/projp/W": (2, 3, 1, 1),
        "/projp/b": (2,),
    }


def test_keyword_form_and_initializers():
    link = Inception(
        in_channels=3,
        out1=2,
        proj3=2,
        out3=3,
        proj5=2,
        out5=3,
        proj_pool=2,
        conv_init=initializers.One(),
        bias_init=0.5,
    )
    for name, param in link.namedparams():
        expected = 1.0 if name.endswith("/W") else 0.5
        numpy.testing.assert_array_equal(param.array, numpy.full(param.shape, expected), name)
    positional = Inception(3, 2, 2, 3, 2, 3, 2, initializers.Zero(), initializers.One())
    numpy.testing.assert_array_equal(positional.conv5.W.array, numpy.zeros((3, 2, 5, 5)))
    numpy.testing.assert_array_equal(positional.projp.b.array, numpy.ones(2))


def test_default_bias_is_zero():
    link = Inception(*SIZES)
    for name, param in link.namedparams():
        if name.endswith("/b"):
            numpy.testing.assert_array_equal(param.array, numpy.zeros(param.shape), name)


def test_lazy_in_channels():
    link = Inception(None, 2, 2, 3, 2, 3, 2)
    for name in ("conv1", "proj3", "proj5", "projp"):
        assert getattr(link, name).W.array is None, name
    assert link.conv3.W.shape == (3, 2, 3, 3)
    assert link.conv5.W.shape == (3, 2, 5, 5)
    x = numpy.random.uniform(-1, 1, (2, 4, 5, 5)).astype(numpy.float32)
    y = link(x)
    for name in ("conv1", "proj3", "proj5", "projp"):
        assert getattr(link, name).W.shape[1:] == (4, 1, 1), name
    assert y.shape == (2, 10, 5, 5)
    assert_allclose(y.array, _reference(link, x), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_values(dtype):
    link = make_link(Inception, dtype, *SIZES, bias_init=initializers.Normal(0.5))
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 4)).astype(dtype)
    y = link(x)
    assert y.shape == (2, 10, 5, 4)
    assert y.dtype == dtype
    assert_allclose(y.array, _reference(link, x), **tolerances(dtype))
    assert (y.array >= 0).all()


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    numpy.random.seed(1)
    link = make_link(Inception, dtype, *SIZES, bias_init=initializers.Normal(0.5))

    def draw():
        # Well separated values keep max pooling away from ties.
        x = numpy.random.permutation(2 * 3 * 4 * 4).reshape(2, 3, 4, 4) / 16.0 - 1
        return x.astype(dtype), numpy.random.uniform(-1, 1, (2, 10, 4, 4)).astype(dtype)

    # The ReLUs after the convolutions: inputs putting one's kink within a step are redrawn.
    check_backward_clear_of_kinks(draw, link, link.params(), dtype, kinked=(ReLU,))


def test_round_trip_and_copy():
    link = Inception(*SIZES, bias_init=initializers.Normal(1.0))
    check_round_trip(link, Inception(*SIZES))
    check_round_trip(link, Inception(None, 2, 2, 3, 2, 3, 2))
    check_copy_modes(link)


_INCEPTION = Inception(*SIZES)

test_bad_input = bad_input_test(
    [
        (
            _INCEPTION,
            (numpy.zeros((1, 4, 3, 3), numpy.float32),),
            {},
            InvalidType,
            "x.shape[1] == W.shape[1]",
        ),
        (
            _INCEPTION,
            (numpy.zeros((1, 3, 3, 3), numpy.int32),),
            {},
            InvalidType,
            "x.dtype.kind == 'f'",
        ),
    ]
    + [
        (
            SIZES[:index] + (value,) + SIZES[index + 1 :],
            ValueError,
            f"Inception: {name} must be a positive int, got",
        )
        for index, name, value in [
            (1, "out1", 0),
            (2, "proj3", -1),
            (3, "out3", 2.0),
            (4, "proj5", None),
            (6, "proj_pool", 0),
        ]
    ],
    function=Inception,
)
