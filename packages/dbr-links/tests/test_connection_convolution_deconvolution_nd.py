"""ConvolutionND and DeconvolutionND (and their 1-d and 3-d forms) as one family.

Each is checked against its own float64 reference (a convolution gathers each
output from filter taps, a deconvolution scatters each input through them);
forward and backward on every test device, saving and copying go through LinkTestCase.
"""

import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, initializers, testing, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import (
    FLOAT_DTYPES,
    LinkTestCase,
    assert_allclose,
    bad_input_test,
    make_link,
    tolerances,
)
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_link_backward,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.convolution_nd import Convolution1D, Convolution3D, ConvolutionND
from dbr.links.connection.deconvolution_nd import (
    Deconvolution1D,
    Deconvolution3D,
    DeconvolutionND,
)


def _tup(v, nd):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd


def _convolution_reference(x, W, b, stride=1, pad=0, cover_all=False, dilate=1, groups=1):
    """Direct float64 N-d convolution, one filter tap at a time."""
    nd = x.ndim - 2
    stride, pad, dilate = _tup(stride, nd), _tup(pad, nd), _tup(dilate, nd)
    ksize = W.shape[2:]
    out = []
    for size, k, s, p, d in zip(x.shape[2:], ksize, stride, pad, dilate):
        span = size + 2 * p - (k - 1) * d - 1
        out.append((span + s - 1) // s + 1 if cover_all else span // s + 1)
    widths = [(0, 0), (0, 0)] + [(p, p + s) for p, s in zip(pad, stride)]
    x = numpy.pad(x.astype(numpy.float64), widths)
    W = W.astype(numpy.float64)
    c_out, c_group = W.shape[:2]
    o_group = c_out // groups
    y = numpy.zeros((x.shape[0], c_out) + tuple(out))
    for g in range(groups):
        for tap in itertools.product(*(range(k) for k in ksize)):
            window = tuple(
                slice(t * d, t * d + s * (o - 1) + 1, s)
                for t, d, s, o in zip(tap, dilate, stride, out)
            )
            patch = x[(slice(None), slice(g * c_group, (g + 1) * c_group)) + window]
            w = W[(slice(g * o_group, (g + 1) * o_group), slice(None)) + tap]
            y[:, g * o_group : (g + 1) * o_group] += numpy.tensordot(w, patch, (1, 1)).swapaxes(
                0, 1
            )
    if b is not None:
        y += b.astype(numpy.float64).reshape((-1,) + (1,) * nd)
    return y


def _deconvolution_reference(x, W, b, stride=1, pad=0, outsize=None, dilate=1, groups=1):
    """Direct float64 N-d deconvolution: every input element scatters its filter tap by tap."""
    nd = x.ndim - 2
    stride, pad, dilate = _tup(stride, nd), _tup(pad, nd), _tup(dilate, nd)
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    in_size, ksize = x.shape[2:], W.shape[2:]
    if outsize is None:
        outsize = tuple(
            s * (d - 1) + (k - 1) * dl + 1 - 2 * p
            for d, k, s, p, dl in zip(in_size, ksize, stride, pad, dilate)
        )
    c_group, o_group = x.shape[1] // groups, W.shape[1]
    full_shape = tuple(o + 2 * p + s for o, p, s in zip(outsize, pad, stride))
    full = numpy.zeros((x.shape[0], o_group * groups) + full_shape)
    for g in range(groups):
        xg = x[:, g * c_group : (g + 1) * c_group]
        for tap in itertools.product(*(range(k) for k in ksize)):
            w = W[(slice(g * c_group, (g + 1) * c_group), slice(None)) + tap]
            window = tuple(
                slice(t * dl, t * dl + s * (d - 1) + 1, s)
                for t, dl, s, d in zip(tap, dilate, stride, in_size)
            )
            index = (slice(None), slice(g * o_group, (g + 1) * o_group)) + window
            full[index] += numpy.moveaxis(numpy.tensordot(xg, w, (1, 0)), -1, 1)
    crop = tuple(slice(p, p + o) for p, o in zip(pad, outsize))
    y = full[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.astype(numpy.float64).reshape((-1,) + (1,) * nd)
    return y


def test_convolution_positional_and_keyword_forms():
    link = ConvolutionND(2, 3, 4, 3, 2, 1, False, initializers.One(), 0.5, True, 2, 1)
    assert link.W.shape == (4, 3, 3, 3) and link.b.shape == (4,)
    assert (link.ksize, link.stride, link.pad, link.dilate) == ((3, 3), 2, 1, (2, 2))
    assert (link.out_channels, link.cover_all, link.groups) == (4, True, 1)
    numpy.testing.assert_array_equal(link.b.array, numpy.full(4, 0.5, numpy.float32))
    link = ConvolutionND(
        ndim=3, in_channels=4, out_channels=6, ksize=(1, 2, 3), stride=(1, 1, 2),
        pad=(0, 1, 0), nobias=True, cover_all=False, dilate=(1, 2, 1), groups=2,
    )  # fmt: skip
    assert link.W.shape == (6, 2, 1, 2, 3) and link.b is None
    assert link.ksize == (1, 2, 3) and link.dilate == (1, 2, 1) and link.stride == (1, 1, 2)


def test_convolution_fixed_dimension_forms():
    link = Convolution1D(2, 3, 4, stride=2, cover_all=True, groups=1)
    assert isinstance(link, ConvolutionND)
    assert link.W.shape == (3, 2, 4) and link.ksize == (4,) and link.cover_all
    link = Convolution3D(in_channels=2, out_channels=4, ksize=2, dilate=2, groups=2)
    assert link.W.shape == (4, 1, 2, 2, 2) and link.dilate == (2, 2, 2)


def test_convolution_from_params():
    W = numpy.random.uniform(-1, 1, (4, 1, 3, 2, 2))
    b = numpy.random.uniform(-1, 1, 4)
    with using_config("dtype", numpy.dtype(numpy.float64)):
        link = ConvolutionND.from_params(W, b, stride=2, pad=1, cover_all=True, groups=2)
    assert type(link) is ConvolutionND and link.W.dtype == numpy.float64
    assert link.W.shape == (4, 1, 3, 2, 2) and link.ksize == (3, 2, 2) and link.W.array is not W
    assert (link.stride, link.pad, link.cover_all, link.groups) == (2, 1, True, 2)
    numpy.testing.assert_array_equal(link.W.array, W)
    numpy.testing.assert_array_equal(link.b.array, b)
    x = numpy.random.uniform(-1, 1, (1, 2, 5, 4, 4))
    expected = _convolution_reference(x, W, b, 2, 1, cover_all=True, groups=2)
    assert_allclose(link(x).array, expected, atol=1e-12, rtol=1e-12)
    assert ConvolutionND.from_params(W, nobias=True).b is None


def test_convolution_from_params_of_the_fixed_dimension_forms():
    link = Convolution1D.from_params(numpy.zeros((3, 2, 4), numpy.float32), dilate=2)
    assert type(link) is Convolution1D and link.W.shape == (3, 2, 4) and link.dilate == (2,)
    link = Convolution3D.from_params(numpy.zeros((3, 2, 1, 2, 3), numpy.float32))
    assert type(link) is Convolution3D and link.ksize == (1, 2, 3) and link.b.shape == (3,)
    with pytest.raises(ValueError, match=r"Convolution1D.from_params: W must have 3 axes, got "):
        Convolution1D.from_params(numpy.zeros((3, 2, 4, 4), numpy.float32))


def test_convolution_from_params_refuses_a_bias_of_another_size():
    W = numpy.zeros((4, 2, 3), numpy.float32)
    with pytest.raises(
        ValueError, match=r"ConvolutionND.from_params: b must have 4 elements .*got shape \(3,\)"
    ):
        ConvolutionND.from_params(W, numpy.zeros(3, numpy.float32))


def test_deconvolution_positional_and_keyword_forms():
    link = DeconvolutionND(2, 3, 4, 3, 2, 1, False, (9, 9), initializers.One(), 0.5, 1, 1)
    assert link.W.shape == (3, 4, 3, 3) and link.b.shape == (4,)
    assert (link.ksize, link.stride, link.pad, link.dilate) == ((3, 3), 2, 1, (1, 1))
    assert (link.outsize, link.out_channels, link.groups) == ((9, 9), 4, 1)
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((3, 4, 3, 3), numpy.float32))
    link = DeconvolutionND(
        ndim=3, in_channels=4, out_channels=6, ksize=(1, 2, 3), stride=(1, 1, 2),
        pad=(0, 1, 0), nobias=True, outsize=None, dilate=(1, 2, 1), groups=2,
    )  # fmt: skip
    assert link.W.shape == (4, 3, 1, 2, 3) and link.b is None
    assert link.ksize == (1, 2, 3) and link.dilate == (1, 2, 1) and link.outsize is None


def test_deconvolution_fixed_dimension_forms():
    link = Deconvolution1D(2, 3, 4, stride=2, outsize=(11,))
    assert isinstance(link, DeconvolutionND)
    assert link.W.shape == (2, 3, 4) and link.ksize == (4,) and link.outsize == (11,)
    link = Deconvolution3D(in_channels=2, out_channels=4, ksize=2, dilate=2, groups=2)
    assert link.W.shape == (2, 2, 2, 2, 2) and link.dilate == (2, 2, 2)


@pytest.mark.parametrize(
    "kind, make, x_shape, w_shape",
    [
        ("convolution", lambda: ConvolutionND(2, 5, 3), (1, 2, 6, 6), (5, 2, 3, 3)),
        ("convolution", lambda: ConvolutionND(3, None, 5, 3), (1, 2, 4, 4, 4), (5, 2, 3, 3, 3)),
        ("convolution", lambda: Convolution1D(5, 3), (1, 2, 6), (5, 2, 3)),
        (
            "convolution",
            lambda: Convolution3D(None, 6, 2, groups=3),
            (1, 3, 3, 3, 3),
            (6, 1, 2, 2, 2),
        ),
        ("deconvolution", lambda: DeconvolutionND(2, 5, 3), (1, 2, 3, 3), (2, 5, 3, 3)),
        (
            "deconvolution",
            lambda: DeconvolutionND(3, None, 5, 2),
            (1, 2, 2, 2, 2),
            (2, 5, 2, 2, 2),
        ),
        ("deconvolution", lambda: Deconvolution1D(5, 3), (1, 2, 4), (2, 5, 3)),
        (
            "deconvolution",
            lambda: Deconvolution3D(None, 6, 2, groups=3),
            (1, 3, 2, 2, 2),
            (3, 2, 2, 2, 2),
        ),
    ],
)
def test_short_form_is_lazy(kind, make, x_shape, w_shape):
    link = make()
    assert link.W.array is None and link.b.shape == (link.out_channels,)
    x = numpy.random.uniform(-1, 1, x_shape).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == w_shape
    reference = _convolution_reference if kind == "convolution" else _deconvolution_reference
    expected = reference(x, link.W.array, link.b.array, groups=link.groups)
    assert_allclose(y.array, expected, **tolerances("float32"))


OPTIONS = {
    "convolution": [
        (1, {"stride": 2, "pad": 1, "cover_all": True}),
        (2, {"stride": (2, 1), "pad": (1, 0), "dilate": (1, 2)}),
        (2, {"stride": 3, "cover_all": True, "groups": 2}),
        (3, {"pad": 1, "dilate": 2, "groups": 4}),
        (3, {"stride": (1, 2, 2), "cover_all": True}),
    ],
    "deconvolution": [
        (1, {"stride": 2, "pad": 1, "outsize": (5,)}),
        (2, {"stride": (2, 1), "pad": (1, 0), "dilate": (1, 2)}),
        (2, {"stride": 3, "outsize": (9, 10), "groups": 2}),
        (3, {"pad": 1, "dilate": 2, "groups": 4}),
        (3, {"stride": (1, 2, 2), "outsize": (4, 7, 6)}),
    ],
}

# kind: the n-d link, its 1-d and 3-d forms, the function, the reference,
# the spatial size of the inputs and the initial bias
KINDS = {
    "convolution": (
        ConvolutionND,
        Convolution1D,
        Convolution3D,
        F.convolution_nd,
        _convolution_reference,
        5,
        initializers.Normal(1),
    ),
    "deconvolution": (
        DeconvolutionND,
        Deconvolution1D,
        Deconvolution3D,
        F.deconvolution_nd,
        _deconvolution_reference,
        3,
        1.5,
    ),
}


@testing.parameterize(
    *[
        {"kind": kind, "ndim": ndim, "options": options, "dtype": dtype}
        for kind in KINDS
        for ndim, options in OPTIONS[kind]
        for dtype in FLOAT_DTYPES
    ]
)
class TestForwardAndBackward(LinkTestCase):
    contiguous = "C"
    skip_round_trip_test = False
    skip_copy_modes_test = False

    def create_link(self):
        cls, bias = KINDS[self.kind][0], KINDS[self.kind][6]
        return make_link(cls, self.dtype, self.ndim, 4, 8, 2, initial_bias=bias, **self.options)

    def generate_inputs(self):
        size = KINDS[self.kind][5]
        x = numpy.random.uniform(-1, 1, (2, 4) + (size,) * self.ndim).astype(self.dtype)
        return (x,)

    def forward(self, link, inputs, device):
        (x,) = inputs
        function = KINDS[self.kind][3]
        # Bit for bit only on deterministic cuDNN engines: others may sum in another order.
        with using_config("cudnn_deterministic", True):
            y = link(x)
            composed = function(x, link.W, link.b, **self.options)
        if "outsize" in self.options:
            assert y.shape[2:] == self.options["outsize"]
        testing.assert_allclose(y.array, composed.array, atol=0, rtol=0)
        return (y,)

    def forward_expected(self, link, inputs):
        reference = KINDS[self.kind][4]
        y = reference(inputs[0], link.W.array, link.b.array, **self.options)
        return (y.astype(self.dtype),)


# kind: the link, its options beyond (3, 2, 4, 2, stride=(1, 2, 1), groups=2), x.shape, gy.shape
BACKWARD_CASES = {
    "convolution": (
        ConvolutionND,
        {"pad": 1, "cover_all": True},
        (1, 2, 3, 3, 2),
        (1, 4, 4, 3, 3),
    ),
    "deconvolution": (
        DeconvolutionND,
        {"pad": (1, 0, 0), "outsize": (1, 5, 3)},
        (1, 2, 2, 2, 2),
        (1, 4, 1, 5, 3),
    ),
}


@pytest.mark.parametrize("kind", list(BACKWARD_CASES))
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(kind, dtype, nobias):
    cls, options, x_shape, gy_shape = BACKWARD_CASES[kind]
    link = make_link(
        cls, dtype, 3, 2, 4, 2, stride=(1, 2, 1), nobias=nobias, groups=2,
        initial_bias=initializers.Normal(1.0), **options,
    )  # fmt: skip
    x = numpy.random.uniform(-1, 1, x_shape).astype(dtype)
    gy = numpy.random.uniform(-1, 1, gy_shape).astype(dtype)
    # Without a bias, link.params() holds W alone.
    check_link_backward(link, x, gy, link.params(), dtype)


def test_convolution_backward_1d():
    link = make_link(Convolution1D, numpy.float64, 3, 2, 3, dilate=2, initial_bias=1.0)
    x = numpy.random.uniform(-1, 1, (2, 3, 7))
    gy = numpy.random.uniform(-1, 1, (2, 2, 3))
    check_backward(link, x, gy, params=(link.W, link.b), **tolerances("float64", "backward"))


def test_deconvolution_backward_1d():
    link = make_link(Deconvolution1D, numpy.float64, 3, 2, 3, dilate=2, initial_bias=1.0)
    x = numpy.random.uniform(-1, 1, (2, 3, 4))
    gy = numpy.random.uniform(-1, 1, (2, 2, 8))
    check_backward(link, x, gy, params=(link.W, link.b), **tolerances("float64", "backward"))


@pytest.mark.parametrize("kind", list(KINDS))
def test_param_names(kind):
    nd_cls, cls_1d, cls_3d = KINDS[kind][:3]
    assert param_names(nd_cls(3, 2, 4, 2)) == ["/W", "/b"]
    assert param_names(cls_1d(2, 4, nobias=True)) == ["/W"]
    assert param_names(cls_3d(2, 4, 2)) == ["/W", "/b"]
    assert persistent_names(nd_cls(3, 2, 4, 2)) == []


@pytest.mark.parametrize("kind, size", [("convolution", 3), ("deconvolution", 2)])
def test_round_trip_into_lazy_link(kind, size):
    cls_3d = KINDS[kind][2]
    link = cls_3d(2, 3, 2, initial_bias=initializers.Normal(1.0))
    x = numpy.random.rand(1, 2, size, size, size).astype(numpy.float32)
    check_round_trip(link, cls_3d(3, 2), (x,))


@pytest.mark.parametrize("kind", list(KINDS))
def test_round_trip_uninitialized(kind):
    nd_cls = KINDS[kind][0]
    check_round_trip(nd_cls(1, 3, 2), nd_cls(1, 3, 2))


@pytest.mark.parametrize("kind", list(KINDS))
def test_copy_modes(kind):
    check_copy_modes(KINDS[kind][0](2, 3, 2, 2))


test_bad_input = bad_input_test(
    [
        (
            Convolution1D(3, 2, 3),
            (numpy.zeros((1, 4, 5), numpy.float32),),
            {},
            InvalidType,
            ("ConvolutionND", "x.shape[1] == W.shape[1] * 1", "4 != 3"),
        ),
        (
            Deconvolution1D(3, 2, 3),
            (numpy.zeros((1, 4, 5), numpy.float32),),
            {},
            InvalidType,
            ("DeconvolutionND", "x.shape[1] == W.shape[0]", "4 != 3"),
        ),
        (
            ConvolutionND(2, 3, 2, 3),
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("ConvolutionND", "x.dtype.kind == 'f'"),
        ),
        (
            DeconvolutionND(2, 3, 2, 3),
            (numpy.zeros((1, 3, 5, 5), numpy.int32),),
            {},
            InvalidType,
            ("DeconvolutionND", "x.dtype.kind == 'f'"),
        ),
        (ConvolutionND, (0, 3, 2, 3), {}, ValueError, "ConvolutionND: ndim must be a positive"),
        (ConvolutionND, (2, 3, 0, 3), {}, ValueError, "ConvolutionND: out_channels must be"),
        (ConvolutionND, (2, 3, 2, (2, 2, 2)), {}, ValueError, ("ksize must be ", " of 2 ints")),
        (Convolution1D, (3, 2, 3), {"stride": 0}, ValueError, "Convolution1D: stride must be"),
        (Convolution3D, (3, 2, 3), {"pad": -1}, ValueError, "Convolution3D: pad must be >= 0"),
        (Convolution3D, (4, 3, 3), {"groups": 2}, ValueError, "out_channels must be divisible"),
        (Convolution1D, (3, 2, 3), {"dilate": "2"}, TypeError, "Convolution1D: dilate must be"),
        (DeconvolutionND, (-1, 3, 2, 3), {}, ValueError, "DeconvolutionND: ndim must be a posi"),
        (DeconvolutionND, (2, 3, 0, 3), {}, ValueError, "DeconvolutionND: out_channels must"),
        (DeconvolutionND, (2, 3, 2, 3), {"outsize": (5,)}, ValueError, "outsize must be an "),
        (Deconvolution1D, (3, 2, 3), {"stride": 0}, ValueError, "Deconvolution1D: stride must"),
        (Deconvolution3D, (3, 2, 3), {"pad": -1}, ValueError, "Deconvolution3D: pad must be >="),
        (Deconvolution3D, (4, 3, 3), {"groups": 2}, ValueError, "out_channels must be divisib"),
    ]
)
