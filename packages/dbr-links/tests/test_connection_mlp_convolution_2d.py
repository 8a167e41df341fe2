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
from dbr.links.connection.mlp_convolution_2d import MLPConvolution2D


def _reference(link, x, stride=1, pad=0, activation=F.relu):
    """The mlpconv output written as dbr.functions calls on the link's parameters."""
    convs = list(link)
    h = F.convolution_2d(x, convs[0].W.array, convs[0].b.array, stride=stride, pad=pad)
    for conv in convs[1:]:
        h = F.convolution_2d(activation(h), conv.W.array, conv.b.array)
    return h.array


def test_param_names_and_shapes():
    link = MLPConvolution2D(3, (4, 5, 6), 3)
    assert len(link) == 3
    assert param_names(link) == [
        "/0/W",
        "/0/b",
        "/1/W",
        "/1/b",
        "/2/W",
        "/2/b",
    ]
    assert persistent_names(link) == []
    assert [conv.W.shape for conv in link] == [(4, 3, 3, 3), (5, 4, 1, 1), (6, 5, 1, 1)]
    assert [conv.b.shape for conv in link] == [(4,), (5,), (6,)]
    assert link.activation is F.relu


def test_positional_and_keyword_forms():
    link = MLPConvolution2D(
        in_channels=2,
        out_channels=[3, 4],
        ksize=(3, 2),
        stride=2,
        pad=1,
        activation=F.tanh,
        conv_init=initializers.One(),
        bias_init=0.5,
    )
    assert link.activation is F.tanh
    assert link[0].W.shape == (3, 2, 3, 2) and link[1].W.shape == (4, 3, 1, 1)
    assert link[0].stride == (2, 2) and link[0].pad == (1, 1)
    assert link[1].stride == (1, 1) and link[1].pad == (0, 0)
    for name, param in link.namedparams():
        expected = 1.0 if name.endswith("/W") else 0.5
        numpy.testing.assert_array_equal(param.array, numpy.full(param.shape, expected), name)
    positional = MLPConvolution2D(
        2, (3,), 1, 1, 0, F.sigmoid, conv_init=initializers.Zero(), bias_init=1.0
    )
    assert len(positional) == 1 and positional.activation is F.sigmoid
    numpy.testing.assert_array_equal(positional[0].W.array, numpy.zeros((3, 2, 1, 1)))
    numpy.testing.assert_array_equal(positional[0].b.array, numpy.ones(3))


def test_short_form_is_lazy():
    link = MLPConvolution2D((4, 5), 3, stride=2)
    assert link[0].W.array is None
    assert link[1].W.shape == (5, 4, 1, 1)
    x = numpy.random.uniform(-1, 1, (2, 3, 7, 7)).astype(numpy.float32)
    y = link(x)
    assert link[0].W.shape == (4, 3, 3, 3)
    assert y.shape == (2, 5, 3, 3)
    assert_allclose(y.array, _reference(link, x, stride=2), **tolerances("float32"))


def test_none_in_channels_is_lazy():
    link = MLPConvolution2D(None, (4, 2), 1)
    assert link[0].W.array is None
    link(numpy.zeros((1, 6, 2, 2), numpy.float32))
    assert link[0].W.shape == (4, 6, 1, 1)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_values(dtype):
    link = make_link(
        MLPConvolution2D, dtype, 3, (4, 5, 2), 3, pad=1, bias_init=initializers.Normal(0.5)
    )
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 4)).astype(dtype)
    y = link(x)
    assert y.shape == (2, 2, 5, 4)
    assert y.dtype == dtype
    assert_allclose(y.array, _reference(link, x, pad=1), **tolerances(dtype))
    # No activation after the last convolution.
    assert (y.array < 0).any()


def test_custom_activation():
    link = MLPConvolution2D(2, (3, 3), 2, activation=F.tanh, bias_init=initializers.Normal(1.0))
    x = numpy.random.uniform(-1, 1, (2, 2, 4, 4)).astype(numpy.float32)
    y = link(x)
    assert_allclose(y.array, _reference(link, x, activation=F.tanh), **tolerances("float32"))
    assert not numpy.allclose(y.array, _reference(link, x), atol=1e-3)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_backward(dtype):
    numpy.random.seed(2)
    link = make_link(MLPConvolution2D, dtype, 2, (3, 4), 2, bias_init=initializers.Normal(0.5))

    def draw():
        x = numpy.random.uniform(-1, 1, (2, 2, 4, 4)).astype(dtype)
        return x, numpy.random.uniform(-1, 1, (2, 4, 3, 3)).astype(dtype)

    # The ReLUs between the convolutions: inputs putting one's kink within a step are redrawn.
    check_backward_clear_of_kinks(draw, link, link.params(), dtype, kinked=(ReLU,))


def test_round_trip_and_copy():
    link = MLPConvolution2D(3, (4, 5), 3, bias_init=initializers.Normal(1.0))
    check_round_trip(link, MLPConvolution2D(3, (4, 5), 3))
    check_round_trip(link, MLPConvolution2D((4, 5), 3))
    check_copy_modes(link)
    assert link.copy("copy").activation is link.activation


test_bad_input = bad_input_test(
    [
        (
            MLPConvolution2D(3, (4, 5), 3),
            (numpy.zeros((1, 2, 5, 5), numpy.float32),),
            {},
            InvalidType,
            "x.shape[1] == W.shape[1]",
        ),
        (
            MLPConvolution2D(3, (4, 5), 1),
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            "x.dtype.kind == 'f'",
        ),
        ((3, (), 3), ValueError, "MLPConvolution2D: out_channels must hold at least one"),
        ((3, 4, 3), TypeError, "MLPConvolution2D: out_channels must be a sequence"),
        (
            (3, (4, -1), 3),
            ValueError,
            "MLPConvolution2D: out_channels must hold positive ints, got (4, -1)",
        ),
        ((3, (4,), 1), {"use_cudnn": False}, TypeError, "use_cudnn"),
    ],
    function=MLPConvolution2D,
)


def test_wscale_is_refused():
    with pytest.raises(TypeError, match=r"MLPConvolution2D: .*7th was wscale.*got 7"):
        MLPConvolution2D(3, (4,), 1, 1, 0, F.relu, 1)
    with pytest.raises(TypeError, match=r"MLPConvolution2D: .*got 8"):
        MLPConvolution2D(3, (4,), 1, 1, 0, F.relu, initializers.Zero(), 1.0)
    with pytest.raises(ValueError, match=r"MLPConvolution2D: the wscale argument is not"):
        MLPConvolution2D(3, (4,), 1, wscale=1)
