import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.array.im2col import im2col

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _count_windows(size, k, s, p, d, cover_all):
    extent = (k - 1) * d + 1
    count = 0
    while count * s + extent <= size + 2 * p:
        count += 1
    if cover_all and (count - 1) * s + extent < size + 2 * p:
        count += 1
    return count


def _im2col_reference(x, ksize, stride, pad, cover_all, dilate):
    n, c, h, w = x.shape
    (kh, kw), (sy, sx), (ph, pw), (dy, dx) = map(_pair, (ksize, stride, pad, dilate))
    out_h = _count_windows(h, kh, sy, ph, dy, cover_all)
    out_w = _count_windows(w, kw, sx, pw, dx, cover_all)
    y = numpy.zeros((n, c * kh * kw, out_h, out_w), x.dtype)
    for ch, i, j, p, q in numpy.ndindex(c, kh, kw, out_h, out_w):
        row = p * sy + i * dy - ph
        col = q * sx + j * dx - pw
        if 0 <= row < h and 0 <= col < w:
            y[:, (ch * kh + i) * kw + j, p, q] = x[:, ch, row, col]
    return y


@testing.parameterize(
    *testing.product(
        {
            "in_shape,ksize,stride,pad,cover_all,dilate": [
                ((2, 3, 4, 5), 2, 1, 0, False, 1),
                ((2, 2, 5, 5), 3, 1, 1, False, 1),
                ((1, 2, 7, 6), (3, 2), (2, 1), (1, 0), False, 1),
                ((1, 2, 7, 6), (3, 2), 2, 0, True, 1),
                ((2, 1, 7, 8), 2, (1, 2), 1, False, (2, 3)),
                ((1, 3, 6, 5), 3, 3, (0, 1), True, 2),
                ((1, 1, 3, 3), 3, 1, 0, False, 1),
                ((0, 2, 4, 4), 2, 2, 0, False, 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestIm2Col(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.in_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (
            im2col(
                inputs[0],
                self.ksize,
                stride=self.stride,
                pad=self.pad,
                cover_all=self.cover_all,
                dilate=self.dilate,
            ),
        )

    def forward_expected(self, inputs):
        y = _im2col_reference(
            inputs[0], self.ksize, self.stride, self.pad, self.cover_all, self.dilate
        )
        return (y,)


def test_convolution_through_im2col():
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 5))
    w = numpy.random.uniform(-1, 1, (4, 3, 3, 3))
    col = im2col(x, 3, pad=1).array
    y = numpy.einsum("ok,nkhw->nohw", w.reshape(4, -1), col)
    expected = numpy.zeros((2, 4, 5, 5))
    padded = numpy.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    for i, j in numpy.ndindex(5, 5):
        expected[:, :, i, j] = numpy.einsum("nchw,ochw->no", padded[:, :, i : i + 3, j : j + 3], w)
    testing.assert_allclose(y, expected, atol=1e-12, rtol=1e-10)


_IM2COL_X = numpy.zeros((1, 1, 3, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((numpy.zeros((1, 3, 3), numpy.float32), 2), InvalidType, ("Im2Col", "x.ndim == 4")),
        ((numpy.zeros((1, 1, 3, 3), numpy.int32), 2), InvalidType, "x.dtype.kind == 'f'"),
        ((_IM2COL_X, 4), InvalidType, ("window", "ksize=(4, 4)", "(1, 1, 3, 3)")),
        ((_IM2COL_X, 2), {"stride": 0}, ValueError, "im2col: stride must be >= 1"),
        ((_IM2COL_X, 2), {"pad": -1}, ValueError, "im2col: pad must be >= 0"),
        (
            (_IM2COL_X, (2, 2, 2)),
            ValueError,
            "im2col: ksize must be an int or a sequence of 2 ints",
        ),
        (
            (_IM2COL_X, 2),
            {"dilate": 1.5},
            TypeError,
            "im2col: dilate must be an int or a sequence of ints",
        ),
    ],
    function=im2col,
)
