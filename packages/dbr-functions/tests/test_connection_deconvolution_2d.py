import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.convolution_2d import convolution_2d
from dbr.functions.connection.convolution_nd import ConvolutionND, ConvolutionNDGradW
from dbr.functions.connection.deconvolution_2d import deconvolution_2d
from dbr.functions.connection.deconvolution_nd import DeconvolutionND

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(
    *testing.product_dict(
        [
            {"x_shape": (2, 3, 3, 4), "w_shape": (3, 2, 3, 2)},
            {"x_shape": (2, 2, 3, 2), "w_shape": (2, 3, 3, 3), "stride": (2, 3), "pad": (1, 0)},
            {"x_shape": (1, 2, 3, 3), "w_shape": (2, 3, 3, 3), "stride": 2, "outsize": (8, 7)},
            {
                "x_shape": (1, 2, 3, 2),
                "w_shape": (2, 2, 2, 3),
                "stride": (3, 2),
                "pad": 1,
                "outsize": (6, 4),
            },
            {"x_shape": (2, 2, 3, 3), "w_shape": (2, 2, 2, 3), "pad": 1, "dilate": (2, 1)},
            {"x_shape": (2, 4, 3, 3), "w_shape": (4, 3, 2, 2), "groups": 2},
            {
                "x_shape": (1, 6, 3, 2),
                "w_shape": (6, 1, 2, 3),
                "stride": 2,
                "pad": (0, 1),
                "dilate": (1, 2),
                "groups": 3,
                "outsize": (7, 5),
            },
        ],
        [{"nobias": False}, {"nobias": True}],
        [{"dtype": d} for d in FLOATS],
    )
)
class TestDeconvolution2D(families.ConvolutionCase):
    kind = "deconvolution"

    def apply(self, x, W, b):
        return deconvolution_2d(
            x,
            W,
            b,
            stride=self.stride,
            pad=self.pad,
            outsize=self.outsize,
            dilate=self.dilate,
            groups=self.groups,
        )


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "options"),
    [
        ((2, 3, 5, 6), (4, 3, 3, 2), {}),
        ((2, 3, 7, 6), (4, 3, 3, 3), {"stride": (2, 3), "pad": (1, 2)}),
        ((1, 2, 7, 6), (3, 2, 2, 3), {"stride": 2, "cover_all": True}),
        ((2, 2, 8, 7), (3, 2, 3, 2), {"stride": 3, "pad": 1, "cover_all": True, "dilate": 2}),
        ((2, 4, 5, 5), (6, 2, 3, 3), {"pad": 1, "groups": 2}),
    ],
)
def test_deconvolution_is_the_transpose_of_convolution(x_shape, w_shape, options):
    families.check_transpose(convolution_2d, deconvolution_2d, x_shape, w_shape, options)


def test_gradients_are_convolution_and_grad_w_nodes():
    x = Variable(numpy.random.uniform(-1, 1, (2, 3, 3, 3)).astype(numpy.float32))
    W = Variable(numpy.random.uniform(-1, 1, (3, 2, 3, 3)).astype(numpy.float32))
    y = deconvolution_2d(x, W, stride=2, pad=1, outsize=(6, 5))
    assert type(y.creator) is DeconvolutionND
    assert y.shape == (2, 2, 6, 5)
    gx, gW = grad([y], [x, W], enable_double_backprop=True)
    assert type(gx.creator) is ConvolutionND
    assert type(gW.creator) is ConvolutionNDGradW
    assert gx.shape == x.shape and gW.shape == W.shape


def test_empty_batch():
    x = numpy.zeros((0, 2, 3, 3), numpy.float32)
    W = Variable(numpy.ones((2, 3, 2, 2), numpy.float32))
    y = deconvolution_2d(x, W, stride=2)
    assert y.shape == (0, 3, 6, 6)
    y.grad = numpy.zeros(y.shape, numpy.float32)
    y.backward()
    testing.assert_allclose(W.grad, numpy.zeros(W.shape), atol=0, rtol=0)


ONES = numpy.ones((1, 1, 3, 3), numpy.float32)
X_OPTIONS = numpy.ones((1, 2, 3, 3), numpy.float32)
W_OPTIONS = numpy.ones((2, 2, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    families.convolution_shape_refusals(
        deconvolution_2d,
        "Deconvolution2D",
        [
            ((2, 3, 4), (3, 1, 2, 2), None, {}, "x.ndim == 4"),
            ((2, 3, 4, 4), (3, 1, 2), None, {}, "W.ndim == 4"),
            ((2, 3, 4, 4), (2, 1, 2, 2), None, {}, "x.shape[1] == W.shape[0]"),
            ((2, 3, 4, 4), (3, 1, 2, 2), None, {"groups": 2}, "W.shape[0] % 2 == 0"),
            ((2, 4, 4, 4), (4, 2, 2, 2), (2,), {"groups": 2}, "b.shape[0] == W.shape[1] * 2"),
            ((2, 3, 4, 4), (3, 1, 2, 2), (1, 1), {}, "b.ndim == 1"),
            ((2, 3, 1, 1), (3, 1, 1, 1), None, {"pad": 1}, "a positive output size"),
            (
                (2, 3, 3, 3),
                (3, 1, 3, 3),
                None,
                {"stride": 2, "outsize": (9, 7)},
                "4 <= x.shape[2] <= 4",
            ),
            (
                (2, 3, 3, 3),
                (3, 1, 3, 3),
                None,
                {"stride": 2, "outsize": (7, 5)},
                "2 <= x.shape[3] <= 2",
            ),
        ],
    )
    + [
        ((ONES.astype(numpy.int32), ONES), InvalidType, "x.dtype.kind == 'f'"),
        ((ONES, ONES, numpy.ones(1, numpy.float16)), InvalidType, "b.dtype == x.dtype"),
    ]
    + [
        ((X_OPTIONS, W_OPTIONS), kwargs, error, message)
        for kwargs, error, message in [
            ({"stride": 0}, ValueError, "deconvolution_2d: stride must be >= 1, got 0"),
            (
                {"pad": (1,)},
                ValueError,
                "deconvolution_2d: pad must be an int or a sequence of 2 ints",
            ),
            (
                {"outsize": (0, 3)},
                ValueError,
                "deconvolution_2d: outsize must be >= 1, got (0, 3)",
            ),
            (
                {"outsize": (3.0, 3)},
                TypeError,
                "deconvolution_2d: outsize must be an int or a sequence",
            ),
            ({"groups": None}, TypeError, "deconvolution_2d: groups must be an int, got None"),
        ]
    ],
    function=deconvolution_2d,
)


def test_outsize_accepts_every_size_a_convolution_maps_back():
    x = numpy.ones((1, 1, 3, 3), numpy.float32)
    W = numpy.ones((1, 1, 3, 3), numpy.float32)
    for outsize in ((7, 7), (7, 8), (8, 7), (8, 8)):
        assert deconvolution_2d(x, W, stride=2, outsize=outsize).shape == (1, 1) + outsize
