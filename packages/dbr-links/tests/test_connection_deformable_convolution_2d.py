import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_backward_clear_of_kinks,
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.deformable_convolution_2d import (
    DeformableConvolution2D,
    DeformableConvolution2DSampler,
)


def _conv_reference(x, W, b, stride=1, pad=0):
    """Direct float64 2-D convolution, one filter tap at a time."""
    s, p = stride, pad
    x = numpy.pad(x.astype(numpy.float64), ((0, 0), (0, 0), (p, p), (p, p)))
    W = W.astype(numpy.float64)
    _, _, h, w = x.shape
    _, _, kh, kw = W.shape
    oh, ow = (h - kh) // s + 1, (w - kw) // s + 1
    y = 0
    for i, j in itertools.product(range(kh), range(kw)):
        patch = x[:, :, i : i + s * (oh - 1) + 1 : s, j : j + s * (ow - 1) + 1 : s]
        y = y + numpy.einsum("nchw,oc->nohw", patch, W[:, :, i, j])
    return y + b.astype(numpy.float64)[:, None, None]


def _make(dtype, cls, *args, **kwargs):
    return make_link(cls, dtype, *args, **kwargs)


def test_positional_and_keyword_forms():
    link = DeformableConvolution2D(
        3, 4, 3, 2, 1, False, initializers.One(), 0.5, True, initializers.Normal(1.0), None
    )
    assert isinstance(link.offset_conv, Convolution2D)
    assert isinstance(link.deform_conv, DeformableConvolution2DSampler)
    assert link.offset_conv.W.shape == (18, 3, 3, 3) and link.offset_conv.b.shape == (18,)
    assert link.offset_conv.stride == (2, 2) and link.offset_conv.pad == (1, 1)
    numpy.testing.assert_array_equal(link.offset_conv.b.array, numpy.full(18, 0.5, numpy.float32))
    assert link.deform_conv.W.shape == (4, 3, 3, 3) and link.deform_conv.b is None
    assert (link.deform_conv.stride, link.deform_conv.pad, link.deform_conv.ksize) == (
        (2, 2), (1, 1), 3,
    )  # fmt: skip
    link = DeformableConvolution2D(
        in_channels=2, out_channels=5, ksize=(2, 3), stride=1, pad=(1, 0), offset_nobias=True,
        offset_initialW=None, offset_initial_bias=None, deform_nobias=False,
        deform_initialW=None, deform_initial_bias=2.0,
    )  # fmt: skip
    assert link.offset_conv.W.shape == (12, 2, 2, 3) and link.offset_conv.b is None
    assert link.deform_conv.W.shape == (5, 2, 2, 3)
    numpy.testing.assert_array_equal(link.deform_conv.b.array, numpy.full(5, 2.0, numpy.float32))


def test_default_initializers():
    numpy.random.seed(0)
    link = DeformableConvolution2D(20, 3, 5)
    assert abs(link.offset_conv.W.array.std() - (1 / 500) ** 0.5) < 0.005
    numpy.testing.assert_array_equal(link.offset_conv.b.array, numpy.zeros(50, numpy.float32))
    numpy.testing.assert_array_equal(link.deform_conv.W.array, numpy.zeros((3, 20, 5, 5)))
    numpy.testing.assert_array_equal(link.deform_conv.b.array, numpy.zeros(3, numpy.float32))
    assert link.deform_conv.initialW is None


