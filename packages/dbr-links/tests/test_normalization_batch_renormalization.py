import numpy
import pytest

from dbr.core import InvalidType, initializers, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import (
    check_copy_modes,
    check_round_trip,
    param_names,
    persistent_names,
)
from dbr.links.normalization.batch_renormalization import BatchRenormalization


def _expand(a, ndim):
    a = numpy.asarray(a, numpy.float64)
    return a.reshape(a.shape + (1,) * (ndim - 1 - a.ndim))


def _reference(x, gamma, beta, rmax, dmax, avg_mean, avg_var, eps=2e-5):
    """NumPy batch renormalization over axis 0 and the axes after the channels."""
    x64 = x.astype(numpy.float64)
    axis = (0,) + tuple(range(1 + numpy.ndim(gamma), x.ndim))
    mean = x64.mean(axis=axis, keepdims=True)
    std = numpy.sqrt(x64.var(axis=axis, keepdims=True) + eps)
    running_std = numpy.sqrt(_expand(avg_var, x.ndim) + eps)
    r = numpy.clip(std / running_std, 1 / rmax, rmax)
    d = numpy.clip((mean - _expand(avg_mean, x.ndim)) / running_std, -dmax, dmax)
    return _expand(gamma, x.ndim) * ((x64 - mean) / std * r + d) + _expand(beta, x.ndim)


def _unbiased_stats(x):
    x64 = x.astype(numpy.float64)
    axis = (0,) + tuple(range(2, x.ndim))
    m = x64.size // x.shape[1]
    return x64.mean(axis=axis), x64.var(axis=axis) * m / (m - 1)


def test_positional_and_keyword_forms():
    brn = BatchRenormalization(3, 2.0, 0.5, 0.8, 1e-3, numpy.float64, True, False, 2.0, None, True)
    assert (brn.rmax, brn.dmax, brn.decay, brn.eps) == (2.0, 0.5, 0.8, 1e-3)
    assert brn.freeze_running_statistics is True
    assert brn.gamma.dtype == numpy.float64 and brn.beta is None
    numpy.testing.assert_array_equal(brn.gamma.array, numpy.full(3, 2.0))
    brn = BatchRenormalization(size=(2,), rmax=3, dmax=1, use_gamma=False)
    assert (brn.rmax, brn.dmax, brn.freeze_running_statistics) == (3, 1, False)
    assert brn.gamma is None and brn.beta.shape == (2,)
    assert brn.avg_mean.dtype == numpy.float32 and brn.N == 0
    numpy.testing.assert_array_equal(brn.avg_var, numpy.ones(2, numpy.float32))


def test_names():
    brn = BatchRenormalization(3)
    assert param_names(brn) == ["/beta", "/gamma"]
    assert persistent_names(brn) == ["/N", "/avg_mean", "/avg_var"]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_training_values_and_running_statistics(dtype):
    decay = 0.6
    brn = BatchRenormalization(
        3, rmax=1.5, dmax=0.3, decay=decay, dtype=dtype, initial_gamma=initializers.Normal(1.0)
    )
    brn.avg_mean[...] = [0.5, -0.5, 0.0]
    brn.avg_var[...] = [4.0, 0.25, 1.0]
    mean, var = brn.avg_mean.astype(numpy.float64), brn.avg_var.astype(numpy.float64)
    tol = {"atol": 2e-2, "rtol": 2e-2} if dtype == numpy.float16 else tolerances(dtype)
    for _ in range(3):
        x = numpy.random.randn(6, 3, 2).astype(dtype)
        expected = _reference(x, brn.gamma.array, brn.beta.array, 1.5, 0.3, mean, var)
        y = brn(x)
        assert y.dtype == dtype
        assert_allclose(y.array, expected, **tol)
        batch_mean, batch_var = _unbiased_stats(x)
        mean = decay * mean + (1 - decay) * batch_mean
        var = decay * var + (1 - decay) * batch_var
        assert_allclose(brn.avg_mean, mean, **tol)
        assert_allclose(brn.avg_var, var, **tol)


