import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers, using_config
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.links.connection.convolution_2d import Convolution2D


def _tup(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _reference(x, W, b, stride=1, pad=0, dilate=1, groups=1):
    """Direct float64 grouped, dilated 2-D convolution, one filter tap at a time."""
    (sy, sx), (ph, pw), (dy, dx) = _tup(stride), _tup(pad), _tup(dilate)
    x = numpy.pad(x.astype(numpy.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    W = W.astype(numpy.float64)
    n, _, h, w = x.shape
    c_out, c_group, kh, kw = W.shape
    oh = (h - (kh - 1) * dy - 1) // sy + 1
    ow = (w - (kw - 1) * dx - 1) // sx + 1
    y = numpy.zeros((n, c_out, oh, ow))
    o_group = c_out // groups
    for g, i, j in itertools.product(range(groups), range(kh), range(kw)):
        patch = x[
            :,
            g * c_group : (g + 1) * c_group,
            i * dy : i * dy + sy * (oh - 1) + 1 : sy,
            j * dx : j * dx + sx * (ow - 1) + 1 : sx,
        ]
        y[:, g * o_group : (g + 1) * o_group] += numpy.einsum(
            "nchw,oc->nohw", patch, W[g * o_group : (g + 1) * o_group, :, i, j]
        )
    if b is not None:
        y += b.astype(numpy.float64)[:, None, None]
    return y


def test_positional_and_keyword_forms():
    link = Convolution2D(3, 4, 3, 2, 1, False, initializers.One(), 0.5, dilate=2, groups=1)
    assert link.W.shape == (4, 3, 3, 3) and link.b.shape == (4,)
    assert (link.ksize, link.stride, link.pad, link.dilate) == (3, (2, 2), (1, 1), (2, 2))
    assert (link.out_channels, link.groups) == (4, 1)
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((4, 3, 3, 3), numpy.float32))
    numpy.testing.assert_array_equal(link.b.array, numpy.full(4, 0.5, numpy.float32))
    link = Convolution2D(
        in_channels=4, out_channels=6, ksize=(2, 3), stride=(1, 2), pad=(0, 1), nobias=True,
        groups=2,
    )  # fmt: skip
    assert link.W.shape == (6, 2, 2, 3) and link.b is None
    assert (link.ksize, link.stride, link.pad, link.dilate) == ((2, 3), (1, 2), (0, 1), (1, 1))


def test_default_initializers():
    numpy.random.seed(0)
    link = Convolution2D(20, 30, 5)
    assert link.W.dtype == numpy.float32
    assert abs(link.W.array.std() - (1 / (20 * 25)) ** 0.5) < 0.005
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros(30, numpy.float32))


@pytest.mark.parametrize("args", [(7, 3), (None, 7, 3)])
def test_short_form_is_lazy(args):
    link = Convolution2D(*args, stride=2, pad=1)
    assert link.W.array is None and link.W.dtype == numpy.float32
    assert link.out_channels == 7 and link.ksize == 3 and link.b.shape == (7,)
    x = numpy.random.uniform(-1, 1, (2, 5, 6, 6)).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (7, 5, 3, 3)
    assert y.shape == (2, 7, 3, 3)
    expected = _reference(x, link.W.array, link.b.array, 2, 1)
    assert_allclose(y.array, expected, **tolerances("float32"))


def test_lazy_with_groups():
    link = Convolution2D(None, 6, 3, groups=3)
    assert link.W.array is None
    x = numpy.random.uniform(-1, 1, (2, 9, 5, 5)).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (6, 3, 3, 3) and y.shape == (2, 6, 3, 3)
    assert_allclose(
        y.array, _reference(x, link.W.array, link.b.array, groups=3), **tolerances("float32")
    )


def test_lazy_with_groups_not_dividing_channels():
    link = Convolution2D(6, 3, groups=3)
    with pytest.raises(
        ValueError, match=r"Convolution2D: in_channels must be divisible by groups"
    ):
        link(numpy.zeros((1, 4, 5, 5), numpy.float32))
    assert link.W.array is None


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"stride": 2},
        {"stride": (1, 2), "pad": (2, 1)},
        {"pad": 1, "dilate": 2},
        {"dilate": (1, 2), "groups": 2},
        {"stride": 2, "pad": 1, "dilate": 2, "groups": 4},
    ],
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_options(options, dtype):
    link = make_link(
        Convolution2D, dtype, 4, 8, 3, initial_bias=initializers.Normal(1.0), **options
    )
    x = numpy.random.uniform(-1, 1, (2, 4, 7, 8)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype
    expected = _reference(x, link.W.array, link.b.array, **options)
    assert_allclose(y.array, expected, **tolerances(dtype))
    composed = F.convolution_2d(
        x,
        link.W.array,
        link.b.array,
        options.get("stride", 1),
        options.get("pad", 0),
        dilate=options.get("dilate", 1),
        groups=options.get("groups", 1),
    )
    numpy.testing.assert_array_equal(y.array, composed.array)


def test_nobias_forward():
    link = Convolution2D(2, 3, 2, nobias=True)
    x = numpy.random.uniform(-1, 1, (1, 2, 4, 4)).astype(numpy.float32)
    assert_allclose(link(x).array, _reference(x, link.W.array, None), **tolerances("float32"))


def test_from_params():
    W = numpy.random.uniform(-1, 1, (6, 2, 3, 2)).astype(numpy.float64)
    b = numpy.random.uniform(-1, 1, 6).astype(numpy.float64)
    with using_config("dtype", numpy.dtype(numpy.float64)):
        link = Convolution2D.from_params(W, b, stride=2, pad=1, groups=3)
    assert link.W.shape == (6, 2, 3, 2) and link.W.dtype == numpy.float64
    assert link.W.array is not W and link.groups == 3 and link.stride == (2, 2)
    numpy.testing.assert_array_equal(link.W.array, W)
    numpy.testing.assert_array_equal(link.b.array, b)
    x = numpy.random.uniform(-1, 1, (1, 6, 5, 5))
    assert_allclose(link(x).array, _reference(x, W, b, 2, 1, groups=3), atol=1e-12, rtol=1e-12)
    assert Convolution2D.from_params(W, nobias=True, groups=3).b is None
    with pytest.raises(ValueError, match=r"Convolution2D.from_params: b must have shape \(6,\)"):
        Convolution2D.from_params(W, b[:4])


_CONV = Convolution2D(3, 2, 3)

test_bad_input = bad_input_test(
    [
        (
            _CONV,
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("Convolution2D", "x.shape[1] == W.shape[1] * 1", "4 != 3"),
        ),
        (
            _CONV,
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("Convolution2D", "x.dtype.kind == 'f'"),
        ),
        ((0, 2, 3), {}, ValueError, "Convolution2D: in_channels must be a positive int or None"),
        ((3, -1, 3), {}, ValueError, "Convolution2D: out_channels must be a positive int, got -1"),
        ((3, 2, 0), {}, ValueError, "Convolution2D: ksize must be >= 1, got 0"),
        (
            (3, 2, (1, 2, 3)),
            {},
            ValueError,
            ("Convolution2D: ksize must be ", " sequence of 2 ints"),
        ),
        ((3, 2, 3), {"stride": 0}, ValueError, "Convolution2D: stride must be >= 1, got 0"),
        ((3, 2, 3), {"pad": -1}, ValueError, "Convolution2D: pad must be >= 0, got -1"),
        ((3, 2, 3), {"dilate": 1.5}, TypeError, "Convolution2D: dilate must be an int or a seq"),
        ((4, 3, 3), {"groups": 2}, ValueError, "out_channels must be divisible by groups, got o"),
        ((3, 4, 3), {"groups": 2}, ValueError, "in_channels must be divisible by groups, got in"),
        ((3, 4, 3), {"groups": 0}, ValueError, "Convolution2D: groups must be a positive int"),
    ],
    function=Convolution2D,
)
