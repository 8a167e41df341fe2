import math

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.connection.deformable_convolution_2d_sampler import (
    deformable_convolution_2d_sampler,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
N, C_IN, C_OUT = 2, 2, 3


def pair(v):
    return v if isinstance(v, tuple) else (v, v)


def out_size(size, k, s, p):
    return (size + 2 * p - k) // s + 1


def bilinear_at(image, y, x):
    """Bilinear interpolation of a 2-d image at (y, x); pixels outside the image are 0."""
    h, w = image.shape
    y0, x0 = math.floor(y), math.floor(x)
    b, a = y - y0, x - x0
    value = 0.0
    for dy, wy in ((0, 1 - b), (1, b)):
        for dx, wx in ((0, 1 - a), (1, a)):
            yy, xx = y0 + dy, x0 + dx
            if 0 <= yy < h and 0 <= xx < w:
                value += wy * wx * float(image[yy, xx])
    return value


def deformable_ref(x, offset, W, b, stride, pad):
    """The defining sum, one output element and one tap at a time, in float64."""
    sy, sx = stride
    ph, pw = pad
    c_out, c_in, kh, kw = W.shape
    n, _, out_h, out_w = offset.shape
    n_taps = kh * kw
    y = numpy.zeros((n, c_out, out_h, out_w))
    for k in range(n):
        for i in range(out_h):
            for j in range(out_w):
                taps = numpy.zeros((c_in, kh, kw))
                for p in range(kh):
                    for q in range(kw):
                        t = p * kw + q
                        py = i * sy - ph + p + float(offset[k, n_taps + t, i, j])
                        px = j * sx - pw + q + float(offset[k, t, i, j])
                        for c in range(c_in):
                            taps[c, p, q] = bilinear_at(x[k, c], py, px)
                for o in range(c_out):
                    y[k, o, i, j] = (W[o].astype(numpy.float64) * taps).sum()
                    if b is not None:
                        y[k, o, i, j] += float(b[o])
    return y


def conv2d_ref(x, W, b, stride, pad):
    """A plain convolution by direct loops over a zero-padded input."""
    sy, sx = stride
    ph, pw = pad
    c_out, c_in, kh, kw = W.shape
    xpad = numpy.pad(x.astype(numpy.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    out_h = (xpad.shape[2] - kh) // sy + 1
    out_w = (xpad.shape[3] - kw) // sx + 1
    y = numpy.zeros((len(x), c_out, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            window = xpad[:, :, i * sy : i * sy + kh, j * sx : j * sx + kw]
            y[:, :, i, j] = numpy.tensordot(
                window, W.astype(numpy.float64), ((1, 2, 3), (1, 2, 3))
            )
    return y + (0.0 if b is None else b[:, None, None])


def random_offsets(shape, reach, dtype):
    """Offsets whose fractional parts keep every sampling point away from integer coordinates."""
    whole = numpy.random.randint(-reach, reach + 1, shape)
    frac = numpy.random.uniform(0.15, 0.85, shape)
    return (whole + frac).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "geometry": [
                # (h, w), (kh, kw), stride, pad, offset reach
                ((4, 5), (2, 3), 1, 0, 1),
                ((5, 5), (3, 3), 2, 1, 1),
                ((3, 4), (3, 2), (1, 2), (1, 0), 2),
                ((4, 3), (2, 2), 1, 1, 4),  # many points outside the image
            ],
            "with_bias": [True, False],
            "dtype": FLOATS,
        }
    )
)
class TestDeformableConvolution2DSampler(FunctionTestCase):
    def _setup(self):
        (h, w), ksize, stride, pad, reach = self.geometry
        return (h, w), ksize, pair(stride), pair(pad), reach

    def generate_inputs(self):
        (h, w), (kh, kw), (sy, sx), (ph, pw), reach = self._setup()
        out_h, out_w = out_size(h, kh, sy, ph), out_size(w, kw, sx, pw)
        x = numpy.random.uniform(-1, 1, (N, C_IN, h, w)).astype(self.dtype)
        offset = random_offsets((N, 2 * kh * kw, out_h, out_w), reach, self.dtype)
        W = numpy.random.uniform(-1, 1, (C_OUT, C_IN, kh, kw)).astype(self.dtype)
        if not self.with_bias:
            return x, offset, W
        return x, offset, W, numpy.random.uniform(-1, 1, C_OUT).astype(self.dtype)

    def forward(self, inputs, device):
        _, _, stride, pad, _ = self.geometry
        return (deformable_convolution_2d_sampler(*inputs, stride=stride, pad=pad),)

    def forward_expected(self, inputs):
        x, offset, W = inputs[:3]
        b = inputs[3] if self.with_bias else None
        _, _, stride, pad, _ = self._setup()
        return (deformable_ref(x, offset, W, b, stride, pad).astype(self.dtype),)


@pytest.mark.parametrize("stride, pad", [(1, 0), (2, 1), ((1, 2), (2, 1))])
def test_zero_offsets_give_a_convolution(stride, pad):
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 6))
    W = numpy.random.uniform(-1, 1, (4, 3, 3, 2))
    b = numpy.random.uniform(-1, 1, 4)
    expected = conv2d_ref(x, W, b, pair(stride), pair(pad))
    offset = numpy.zeros((2, 12) + expected.shape[2:])
    y = deformable_convolution_2d_sampler(x, offset, W, b, stride=stride, pad=pad)
    testing.assert_allclose(y, expected, rtol=1e-12, atol=1e-12)


