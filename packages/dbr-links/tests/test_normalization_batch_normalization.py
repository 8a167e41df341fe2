import numpy
import pytest

from dbr.core import InvalidType, Variable, initializers, mixed16, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.normalization.batch_normalization import BatchNormalization


def _reference(x, gamma, beta, axis, eps=2e-5, mean=None, var=None):
    """NumPy batch normalization in float64 over ``axis``, channels kept as broadcast axes."""
    x64 = x.astype(numpy.float64)
    if mean is None:
        mean = x64.mean(axis=axis, keepdims=True)
        var = x64.var(axis=axis, keepdims=True)
    else:
        mean, var = (_expand(a, axis) for a in (mean, var))
    g, b = _expand(gamma, axis), _expand(beta, axis)
    return g * (x64 - mean) / numpy.sqrt(var + eps) + b


def _expand(a, axis):
    """``a`` (of the channel shape, or a scalar) in float64 with the normalized axes as 1s."""
    a = numpy.asarray(a, numpy.float64)
    return numpy.expand_dims(a, axis) if a.ndim else a


def _batch_stats(x, axis):
    x64 = x.astype(numpy.float64)
    m = x64.size // numpy.prod([x.shape[i] for i in range(x.ndim) if i not in axis])
    return x64.mean(axis=axis), x64.var(axis=axis) * m / (m - 1)


def test_positional_and_keyword_forms():
    bn = BatchNormalization(3, 0.8, 1e-3, numpy.float64, True, False, 2.0, None, None, 0.5, 4.0)
    assert (bn.decay, bn.eps, bn.axis) == (0.8, 1e-3, None)
    assert bn.gamma.dtype == numpy.float64 and bn.beta is None
    numpy.testing.assert_array_equal(bn.gamma.array, numpy.full(3, 2.0))
    numpy.testing.assert_array_equal(bn.avg_mean, numpy.full(3, 0.5))
    numpy.testing.assert_array_equal(bn.avg_var, numpy.full(3, 4.0))
    assert bn.avg_mean.dtype == numpy.float64 and bn.N == 0
    bn = BatchNormalization(size=(2, 3), decay=0.5, eps=1e-4, use_gamma=False, axis=(0, 3))
    assert bn.gamma is None and bn.beta.shape == (2, 3) and bn.axis == (0, 3)
    numpy.testing.assert_array_equal(bn.avg_mean, numpy.zeros((2, 3), numpy.float32))
    numpy.testing.assert_array_equal(bn.avg_var, numpy.ones((2, 3), numpy.float32))


def test_default_dtype_follows_config():
    assert BatchNormalization(2).gamma.dtype == numpy.float32
    with using_config("dtype", numpy.dtype(numpy.float16)):
        bn = BatchNormalization(2)
    assert bn.gamma.dtype == numpy.float16 and bn.avg_var.dtype == numpy.float16


@pytest.mark.parametrize("by_config", [False, True])
@pytest.mark.parametrize("size", [3, None])
def test_mixed16_keeps_float32_parameters_and_statistics(by_config, size):
    axis = None if size else (0,)
    if by_config:
        with using_config("dtype", mixed16):
            bn = BatchNormalization(size, axis=axis)
    else:
        bn = BatchNormalization(size, dtype=mixed16, axis=axis)
    x = Variable(numpy.random.randn(6, 3).astype(numpy.float16))
    y = bn(x)
    assert y.dtype == numpy.float16
    for array in (bn.gamma.array, bn.beta.array, bn.avg_mean, bn.avg_var):
        assert array.dtype == numpy.float32
    assert_allclose(
        y.array, _reference(x.array, bn.gamma.array, bn.beta.array, (0,)), atol=1e-2, rtol=1e-2
    )
    y.grad = numpy.ones(y.shape, numpy.float16)
    y.backward()
    assert x.grad.dtype == numpy.float16 and bn.gamma.grad.dtype == numpy.float32
    with using_config("train", False):
        assert bn(x).dtype == numpy.float16


def test_missing_size_and_axis_is_also_chainers_runtime_error():
    with pytest.raises(RuntimeError, match="BatchNormalization: size or axis is required"):
        BatchNormalization()


def test_names():
    bn = BatchNormalization(3)
    assert param_names(bn) == ["/beta", "/gamma"]
    assert persistent_names(bn) == ["/N", "/avg_mean", "/avg_var"]
    assert param_names(BatchNormalization(3, use_gamma=False)) == ["/beta"]
    assert param_names(BatchNormalization(3, use_beta=False)) == ["/gamma"]


