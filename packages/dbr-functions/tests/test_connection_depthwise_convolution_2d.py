import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.depthwise_convolution_2d import (
    DepthwiseConvolution2D,
    depthwise_convolution_2d,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _depthwise_loop(x, W, b, stride, pad):
    """y[i, c * M + m, u, v] = b + sum_{j, k} W[m, c, j, k] xpad[i, c, u s + j, v s + k]."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    n, channels, h, w = x.shape
    multiplier, _, kh, kw = W.shape
    sy, sx = stride
    ph, pw = pad
    xpad = numpy.zeros((n, channels, h + 2 * ph, w + 2 * pw))
    xpad[:, :, ph : ph + h, pw : pw + w] = x
    out_h = (h + 2 * ph - kh) // sy + 1
    out_w = (w + 2 * pw - kw) // sx + 1
    y = numpy.zeros((n, channels * multiplier, out_h, out_w))
    for c in range(channels):
        for m in range(multiplier):
            for u in range(out_h):
                for v in range(out_w):
                    window = xpad[:, c, u * sy : u * sy + kh, v * sx : v * sx + kw]
                    y[:, c * multiplier + m, u, v] = (window * W[m, c]).sum(axis=(1, 2))
    if b is not None:
        y += b.astype(numpy.float64).reshape(-1, 1, 1)
    return y


def _pair(v):
    return v if isinstance(v, tuple) else (v, v)


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 4, 5), "w_shape": (2, 3, 3, 2), "stride": 1, "pad": 0},
            {"x_shape": (2, 2, 6, 5), "w_shape": (3, 2, 2, 3), "stride": (2, 1), "pad": (1, 2)},
            {"x_shape": (1, 4, 5, 5), "w_shape": (1, 4, 3, 3), "stride": 2, "pad": 1},
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestDepthwiseConvolution2D(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype)
        W = numpy.random.uniform(-1, 1, self.w_shape).astype(self.dtype)
        if self.nobias:
            return x, W
        c_out = self.w_shape[0] * self.w_shape[1]
        return x, W, numpy.random.uniform(-1, 1, c_out).astype(self.dtype)

    def forward(self, inputs, device):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        return (depthwise_convolution_2d(x, W, b, stride=self.stride, pad=self.pad),)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        y = _depthwise_loop(x, W, b, _pair(self.stride), _pair(self.pad))
        return (y.astype(self.dtype),)


def test_records_its_node_and_gradient_shapes():
    x = Variable(numpy.random.uniform(-1, 1, (2, 3, 4, 4)).astype(numpy.float32))
    W = Variable(numpy.random.uniform(-1, 1, (2, 3, 3, 3)).astype(numpy.float32))
    b = Variable(numpy.zeros(6, numpy.float32))
    y = depthwise_convolution_2d(x, W, b, pad=1)
    assert type(y.creator) is DepthwiseConvolution2D
    y.grad = numpy.ones(y.shape, numpy.float32)
    y.backward()
    assert x.grad.shape == x.shape and W.grad.shape == W.shape and b.grad.shape == b.shape
    testing.assert_allclose(b.grad, numpy.full(6, 32.0), atol=0, rtol=0)


ONES = numpy.ones((1, 1, 3, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (
                numpy.ones(x_shape, numpy.float32),
                numpy.ones(w_shape, numpy.float32),
                None if b_shape is None else numpy.ones(b_shape, numpy.float32),
            ),
            InvalidType,
            ("DepthwiseConvolution2D", expect),
        )
        for x_shape, w_shape, b_shape, expect in [
            ((2, 3, 4), (2, 3, 2, 2), None, "x.ndim == 4"),
            ((2, 3, 4, 4), (2, 3, 2), None, "W.ndim == 4"),
            ((2, 3, 4, 4), (3, 2, 2, 2), None, "x.shape[1] == W.shape[1]"),
            ((2, 3, 4, 4), (2, 3, 2, 2), (3,), "b.shape[0] == W.shape[0] * W.shape[1]"),
            ((2, 3, 4, 4), (2, 3, 5, 2), None, "a positive output size"),
        ]
    ]
    + [
        ((ONES, ONES.astype(numpy.int32)), InvalidType, "W.dtype.kind == 'f'"),
        ((ONES, ONES, numpy.ones(1, numpy.float64)), InvalidType, "b.dtype == x.dtype"),
        (
            (ONES, ONES),
            {"stride": (1, 0)},
            ValueError,
            "depthwise_convolution_2d: stride must be >= 1",
        ),
        ((ONES, ONES), {"pad": None}, TypeError, "depthwise_convolution_2d: pad must be an int"),
    ],
    function=depthwise_convolution_2d,
)
