import functools
import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.links.connection.dilated_convolution_2d import DilatedConvolution2D

_make = functools.partial(make_link, DilatedConvolution2D)


def _tup(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _reference(x, W, b, stride=1, pad=0, dilate=1):
    """Direct float64 dilated 2-D convolution, one filter tap at a time."""
    (sy, sx), (ph, pw), (dy, dx) = _tup(stride), _tup(pad), _tup(dilate)
    x = numpy.pad(x.astype(numpy.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    W = W.astype(numpy.float64)
    _, _, h, w = x.shape
    _, _, kh, kw = W.shape
    oh = (h - (kh - 1) * dy - 1) // sy + 1
    ow = (w - (kw - 1) * dx - 1) // sx + 1
    y = 0
    for i, j in itertools.product(range(kh), range(kw)):
        patch = x[
            :,
            :,
            i * dy : i * dy + sy * (oh - 1) + 1 : sy,
            j * dx : j * dx + sx * (ow - 1) + 1 : sx,
        ]
        y = y + numpy.einsum("nchw,oc->nohw", patch, W[:, :, i, j])
    if b is not None:
        y = y + b.astype(numpy.float64)[:, None, None]
    return y


def test_positional_and_keyword_forms():
    link = DilatedConvolution2D(3, 4, 3, 2, 1, 2, False, initializers.One(), 0.5)
    assert link.W.shape == (4, 3, 3, 3) and link.b.shape == (4,)
    assert (link.ksize, link.stride, link.pad, link.dilate) == ((3, 3), (2, 2), (1, 1), (2, 2))
    assert link.out_channels == 4
    numpy.testing.assert_array_equal(link.b.array, numpy.full(4, 0.5, numpy.float32))
    link = DilatedConvolution2D(
        in_channels=4, out_channels=6, ksize=(2, 3), stride=(1, 2), pad=(0, 1), dilate=(2, 1),
        nobias=True,
    )  # fmt: skip
    assert link.W.shape == (6, 4, 2, 3) and link.b is None and link.dilate == (2, 1)


@pytest.mark.parametrize("args", [(7, 3), (None, 7, 3)])
def test_short_form_is_lazy(args):
    link = DilatedConvolution2D(*args, dilate=2)
    assert link.W.array is None and link.out_channels == 7 and link.b.shape == (7,)
    x = numpy.random.uniform(-1, 1, (2, 5, 7, 7)).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (7, 5, 3, 3) and y.shape == (2, 7, 3, 3)
    expected = _reference(x, link.W.array, link.b.array, dilate=2)
    assert_allclose(y.array, expected, **tolerances("float32"))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"dilate": 2},
        {"stride": (1, 2), "pad": (2, 1), "dilate": (2, 3)},
        {"stride": 2, "pad": 1},
    ],
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_options(options, dtype):
    link = _make(dtype, 3, 4, 3, initial_bias=initializers.Normal(1.0), **options)
    x = numpy.random.uniform(-1, 1, (2, 3, 8, 9)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype
    expected = _reference(x, link.W.array, link.b.array, **options)
    assert_allclose(y.array, expected, **tolerances(dtype))
    composed = F.dilated_convolution_2d(x, link.W.array, link.b.array, **options)
    numpy.testing.assert_array_equal(y.array, composed.array)


_DILATED = DilatedConvolution2D(3, 2, 3)

test_bad_input = bad_input_test(
    [
        (
            _DILATED,
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("DilatedConvolution2D", "x.shape[1] == W.shape[1] * 1", "4 != 3"),
        ),
        (
            _DILATED,
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("DilatedConvolution2D", "x.dtype.kind == 'f'"),
        ),
        ((0, 2, 3), {}, ValueError, "DilatedConvolution2D: in_channels must be a positive int"),
        ((3, 0, 3), {}, ValueError, "DilatedConvolution2D: out_channels must be a positive int"),
        ((3, 2, 3), {"dilate": 0}, ValueError, "DilatedConvolution2D: dilate must be >= 1, go"),
        ((3, 2, 3), {"stride": (1,)}, ValueError, "DilatedConvolution2D: stride must be an int"),
        ((3, 2, 3), {"pad": "1"}, TypeError, "DilatedConvolution2D: pad must be an int or a s"),
    ],
    function=DilatedConvolution2D,
)
