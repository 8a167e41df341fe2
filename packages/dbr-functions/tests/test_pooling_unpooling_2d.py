import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
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


@pytest.mark.parametrize("x_shape", [(2, 3, 4), (1, 2, 3, 4, 5)])
def test_wrong_ndim(x_shape):
    with pytest.raises(InvalidType) as e:
        unpooling_2d(numpy.zeros(x_shape, numpy.float32), 2)
    assert "Unpooling2D" in str(e.value) and "x.ndim == 4" in str(e.value)


def test_non_float_input():
    with pytest.raises(InvalidType) as e:
        unpooling_2d(numpy.zeros((1, 1, 2, 2), numpy.int64), 2)
    assert "Unpooling2D" in str(e.value) and "x.dtype.kind == 'f'" in str(e.value)


def test_outsize_that_pooling_would_not_map_back():
    with pytest.raises(InvalidType) as e:
        unpooling_2d(numpy.zeros((1, 1, 2, 2), numpy.float32), 2, outsize=(4, 6))
    assert "Unpooling2D" in str(e.value) and "x.shape[3] == 3" in str(e.value)


@pytest.mark.parametrize(
    "kwargs,error,words",
    [
        ({"ksize": (2, 0)}, ValueError, ["unpooling_2d", "ksize", ">= 1"]),
        ({"ksize": 2, "outsize": (4, 4, 4)}, ValueError, ["unpooling_2d", "outsize", "2 ints"]),
        ({"ksize": 2, "stride": 0}, ValueError, ["unpooling_2d", "stride", ">= 1"]),
    ],
)
def test_bad_options(kwargs, error, words):
    with pytest.raises(error) as e:
        unpooling_2d(numpy.zeros((1, 1, 2, 2), numpy.float32), **kwargs)
    for word in words:
        assert word in str(e.value)
