import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.local_convolution_2d import (
    LocalConvolution2DFunction,
    local_convolution_2d,
)

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
N, C_IN, C_OUT = 2, 3, 2


def out_size(size, k, s):
    return (size - k) // s + 1


def local_conv_ref(x, W, b, stride):
    """The defining sum, looping over every output element, in float64."""
    sy, sx = stride
    c_out, out_h, out_w, c_in, kh, kw = W.shape
    x = x.astype(numpy.float64)
    y = numpy.zeros((len(x), c_out, out_h, out_w))
    for n in range(len(x)):
        for o in range(c_out):
            for i in range(out_h):
                for j in range(out_w):
                    s = 0.0
                    for c in range(c_in):
                        for p in range(kh):
                            for q in range(kw):
                                s += float(W[o, i, j, c, p, q]) * x[n, c, i * sy + p, j * sx + q]
                    y[n, o, i, j] = s + (0.0 if b is None else float(b[o, i, j]))
    return y


class LocalConvolutionCase(FunctionTestCase):
    """local_convolution_2d against the defining sum (parameterized below)."""

    x_dtype = W_dtype = None

    def _shapes(self):
        (h, w), (kh, kw), stride = self.geometry
        sy, sx = stride if isinstance(stride, tuple) else (stride, stride)
        out_h, out_w = out_size(h, kh, sy), out_size(w, kw, sx)
        return (N, C_IN, h, w), (C_OUT, out_h, out_w, C_IN, kh, kw), (sy, sx)

    def generate_inputs(self):
        x_shape, w_shape, _ = self._shapes()
        x_dtype = self.x_dtype or self.dtype
        x = numpy.random.uniform(-1, 1, x_shape).astype(x_dtype)
        W = numpy.random.uniform(-1, 1, w_shape).astype(self.W_dtype or self.dtype)
        if not self.with_bias:
            return x, W
        return x, W, numpy.random.uniform(-1, 1, w_shape[:3]).astype(x_dtype)

    def forward(self, inputs, device):
        return (local_convolution_2d(*inputs, stride=self.geometry[2]),)

    def forward_expected(self, inputs):
        x, W = inputs[:2]
        b = inputs[2] if self.with_bias else None
        return (local_conv_ref(x, W, b, self._shapes()[2]).astype(x.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "geometry": [
                # (h, w), (kh, kw), stride
                ((4, 5), (3, 3), 1),
                ((5, 6), (2, 3), (2, 1)),
                ((7, 5), (3, 2), 2),  # the last row and column are not covered
                ((3, 4), (3, 4), 1),  # one window
                ((6, 5), (1, 2), (1, 3)),
            ],
            "with_bias": [True, False],
            "dtype": FLOATS,
        }
    )
)
class TestLocalConvolution2D(LocalConvolutionCase):
    """One dtype for x, W and b, several geometries."""


@testing.parameterize(
    *testing.product(
        {
            "geometry": [((4, 5), (3, 3), 1)],
            "with_bias": [True],
            "x_dtype": FLOATS,
            "W_dtype": FLOATS,
        }
    )
)
class TestLocalConvolution2DMixedDtypes(LocalConvolutionCase):
    """x and W of two dtypes: y (and b) in x's dtype, each gradient in its input's dtype."""

    def before_test(self, test_name):
        families.loosen_for_float16(self, self.x_dtype, self.W_dtype)


def test_function_node_takes_an_int_stride():
    assert LocalConvolution2DFunction(2).stride == (2, 2)
    assert LocalConvolution2DFunction((1, 3)).stride == (1, 3)


