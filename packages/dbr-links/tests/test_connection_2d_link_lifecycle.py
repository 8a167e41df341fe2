"""The four 2-D convolution links by table: parameters, serialization, copies, gradients."""

import numpy
import pytest

from dbr.core import initializers
from dbr.core.testing import FLOAT_DTYPES, make_link
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_link_backward,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.deconvolution_2d import Deconvolution2D
from dbr.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D
from dbr.links.connection.dilated_convolution_2d import DilatedConvolution2D

# cls, the arguments of a link whose input channels wait for the first call, the keyword
# arguments of the link serialized into a lazy one, and the side of that link's input.
_LINKS = [
    pytest.param(Convolution2D, (2, 3), {}, 4, id="Convolution2D"),
    pytest.param(Deconvolution2D, (2, 3), {}, 4, id="Deconvolution2D"),
    pytest.param(DilatedConvolution2D, (2, 3), {"dilate": 2}, 6, id="DilatedConvolution2D"),
    pytest.param(DepthwiseConvolution2D, (None, 2, 3), {}, 4, id="DepthwiseConvolution2D"),
]


@pytest.mark.parametrize("cls, lazy_args, kwargs, side", _LINKS)
def test_param_names(cls, lazy_args, kwargs, side):
    assert param_names(cls(3, 2, 3)) == ["/W", "/b"]
    assert param_names(cls(*lazy_args, nobias=True)) == ["/W"]
    assert persistent_names(cls(3, 2, 3)) == []


@pytest.mark.parametrize("cls, lazy_args, kwargs, side", _LINKS)
def test_round_trip_into_lazy_link(cls, lazy_args, kwargs, side):
    link = cls(3, 2, 3, initial_bias=initializers.Normal(1.0), **kwargs)
    x = numpy.random.rand(1, 3, side, side).astype(numpy.float32)
    check_round_trip(link, cls(*lazy_args, **kwargs), (x,))


@pytest.mark.parametrize("cls, lazy_args, kwargs, side", _LINKS)
def test_round_trip_uninitialized(cls, lazy_args, kwargs, side):
    check_round_trip(cls(*lazy_args), cls(*lazy_args))


@pytest.mark.parametrize("cls, lazy_args, kwargs, side", _LINKS)
def test_copy_modes(cls, lazy_args, kwargs, side):
    check_copy_modes(cls(3, 2, 3))


# cls, its positional and keyword arguments, and the shapes of x and of the output's gradient.
_BACKWARD_CASES = [
    pytest.param(
        Convolution2D, (4, 2, (2, 3)),
        {"stride": (2, 1), "pad": 1, "dilate": (1, 2), "groups": 2,
         "initial_bias": initializers.Normal(1.0)},
        (2, 4, 4, 5), (2, 2, 3, 3), id="Convolution2D",
    ),
    pytest.param(
        Deconvolution2D, (4, 2, (2, 3)),
        {"stride": (2, 1), "pad": 1, "outsize": (5, 4), "groups": 2,
         "initial_bias": initializers.Normal(1.0)},
        (2, 4, 3, 4), (2, 2, 5, 4), id="Deconvolution2D",
    ),
    pytest.param(
        DilatedConvolution2D, (2, 3, 2),
        {"stride": (2, 1), "pad": 1, "dilate": (1, 2), "initial_bias": 1.0},
        (2, 2, 4, 5), (2, 3, 3, 5), id="DilatedConvolution2D",
    ),
    pytest.param(
        DepthwiseConvolution2D, (2, 2, (2, 3)),
        {"stride": (2, 1), "pad": 1, "initial_bias": 1.0},
        (2, 2, 4, 4), (2, 4, 3, 4), id="DepthwiseConvolution2D",
    ),
]  # fmt: skip


@pytest.mark.parametrize("cls, args, kwargs, x_shape, gy_shape", _BACKWARD_CASES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(cls, args, kwargs, x_shape, gy_shape, dtype, nobias):
    link = make_link(cls, dtype, *args, nobias=nobias, **kwargs)
    x = numpy.random.uniform(-1, 1, x_shape).astype(dtype)
    gy = numpy.random.uniform(-1, 1, gy_shape).astype(dtype)
    # Without a bias, link.params() holds W alone.
    check_link_backward(link, x, gy, link.params(), dtype)
