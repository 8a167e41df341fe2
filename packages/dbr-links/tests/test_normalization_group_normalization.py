import functools

import numpy
import pytest

from dbr.core import InvalidType, Variable, initializers, mixed16, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.normalization.group_normalization import GroupNormalization

_make = functools.partial(make_link, GroupNormalization)


def _reference(x, groups, gamma, beta, eps=1e-5):
    n, c = x.shape[:2]
    g = x.astype(numpy.float64).reshape(n, groups, -1)
    g = (g - g.mean(axis=2, keepdims=True)) / numpy.sqrt(g.var(axis=2, keepdims=True) + eps)
    scale = (slice(None),) + (None,) * (x.ndim - 2)
    return g.reshape(x.shape) * gamma[scale] + beta[scale]


def test_positional_and_keyword_forms():
    gn = GroupNormalization(2, 4, 1e-3, 2.0, initializers.Constant(0.5))
    assert (gn.groups, gn.eps) == (2, 1e-3)
    numpy.testing.assert_array_equal(gn.gamma.array, numpy.full(4, 2.0, numpy.float32))
    numpy.testing.assert_array_equal(gn.beta.array, numpy.full(4, 0.5, numpy.float32))
    gn = GroupNormalization(groups=3, size=6)
    assert gn.eps == 1e-5
    numpy.testing.assert_array_equal(gn.gamma.array, numpy.ones(6, numpy.float32))
    numpy.testing.assert_array_equal(gn.beta.array, numpy.zeros(6, numpy.float32))


def test_names():
    assert param_names(GroupNormalization(2)) == ["/beta", "/gamma"]
    assert persistent_names(GroupNormalization(2)) == []


def test_groups_are_checked_when_called_as_in_chainer():
    gn = GroupNormalization(3.5)
    assert gn.groups == 3.5
    with pytest.raises(TypeError, match="expected groups to be an int"):
        gn(numpy.zeros((2, 7), numpy.float32))


@pytest.mark.parametrize("size", [None, 4])
def test_mixed16_keeps_float32_parameters_for_float16_inputs(size):
    with using_config("dtype", mixed16):
        gn = GroupNormalization(2, size, initial_gamma=initializers.Normal(1.0))
    x = Variable(numpy.random.randn(3, 4, 5).astype(numpy.float16))
    y = gn(x)
    assert gn.gamma.dtype == numpy.float32 and gn.beta.dtype == numpy.float32
    assert y.dtype == numpy.float16
    expected = _reference(x.array, 2, gn.gamma.array, gn.beta.array)
    assert_allclose(y.array, expected, atol=1e-2, rtol=1e-2)
    y.grad = numpy.ones(y.shape, numpy.float16)
    y.backward()
    assert gn.gamma.grad.dtype == numpy.float32 and x.grad.dtype == numpy.float16


def test_parameter_dtype_is_the_config_dtype_at_construction():
    with using_config("dtype", numpy.float64):
        gn = GroupNormalization(2)
    gn(numpy.zeros((1, 4, 3), numpy.float64))
    assert gn.gamma.dtype == numpy.float64 and gn.beta.dtype == numpy.float64
    gn = GroupNormalization(2, initial_gamma=numpy.full(4, 2.0, numpy.float16))
    gn(numpy.zeros((1, 4, 3), numpy.float16))
    assert gn.gamma.dtype == numpy.float32
    numpy.testing.assert_array_equal(gn.gamma.array, numpy.full(4, 2.0))


def test_lazy_size():
    gn = GroupNormalization(2, initial_gamma=initializers.Normal(1.0))
    assert gn.gamma.array is None and gn.beta.array is None
    x = numpy.random.randn(3, 4, 5).astype(numpy.float32)
    y = gn(x)
    assert gn.gamma.shape == (4,) and gn.beta.shape == (4,)
    assert_allclose(
        y.array, _reference(x, 2, gn.gamma.array, gn.beta.array), **tolerances("float32")
    )


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape", [(3, 6), (2, 6, 2, 3)])
def test_values_same_in_train_and_test(dtype, shape):
    gn = _make(
        dtype, 3, 6, initial_gamma=initializers.Normal(1.0), initial_beta=initializers.Normal()
    )
    x = numpy.random.randn(*shape).astype(dtype)
    expected = _reference(x, 3, gn.gamma.array, gn.beta.array)
    tol = {"atol": 1e-2, "rtol": 1e-2} if dtype == numpy.float16 else tolerances(dtype)
    y = gn(x)
    assert y.dtype == dtype
    assert_allclose(y.array, expected, **tol)
    with using_config("train", False):
        assert_allclose(gn(x).array, expected, **tol)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gradients(dtype):
    gn = _make(
        dtype, 2, 4, initial_gamma=initializers.Uniform(1.0), initial_beta=initializers.Normal()
    )
    x = numpy.random.randn(3, 4, 2).astype(dtype)
    gy = numpy.random.randn(3, 4, 2).astype(dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else tolerances(dtype, "backward")
    check_backward(gn, x, gy, params=(gn.gamma, gn.beta), dtype=numpy.float64, **tol)


def test_round_trip_and_copy():
    gn = GroupNormalization(2, 4, initial_gamma=initializers.Normal(1.0))
    check_round_trip(gn, GroupNormalization(2))
    check_copy_modes(gn)


test_bad_input = bad_input_test(
    [
        (
            GroupNormalization(-1),
            (numpy.zeros((2, 6), numpy.float32),),
            {},
            ValueError,
            "group_normalization: expected groups >= 1, got -1",
        ),
        (
            GroupNormalization(3.5),
            (numpy.zeros((2, 6), numpy.float32),),
            {},
            TypeError,
            "group_normalization: expected groups to be an int, got 3.5",
        ),
        (
            GroupNormalization(2),
            (numpy.zeros(4, numpy.float32),),
            {},
            ValueError,
            ("at least 2 axes ", "got shape (4,)"),
        ),
        (
            GroupNormalization(2, 4),
            (numpy.zeros((2, 6), numpy.float32),),
            {},
            InvalidType,
            ("GroupNormalization", "x.shape[1] == gamma"),
        ),
        (
            GroupNormalization(4, 6),
            (numpy.zeros((2, 6), numpy.float32),),
            {},
            ValueError,
            ("GroupNormalization", "divisible by groups=4", "(2, 6)"),
        ),
    ]
)