@pytest.mark.parametrize(
    "axis, shape, size",
    [
        ((0, 2, 3), (4, 3, 2, 5), (3,)),
        (0, (4, 3, 2), (3, 2)),
        ((0, 1), (4, 2, 3), (3,)),
    ],
)
def test_lazy_size_from_axis(axis, shape, size):
    bn = BatchNormalization(axis=axis, initial_gamma=initializers.Normal(1.0))
    assert bn.avg_mean is None and bn.avg_var is None
    assert bn.gamma.array is None and bn.beta.array is None
    x = numpy.random.randn(*shape).astype(numpy.float32)
    y = bn(x)
    assert bn.avg_mean.shape == size and bn.gamma.shape == size and bn.beta.shape == size
    axis = (axis,) if isinstance(axis, int) else axis
    expected = _reference(x, bn.gamma.array, bn.beta.array, axis)
    assert_allclose(y.array, expected, **tolerances("float32"))


def test_default_axis_is_batch_and_trailing_axes():
    bn = BatchNormalization(3, initial_gamma=initializers.Normal(1.0))
    x = numpy.random.randn(4, 3, 2, 2).astype(numpy.float32)
    expected = _reference(x, bn.gamma.array, bn.beta.array, (0, 2, 3))
    assert_allclose(bn(x).array, expected, **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_running_statistics_after_several_batches(dtype):
    decay = 0.7
    bn = BatchNormalization(3, decay=decay, dtype=dtype)
    mean = numpy.zeros(3)
    var = numpy.ones(3)
    for _ in range(3):
        x = numpy.random.randn(5, 3, 2).astype(dtype) * 2 + 1
        y = bn(x)
        assert y.dtype == dtype
        batch_mean, batch_var = _batch_stats(x, (0, 2))
        mean = decay * mean + (1 - decay) * batch_mean
        var = decay * var + (1 - decay) * batch_var
    tol = {"atol": 1e-2, "rtol": 1e-2} if dtype == numpy.float16 else tolerances(dtype)
    assert_allclose(bn.avg_mean, mean, **tol)
    assert_allclose(bn.avg_var, var, **tol)
    assert bn.N == 0


def test_float16_input_with_float32_parameters():
    bn = BatchNormalization(3)
    x = numpy.random.randn(6, 3).astype(numpy.float16)
    y = bn(x)
    assert y.dtype == numpy.float16 and bn.avg_mean.dtype == numpy.float32
    expected = _reference(x, bn.gamma.array, bn.beta.array, (0,))
    assert_allclose(y.array, expected, atol=1e-2, rtol=1e-2)


def test_finetune_averages_cumulatively_and_restarts():
    bn = BatchNormalization(2, dtype=numpy.float64)
    batches = [numpy.random.randn(4, 2) * (i + 1) + i for i in range(4)]
    for x in batches[:2]:
        bn(x)
    for i, x in enumerate(batches):
        bn(x, finetune=True)
        assert i + 1 == bn.N
    stats = [_batch_stats(x, (0,)) for x in batches]
    assert_allclose(bn.avg_mean, numpy.mean([m for m, _ in stats], axis=0), atol=1e-12, rtol=1e-12)
    assert_allclose(bn.avg_var, numpy.mean([v for _, v in stats], axis=0), atol=1e-12, rtol=1e-12)
    bn.start_finetuning()
    assert bn.N == 0
    bn(batches[3], finetune=True)
    assert bn.N == 1
    assert_allclose(bn.avg_mean, stats[3][0], atol=1e-12, rtol=1e-12)
    assert_allclose(bn.avg_var, stats[3][1], atol=1e-12, rtol=1e-12)


def test_test_mode_uses_running_statistics_without_updating():
    bn = BatchNormalization(3, initial_gamma=initializers.Normal(1.0), initial_beta=0.5)
    for _ in range(2):
        bn(numpy.random.randn(5, 3).astype(numpy.float32))
    mean, var, n = bn.avg_mean.copy(), bn.avg_var.copy(), bn.N
    x = numpy.random.randn(4, 3).astype(numpy.float32)
    with using_config("train", False):
        y = bn(x, finetune=True)
    numpy.testing.assert_array_equal(bn.avg_mean, mean)
    numpy.testing.assert_array_equal(bn.avg_var, var)
    assert n == bn.N
    expected = _reference(x, bn.gamma.array, bn.beta.array, (0,), mean=mean, var=var)
    assert_allclose(y.array, expected, **tolerances("float32"))


def test_recomputing_leaves_statistics_alone():
    bn = BatchNormalization(3)
    x = numpy.random.randn(4, 3).astype(numpy.float32)
    with using_config("in_recomputing", True):
        y = bn(x, finetune=True)
    numpy.testing.assert_array_equal(bn.avg_mean, numpy.zeros(3, numpy.float32))
    numpy.testing.assert_array_equal(bn.avg_var, numpy.ones(3, numpy.float32))
    assert bn.N == 0
    assert_allclose(y.array, _reference(x, 1.0, 0.0, (0,)), **tolerances("float32"))


def test_without_gamma_and_beta():
    bn = BatchNormalization(3, use_gamma=False, use_beta=False)
    x = numpy.random.randn(4, 3).astype(numpy.float32)
    with using_config("train", False):
        assert_allclose(bn(x).array, x / numpy.sqrt(1 + 2e-5), **tolerances("float32"))
    assert_allclose(bn(x).array, _reference(x, 1.0, 0.0, (0,)), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gradients(dtype):
    bn = BatchNormalization(
        3, dtype=dtype, initial_gamma=initializers.Uniform(1.0), initial_beta=initializers.Normal()
    )
    x = numpy.random.randn(5, 3, 2).astype(dtype)
    gy = numpy.random.randn(5, 3, 2).astype(dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else tolerances(dtype, "backward")
    check_backward(bn, x, gy, params=(bn.gamma, bn.beta), dtype=numpy.float64, **tol)
    with using_config("train", False):
        check_backward(bn, x, gy, params=(bn.gamma, bn.beta), dtype=numpy.float64, **tol)


def test_round_trip_into_lazy_link():
    bn = BatchNormalization(axis=(0, 2), initial_gamma=initializers.Normal(1.0))
    bn(numpy.random.randn(4, 3, 2).astype(numpy.float32))
    bn(numpy.random.randn(4, 3, 2).astype(numpy.float32), finetune=True)
    fresh = check_round_trip(bn, BatchNormalization(axis=(0, 2)))
    assert fresh.N == 1
    x = numpy.random.randn(4, 3, 2).astype(numpy.float32)
    with using_config("train", False):
        assert_allclose(fresh(x).array, bn(x).array, atol=0, rtol=0)


def test_round_trip_sized_and_uninitialized():
    bn = BatchNormalization(3, initial_avg_mean=initializers.Normal(1.0))
    check_round_trip(bn, BatchNormalization(3))
    check_round_trip(BatchNormalization(axis=0), BatchNormalization(axis=0))


def test_copy_modes():
    bn = BatchNormalization(3, initial_gamma=initializers.Normal(1.0))
    bn(numpy.random.randn(4, 3).astype(numpy.float32))
    check_copy_modes(bn)
    copied = bn.copy("copy")
    assert copied.avg_mean is not bn.avg_mean
    numpy.testing.assert_array_equal(copied.avg_mean, bn.avg_mean)


def _in_test_mode(link, *args):
    """Call ``link`` with config.train off, the path that uses the running statistics."""
    with using_config("train", False):
        return link(*args)


_BN = BatchNormalization(3)

test_bad_input = bad_input_test(
    [
        (BatchNormalization, (), {}, ValueError, "BatchNormalization: size or axis is required"),
        (
            BatchNormalization,
            (3,),
            {"dtype": numpy.int32},
            ValueError,
            "dtype must be a floating dtype, got int32",
        ),
        (
            (numpy.zeros((2, 4), numpy.float32),),
            InvalidType,
            ("BatchNormalization", "x.shape[1] == gamma.shape"),
        ),
        (
            _in_test_mode,
            (_BN, numpy.zeros((2, 4), numpy.float32)),
            {},
            InvalidType,
            ("FixedBatchNormalization", "Actual: 4 != 3"),
        ),
        ((numpy.zeros((2, 3), numpy.int32),), InvalidType, "x.dtype.kind == 'f'"),
        (
            (numpy.zeros((2, 3), numpy.float32),),
            {"test": True},
            ValueError,
            "test argument is not supported",
        ),
        (
            (numpy.zeros((2, 3), numpy.float32),),
            {"decay": 0.5},
            TypeError,
            "unexpected keyword arguments ['decay']",
        ),
    ],
    function=_BN,
)
