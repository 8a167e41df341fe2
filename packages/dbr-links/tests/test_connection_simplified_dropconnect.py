import numpy
import pytest

from dbr.core import InvalidType, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.connection.simplified_dropconnect import SimplifiedDropconnect


def _make(dtype, *args, **kwargs):
    return make_link(
        SimplifiedDropconnect, dtype, *args, initial_bias=initializers.Normal(1.0), **kwargs
    )


def _reference(x, W, b, mask=None, ratio=0.5):
    x = x.reshape(len(x), -1).astype(numpy.float64)
    W = W.astype(numpy.float64)
    if mask is None:
        y = x @ W.T
    elif mask.ndim == 2:
        y = x @ (W * mask).T / (1 - ratio)
    else:
        y = numpy.einsum("nk,njk->nj", x, W * mask) / (1 - ratio)
    return y if b is None else y + b


def test_positional_and_keyword_forms():
    link = SimplifiedDropconnect(3, 2)
    assert (link.out_size, link.ratio) == (2, 0.5)
    assert link.W.shape == (2, 3) and link.b.shape == (2,)
    numpy.testing.assert_array_equal(link.b.array, numpy.zeros(2, numpy.float32))
    link = SimplifiedDropconnect(
        in_size=3, out_size=2, ratio=0.25, nobias=True, initialW=initializers.One()
    )
    assert link.ratio == 0.25 and link.b is None
    numpy.testing.assert_array_equal(link.W.array, numpy.ones((2, 3), numpy.float32))
    link = SimplifiedDropconnect(3, 2, 0.1, False, 2.0, 3.0)
    numpy.testing.assert_array_equal(link.W.array, numpy.full((2, 3), 2, numpy.float32))
    numpy.testing.assert_array_equal(link.b.array, numpy.full(2, 3, numpy.float32))


def test_default_initializer_scale():
    numpy.random.seed(2)
    link = SimplifiedDropconnect(400, 300)
    assert abs(float(link.W.array.std()) - (1 / 400) ** 0.5) < 0.005


def test_lazy_in_size():
    link = SimplifiedDropconnect(None, 3)
    assert link.W.array is None and link.b.shape == (3,)
    x = numpy.random.rand(2, 2, 3).astype(numpy.float32)
    y = link(x, train=False)
    assert link.W.shape == (3, 6) and y.shape == (2, 3)
    assert_allclose(y.array, _reference(x, link.W.array, link.b.array), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_test_mode_is_linear(dtype):
    link = _make(dtype, 4, 3)
    x = numpy.random.uniform(-1, 1, (5, 4)).astype(dtype)
    y = link(x, train=False)
    assert y.shape == (5, 3) and y.dtype == dtype
    assert_allclose(y.array, _reference(x, link.W.array, link.b.array), **tolerances(dtype))


@pytest.mark.parametrize("x_dtype", FLOAT_DTYPES)
def test_input_of_another_dtype_without_bias(x_dtype):
    # W and x meet in their common dtype; y has x's dtype (a bias must have it too).
    link = _make(numpy.float32, 4, 3, nobias=True)
    x = numpy.random.uniform(-1, 1, (5, 4)).astype(x_dtype)
    y = link(x, train=False)
    assert y.dtype == x_dtype
    assert_allclose(y.array, _reference(x, link.W.array, None), **tolerances(x_dtype))


def test_train_argument_alone_decides_as_in_chainer():
    link = _make(numpy.float64, 20, 30, ratio=0.5)
    x = numpy.random.uniform(0.5, 1, (4, 20))
    linear = _reference(x, link.W.array, link.b.array)
    with using_config("train", False):
        assert not numpy.allclose(link(x).array, linear)
        assert not numpy.allclose(link(x, train=True).array, linear)
    with using_config("train", True):
        assert_allclose(link(x, train=False).array, linear, atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("batchwise", [False, True])
def test_forward_with_mask(dtype, batchwise):
    link = _make(dtype, 4, 3, ratio=0.25)
    x = numpy.random.uniform(-1, 1, (5, 4)).astype(dtype)
    shape = (5, 3, 4) if batchwise else (3, 4)
    mask = numpy.random.rand(*shape) > 0.25
    y = link(x, train=True, mask=mask)
    expected = _reference(x, link.W.array, link.b.array, mask, 0.25)
    assert_allclose(y.array, expected, **tolerances(dtype))


def test_batchwise_masks_differ_per_sample():
    numpy.random.seed(3)
    link = _make(numpy.float64, 10, 10)
    x = numpy.ones((2, 10))
    y = link(x, train=True).array
    assert not numpy.allclose(y[0], y[1])
    y = link(x, train=True, use_batchwise_mask=False).array
    assert_allclose(y[0], y[1], atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("nobias", [False, True])
def test_backward(dtype, nobias):
    link = _make(dtype, 3, 2, ratio=0.4, nobias=nobias)
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(dtype)
    gy = numpy.random.uniform(-1, 1, (4, 2)).astype(dtype)
    mask = numpy.random.rand(4, 2, 3) > 0.4
    params = (link.W,) if nobias else (link.W, link.b)
    check_backward(
        lambda v: link(v, train=True, mask=mask),
        x,
        gy,
        params=params,
        dtype=numpy.float64,
        **tolerances(dtype, "backward"),
    )


def test_param_names():
    assert param_names(SimplifiedDropconnect(3, 2)) == ["/W", "/b"]
    assert param_names(SimplifiedDropconnect(None, 2, nobias=True)) == ["/W"]
    assert persistent_names(SimplifiedDropconnect(3, 2)) == []


def test_round_trip():
    link = _make(numpy.float32, 3, 2)
    check_round_trip(link, SimplifiedDropconnect(None, 2))


def test_copy_modes():
    check_copy_modes(SimplifiedDropconnect(3, 2))


_DROPCONNECT = SimplifiedDropconnect(3, 2)

test_bad_input = bad_input_test(
    [
        (
            _DROPCONNECT,
            (numpy.ones((2, 4), numpy.float32),),
            {},
            InvalidType,
            ("SimplifiedDropconnect", "prod(x.shape[1:]) == W.shape[1]", "4 != 3"),
        ),
        (
            _DROPCONNECT,
            (numpy.ones((2, 3), numpy.float64),),
            {},
            InvalidType,
            ("SimplifiedDropconnect", "b.dtype == x.dtype"),
        ),
        ((3, 0), ValueError, "SimplifiedDropconnect: out_size must be a positive int, got 0"),
        (
            (-1, 2),
            ValueError,
            "SimplifiedDropconnect: in_size must be a positive int or None, got -1",
        ),
        ((3, 2, 1.0), ValueError, "SimplifiedDropconnect: ratio must be in [0, 1), got 1.0"),
    ],
    function=SimplifiedDropconnect,
)
