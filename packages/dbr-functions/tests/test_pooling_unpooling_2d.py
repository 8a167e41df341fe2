import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.unpooling_2d import unpooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def unpool_2d_reference(x, ksize, stride, pad, outsize):
    """Direct loops: each input element goes to every in-range element of its window."""
    (kh, kw), (sy, sx), (ph, pw) = ksize, stride, pad
    out_h, out_w = outsize
    y = numpy.zeros(x.shape[:2] + (out_h, out_w))
    for i in range(x.shape[2]):
        for j in range(x.shape[3]):
            for di in range(kh):
                for dj in range(kw):
                    r, q = i * sy - ph + di, j * sx - pw + dj
                    if 0 <= r < out_h and 0 <= q < out_w:
                        y[:, :, r, q] += x[:, :, i, j]
    return y.astype(x.dtype)


# (x_shape, ksize, stride, pad, outsize, cover_all, expected output size)
CASES = [
    *families.UNPOOLING_2D_CASES,
    ((1, 2, 3, 3), 3, 2, 1, (5, 6), False, (5, 6)),
    ((2, 1, 3, 2), (2, 3), (3, 1), (0, 1), (7, 2), True, (7, 2)),
]


@testing.parameterize(
    *testing.product(
        {"x_shape,ksize,stride,pad,outsize,cover_all,out_size": CASES, "dtype": FLOATS}
    )
)
class TestUnpooling2D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        y = unpooling_2d(
            inputs[0], self.ksize, self.stride, self.pad, self.outsize, self.cover_all
        )
        return (y,)

    def forward_expected(self, inputs):
        ksize = pair(self.ksize)
        stride = ksize if self.stride is None else pair(self.stride)
        return (unpool_2d_reference(inputs[0], ksize, stride, pair(self.pad), self.out_size),)


def test_copies_each_element_to_its_window():
    x = numpy.array([[[[1.0, 2.0], [3.0, 4.0]]]], numpy.float32)
    y = unpooling_2d(x, 2, cover_all=False)
    expected = numpy.repeat(numpy.repeat(x, 2, axis=2), 2, axis=3)
    numpy.testing.assert_array_equal(y.array, expected)


def test_gradient_sums_each_window():
    x = Variable(numpy.zeros((1, 1, 1, 2)))
    y = unpooling_2d(x, 2, cover_all=False)
    y.grad = numpy.arange(8.0).reshape(1, 1, 2, 4)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[[0 + 1 + 4 + 5, 2 + 3 + 6 + 7]]]])


def test_empty_batch():
    x = Variable(numpy.zeros((0, 2, 2, 2), numpy.float64))
    y = unpooling_2d(x, 2, outsize=(4, 3))
    assert y.shape == (0, 2, 4, 3)
    y.grad = numpy.zeros(y.shape)
    y.backward()
    assert x.grad.shape == (0, 2, 2, 2)


X = numpy.zeros((1, 1, 2, 2), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((numpy.zeros(x_shape, numpy.float32), 2), InvalidType, ("Unpooling2D", "x.ndim == 4"))
        for x_shape in [(2, 3, 4), (1, 2, 3, 4, 5)]
    ]
    + [
        (
            (numpy.zeros((1, 1, 2, 2), numpy.int64), 2),
            InvalidType,
            ("Unpooling2D", "x.dtype.kind == 'f'"),
        ),
        ((X, 2), {"outsize": (4, 6)}, InvalidType, ("Unpooling2D", "x.shape[3] == 3")),
        ((X,), {"ksize": (2, 0)}, ValueError, ("unpooling_2d", "ksize", ">= 1")),
        (
            (X,),
            {"ksize": 2, "outsize": (4, 4, 4)},
            ValueError,
            ("unpooling_2d", "outsize", "2 ints"),
        ),
        ((X,), {"ksize": 2, "stride": 0}, ValueError, ("unpooling_2d", "stride", ">= 1")),
    ],
    function=unpooling_2d,
)
