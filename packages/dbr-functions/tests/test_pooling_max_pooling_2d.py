import numpy
import pytest

from dbr.core import Variable, backend, testing
from dbr.core.testing import FunctionTestCase, bad_input_test, get_test_device
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.max_pooling_2d import max_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def distinct(shape, dtype):
    """Values without ties, 1.6 / size apart (finite differences never reorder them)."""
    size = int(numpy.prod(shape))
    values = (numpy.random.permutation(size) - size / 2) * (1.6 / max(size, 1))
    return values.reshape(shape).astype(dtype)


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def max_pool_2d_reference(x, ksize, stride, pad, cover_all):
    """Direct loops over rows and columns; the padding reads as -inf; the first maximum wins."""
    (kh, kw), (sy, sx), (ph, pw) = ksize, stride, pad
    n, c, h, w = x.shape
    extra_h = sy - 1 if cover_all else 0
    extra_w = sx - 1 if cover_all else 0
    out_h = (h + 2 * ph - kh + extra_h) // sy + 1
    out_w = (w + 2 * pw - kw + extra_w) // sx + 1
    y = numpy.empty((n, c, out_h, out_w), x.dtype)
    idx = numpy.empty((n, c, out_h, out_w), numpy.int32)
    for b in range(n):
        for ch in range(c):
            for i in range(out_h):
                for j in range(out_w):
                    best, best_k = -numpy.inf, 0
                    for di in range(kh):
                        for dj in range(kw):
                            r, q = i * sy - ph + di, j * sx - pw + dj
                            if 0 <= r < h and 0 <= q < w and x[b, ch, r, q] > best:
                                best, best_k = x[b, ch, r, q], di * kw + dj
                    y[b, ch, i, j] = best
                    idx[b, ch, i, j] = best_k
    return y, idx


CASES = [
    # (x_shape, ksize, stride, pad, cover_all)
    ((2, 3, 6, 6), 2, None, 0, True),
    ((2, 3, 7, 5), 2, None, 0, True),
    ((2, 3, 7, 5), 2, None, 0, False),
    ((2, 2, 7, 7), 3, 2, 1, True),
    ((2, 2, 7, 7), 3, 2, 1, False),
    ((1, 3, 5, 8), (3, 2), (1, 3), (1, 0), True),
    ((1, 3, 5, 8), (3, 2), (1, 3), (1, 0), False),
    ((2, 1, 9, 6), (4, 3), (3, 2), (2, 1), True),
    ((1, 2, 3, 3), 3, 1, 1, False),
    ((1, 2, 1, 1), 1, 1, 0, False),
]


