import functools
import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D

_make = functools.partial(make_link, DepthwiseConvolution2D)


def _tup(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _reference(x, W, b, stride=1, pad=0):
    """Direct float64 depthwise convolution; output channel ``c * m_all + m`` is filter m on c."""
    (sy, sx), (ph, pw) = _tup(stride), _tup(pad)
    x = numpy.pad(x.astype(numpy.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    W = W.astype(numpy.float64)
    n, c, h, w = x.shape
    m, _, kh, kw = W.shape
    oh, ow = (h - kh) // sy + 1, (w - kw) // sx + 1
    y = numpy.zeros((n, c, m, oh, ow))
    for i, j in itertools.product(range(kh), range(kw)):
        patch = x[:, :, i : i + sy * (oh - 1) + 1 : sy, j : j + sx * (ow - 1) + 1 : sx]
        y += patch[:, :, None] * W[:, :, i, j].T[None, :, :, None, None]
    y = y.reshape(n, c * m, oh, ow)
    if b is not None:
        y += b.astype(numpy.float64)[:, None, None]
    return y


def test_positional_and_keyword_forms():
    link = DepthwiseConvolution2D(3, 2, 3, 2, 1, False, initializers.One(), 0.5)
    assert link.W.shape == (2, 3, 3, 3) and link.b.shape == (6,)
    assert (link.ksize, link.stride, link.pad, link.channel_multiplier) == (3, (2, 2), (1, 1), 2)
    numpy.testing.assert_array_equal(link.b.array, numpy.full(6, 0.5, numpy.float32))
    link = DepthwiseConvolution2D(
        in_channels=4, channel_multiplier=1, ksize=(2, 3), stride=(1, 2), pad=(0, 1), nobias=True
    )
    assert link.W.shape == (1, 4, 2, 3) and link.b is None


def test_lazy_in_channels():
    link = DepthwiseConvolution2D(None, 3, 2, initial_bias=initializers.Normal(1.0))
    assert link.W.array is None and link.b.array is None
    x = numpy.random.uniform(-1, 1, (2, 4, 5, 5)).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (3, 4, 2, 2) and link.b.shape == (12,) and y.shape == (2, 12, 4, 4)
    assert_allclose(y.array, _reference(x, link.W.array, link.b.array), **tolerances("float32"))


@pytest.mark.parametrize("options", [{}, {"stride": 2}, {"stride": (1, 2), "pad": (2, 1)}])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_options(options, dtype):
    link = _make(dtype, 3, 2, 3, initial_bias=initializers.Normal(1.0), **options)
    x = numpy.random.uniform(-1, 1, (2, 3, 6, 7)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype
    expected = _reference(x, link.W.array, link.b.array, **options)
    assert_allclose(y.array, expected, **tolerances(dtype))
    composed = F.depthwise_convolution_2d(x, link.W.array, link.b.array, **options)
    numpy.testing.assert_array_equal(y.array, composed.array)


_DEPTHWISE = DepthwiseConvolution2D(3, 2, 3)

test_bad_input = bad_input_test(
    [
        (
            _DEPTHWISE,
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("DepthwiseConvolution2D", "x.shape[1] == W.shape[1]", "4 != 3"),
        ),
        (
            _DEPTHWISE,
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("DepthwiseConvolution2D", "x.dtype.kind == 'f'"),
        ),
        ((0, 2, 3), ValueError, "DepthwiseConvolution2D: in_channels must be a positive int or"),
        ((3, 0, 3), ValueError, "DepthwiseConvolution2D: channel_multiplier must be a positive"),
        ((3, 2, 0), ValueError, "DepthwiseConvolution2D: ksize must be >= 1, got 0"),
        ((3, 2, 3, 0), ValueError, "DepthwiseConvolution2D: stride must be >= 1, got 0"),
        ((3, 2, 3, 1, (1, 1, 1)), ValueError, "DepthwiseConvolution2D: pad must be an int or a"),
        ((3, 2, None), TypeError, "DepthwiseConvolution2D: ksize must be an int or a sequence"),
    ],
    function=DepthwiseConvolution2D,
)