def test_lazy_in_channels():
    link = DeformableConvolution2D(None, 3, 2, deform_initialW=initializers.Normal(1.0))
    assert link.offset_conv.W.array is None and link.deform_conv.W.array is None
    assert link.deform_conv.b.shape == (3,)
    x = numpy.random.uniform(-1, 1, (2, 4, 5, 5)).astype(numpy.float32)
    y = link(x)
    assert y.shape == (2, 3, 4, 4)
    assert link.offset_conv.W.shape == (8, 4, 2, 2) and link.deform_conv.W.shape == (3, 4, 2, 2)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_zero_offsets_give_a_plain_convolution(dtype):
    link = _make(
        dtype, DeformableConvolution2D, 3, 4, 3, 2, 1, offset_initialW=0,
        deform_initialW=initializers.Normal(1.0), deform_initial_bias=initializers.Normal(1.0),
    )  # fmt: skip
    x = numpy.random.uniform(-1, 1, (2, 3, 6, 7)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype and y.shape == (2, 4, 3, 4)
    W, b = link.deform_conv.W.array, link.deform_conv.b.array
    assert_allclose(y.array, _conv_reference(x, W, b, 2, 1), **tolerances(dtype))


def test_unit_offsets_shift_every_tap():
    link = DeformableConvolution2D(
        2, 3, 2, offset_initialW=0, offset_initial_bias=1.0,
        deform_initialW=initializers.Normal(1.0), deform_initial_bias=initializers.Normal(1.0),
    )  # fmt: skip
    x = numpy.random.uniform(-1, 1, (1, 2, 5, 6)).astype(numpy.float32)
    shifted = numpy.zeros_like(x)
    shifted[:, :, :-1, :-1] = x[:, :, 1:, 1:]
    W, b = link.deform_conv.W.array, link.deform_conv.b.array
    assert_allclose(link(x).array, _conv_reference(shifted, W, b), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_forward_matches_the_functions(dtype):
    link = _make(
        dtype, DeformableConvolution2D, 3, 2, (2, 3), stride=(1, 2), pad=(1, 0),
        offset_initialW=initializers.Normal(0.5), offset_initial_bias=initializers.Normal(1.0),
        deform_initialW=initializers.Normal(1.0), deform_initial_bias=initializers.Normal(1.0),
    )  # fmt: skip
    x = numpy.random.uniform(-1, 1, (2, 3, 5, 6)).astype(dtype)
    y = link(x)
    oc, dc = link.offset_conv, link.deform_conv
    offset = F.convolution_2d(x, oc.W.array, oc.b.array, (1, 2), (1, 0))
    expected = F.deformable_convolution_2d_sampler(
        x, offset, dc.W.array, dc.b.array, (1, 2), (1, 0)
    )
    assert y.dtype == dtype and y.shape == (2, 2, 6, 2)
    numpy.testing.assert_array_equal(y.array, expected.array)


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(dtype, nobias):
    link = _make(
        dtype, DeformableConvolution2D, 2, 2, 2, pad=1, offset_nobias=nobias,
        deform_nobias=nobias, offset_initialW=initializers.Normal(0.3),
        offset_initial_bias=0.3, deform_initialW=initializers.Normal(1.0),
        deform_initial_bias=initializers.Normal(1.0),
    )  # fmt: skip
    params = tuple(p for _, p in sorted(link.namedparams()))

    def draw():
        x = numpy.random.uniform(-1, 1, (1, 2, 3, 3)).astype(dtype)
        return x, numpy.random.uniform(-1, 1, (1, 2, 4, 4)).astype(dtype)

    # The bilinear sampling has a kink wherever a sampling point (moved by offsets that
    # x's convolution gives) crosses a pixel: inputs putting one within a step are redrawn.
    check_backward_clear_of_kinks(draw, link, params, dtype)


def test_sampler_forward_and_backward():
    with using_config("dtype", numpy.dtype(numpy.float64)):
        link = DeformableConvolution2DSampler(
            2, 3, 2, 1, 0, False, initializers.Normal(1.0), initializers.Normal(1.0)
        )
    x = numpy.random.uniform(-1, 1, (1, 2, 4, 4))
    offset = numpy.random.uniform(-0.4, 0.4, (1, 8, 3, 3)) + 0.5
    gy = numpy.random.uniform(-1, 1, (1, 3, 3, 3))
    W, b = link.W.array, link.b.array
    expected = F.deformable_convolution_2d_sampler(x, offset, W, b, 1, 0)
    numpy.testing.assert_array_equal(link(x, offset).array, expected.array)
    check_backward(
        link, (x, offset), gy, params=(link.W, link.b), **tolerances("float64", "backward")
    )


def test_sampler_lazy_and_attributes():
    init = initializers.Normal(1.0)
    link = DeformableConvolution2DSampler(None, 3, (2, 3), stride=2, pad=1, initialW=init)
    assert link.initialW is init and link.ksize == (2, 3) and link.out_channels == 3
    assert (link.stride, link.pad) == ((2, 2), (1, 1))
    assert link.W.array is None and link.b.shape == (3,)
    y = link(numpy.zeros((1, 4, 5, 5), numpy.float32), numpy.zeros((1, 12, 3, 3), numpy.float32))
    assert link.W.shape == (3, 4, 2, 3) and y.shape == (1, 3, 3, 3)


def test_param_names():
    assert param_names(DeformableConvolution2D(3, 2, 3)) == [
        "/deform_conv/W", "/deform_conv/b", "/offset_conv/W", "/offset_conv/b",
    ]  # fmt: skip
    link = DeformableConvolution2D(3, 2, 3, offset_nobias=True, deform_nobias=True)
    assert param_names(link) == ["/deform_conv/W", "/offset_conv/W"]
    assert param_names(DeformableConvolution2DSampler(3, 2, 3)) == ["/W", "/b"]
    assert persistent_names(DeformableConvolution2D(3, 2, 3)) == []


def test_round_trip_into_lazy_link():
    link = DeformableConvolution2D(3, 2, 3, pad=1, deform_initialW=initializers.Normal(1.0))
    x = numpy.random.rand(1, 3, 4, 4).astype(numpy.float32)
    check_round_trip(link, DeformableConvolution2D(None, 2, 3, pad=1), (x,))


def test_round_trip_uninitialized():
    check_round_trip(DeformableConvolution2D(None, 2, 3), DeformableConvolution2D(None, 2, 3))


def test_copy_modes():
    check_copy_modes(DeformableConvolution2D(3, 2, 3))


_DEFORMABLE = DeformableConvolution2D(3, 2, 3)

test_bad_input = bad_input_test(
    [
        (
            _DEFORMABLE,
            (numpy.zeros((1, 4, 5, 5), numpy.float32),),
            {},
            InvalidType,
            ("Convolution2D", "x.shape[1] == W.shape[1] * 1", "4 != 3"),
        ),
        (
            DeformableConvolution2DSampler(3, 2, 3),
            (numpy.zeros((1, 3, 5, 5), numpy.float32), numpy.zeros((1, 9, 3, 3), numpy.float32)),
            {},
            InvalidType,
            ("DeformableConvolution2DSampler", "offset"),
        ),
        (
            _DEFORMABLE,
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("Convolution2D", "x.dtype.kind == 'f'"),
        ),
        ((3, 2, 0), ValueError, "DeformableConvolution2D: ksize must be"),
        ((3, 0, 3), ValueError, "Sampler: out_channels must be a posit"),
        ((0, 2, 3), ValueError, "Convolution2D: in_channels must be a"),
        ((3, 2, 3, 0), ValueError, "Convolution2D: stride must be >= 1"),
        (
            DeformableConvolution2DSampler,
            (3, 2, 3, 1, -1),
            {},
            ValueError,
            "Sampler: pad must be >=",
        ),
        (
            DeformableConvolution2DSampler,
            (3, 2, None),
            {},
            TypeError,
            "Sampler: ksize must be an in",
        ),
    ],
    function=DeformableConvolution2D,
)
