import itertools
import re

import numpy
import pytest

from dbr.core import testing, using_config
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.connection.convolution_nd import convolution_nd
from dbr.functions.connection.deconvolution_nd import (
    deconvolution_1d,
    deconvolution_3d,
    deconvolution_nd,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _deconvolution_loop(x, W, b, stride, pad, dilate, groups, outsize):
    """Deconvolution by scattering every input element through every filter tap, in float64."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    n, c_in = x.shape[:2]
    og = W.shape[1]
    ksize = W.shape[2:]
    in_size = x.shape[2:]
    nd = len(in_size)
    if outsize is None:
        outsize = tuple(
            stride[i] * (in_size[i] - 1) + (ksize[i] - 1) * dilate[i] + 1 - 2 * pad[i]
            for i in range(nd)
        )
    y = numpy.zeros((n, og * groups) + tuple(outsize))
    cg = c_in // groups
    for c in range(c_in):
        g = c // cg
        for pos in itertools.product(*[range(v) for v in in_size]):
            for tap in itertools.product(*[range(v) for v in ksize]):
                out = tuple(pos[i] * stride[i] + tap[i] * dilate[i] - pad[i] for i in range(nd))
                if all(0 <= out[i] < outsize[i] for i in range(nd)):
                    value = x[(slice(None), c) + pos][:, None] * W[(c, slice(None)) + tap]
                    y[(slice(None), slice(g * og, (g + 1) * og)) + out] += value
    if b is not None:
        y += b.astype(numpy.float64).reshape((-1,) + (1,) * nd)
    return y


def _tuple(v, nd):
    return tuple(v) if isinstance(v, tuple) else (v,) * nd


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 4), "w_shape": (3, 2, 3)},
            {"x_shape": (2, 2, 3), "w_shape": (2, 3, 2), "stride": 3, "pad": 1, "outsize": 7},
            {"x_shape": (1, 4, 4), "w_shape": (4, 1, 3), "dilate": 2, "groups": 2, "pad": 1},
            {"x_shape": (1, 2, 2, 3, 2), "w_shape": (2, 2, 2, 2, 3), "stride": (2, 1, 2)},
            {
                "x_shape": (2, 2, 2, 2, 3),
                "w_shape": (2, 1, 2, 3, 1),
                "stride": (2, 3, 1),
                "pad": (0, 1, 0),
                "dilate": (1, 2, 1),
                "groups": 2,
                "outsize": (5, 5, 3),
            },
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestDeconvolutionND(FunctionTestCase):
    stride = 1
    pad = 0
    dilate = 1
    groups = 1
    outsize = None

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, self.w_shape).astype(self.dtype)
        if self.nobias:
            return x, W
        c_out = self.w_shape[1] * self.groups
        return x, W, numpy.random.uniform(-1, 1, c_out).astype(self.dtype)

    def _deconvolution(self):
        nd = len(self.x_shape) - 2
        return {1: deconvolution_1d, 3: deconvolution_3d}.get(nd, deconvolution_nd)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        options = {
            "stride": self.stride,
            "pad": self.pad,
            "outsize": self.outsize,
            "dilate": self.dilate,
            "groups": self.groups,
        }
        # Bit for bit only on deterministic cuDNN engines: others may sum in another order.
        with using_config("cudnn_deterministic", True):
            y = self._deconvolution()(x, W, b, **options)
            testing.assert_allclose(y, deconvolution_nd(x, W, b, **options), atol=0, rtol=0)
        return (y,)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        nd = x.ndim - 2
        y = _deconvolution_loop(
            x,
            W,
            b,
            _tuple(self.stride, nd),
            _tuple(self.pad, nd),
            _tuple(self.dilate, nd),
            self.groups,
            None if self.outsize is None else _tuple(self.outsize, nd),
        )
        return (y.astype(self.dtype),)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options"),
    [
        ((2, 3, 7), (2, 3, 3), {"stride": 2, "cover_all": True}),
        ((1, 2, 5, 4, 6), (3, 2, 2, 3, 2), {"stride": (2, 1, 3), "pad": (1, 0, 1)}),
        ((1, 4, 5, 4, 6), (2, 2, 2, 2, 2), {"dilate": 2, "groups": 2, "cover_all": True}),
    ],
)
def test_deconvolution_is_the_transpose_of_convolution(x_shape, w_shape, options):
    rng = numpy.random.RandomState(0)
    x = rng.uniform(-1, 1, x_shape)
    W = rng.uniform(-1, 1, w_shape)
    y = convolution_nd(x, W, **options).array
    gy = rng.uniform(-1, 1, y.shape)
    deconv_options = {k: v for k, v in options.items() if k != "cover_all"}
    gx = deconvolution_nd(gy, W, outsize=x_shape[2:], **deconv_options).array
    testing.assert_allclose((y * gy).sum(), (x * gx).sum(), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize(
    ("function", "x_shape", "w_shape", "label", "expect"),
    [
        (deconvolution_1d, (2, 3, 4, 4), (3, 1, 2), "Deconvolution1D", "x.ndim == 3"),
        (deconvolution_3d, (2, 3, 4, 4, 4), (3, 1, 2, 2), "Deconvolution3D", "W.ndim == 5"),
        (deconvolution_nd, (2, 3, 4), (2, 1, 2), "DeconvolutionND", "x.shape[1] == W.shape[0]"),
    ],
)
def test_bad_shapes(function, x_shape, w_shape, label, expect):
    with pytest.raises(InvalidType) as info:
        function(numpy.ones(x_shape, numpy.float32), numpy.ones(w_shape, numpy.float32))
    message = str(info.value)
    assert label in message and expect in message


def test_bad_options():
    x = numpy.ones((1, 2, 3, 3, 3), numpy.float32)
    W = numpy.ones((2, 2, 2, 2, 2), numpy.float32)
    message = "deconvolution_3d: outsize must be an int or a sequence of 3 ints"
    with pytest.raises(ValueError, match=re.escape(message)):
        deconvolution_3d(x, W, outsize=(4, 4))
    with pytest.raises(ValueError, match=re.escape("deconvolution_nd: dilate must be >= 1")):
        deconvolution_nd(x, W, dilate=(1, 0, 1))
