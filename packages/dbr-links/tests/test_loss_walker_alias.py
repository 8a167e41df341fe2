import numpy
import pytest

from dbr.core.testing import bad_input_test
from dbr.links.loss.walker_alias import WalkerAlias

# The 99.9% quantile of the chi-square distribution with 4 degrees of freedom.
_CHI2_4DF_999 = 18.467


def test_sample_shape_and_dtype():
    sampler = WalkerAlias([1.0, 2.0, 3.0])
    s = sampler.sample((3, 4))
    assert s.shape == (3, 4)
    assert s.dtype == numpy.int32
    assert ((s >= 0) & (s < 3)).all()
    assert sampler.sample(5).shape == (5,)
    assert sampler.sample(()).shape == ()


def test_frequencies_match_probs():
    counts = numpy.array([5, 3, 4, 1, 2, 0], numpy.int32)
    sampler = WalkerAlias(counts)
    numpy.random.seed(0)
    n = 200_000
    observed = numpy.bincount(sampler.sample((n // 4, 4)).ravel(), minlength=len(counts))
    assert observed[5] == 0
    expected = n * counts[:5] / counts.sum()
    chi2 = ((observed[:5] - expected) ** 2 / expected).sum()
    assert chi2 < _CHI2_4DF_999, (observed, expected)


def test_skewed_and_single_entry():
    numpy.random.seed(1)
    sampler = WalkerAlias([1e-3, 1.0])
    freq = numpy.bincount(sampler.sample(100_000), minlength=2) / 100_000
    numpy.testing.assert_allclose(freq, [1e-3 / 1.001, 1 / 1.001], atol=5e-4)
    assert (WalkerAlias([2.0]).sample((4, 2)) == 0).all()


def test_tables():
    sampler = WalkerAlias([1, 1, 2])
    assert sampler.threshold.dtype == numpy.float64
    assert sampler.values.dtype == numpy.int32
    # Column i is kept with probability threshold[i], else its alias is taken.
    n = len(sampler.threshold)
    p = numpy.zeros(n)
    for i in range(n):
        p[i] += sampler.threshold[i] / n
        p[sampler.values[i]] += (1 - sampler.threshold[i]) / n
    numpy.testing.assert_allclose(p, [0.25, 0.25, 0.5])


def test_to_device_cpu():
    sampler = WalkerAlias([1, 2])
    assert sampler.to_device("@numpy") is sampler
    with pytest.warns(DeprecationWarning, match=r"^WalkerAlias.to_cpu is deprecated; use to_dev"):
        assert sampler.to_cpu() is sampler
    assert not sampler.use_gpu
    assert sampler.xp is numpy
    assert isinstance(sampler.sample(3), numpy.ndarray)


test_bad_input = bad_input_test(
    [
        (([],), ValueError, ("WalkerAlias: expected probs", "non-empty 1-d")),
        (
            ([[1.0, 2.0]],),
            ValueError,
            ("WalkerAlias: expected probs", "non-empty 1-d sequence, got shape (1, 2)"),
        ),
        (([1.0, -1.0],), ValueError, ("WalkerAlias: expected probs", "finite and non-negative")),
        (
            ([1.0, numpy.nan],),
            ValueError,
            ("WalkerAlias: expected probs", "finite and non-negative"),
        ),
        (([0.0, 0.0],), ValueError, ("WalkerAlias: expected probs", "positive sum, got 0.0")),
    ],
    function=WalkerAlias,
)
