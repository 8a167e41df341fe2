import numpy
import pytest

from dbr.core import InvalidType, initializers
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_link_backward,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.local_convolution_2d import LocalConvolution2D


def _make(dtype, *args, **kwargs):
    return make_link(
        LocalConvolution2D, dtype, *args, initial_bias=initializers.Normal(1.0), **kwargs
    )


def _reference(x, W, b, stride=(1, 1)):
    c_out, out_h, out_w, _, kh, kw = W.shape
    sy, sx = stride
    x = x.astype(numpy.float64)
    y = numpy.zeros((len(x), c_out, out_h, out_w))
    for i in range(out_h):
        for j in range(out_w):
            window = x[:, :, i * sy : i * sy + kh, j * sx : j * sx + kw]
            y[:, :, i, j] = numpy.einsum("ncpq,ocpq->no", window, W[:, i, j].astype(numpy.float64))
    return y if b is None else y + b.astype(numpy.float64)


def test_positional_and_keyword_forms():
    link = LocalConvolution2D(3, 4, 7, 3)
    assert (link.in_channels, link.out_channels, link.in_size, link.ksize) == (3, 4, 7, 3)
    assert link.stride == (1, 1) and link.nobias is False
    assert link.W.shape == (4, 5, 5, 3, 3, 3) and link.b.shape == (4, 5, 5)
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros((4, 5, 5), numpy.float32))
    link = LocalConvolution2D(
        in_channels=2,
        out_channels=3,
        in_size=(6, 5),
        ksize=(3, 2),
        stride=(2, 1),
        nobias=True,
        initialW=initializers.One(),
    )
    assert link.stride == (2, 1) and link.b is None
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((3, 2, 4, 2, 3, 2), numpy.float32))
    link = LocalConvolution2D(2, 3, 4, 2, 2, False, 1.0, 2.0)
    assert link.W.shape == (3, 2, 2, 2, 2, 2)
    numpy.testing.assert_array_equal(link.b.array, numpy.full((3, 2, 2), 2, numpy.float32))


@pytest.mark.parametrize(
    "in_channels, in_size", [(None, None), (2, None), (None, (5, 6))], ids=["both", "size", "ch"]
)
def test_lazy_initialisation(in_channels, in_size):
    link = LocalConvolution2D(in_channels, 3, in_size, ksize=2, stride=(1, 2))
    assert link.W.array is None and link.b.array is None
    x = numpy.random.rand(2, 2, 5, 6).astype(numpy.float32)
    y = link(x)
    assert link.W.shape == (3, 4, 3, 2, 2, 2) and link.b.shape == (3, 4, 3)
    assert y.shape == (2, 3, 4, 3)
    assert_allclose(
        y.array, _reference(x, link.W.array, link.b.array, (1, 2)), **tolerances("float32")
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
@pytest.mark.parametrize("stride", [1, (2, 1)])
def test_forward_values(dtype, nobias, stride):
    link = _make(dtype, 2, 3, (5, 4), 2, stride=stride, nobias=nobias)
    x = numpy.random.uniform(-1, 1, (2, 2, 5, 4)).astype(dtype)
    y = link(x)
    assert y.dtype == dtype and y.shape == (2, 3) + link.W.shape[1:3]
    b = None if nobias else link.b.array
    assert_allclose(y.array, _reference(x, link.W.array, b, link.stride), **tolerances(dtype))


@pytest.mark.parametrize("x_dtype", FLOAT_DTYPES)
def test_input_of_another_dtype_without_bias(x_dtype):
    # W and x meet in their common dtype; y has x's dtype (a bias must have it too).
    link = _make(numpy.float32, 2, 3, (5, 4), 2, nobias=True)
    x = numpy.random.uniform(-1, 1, (2, 2, 5, 4)).astype(x_dtype)
    y = link(x)
    assert y.dtype == x_dtype
    expected = _reference(x, link.W.array, None, link.stride)
    assert_allclose(y.array, expected, **tolerances(x_dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(dtype, nobias):
    link = _make(dtype, 2, 2, 4, 2, stride=2, nobias=nobias)
    x = numpy.random.uniform(-1, 1, (2, 2, 4, 4)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (2, 2, 2, 2)).astype(dtype)
    # Without a bias, link.params() holds W alone.
    check_link_backward(link, x, gy, link.params(), dtype)


def test_param_names():
    assert param_names(LocalConvolution2D(2, 3, 4, 2)) == ["/W", "/b"]
    assert param_names(LocalConvolution2D(None, 3, ksize=2, nobias=True)) == ["/W"]
    assert persistent_names(LocalConvolution2D(2, 3, 4, 2)) == []


def test_round_trip_into_lazy_link():
    link = _make(numpy.float32, 2, 3, 4, 2)
    x = numpy.random.rand(1, 2, 4, 4).astype(numpy.float32)
    check_round_trip(link, LocalConvolution2D(None, 3, ksize=2), (x,))


def test_copy_modes():
    check_copy_modes(LocalConvolution2D(2, 3, 4, 2))


_LOCAL = LocalConvolution2D(3, 2, 5, 3)

test_bad_input = bad_input_test(
    [
        (
            LocalConvolution2D(3, 2, None, ksize=2),
            (numpy.zeros((1, 2, 4, 4), numpy.float32),),
            {},
            InvalidType,
            ("x.shape[1] == W.shape[3]", "2 != 3"),
        ),
        (
            _LOCAL,
            (numpy.ones((1, 3, 6, 5), numpy.float32),),
            {},
            InvalidType,
            ("LocalConvolution2DFunction", "W.shape[1] =="),
        ),
        (
            _LOCAL,
            (numpy.ones((1, 3, 5, 5), numpy.float64),),
            {},
            InvalidType,
            ("LocalConvolution2DFunction", "b.dtype == x.dtype"),
        ),
        (
            (3, 2),
            {},
            ValueError,
            "LocalConvolution2D: ksize must be a positive int or a pair of positive ints, "
            "got None",
        ),
        (
            (3, 2, 5, 0),
            {},
            ValueError,
            ("LocalConvolution2D: ksize must be a positive int or a pair ", "got 0"),
        ),
        (
            (3, 2, 5, 3),
            {"stride": (1, 2, 3)},
            ValueError,
            ("LocalConvolution2D: stride must be ", "got (1, 2, 3)"),
        ),
        (
            (0, 2, 5, 3),
            {},
            ValueError,
            "LocalConvolution2D: in_channels must be a positive int or None, got 0",
        ),
        (
            (3, None, 5, 3),
            {},
            ValueError,
            "LocalConvolution2D: out_channels must be a positive int, got None",
        ),
        (
            (3, 2, 2, 3),
            {},
            ValueError,
            "LocalConvolution2D: in_size must be at least ksize (3, 3), got 2",
        ),
    ],
    function=LocalConvolution2D,
)