def test_integer_offsets_move_the_taps():
    x = numpy.random.uniform(-1, 1, (1, 2, 6, 6))
    W = numpy.random.uniform(-1, 1, (3, 2, 2, 2))
    offset = numpy.zeros((1, 8, 5, 5))
    offset[:, :4] = 1.0  # one pixel right
    offset[:, 4:] = -1.0  # one pixel up
    y = deformable_convolution_2d_sampler(x, offset, W)
    shifted = numpy.zeros_like(x)
    shifted[:, :, 1:, :-1] = x[:, :, :-1, 1:]
    testing.assert_allclose(y, conv2d_ref(shifted, W, None, (1, 1), (0, 0)), atol=1e-12)


def test_points_far_outside_read_zeros_and_get_no_gradient():
    x = Variable(numpy.random.uniform(-1, 1, (1, 2, 4, 4)))
    offset = Variable(numpy.full((1, 8, 3, 3), 50.3))
    W = Variable(numpy.random.uniform(-1, 1, (3, 2, 2, 2)))
    b = Variable(numpy.random.uniform(-1, 1, 3))
    y = deformable_convolution_2d_sampler(x, offset, W, b)
    testing.assert_allclose(y, numpy.broadcast_to(b.array[:, None, None], (1, 3, 3, 3)))
    gx, goffset, gW = grad([y], [x, offset, W], [Variable(numpy.ones((1, 3, 3, 3)))])
    numpy.testing.assert_array_equal(gx.array, 0)
    numpy.testing.assert_array_equal(goffset.array, 0)
    numpy.testing.assert_array_equal(gW.array, 0)


def test_gradient_of_offset_is_the_slope_of_the_interpolation():
    # One pixel, one tap, one channel: y = bilinear(x, 0.25 + dy, 0.5 + dx).
    x = Variable(numpy.array([[[[1.0, 3.0], [5.0, 11.0]]]]))
    W = Variable(numpy.ones((1, 1, 1, 1)))
    offset = Variable(numpy.array([0.5, 0.25]).reshape(1, 2, 1, 1))
    y = deformable_convolution_2d_sampler(x, offset, W, pad=0, stride=2)
    # y = (1-b)((1-a) 1 + a 3) + b((1-a) 5 + a 11) at a = 0.5, b = 0.25
    testing.assert_allclose(y, [[[[0.75 * 2.0 + 0.25 * 8.0]]]], rtol=1e-12)
    (goffset,) = grad([y], [offset])
    # dy/da = (1-b)(3-1) + b(11-5) = 3; dy/db = (1-a)(5-1) + a(11-3) = 6
    testing.assert_allclose(goffset, numpy.array([3.0, 6.0]).reshape(1, 2, 1, 1), rtol=1e-12)