def test_finetune_and_freeze():
    brn = BatchRenormalization(2, dtype=numpy.float64)
    batches = [numpy.random.randn(5, 2) + i for i in range(3)]
    for x in batches:
        brn(x, finetune=True)
    assert brn.N == 3
    stats = [_unbiased_stats(x) for x in batches]
    assert_allclose(brn.avg_mean, numpy.mean([m for m, _ in stats], 0), atol=1e-12, rtol=1e-12)
    assert_allclose(brn.avg_var, numpy.mean([v for _, v in stats], 0), atol=1e-12, rtol=1e-12)
    brn.start_finetuning()
    assert brn.N == 0

    frozen = BatchRenormalization(2, freeze_running_statistics=True)
    frozen(numpy.random.randn(5, 2).astype(numpy.float32))
    frozen(numpy.random.randn(5, 2).astype(numpy.float32), True)
    numpy.testing.assert_array_equal(frozen.avg_mean, numpy.zeros(2, numpy.float32))
    numpy.testing.assert_array_equal(frozen.avg_var, numpy.ones(2, numpy.float32))
    assert frozen.N == 1


def test_test_mode_uses_running_statistics():
    brn = BatchRenormalization(3, rmax=2.0, dmax=1.0, initial_beta=initializers.Normal(1.0))
    brn(numpy.random.randn(5, 3).astype(numpy.float32))
    mean, var = brn.avg_mean.copy(), brn.avg_var.copy()
    x = numpy.random.randn(4, 3).astype(numpy.float32)
    with using_config("train", False):
        y = brn(x)
    numpy.testing.assert_array_equal(brn.avg_mean, mean)
    expected = (x - mean) / numpy.sqrt(var + 2e-5) * brn.gamma.array + brn.beta.array
    assert_allclose(y.array, expected, **tolerances("float32"))


def test_recomputing_leaves_statistics_alone():
    brn = BatchRenormalization(3)
    with using_config("in_recomputing", True):
        brn(numpy.random.randn(4, 3).astype(numpy.float32), finetune=True)
    numpy.testing.assert_array_equal(brn.avg_mean, numpy.zeros(3, numpy.float32))
    assert brn.N == 0


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_gradients(dtype):
    # Running statistics far from the batch's clip r and d, which are then
    # constant near x, as the analytic gradient assumes.
    brn = BatchRenormalization(
        3,
        rmax=2.0,
        dmax=1.0,
        dtype=dtype,
        initial_gamma=initializers.Uniform(1.0),
        initial_beta=initializers.Normal(),
        freeze_running_statistics=True,
    )
    brn.avg_mean[...] = 1000
    brn.avg_var[...] = 1e4
    x = numpy.random.randn(5, 3, 2).astype(dtype)
    gy = numpy.random.randn(5, 3, 2).astype(dtype)
    check_backward(
        brn,
        x,
        gy,
        params=(brn.gamma, brn.beta),
        dtype=numpy.float64,
        **tolerances(dtype, "backward"),
    )


def test_round_trip_and_copy():
    brn = BatchRenormalization(3, initial_gamma=initializers.Normal(1.0))
    brn(numpy.random.randn(4, 3).astype(numpy.float32), finetune=True)
    fresh = check_round_trip(brn, BatchRenormalization(3))
    assert fresh.N == 1
    check_copy_modes(brn)


def _in_test_mode(link, *args):
    """Call ``link`` with config.train off, the path that uses the running statistics."""
    with using_config("train", False):
        return link(*args)


_BRN = BatchRenormalization(3)

test_bad_input = bad_input_test(
    [
        (
            BatchRenormalization,
            (None,),
            {},
            ValueError,
            "BatchRenormalization: size must be given, got None",
        ),
        (
            (numpy.zeros((2, 4), numpy.float32),),
            InvalidType,
            ("BatchRenormalization", "Actual: 4 != 3"),
        ),
        (
            _in_test_mode,
            (_BRN, numpy.zeros((2, 4), numpy.float32)),
            {},
            InvalidType,
            ("FixedBatchNormalization", "Actual: 4 != 3"),
        ),
    ],
    function=_BRN,
)


@pytest.mark.parametrize("finetune", [False, True])
def test_under_forget_outputs_gradients_and_statistics_are_those_without(finetune):
    import dbr.functions as F
    from dbr.core import Variable

    links = [BatchRenormalization(3, rmax=2.0, dmax=1.0) for _ in range(2)]
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    gy = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    grads = []
    for link, forgetful in zip(links, (False, True)):
        xv = Variable(x)
        y = (
            F.forget(lambda h, link=link: link(h, finetune=finetune), xv)
            if forgetful
            else link(xv, finetune=finetune)
        )
        y.grad = gy
        y.backward()
        grads.append(xv.grad)
    numpy.testing.assert_allclose(grads[1], grads[0], rtol=1e-5, atol=1e-6)
    numpy.testing.assert_array_equal(links[1].avg_mean, links[0].avg_mean)
    numpy.testing.assert_array_equal(links[1].avg_var, links[0].avg_var)
    assert links[1].N == links[0].N
