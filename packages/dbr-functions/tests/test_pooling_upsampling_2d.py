import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.max_pooling_2d import max_pooling_2d
from dbr.functions.pooling.upsampling_2d import upsampling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def upsample_reference(x, indexes, ksize, stride, pad, outsize):
    """Direct loops: each input element goes to the window position its index names."""
    kw = ksize[1]
    (sy, sx), (ph, pw) = stride, pad
    out_h, out_w = outsize
    y = numpy.zeros(x.shape[:2] + (out_h, out_w))
    for b in range(x.shape[0]):
        for c in range(x.shape[1]):
            for i in range(x.shape[2]):
                for j in range(x.shape[3]):
                    di, dj = divmod(int(indexes[b, c, i, j]), kw)
                    r, q = i * sy - ph + di, j * sx - pw + dj
                    if 0 <= r < out_h and 0 <= q < out_w:
                        y[b, c, r, q] += x[b, c, i, j]
    return y.astype(x.dtype)


# (x_shape, ksize, stride, pad, outsize, cover_all, expected output size)
CASES = [
    *families.UNPOOLING_2D_CASES,
    ((1, 2, 3, 3), 3, 2, 1, (5, 4), True, (5, 4)),
]


@testing.parameterize(
    *testing.product(
        {"x_shape,ksize,stride,pad,outsize,cover_all,out_size": CASES, "dtype": FLOATS}
    )
)
class TestUpsampling2D(FunctionTestCase):
    def before_test(self, test_name):
        kh, kw = pair(self.ksize)
        self.indexes = numpy.random.randint(0, kh * kw, self.x_shape).astype(numpy.int32)

    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        indexes = device.send(self.indexes)
        y = upsampling_2d(
            inputs[0], indexes, self.ksize, self.stride, self.pad, self.outsize, self.cover_all
        )
        return (y,)

    def forward_expected(self, inputs):
        ksize = pair(self.ksize)
        stride = ksize if self.stride is None else pair(self.stride)
        y = upsample_reference(
            inputs[0], self.indexes, ksize, stride, pair(self.pad), self.out_size
        )
        return (y,)


@pytest.mark.parametrize(
    "x_shape,ksize,stride,pad,cover_all",
    [
        ((2, 3, 6, 6), 2, None, 0, True),
        ((2, 3, 7, 5), 2, None, 0, True),
        ((1, 2, 7, 7), 3, 2, 1, True),
        ((1, 2, 7, 7), 3, 2, 1, False),
        ((1, 2, 5, 8), (3, 2), (1, 3), (1, 0), False),
    ],
)
def test_puts_the_maxima_of_max_pooling_back(x_shape, ksize, stride, pad, cover_all):
    size = int(numpy.prod(x_shape))
    x = (numpy.random.permutation(size) + 1).reshape(x_shape).astype(numpy.float32)
    y, indexes = max_pooling_2d(x, ksize, stride, pad, cover_all, return_indices=True)
    z = upsampling_2d(y, indexes, ksize, stride, pad, x_shape[2:], cover_all).array
    # a maximum shared by overlapping windows comes back once per window
    maxima = z != 0
    counts = z[maxima] / x[maxima]
    numpy.testing.assert_array_equal(counts, numpy.round(counts))
    assert counts.min() >= 1 and counts.sum() == y.size
    # every window's maximum is among the elements put back
    y_again = max_pooling_2d(numpy.where(maxima, x, 0.0), ksize, stride, pad, cover_all)
    numpy.testing.assert_array_equal(y_again.array, y.array)


def test_gradient_gathers_at_the_indexes():
    indexes = numpy.array([[[[1, 2]]]], numpy.int32)
    x = Variable(numpy.array([[[[5.0, 7.0]]]]))
    y = upsampling_2d(x, indexes, 2, outsize=(2, 4))
    numpy.testing.assert_array_equal(y.array, [[[[0.0, 5.0, 0.0, 0.0], [0.0, 0.0, 7.0, 0.0]]]])
    gy = Variable(numpy.arange(8.0).reshape(1, 1, 2, 4))
    (gx,) = grad([y], [x], [gy], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [[[[1.0, 6.0]]]])
    (ggy,) = grad([gx], [gy], [Variable(numpy.array([[[[10.0, 20.0]]]]))])
    numpy.testing.assert_array_equal(ggy.array, [[[[0.0, 10.0, 0.0, 0.0], [0.0, 0.0, 20.0, 0.0]]]])


def test_indexes_may_be_a_variable():
    indexes = Variable(numpy.zeros((1, 1, 1, 1), numpy.int64))
    y = upsampling_2d(numpy.ones((1, 1, 1, 1), numpy.float32), indexes, 2, cover_all=False)
    numpy.testing.assert_array_equal(y.array, [[[[1.0, 0.0], [0.0, 0.0]]]])


def test_empty_batch():
    x = Variable(numpy.zeros((0, 2, 2, 2), numpy.float32))
    y = upsampling_2d(x, numpy.zeros((0, 2, 2, 2), numpy.int32), 2, cover_all=False)
    assert y.shape == (0, 2, 4, 4)
    y.grad = numpy.zeros(y.shape, numpy.float32)
    y.backward()
    assert x.grad.shape == (0, 2, 2, 2)


X = numpy.zeros((1, 1, 2, 2), numpy.float32)
INDEXES = numpy.zeros((1, 1, 2, 2), numpy.int32)


def _indexes_with(bad):
    """Valid (1, 1, 2, 2) indexes for ksize 2, but one entry set to ``bad``."""
    indexes = INDEXES.copy()
    indexes[0, 0, 1, 0] = bad
    return indexes


test_bad_input = bad_input_test(
    [
        (
            (X, numpy.zeros((1, 1, 2, 3), numpy.int32), 2),
            InvalidType,
            ("Upsampling2D", "x.shape == (1, 1, 2, 3)"),
        ),
    ]
    + [
        ((X, _indexes_with(bad), 2), ValueError, ("upsampling_2d", "indexes", "[0, 4)", str(bad)))
        for bad in [-1, 4]
    ]
    + [
        ((X, numpy.zeros((1, 1, 2, 2)), 2), TypeError, ("upsampling_2d", "indexes", "float64")),
    ]
    + [
        (
            (numpy.zeros(x_shape, numpy.float32), numpy.zeros(x_shape, numpy.int32), 2),
            InvalidType,
            ("Upsampling2D", "x.ndim == 4"),
        )
        for x_shape in [(2, 3, 4), (1, 2, 3, 4, 5)]
    ]
    + [
        (
            (numpy.zeros((1, 1, 2, 2), numpy.int32), numpy.zeros((1, 1, 2, 2), int), 2),
            InvalidType,
            ("Upsampling2D", "x.dtype.kind == 'f'"),
        ),
        ((X, INDEXES, 2), {"outsize": (6, 4)}, InvalidType, ("Upsampling2D", "x.shape[2] == 3")),
        ((X, INDEXES), {"ksize": (2, 0)}, ValueError, ("upsampling_2d", "ksize", ">= 1")),
        (
            (X, INDEXES),
            {"ksize": 2, "outsize": (4,)},
            ValueError,
            ("upsampling_2d", "outsize", "2 ints"),
        ),
        ((X, INDEXES), {"ksize": 2, "pad": (0, -1)}, ValueError, ("upsampling_2d", "pad", ">= 0")),
    ],
    function=upsampling_2d,
)
