import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.links.connection.deconvolution_2d import Deconvolution2D


def _tup(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _reference(x, W, b, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Direct float64 2-D deconvolution: every input pixel scatters its filter tap by tap."""
    (sy, sx), (ph, pw), (dy, dx) = _tup(stride), _tup(pad), _tup(dilate)
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    n, c_in, h, w = x.shape
    _, o_group, kh, kw = W.shape
    if outsize is None:
        outsize = (
            sy * (h - 1) + (kh - 1) * dy + 1 - 2 * ph,
            sx * (w - 1) + (kw - 1) * dx + 1 - 2 * pw,
        )
    full = numpy.zeros((n, o_group * groups, outsize[0] + 2 * ph + sy, outsize[1] + 2 * pw + sx))
    c_group = c_in // groups
    for g, i, j in itertools.product(range(groups), range(kh), range(kw)):
        contribution = numpy.einsum(
            "nchw,co->nohw",
            x[:, g * c_group : (g + 1) * c_group],
            W[g * c_group : (g + 1) * c_group, :, i, j],
        )
        full[
            :,
            g * o_group : (g + 1) * o_group,
            i * dy : i * dy + sy * (h - 1) + 1 : sy,
            j * dx : j * dx + sx * (w - 1) + 1 : sx,
        ] += contribution
    y = full[:, :, ph : ph + outsize[0], pw : pw + outsize[1]]
    if b is not None:
        y = y + b.astype(numpy.float64)[:, None, None]
    return y


def test_positional_and_keyword_forms():
    link = Deconvolution2D(
        3, 4, 3, 2, 1, False, (9, 10), initializers.One(), 0.5, dilate=1, groups=1
    )
    assert link.W.shape == (3, 4, 3, 3) and link.b.shape == (4,)
    assert (link.ksize, link.stride, link.pad, link.dilate) == (3, (2, 2), (1, 1), (1, 1))
    assert (link.outsize, link.out_channels, link.groups) == ((9, 10), 4, 1)
    numpy.testing.assert_array_equal(link.b.array, numpy.full(4, 0.5, numpy.float32))
    link = Deconvolution2D(
        in_channels=4, out_channels=6, ksize=(2, 3), stride=(1, 2), pad=(0, 1), nobias=True,
        dilate=2, groups=2,
    )  # fmt: skip
    assert link.W.shape == (4, 3, 2, 3) and link.b is None and link.outsize is None
    assert link.dilate == (2, 2)


@pytest.mark.parametrize("args", [(6, 3), (None, 6, 3)])
def test_short_form_is_lazy(args):
    link = Deconvolution2D(*args, stride=2, groups=2)
    assert link.W.array is None and link.out_channels == 6 and link.b.shape == (6,)
    x = numpy.random.uniform(-1, 1, (2, 4, 3, 3)).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (4, 3, 3, 3) and y.shape == (2, 6, 7, 7)
    expected = _reference(x, link.W.array, link.b.array, 2, groups=2)
    assert_allclose(y.array, expected, **tolerances("float32"))


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"stride": 2, "pad": 1},
        {"stride": (2, 3), "outsize": (8, 12)},
        {"stride": 3, "pad": (1, 0), "outsize": (10, 11)},
        {"dilate": (2, 1), "groups": 2},
        {"stride": 2, "pad": 1, "dilate": 2, "groups": 4, "outsize": (9, 10)},
    ],
)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_options(options, dtype):
    link = make_link(
        Deconvolution2D, dtype, 4, 8, 3, initial_bias=initializers.Normal(1.0), **options
    )
    x = numpy.random.uniform(-1, 1, (2, 4, 4, 4)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype
    if "outsize" in options:
        assert y.shape[2:] == options["outsize"]
    expected = _reference(x, link.W.array, link.b.array, **options)
    assert_allclose(y.array, expected, **tolerances(dtype))
    composed = F.deconvolution_2d(
        x,
        link.W.array,
        link.b.array,
        options.get("stride", 1),
        options.get("pad", 0),
        options.get("outsize"),
        dilate=options.get("dilate", 1),
        groups=options.get("groups", 1),
    )
    numpy.testing.assert_array_equal(y.array, composed.array)


_DECONV = Deconvolution2D(3, 2, 3)

test_bad_input = bad_input_test(
    [
        (
            Deconvolution2D(6, 3, groups=3),
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            ValueError,
            "Deconvolution2D: in_channels must be divisible by gr",
        ),
        (
            _DECONV,
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("Deconvolution2D", "x.shape[1] == W.shape[0]", "4 != 3"),
        ),
        (
            Deconvolution2D(3, 2, 3, stride=2, outsize=(20, 20)),
            (numpy.zeros((1, 3, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("Deconvolution2D", "outsize[0] == 20"),
        ),
        (
            _DECONV,
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("Deconvolution2D", "x.dtype.kind == 'f'"),
        ),
        ((0, 2, 3), {}, ValueError, "Deconvolution2D: in_channels must be a positive int or N"),
        ((3, 2, 0), {}, ValueError, "Deconvolution2D: ksize must be >= 1, got 0"),
        ((3, 2, 3), {"stride": 0}, ValueError, "Deconvolution2D: stride must be >= 1, got 0"),
        (
            (3, 2, 3),
            {"outsize": (4,)},
            ValueError,
            ("Deconvolution2D: outsize must be ", " 2 ints"),
        ),
        ((3, 2, 3), {"outsize": (4, 0)}, ValueError, "Deconvolution2D: outsize must be >= 1"),
        ((4, 3, 3), {"groups": 2}, ValueError, "Deconvolution2D: out_channels must be divisib"),
        ((3, 2, 3), {"pad": 1.0}, TypeError, "Deconvolution2D: pad must be an int or a seq"),
    ],
    function=Deconvolution2D,
)
