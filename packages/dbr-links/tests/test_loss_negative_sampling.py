import numpy
import pytest
from sampled_loss_checks import TARGETS, bad_forward_inputs, check_to_device_moves_sampler

import dbr.functions as F
from dbr.core import gradient_check, initializers
from dbr.core.testing import assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip, param_names
from dbr.links.loss.negative_sampling import NegativeSampling
from dbr.links.loss.walker_alias import WalkerAlias

COUNTS = [3, 1, 4, 1, 5]


def _link(dtype=numpy.float32):
    link = NegativeSampling(3, COUNTS, 2, dtype=dtype)
    link.W.array[...] = numpy.random.default_rng(0).uniform(-1, 1, link.W.shape)
    return link


def test_construction():
    link = NegativeSampling(3, COUNTS, 2)
    assert param_names(link) == ["/W"]
    assert link.W.shape == (5, 3)
    assert link.W.dtype == numpy.float32
    assert (link.W.array == 0).all()
    assert link.sample_size == 2
    assert isinstance(link.sampler, WalkerAlias)
    link = NegativeSampling(in_size=2, counts=COUNTS, sample_size=1, power=0.5, dtype="float64")
    assert link.W.dtype == numpy.float64


@pytest.mark.parametrize("power", [0.75, 0.5])
def test_sampler_uses_counts_to_the_power(power):
    link = NegativeSampling(3, COUNTS, 2, power=power)
    numpy.random.seed(0)
    n = 100_000
    freq = numpy.bincount(link.sampler.sample(n), minlength=5) / n
    p = numpy.array(COUNTS, numpy.float64) ** power
    numpy.testing.assert_allclose(freq, p / p.sum(), atol=6e-3)


@pytest.mark.parametrize("reduce", ["sum", "no"])
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
def test_forward_against_function(dtype, reduce):
    link = _link(dtype)
    x = numpy.random.default_rng(1).standard_normal((4, 3)).astype(dtype)
    t = numpy.array([0, 2, -1, 4], numpy.int32)
    numpy.random.seed(5)
    y, samples = link(x, t, reduce=reduce, return_samples=True)
    assert samples.shape == (4, 3)
    numpy.testing.assert_array_equal(samples[:, 0], t)

    def fixed(shape):
        return samples.copy()

    expected = F.negative_sampling(x, t, link.W.array, fixed, 2, reduce=reduce)
    assert y.dtype == dtype
    assert y.shape == (() if reduce == "sum" else (4,))
    assert_allclose(y.array, expected.array, **tolerances(dtype))
    # And against NumPy: softplus(-x.w_t) + sum over negatives of softplus(x.w_s).
    w = link.W.array.astype(numpy.float64)
    xs = x.astype(numpy.float64)
    ref = numpy.array(
        [
            0.0
            if tb == -1
            else numpy.logaddexp(0, -xs[b] @ w[tb])
            + sum(numpy.logaddexp(0, xs[b] @ w[s]) for s in samples[b, 1:])
            for b, tb in enumerate(t)
        ]
    )
    assert_allclose(y.array, ref.sum() if reduce == "sum" else ref, **tolerances(dtype))


def test_default_reduce_is_sum():
    link = _link()
    x = numpy.ones((2, 3), numpy.float32)
    t = numpy.array([1, 3], numpy.int32)
    numpy.random.seed(2)
    y = link(x, t)
    numpy.random.seed(2)
    y_no = link(x, t, reduce="no")
    assert y.shape == ()
    assert_allclose(y.array, y_no.array.sum())


def test_backward():
    link = _link(numpy.float64)
    x = numpy.random.default_rng(3).standard_normal((3, 3))
    t = numpy.array([0, 1, 4], numpy.int32)
    samples = numpy.array([[0, 2, 3], [1, 4, 4], [4, 0, 1]], numpy.int32)
    link.sampler.sample = lambda shape: samples.copy()
    gradient_check.check_backward(
        lambda x: link(x, t), x, None, params=(link.W,), **tolerances(numpy.float64, "backward")
    )


def test_round_trip_and_copy():
    link = _link()
    check_round_trip(link, NegativeSampling(3, COUNTS, 2))
    # W is zero-initialised; a random initializer lets copy("init") show a refill.
    link.W.initializer = initializers.Normal()
    check_copy_modes(link)


def test_to_device_moves_sampler():
    check_to_device_moves_sampler(_link())


test_bad_input = bad_input_test(
    bad_forward_inputs("NegativeSamplingFunction")
    + [
        (
            (numpy.ones((2, 3), numpy.float32), TARGETS),
            {"return_sample": True},
            TypeError,
            "return_sample",
        ),
        (NegativeSampling, (0, COUNTS, 2), {}, ValueError, "expected in_size >= 1, got 0"),
        (NegativeSampling, (3, COUNTS, -1), {}, ValueError, "expected sample_size >= 0, got -1"),
        (
            NegativeSampling,
            (3.0, COUNTS, 2),
            {},
            TypeError,
            "expected in_size to be an int, got float",
        ),
        (NegativeSampling, (3, [], 2), {}, ValueError, "WalkerAlias: expected probs"),
    ],
    function=_link(),
)


def test_calls_the_function_through_its_module(monkeypatch):
    from dbr.functions.loss import negative_sampling as module

    calls = []
    original = module.negative_sampling

    def fixed_samples(x, t, W, sampler, sample_size, **kwargs):
        calls.append(sample_size)
        return original(
            x, t, W, lambda shape: numpy.zeros(shape, numpy.int32), sample_size, **kwargs
        )

    monkeypatch.setattr(module, "negative_sampling", fixed_samples)
    link = _link()
    x = numpy.ones((2, 3), numpy.float32)
    _, samples = link(x, numpy.array([1, 2], numpy.int32), return_samples=True)
    assert calls == [2]
    numpy.testing.assert_array_equal(samples, [[1, 0, 0], [2, 0, 0]])
