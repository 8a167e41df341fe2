import re

import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.connection.dilated_convolution_2d import dilated_convolution_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _dilated_loop(x, W, b, stride, pad, dilate, cover_all):
    """y[i, o, u, v] = b[o] + sum_{c, j, k} W[o, c, j, k] xpad[i, c, u sy + j dy, v sx + k dx]."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    n, c_in, h, w = x.shape
    c_out, _, kh, kw = W.shape
    (sy, sx), (ph, pw), (dy, dx) = stride, pad, dilate
    ext_h, ext_w = (kh - 1) * dy + 1, (kw - 1) * dx + 1
    if cover_all:
        out_h = -(-(h + 2 * ph - ext_h) // sy) + 1
        out_w = -(-(w + 2 * pw - ext_w) // sx) + 1
    else:
        out_h = (h + 2 * ph - ext_h) // sy + 1
        out_w = (w + 2 * pw - ext_w) // sx + 1
    # Enough zeros at the end for the windows cover_all adds.
    xpad = numpy.zeros((n, c_in, h + 2 * ph + sy, w + 2 * pw + sx))
    xpad[:, :, ph : ph + h, pw : pw + w] = x
    y = numpy.zeros((n, c_out, out_h, out_w))
    for u in range(out_h):
        for v in range(out_w):
            window = xpad[:, :, u * sy : u * sy + ext_h : dy, v * sx : v * sx + ext_w : dx]
            y[:, :, u, v] = numpy.einsum("ncjk,ocjk->no", window, W)
    if b is not None:
        y += b.astype(numpy.float64).reshape(-1, 1, 1)
    return y


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 7, 6), "w_shape": (2, 3, 3, 2), "dilate": 2},
            {"x_shape": (1, 2, 8, 9), "w_shape": (3, 2, 2, 3), "dilate": (3, 2), "pad": (2, 1)},
            {
                "x_shape": (2, 2, 9, 8),
                "w_shape": (2, 2, 2, 2),
                "stride": (2, 3),
                "dilate": (2, 1),
                "cover_all": True,
            },
            {"x_shape": (2, 2, 5, 5), "w_shape": (2, 2, 3, 3), "dilate": 1, "pad": 1},
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestDilatedConvolution2D(FunctionTestCase):
    stride = 1
    pad = 0
    cover_all = False

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, self.w_shape).astype(self.dtype)
        if self.nobias:
            return x, W
        return x, W, numpy.random.uniform(-1, 1, self.w_shape[0]).astype(self.dtype)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        y = dilated_convolution_2d(
            x, W, b, self.stride, self.pad, self.dilate, cover_all=self.cover_all
        )
        return (y,)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        y = _dilated_loop(
            x, W, b, _pair(self.stride), _pair(self.pad), _pair(self.dilate), self.cover_all
        )
        return (y.astype(self.dtype),)


def test_bad_input():
    x = numpy.ones((1, 2, 5, 5), numpy.float32)
    W = numpy.ones((1, 2, 3, 3), numpy.float32)
    with pytest.raises(InvalidType) as info:
        dilated_convolution_2d(x, W, dilate=3)
    assert "DilatedConvolution2D" in str(info.value)
    assert "a positive output size" in str(info.value)
    with pytest.raises(InvalidType, match=re.escape("x.ndim == 4")):
        dilated_convolution_2d(x[0], W)
    with pytest.raises(ValueError, match=re.escape("dilated_convolution_2d: dilate must be >= 1")):
        dilated_convolution_2d(x, W, dilate=0)
