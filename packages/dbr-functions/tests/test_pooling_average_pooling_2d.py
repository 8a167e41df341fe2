import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.pooling.average_pooling_2d import average_pooling_2d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def pair(v):
    return tuple(v) if isinstance(v, tuple) else (v, v)


def average_pool_2d_reference(x, ksize, stride, pad):
    """Direct loops over rows and columns; padded elements count as zeros."""
    (kh, kw), (sy, sx), (ph, pw) = ksize, stride, pad
    n, c, h, w = x.shape
    out_h = (h + 2 * ph - kh) // sy + 1
    out_w = (w + 2 * pw - kw) // sx + 1
    y = numpy.zeros((n, c, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            for di in range(kh):
                for dj in range(kw):
                    r, q = i * sy - ph + di, j * sx - pw + dj
                    if 0 <= r < h and 0 <= q < w:
                        y[:, :, i, j] += x[:, :, r, q]
    return (y / (kh * kw)).astype(x.dtype)


CASES = [
    # (x_shape, ksize, stride, pad)
    ((2, 3, 6, 6), 2, None, 0),
    ((2, 3, 7, 5), 2, None, 0),
    ((2, 2, 7, 7), 3, 2, 1),
    ((1, 3, 5, 8), (3, 2), (1, 3), (1, 0)),
    ((2, 1, 9, 6), (4, 3), (3, 2), (2, 1)),
    ((1, 2, 3, 3), 3, 1, 1),
    ((1, 2, 1, 1), 1, 1, 0),
]


@testing.parameterize(*testing.product({"x_shape,ksize,stride,pad": CASES, "dtype": FLOATS}))
class TestAveragePooling2D(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (average_pooling_2d(inputs[0], self.ksize, self.stride, self.pad),)

    def forward_expected(self, inputs):
        ksize = pair(self.ksize)
        stride = ksize if self.stride is None else pair(self.stride)
        return (average_pool_2d_reference(inputs[0], ksize, stride, pair(self.pad)),)


def test_no_cover_all_mode():
    x = numpy.ones((1, 1, 5, 5), numpy.float32)
    assert average_pooling_2d(x, 2).shape == (1, 1, 2, 2)


def test_gradient():
    x = Variable(numpy.zeros((1, 1, 2, 4)))
    y = average_pooling_2d(x, 2)
    y.grad = numpy.array([[[[4.0, 8.0]]]])
    y.backward()
    numpy.testing.assert_allclose(x.grad, [[[[1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0]]]])


def test_empty_batch(pooling_checks):
    pooling_checks.empty_batch(
        lambda x: average_pooling_2d(x, 3, 2, 1), (0, 2, 4, 4), (0, 2, 2, 2), numpy.float64
    )


X = numpy.zeros((1, 1, 4, 4), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros(x_shape, numpy.float32), 2),
            InvalidType,
            ("AveragePooling2D", "x.ndim == 4"),
        )
        for x_shape in [(2, 3, 4), (1, 2, 3, 4, 5)]
    ]
    + [
        (
            (numpy.zeros((1, 1, 4, 4), numpy.int64), 2),
            InvalidType,
            ("AveragePooling2D", "x.dtype.kind == 'f'"),
        ),
        ((X, (5, 2)), InvalidType, ("AveragePooling2D", "at least one window")),
        ((X,), {"ksize": 0}, ValueError, ("average_pooling_2d", "ksize", ">= 1")),
        ((X,), {"ksize": None}, TypeError, ("average_pooling_2d", "ksize")),
        ((X,), {"ksize": 2, "stride": (1, 2, 3)}, ValueError, ("average_pooling_2d", "stride")),
        ((X,), {"ksize": 2, "pad": -1}, ValueError, ("average_pooling_2d", "pad", ">= 0")),
    ],
    function=average_pooling_2d,
)
