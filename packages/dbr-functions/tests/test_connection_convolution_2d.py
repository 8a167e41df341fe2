import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.convolution_2d import Convolution2DFunction, convolution_2d
from dbr.functions.connection.convolution_nd import ConvolutionND, ConvolutionNDGradW
from dbr.functions.connection.deconvolution_nd import DeconvolutionND

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(
    *testing.product_dict(
        [
            # x shape, W shape, stride, pad, dilate, groups, cover_all
            {"x_shape": (2, 3, 4, 5), "w_shape": (2, 3, 3, 2), "stride": 1, "pad": 0},
            {"x_shape": (2, 3, 7, 6), "w_shape": (4, 3, 3, 3), "stride": (2, 3), "pad": (1, 2)},
            {"x_shape": (1, 2, 7, 6), "w_shape": (3, 2, 2, 3), "stride": 2, "pad": 0},
            {
                "x_shape": (1, 2, 7, 6),
                "w_shape": (3, 2, 2, 3),
                "stride": 2,
                "pad": 0,
                "cover_all": True,
            },
            {
                "x_shape": (2, 2, 7, 5),
                "w_shape": (2, 2, 3, 2),
                "stride": (3, 2),
                "pad": (1, 0),
                "cover_all": True,
            },
            {"x_shape": (2, 2, 7, 6), "w_shape": (3, 2, 3, 2), "pad": 1, "dilate": (2, 3)},
            {"x_shape": (2, 4, 5, 5), "w_shape": (6, 2, 3, 3), "pad": 1, "groups": 2},
            {
                "x_shape": (1, 6, 8, 7),
                "w_shape": (3, 2, 2, 3),
                "stride": (2, 1),
                "pad": (0, 1),
                "dilate": (2, 1),
                "groups": 3,
                "cover_all": True,
            },
            {"x_shape": (2, 3, 1, 1), "w_shape": (2, 3, 1, 1), "stride": 1, "pad": 0},
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestConvolution2D(families.ConvolutionCase):
    def apply(self, x, W, b):
        return convolution_2d(
            x,
            W,
            b,
            stride=self.stride,
            pad=self.pad,
            cover_all=self.cover_all,
            dilate=self.dilate,
            groups=self.groups,
        )


@testing.parameterize(
    *testing.product({"x_dtype,w_dtype": [("float32", "float16"), ("float16", "float64")]})
)
class TestConvolution2DMixedDtypes(FunctionTestCase):
    @pytest.fixture(autouse=True)
    def _loops(self, convolution_loops):
        self.loops = convolution_loops

    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, (2, 3, 4, 4)).astype(self.x_dtype)
        W = numpy.random.uniform(-1, 1, (2, 3, 2, 2)).astype(self.w_dtype)
        return x, W

    def forward(self, inputs, device):
        return (convolution_2d(*inputs, pad=1),)

    def forward_expected(self, inputs):
        x, W = inputs
        y = self.loops.convolution(x, W, None, stride=1, pad=1, dilate=1)
        return (y.astype(self.x_dtype),)


def test_gradients_are_deconvolution_and_grad_w_nodes():
    x = Variable(numpy.random.uniform(-1, 1, (2, 3, 5, 5)).astype(numpy.float32))
    W = Variable(numpy.random.uniform(-1, 1, (4, 3, 3, 3)).astype(numpy.float32))
    y = convolution_2d(x, W, stride=2, pad=1)
    assert type(y.creator) is ConvolutionND
    gx, gW = grad([y], [x, W], enable_double_backprop=True)
    assert type(gx.creator) is DeconvolutionND
    assert type(gW.creator) is ConvolutionNDGradW
    assert gx.shape == x.shape and gW.shape == W.shape
    assert gx.dtype == numpy.float32 and gW.dtype == numpy.float32


def test_convolution_2d_function_is_the_node_convolution_2d_applies():
    x = numpy.random.uniform(-1, 1, (2, 3, 6, 5))
    W = numpy.random.uniform(-1, 1, (4, 3, 3, 2))
    node = Convolution2DFunction((2, 1), 1, dilate=(1, 2))
    assert type(node) is ConvolutionND
    assert (node.stride, node.pad, node.dilate, node.cover_all) == (
        (2, 1),
        (1, 1),
        (1, 2),
        (False,) * 2,
    )
    (y,) = node.apply((x, W))
    expected = convolution_2d(x, W, stride=(2, 1), pad=1, dilate=(1, 2))
    testing.assert_allclose(y, expected, atol=0, rtol=0)
    with pytest.raises(ValueError, match="convolution_2d: stride must be >= 1"):
        Convolution2DFunction(0)


def test_empty_batch():
    x = numpy.zeros((0, 3, 5, 5), numpy.float32)
    W = Variable(numpy.ones((2, 3, 3, 3), numpy.float32))
    b = Variable(numpy.ones(2, numpy.float32))
    y = convolution_2d(x, W, b, pad=1)
    assert y.shape == (0, 2, 5, 5)
    y.grad = numpy.zeros(y.shape, numpy.float32)
    y.backward()
    testing.assert_allclose(W.grad, numpy.zeros(W.shape), atol=0, rtol=0)
    testing.assert_allclose(b.grad, numpy.zeros(2), atol=0, rtol=0)


def test_large_batch_spans_several_blocks():
    # More images than one cache block holds: the blocked loop must cover them all.
    rng = numpy.random.RandomState(0)
    x = rng.uniform(-1, 1, (37, 8, 24, 24))
    W = rng.uniform(-1, 1, (16, 8, 3, 3))
    y = convolution_2d(x, W, pad=1)
    expected = numpy.zeros((37, 16, 24, 24))
    xpad = numpy.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i in range(3):
        for j in range(3):
            expected += numpy.einsum(
                "nchw,oc->nohw", xpad[:, :, i : i + 24, j : j + 24], W[:, :, i, j]
            )
    testing.assert_allclose(y, expected, atol=1e-10, rtol=1e-10)
    gy = rng.uniform(-1, 1, y.shape)
    xv, Wv = Variable(x), Variable(W)
    yv = convolution_2d(xv, Wv, pad=1)
    yv.grad = gy
    yv.backward()
    expected_gw = numpy.zeros(W.shape)
    for i in range(3):
        for j in range(3):
            expected_gw[:, :, i, j] = numpy.einsum(
                "nchw,nohw->oc", xpad[:, :, i : i + 24, j : j + 24], gy
            )
    testing.assert_allclose(Wv.grad, expected_gw, atol=1e-9, rtol=1e-9)


ONES = numpy.ones((1, 1, 3, 3), numpy.float32)
X_OPTIONS = numpy.ones((1, 2, 3, 3), numpy.float32)
W_OPTIONS = numpy.ones((2, 2, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    families.convolution_shape_refusals(
        convolution_2d,
        "Convolution2D",
        [
            ((2, 3, 4), (1, 3, 2, 2), None, {}, "x.ndim == 4"),
            ((2, 3, 4, 4), (1, 3, 2), None, {}, "W.ndim == 4"),
            ((2, 3, 4, 4), (1, 2, 2, 2), None, {}, "x.shape[1] == W.shape[1] * 1"),
            ((2, 4, 4, 4), (3, 2, 2, 2), None, {"groups": 2}, "W.shape[0] % 2 == 0"),
            ((2, 3, 4, 4), (2, 3, 2, 2), (3,), {}, "b.shape[0] == W.shape[0]"),
            ((2, 3, 4, 4), (2, 3, 2, 2), (2, 1), {}, "b.ndim == 1"),
            ((2, 3, 4, 4), (2, 3, 5, 5), None, {}, "a positive output size"),
            ((2, 3, 4, 4), (2, 3, 3, 3), None, {"dilate": 2}, "output size (0, 0)"),
        ],
    )
    + [
        ((ONES.astype(numpy.int32), ONES), InvalidType, "x.dtype.kind == 'f'"),
        ((ONES, ONES.astype(numpy.int64)), InvalidType, "W.dtype.kind == 'f'"),
        ((ONES, ONES, numpy.ones(1, numpy.float64)), InvalidType, "b.dtype == x.dtype"),
    ]
    + [
        ((X_OPTIONS, W_OPTIONS), kwargs, error, message)
        for kwargs, error, message in [
            ({"stride": 0}, ValueError, "convolution_2d: stride must be >= 1, got 0"),
            (
                {"stride": (1, 2, 3)},
                ValueError,
                "convolution_2d: stride must be an int or a sequence of 2",
            ),
            ({"pad": -1}, ValueError, "convolution_2d: pad must be >= 0, got -1"),
            ({"pad": 1.5}, TypeError, "convolution_2d: pad must be an int or a sequence of ints"),
            ({"dilate": 0}, ValueError, "convolution_2d: dilate must be >= 1, got 0"),
            ({"groups": 0}, ValueError, "convolution_2d: groups must be >= 1, got 0"),
            ({"groups": 1.0}, TypeError, "convolution_2d: groups must be an int, got 1.0"),
        ]
    ]
    # The options after cover_all are keyword-only.
    + [((ONES, ONES, None, 1, 0, False, 1), TypeError, "positional arguments but 7 were given")],
    function=convolution_2d,
)