def test_gradients_against_reference():
    x = Variable(numpy.random.uniform(-1, 1, (2, 2, 5, 4)))
    W = Variable(numpy.random.uniform(-1, 1, (3, 2, 2, 2, 2, 2)))
    b = Variable(numpy.random.uniform(-1, 1, (3, 2, 2)))
    y = local_convolution_2d(x, W, b, stride=(2, 2))
    gy = numpy.random.uniform(-1, 1, y.shape)
    gx, gW, gb = grad([y], [x, W, b], [Variable(gy)])
    expected_gx = numpy.zeros_like(x.array)
    expected_gW = numpy.zeros_like(W.array)
    for n, o, i, j in numpy.ndindex(*gy.shape):
        window = (n, slice(None), slice(2 * i, 2 * i + 2), slice(2 * j, 2 * j + 2))
        expected_gx[window] += gy[n, o, i, j] * W.array[o, i, j]
        expected_gW[o, i, j] += gy[n, o, i, j] * x.array[window]
    testing.assert_allclose(gx, expected_gx, rtol=1e-12)
    testing.assert_allclose(gW, expected_gW, rtol=1e-12)
    testing.assert_allclose(gb, gy.sum(axis=0), rtol=1e-12)


def test_empty_batch():
    x = Variable(numpy.zeros((0, 2, 3, 3), numpy.float32))
    W = Variable(numpy.ones((4, 2, 2, 2, 2, 2), numpy.float32))
    y = local_convolution_2d(x, W)
    assert y.shape == (0, 4, 2, 2)
    gx, gW = grad([y], [x, W], [Variable(numpy.zeros((0, 4, 2, 2), numpy.float32))])
    assert gx.shape == (0, 2, 3, 3)
    numpy.testing.assert_array_equal(gW.array, numpy.zeros(W.shape, numpy.float32))


def _case(x_shape=(1, 2, 4, 4), w_shape=(1, 2, 2, 2, 3, 3), b_shape=None, stride=1, **dtypes):
    x = numpy.ones(x_shape, dtypes.get("x", numpy.float64))
    W = numpy.ones(w_shape, dtypes.get("W", numpy.float64))
    return (x, W, None if b_shape is None else numpy.ones(b_shape)), {"stride": stride}


_LOCAL = "LocalConvolution2DFunction"

test_bad_input = bad_input_test(
    [
        (*_case(x=numpy.int32), InvalidType, (_LOCAL, "x.dtype.kind")),
        (*_case(W=numpy.int32), InvalidType, (_LOCAL, "W.dtype.kind")),
        (
            *_case(b_shape=(1, 2, 2), x=numpy.float32),
            InvalidType,
            (_LOCAL, "b.dtype == x.dtype"),
        ),
        (*_case(x_shape=(2, 4, 4)), InvalidType, (_LOCAL, "x.ndim")),
        (*_case(w_shape=(1, 2, 2, 2, 9)), InvalidType, (_LOCAL, "W.ndim")),
        (*_case(x_shape=(1, 3, 4, 4)), InvalidType, (_LOCAL, "x.shape[1]", "W.shape[3]")),
        (
            *_case(x_shape=(1, 2, 2, 4), w_shape=(1, 1, 2, 2, 3, 3)),
            InvalidType,
            (_LOCAL, "x.shape[2]", "W.shape[4]"),
        ),
        (*_case(w_shape=(1, 3, 2, 2, 3, 3)), InvalidType, (_LOCAL, "W.shape[1]")),
        (*_case(stride=2), InvalidType, (_LOCAL, "W.shape[1]")),
        (*_case(x_shape=(1, 2, 4, 5)), InvalidType, (_LOCAL, "W.shape[2]")),
        (*_case(b_shape=(1, 2)), InvalidType, (_LOCAL, "b.ndim")),
        (*_case(b_shape=(2, 2, 2)), InvalidType, (_LOCAL, "b.shape")),
    ]
    + [
        (
            (numpy.ones((1, 2, 4, 4)), numpy.ones((1, 2, 2, 2, 3, 3))),
            {"stride": stride},
            error,
            message,
        )
        for stride, error, message in [
            (0, ValueError, "local_convolution_2d: stride must be >= 1"),
            (
                (1, 2, 3),
                ValueError,
                "local_convolution_2d: stride must be an int or a sequence of 2",
            ),
            (1.5, TypeError, "local_convolution_2d: stride must be an int or a sequence of ints"),
        ]
    ],
    function=local_convolution_2d,
)