def test_empty_batch():
    x = Variable(numpy.zeros((0, 2, 4, 4), numpy.float32))
    offset = Variable(numpy.zeros((0, 8, 3, 3), numpy.float32))
    W = Variable(numpy.ones((3, 2, 2, 2), numpy.float32))
    y = deformable_convolution_2d_sampler(x, offset, W)
    assert y.shape == (0, 3, 3, 3)
    gy = Variable(numpy.zeros((0, 3, 3, 3), numpy.float32))
    gx, goffset, gW = grad([y], [x, offset, W], [gy])
    assert gx.shape == x.shape and goffset.shape == offset.shape
    numpy.testing.assert_array_equal(gW.array, numpy.zeros(W.shape, numpy.float32))


def _inputs(x_shape=(1, 2, 4, 4), offset_shape=(1, 8, 3, 3), w_shape=(3, 2, 2, 2), b=None):
    return numpy.ones(x_shape), numpy.zeros(offset_shape), numpy.ones(w_shape), b


_DEFORMABLE = "DeformableConvolution2DSampler"
_STRIDE1_PAD0 = {"stride": 1, "pad": 0}

test_bad_input = bad_input_test(
    [
        (_inputs(x_shape=(2, 4, 4)), _STRIDE1_PAD0, InvalidType, (_DEFORMABLE, "x.ndim")),
        (
            _inputs(offset_shape=(1, 6, 3, 3)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "offset.shape[1]", "W.shape[2]"),
        ),
        (
            _inputs(offset_shape=(2, 8, 3, 3)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "offset.shape[0]", "x.shape[0]"),
        ),
        (
            _inputs(offset_shape=(1, 8, 4, 3)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "offset.shape[2]"),
        ),
        (
            _inputs(offset_shape=(1, 8, 3, 3)),
            {"stride": 2, "pad": 0},
            InvalidType,
            (_DEFORMABLE, "offset.shape[2]"),
        ),
        (
            _inputs(offset_shape=(1, 8, 3, 3)),
            {"stride": 1, "pad": (0, 1)},
            InvalidType,
            (_DEFORMABLE, "offset.shape[3]"),
        ),
        (
            _inputs(offset_shape=(1, 8, 3)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "offset.ndim"),
        ),
        (
            _inputs(w_shape=(3, 3, 2, 2)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "W.shape[1]", "x.shape[1]"),
        ),
        (_inputs(w_shape=(3, 2, 4)), _STRIDE1_PAD0, InvalidType, (_DEFORMABLE, "W.ndim")),
        (
            _inputs(w_shape=(3, 2, 5, 1)),
            _STRIDE1_PAD0,
            InvalidType,
            (_DEFORMABLE, "x.shape[2]", "W.shape[2]"),
        ),
        (
            _inputs(x_shape=(1, 2, 0, 4), offset_shape=(1, 8, 1, 3)),
            {"stride": 1, "pad": (1, 0)},
            InvalidType,
            (_DEFORMABLE, "x.shape[2]"),
        ),
        (_inputs(b=numpy.ones(2)), _STRIDE1_PAD0, InvalidType, (_DEFORMABLE, "b.shape")),
        (_inputs(b=numpy.ones((3, 1))), _STRIDE1_PAD0, InvalidType, (_DEFORMABLE, "b.ndim")),
    ]
    + [
        (tuple(a.astype(d) for a, d in zip(_inputs()[:3], dtypes)), InvalidType, name)
        for dtypes, name in [
            ((numpy.int32, numpy.float64, numpy.float64), "x.dtype.kind"),
            ((numpy.float64, numpy.float32, numpy.float64), "offset.dtype"),
            ((numpy.float64, numpy.float64, numpy.float32), "W.dtype"),
        ]
    ]
    + [
        (_inputs()[:3], kwargs, error, message)
        for kwargs, error, message in [
            ({"stride": 0}, ValueError, "deformable_convolution_2d_sampler: stride must be >= 1"),
            ({"pad": -1}, ValueError, "deformable_convolution_2d_sampler: pad must be >= 0"),
            (
                {"pad": (1, 1, 1)},
                ValueError,
                "deformable_convolution_2d_sampler: pad must be an int",
            ),
            (
                {"stride": 1.0},
                TypeError,
                "deformable_convolution_2d_sampler: stride must be an int",
            ),
        ]
    ],
    function=deformable_convolution_2d_sampler,
)
