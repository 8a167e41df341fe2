import numpy
from sampled_loss_checks import bad_forward_inputs, check_to_device_moves_sampler

import dbr.functions as F
from dbr.core import gradient_check
from dbr.core.testing import assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip, param_names
from dbr.links.loss.black_out import BlackOut

COUNTS = [3, 1, 4, 1, 5]


def _link():
    link = BlackOut(3, COUNTS, 2)
    link.W.array[...] = numpy.random.default_rng(0).uniform(-1, 1, link.W.shape)
    return link


def _reference(x, t, W, samples):
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    losses = []
    for xb, tb, sb in zip(x, t, samples):
        scores = numpy.exp(W[numpy.concatenate([[tb], sb])] @ xb)
        p = scores / scores.sum()
        losses.append(-numpy.log(p[0]) - numpy.log(1 - p[1:]).sum())
    return numpy.mean(losses)


def test_construction():
    link = BlackOut(3, COUNTS, 2)
    assert param_names(link) == ["/W"]
    assert link.W.shape == (5, 3)
    assert link.W.dtype == numpy.float32
    assert numpy.isfinite(link.W.array).all()
    link = BlackOut(in_size=2, counts=COUNTS, sample_size=4)
    assert link.W.shape == (5, 2)
    assert link.sample_size == 4


def test_sampler_uses_raw_counts():
    link = BlackOut(3, COUNTS, 2)
    numpy.random.seed(0)
    freq = numpy.bincount(link.sampler.sample(100_000), minlength=5) / 100_000
    numpy.testing.assert_allclose(freq, numpy.array(COUNTS) / sum(COUNTS), atol=6e-3)


def test_forward_draws_samples():
    link = _link()
    x = numpy.random.default_rng(1).standard_normal((4, 3)).astype(numpy.float32)
    t = numpy.array([0, 2, 1, 4], numpy.int32)
    numpy.random.seed(7)
    y = link(x, t)
    numpy.random.seed(7)
    samples = link.sampler.sample((4, 2))
    assert y.shape == ()
    assert_allclose(y.array, F.black_out(x, t, link.W.array, samples).array)
    assert_allclose(y.array, _reference(x, t, link.W.array, samples), **tolerances(numpy.float32))


def test_sample_data_overrides_sampler():
    link = _link()
    x = numpy.ones((2, 3), numpy.float32)
    t = numpy.array([0, 1], numpy.int32)
    link.sample_data = numpy.array([[3, 4], [2, 2]], numpy.int32)
    y = link(x, t)
    assert_allclose(y.array, _reference(x, t, link.W.array, link.sample_data))


def test_backward():
    link = _link()
    link.sample_data = numpy.array([[3, 4], [2, 2], [0, 1]], numpy.int32)
    x = numpy.random.default_rng(2).standard_normal((3, 3)).astype(numpy.float32)
    t = numpy.array([0, 1, 4], numpy.int32)
    gradient_check.check_backward(
        lambda x: link(x, t),
        x,
        None,
        params=(link.W,),
        dtype=numpy.float64,
        **tolerances(numpy.float32, "backward"),
    )


def test_round_trip_and_copy():
    link = _link()
    check_round_trip(link, BlackOut(3, COUNTS, 2))
    check_copy_modes(link)


def test_to_device_moves_sampler():
    check_to_device_moves_sampler(_link())


test_bad_input = bad_input_test(
    bad_forward_inputs("black_out")
    + [
        (BlackOut, (0, COUNTS, 2), {}, ValueError, "BlackOut: expected in_size >= 1, got 0"),
        (BlackOut, (3, COUNTS, 0), {}, ValueError, "BlackOut: expected sample_size >= 1, got 0"),
        (
            BlackOut,
            (3, COUNTS, 2.5),
            {},
            TypeError,
            "BlackOut: expected sample_size to be an int, got float",
        ),
        (
            BlackOut,
            (3, [0, 0], 2),
            {},
            ValueError,
            "WalkerAlias: expected probs to have a positive sum",
        ),
    ],
    function=_link(),
)
