import itertools
import re

import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.connection.convolution_nd import (
    convolution_1d,
    convolution_3d,
    convolution_nd,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _n_windows(size, k, s, p, d, cover_all):
    length = size + 2 * p
    extent = (k - 1) * d + 1
    count = 0
    while count * s + extent <= length:
        count += 1
    if cover_all and (count - 1) * s + extent < length:
        count += 1
    return count


def _convolution_loop(x, W, b, stride, pad, dilate, groups, cover_all):
    """Direct N-d convolution by loops over output positions and filter taps, in float64."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    n, c_in = x.shape[:2]
    c_out = W.shape[0]
    ksize = W.shape[2:]
    spatial = x.shape[2:]
    nd = len(spatial)
    outs = tuple(
        _n_windows(spatial[i], ksize[i], stride[i], pad[i], dilate[i], cover_all)
        for i in range(nd)
    )
    y = numpy.zeros((n, c_out) + outs)
    cg = c_in // groups
    og = c_out // groups
    for o in range(c_out):
        g = o // og
        for out in itertools.product(*[range(v) for v in outs]):
            for tap in itertools.product(*[range(v) for v in ksize]):
                pos = tuple(out[i] * stride[i] + tap[i] * dilate[i] - pad[i] for i in range(nd))
                if all(0 <= pos[i] < spatial[i] for i in range(nd)):
                    patch = x[(slice(None), slice(g * cg, (g + 1) * cg)) + pos]
                    y[(slice(None), o) + out] += patch @ W[(o, slice(None)) + tap]
    if b is not None:
        y += b.astype(numpy.float64).reshape((c_out,) + (1,) * nd)
    return y


def _tuple(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 7), "w_shape": (2, 3, 3)},
            {"x_shape": (2, 2, 8), "w_shape": (3, 2, 2), "stride": 3, "pad": 1, "cover_all": True},
            {"x_shape": (1, 4, 9), "w_shape": (2, 2, 3), "dilate": 2, "groups": 2, "pad": 2},
            {"x_shape": (2, 2, 4, 5), "w_shape": (3, 2, 2, 3), "stride": (2, 1), "pad": (1, 0)},
            {"x_shape": (1, 2, 4, 3, 5), "w_shape": (2, 2, 2, 2, 3), "pad": (0, 1, 1)},
            {
                "x_shape": (2, 2, 5, 4, 3),
                "w_shape": (2, 1, 2, 2, 1),
                "stride": (2, 3, 1),
                "dilate": (1, 2, 1),
                "groups": 2,
                "cover_all": True,
            },
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestConvolutionND(FunctionTestCase):
    stride = 1
    pad = 0
    dilate = 1
    groups = 1
    cover_all = False

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, self.w_shape).astype(self.dtype)
        if self.nobias:
            return x, W
        return x, W, numpy.random.uniform(-1, 1, self.w_shape[0]).astype(self.dtype)

    def _convolution(self):
        nd = len(self.x_shape) - 2
        return {1: convolution_1d, 3: convolution_3d}.get(nd, convolution_nd)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        options = {
            "stride": self.stride,
            "pad": self.pad,
            "cover_all": self.cover_all,
            "dilate": self.dilate,
            "groups": self.groups,
        }
        y = self._convolution()(x, W, b, **options)
        testing.assert_allclose(y, convolution_nd(x, W, b, **options), atol=0, rtol=0)
        return (y,)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        nd = x.ndim - 2
        y = _convolution_loop(
            x,
            W,
            b,
            _tuple(self.stride, nd),
            _tuple(self.pad, nd),
            _tuple(self.dilate, nd),
            self.groups,
            self.cover_all,
        )
        return (y.astype(self.dtype),)


@pytest.mark.parametrize(
    ("function", "x_shape", "w_shape", "label", "expect"),
    [
        (convolution_1d, (2, 3, 4, 4), (1, 3, 2), "Convolution1D", "x.ndim == 3"),
        (convolution_1d, (2, 3, 4), (1, 3, 2, 2), "Convolution1D", "W.ndim == 3"),
        (convolution_3d, (2, 3, 4, 4), (1, 3, 2, 2), "Convolution3D", "x.ndim == 5"),
        (convolution_nd, (2, 3), (1, 3), "ConvolutionND", "x.ndim == 3"),
        (convolution_nd, (2, 3, 4, 4, 4), (1, 3, 2, 2), "ConvolutionND", "W.ndim == 5"),
        (convolution_nd, (2, 3, 4), (1, 2, 2), "ConvolutionND", "x.shape[1] == W.shape[1] * 1"),
        (convolution_nd, (2, 3, 4), (1, 3, 5), "ConvolutionND", "a positive output size"),
    ],
)
def test_bad_shapes(function, x_shape, w_shape, label, expect):
    x = numpy.ones(x_shape, numpy.float32)
    W = numpy.ones(w_shape, numpy.float32)
    with pytest.raises(InvalidType) as info:
        function(x, W)
    message = str(info.value)
    assert label in message and expect in message


@pytest.mark.parametrize(
    ("function", "kwargs", "error", "message"),
    [
        (
            convolution_nd,
            {"stride": (1, 1)},
            ValueError,
            "convolution_nd: stride must be an int or a sequence of 3 ints",
        ),
        (
            convolution_nd,
            {"pad": (0, -1, 0)},
            ValueError,
            "convolution_nd: pad must be >= 0, got (0, -1, 0)",
        ),
        (
            convolution_3d,
            {"dilate": "2"},
            TypeError,
            "convolution_3d: dilate must be an int or a sequence of ints",
        ),
        (
            convolution_3d,
            {"groups": -2},
            ValueError,
            "convolution_3d: groups must be >= 1, got -2",
        ),
    ],
)
def test_bad_options(function, kwargs, error, message):
    x = numpy.ones((1, 2, 3, 3, 3), numpy.float32)
    W = numpy.ones((2, 2, 2, 2, 2), numpy.float32)
    with pytest.raises(error, match=re.escape(message)):
        function(x, W, **kwargs)


def test_convolution_1d_option_length():
    x = numpy.ones((1, 2, 5), numpy.float32)
    with pytest.raises(
        ValueError,
        match=re.escape("convolution_1d: stride must be an int or a sequence of 1 ints"),
    ):
        convolution_1d(x, numpy.ones((1, 2, 2), numpy.float32), stride=(1, 1))
    y = convolution_1d(x, numpy.ones((1, 2, 2), numpy.float32), stride=(2,), pad=[1])
    testing.assert_allclose(y, numpy.array([[[2.0, 4.0, 4.0]]]), atol=0, rtol=0)