@testing.parameterize(
    *testing.product({"x_shape,ksize,stride,pad,cover_all": CASES, "dtype": FLOATS})
)
class TestMaxPooling2D(FunctionTestCase):
    def generate_inputs(self):
        return (distinct(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        return (max_pooling_2d(inputs[0], self.ksize, self.stride, self.pad, self.cover_all),)

    def forward_expected(self, inputs):
        ksize = pair(self.ksize)
        stride = ksize if self.stride is None else pair(self.stride)
        return (
            max_pool_2d_reference(inputs[0], ksize, stride, pair(self.pad), self.cover_all)[0],
        )


@pytest.mark.parametrize("x_shape,ksize,stride,pad,cover_all", CASES)
def test_return_indices(x_shape, ksize, stride, pad, cover_all):
    x = distinct(x_shape, numpy.float32)
    y, indexes = max_pooling_2d(x, ksize, stride, pad, cover_all, return_indices=True)
    k = pair(ksize)
    s = k if stride is None else pair(stride)
    y_ref, idx_ref = max_pool_2d_reference(x, k, s, pair(pad), cover_all)
    numpy.testing.assert_array_equal(y.array, y_ref)
    # Chainer's CPU indexes are numpy argmax's int64.
    assert indexes.dtype == numpy.int64
    numpy.testing.assert_array_equal(indexes, idx_ref)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("x_shape,ksize,stride,pad,cover_all", CASES)
def test_gpu_kernels_match_the_cpu_with_ties_infinities_and_nan(
    x_shape, ksize, stride, pad, cover_all, dtype
):
    # The GPU's one-pass kernels against the CPU's columns: the first maximum wins
    # a tie, the padding reads as -inf, and a window with NaN gives NaN.
    device = get_test_device("@cupy:0")
    rng = numpy.random.default_rng(sum(x_shape))
    x = rng.integers(-2, 2, x_shape).astype(dtype)
    x[rng.random(x_shape) < 0.15] = -numpy.inf
    x.flat[rng.integers(x.size)] = numpy.nan
    results = []
    for dev in (backend.cpu, device):
        xv = Variable(dev.send(x))
        y, indexes = max_pooling_2d(xv, ksize, stride, pad, cover_all, return_indices=True)
        gy = numpy.arange(1, y.size + 1, dtype=dtype).reshape(y.shape) / 8
        y.grad = dev.send(gy)
        y.backward()
        results.append([backend.to_cpu(a) for a in (y.array, indexes, xv.grad)])
    (y_cpu, i_cpu, gx_cpu), (y_gpu, i_gpu, gx_gpu) = results
    numpy.testing.assert_array_equal(y_gpu, y_cpu)
    numpy.testing.assert_array_equal(i_gpu, i_cpu)
    testing.assert_allclose(gx_gpu, gx_cpu, atol=0, rtol=1e-3 if dtype == numpy.float16 else 1e-6)


def test_cover_all_adds_the_last_window():
    x = distinct((1, 1, 5, 5), numpy.float32)
    assert max_pooling_2d(x, 2).shape == (1, 1, 3, 3)
    assert max_pooling_2d(x, 2, cover_all=False).shape == (1, 1, 2, 2)
    numpy.testing.assert_array_equal(max_pooling_2d(x, 2).array[0, 0, 2, 2], x[0, 0, 4, 4])


def test_gradient_goes_to_the_maxima():
    x = Variable(numpy.array([[[[1.0, 4.0, 2.0, 0.0], [3.0, 0.0, 0.0, 5.0]]]]))
    y = max_pooling_2d(x, 2)
    y.grad = numpy.array([[[[10.0, 20.0]]]])
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [[[[0.0, 10.0, 0.0, 0.0], [0.0, 0.0, 0.0, 20.0]]]])


def test_accepts_arrays_and_keeps_the_input():
    x = distinct((1, 2, 4, 4), numpy.float16)
    original = x.copy()
    y = max_pooling_2d(x, 2)
    assert isinstance(y, Variable) and y.dtype == numpy.float16
    numpy.testing.assert_array_equal(x, original)


def test_empty_batch(pooling_checks):
    pooling_checks.empty_batch(
        lambda x: max_pooling_2d(x, 3, 2, 1), (0, 2, 4, 4), (0, 2, 3, 3), numpy.float64
    )


X = numpy.zeros((1, 1, 4, 4), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((numpy.zeros(x_shape, numpy.float32), 2), InvalidType, ("MaxPooling2D", "x.ndim == 4"))
        for x_shape in [(2, 3, 4), (1, 2, 3, 4, 5)]
    ]
    + [
        (
            (numpy.zeros((1, 1, 4, 4), numpy.int64), 2),
            InvalidType,
            ("MaxPooling2D", "x.dtype.kind == 'f'"),
        ),
        ((X, (2, 6)), {"cover_all": False}, InvalidType, ("MaxPooling2D", "at least one window")),
        ((X,), {"ksize": (2, 0)}, ValueError, ("max_pooling_2d", "ksize", ">= 1")),
        ((X,), {"ksize": "2"}, TypeError, ("max_pooling_2d", "ksize")),
        ((X,), {"ksize": (2, 2, 2)}, ValueError, ("max_pooling_2d", "ksize", "2 ints")),
        ((X,), {"ksize": 2, "stride": (1,)}, ValueError, ("max_pooling_2d", "stride", "2 ints")),
        ((X,), {"ksize": 2, "pad": (0, -2)}, ValueError, ("max_pooling_2d", "pad", ">= 0")),
    ],
    function=max_pooling_2d,
)


@pytest.mark.gpu
def test_return_indices_on_a_gpu_are_int32():
    # Chainer's CUDA max pooling kernel writes int32 indexes (cuDNN is off for them).
    device = get_test_device("@cupy:0")
    x = distinct((2, 3, 5, 6), numpy.float32)
    y, indexes = max_pooling_2d(device.send(x), 2, return_indices=True)
    assert isinstance(indexes, device.xp.ndarray)
    assert indexes.dtype == numpy.int32
    _, idx_ref = max_pool_2d_reference(x, (2, 2), (2, 2), (0, 0), True)
    numpy.testing.assert_array_equal(backend.to_cpu(indexes), idx_ref)
