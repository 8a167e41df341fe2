import itertools

import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Variable, gradient_check, initializers
from dbr.core.testing import assert_allclose, bad_input_test, tolerances
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip, param_names
from dbr.links.loss.crf1d import CRF1d

K = 3
LENGTHS = (2, 4, 3)  # deliberately not sorted


def _score(cost, x, y):
    return sum(x[i, y[i]] for i in range(len(y))) + sum(
        cost[y[i], y[i + 1]] for i in range(len(y) - 1)
    )


def _brute_force_nll(cost, x, y):
    scores = [_score(cost, x, z) for z in itertools.product(range(K), repeat=len(y))]
    return numpy.logaddexp.reduce(scores) - _score(cost, x, y)


def _brute_force_argmax(cost, x):
    best = max(itertools.product(range(K), repeat=len(x)), key=lambda z: _score(cost, x, z))
    return _score(cost, x, best), list(best)


def _data(dtype=numpy.float64):
    rng = numpy.random.default_rng(0)
    cost = rng.standard_normal((K, K)).astype(dtype)
    xs = [rng.standard_normal((n, K)).astype(dtype) for n in LENGTHS]
    ys = [rng.integers(0, K, n).astype(numpy.int32) for n in LENGTHS]
    return cost, xs, ys


def _crf(cost):
    # An array initializer gives config.dtype (as in Chainer) unless told otherwise.
    return CRF1d(K, initial_cost=initializers.Constant(cost, dtype=cost.dtype))


def _transposed(seqs):
    order = sorted(range(len(seqs)), key=lambda i: -len(seqs[i]))
    longest = len(seqs[order[0]])
    return [numpy.stack([seqs[b][i] for b in order if len(seqs[b]) > i]) for i in range(longest)]


def test_construction():
    crf = CRF1d(K)
    assert param_names(crf) == ["/cost"]
    assert crf.cost.shape == (K, K)
    assert crf.cost.dtype == numpy.float32
    assert (crf.cost.array == 0).all()
    crf = CRF1d(n_label=2, initial_cost=initializers.Constant(1.5))
    assert (crf.cost.array == 1.5).all()
    crf = CRF1d(2, numpy.arange(4, dtype=numpy.float64).reshape(2, 2))
    numpy.testing.assert_array_equal(crf.cost.array, [[0, 1], [2, 3]])
    assert crf.cost.dtype == numpy.float32


@pytest.mark.parametrize("reduce", ["mean", "no"])
def test_forward_transposed_input_against_brute_force(reduce):
    cost, xs, ys = _data()
    crf = _crf(cost)
    loss = crf(_transposed(xs), _transposed(ys), reduce=reduce)
    # Sorted by decreasing length: sequences 1, 2, 0.
    expected = numpy.array([_brute_force_nll(cost, xs[b], ys[b]) for b in (1, 2, 0)])
    assert_allclose(loss.array, expected.mean() if reduce == "mean" else expected)


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])
@pytest.mark.parametrize("reduce", ["mean", "no"])
def test_forward_per_sequence_input(dtype, reduce):
    cost, xs, ys = _data(dtype)
    crf = _crf(cost)
    loss = crf(xs, ys, reduce=reduce, transpose=True)
    assert loss.dtype == dtype
    expected = numpy.array(
        [_brute_force_nll(cost.astype(numpy.float64), x, y) for x, y in zip(xs, ys)]
    )
    # 'no' losses come back in the order of the given sequences.
    assert_allclose(
        loss.array, expected.mean() if reduce == "mean" else expected, **tolerances(dtype)
    )


def test_forward_matches_function():
    cost, xs, ys = _data(numpy.float32)
    crf = _crf(cost)
    txs, tys = _transposed(xs), _transposed(ys)
    assert_allclose(crf(txs, tys).array, F.crf1d(cost, txs, tys).array)


def test_argmax_against_brute_force():
    cost, xs, _ = _data()
    crf = _crf(cost)
    score, path = crf.argmax(_transposed(xs))
    order = (1, 2, 0)
    best = [_brute_force_argmax(cost, xs[b]) for b in order]
    assert_allclose(score.array, [s for s, _ in best])
    assert len(path) == 4
    assert [p.tolist() for p in path] == [
        [best[j][1][i] for j in range(3) if len(best[j][1]) > i] for i in range(4)
    ]

    score, path = crf.argmax(xs, transpose=True)
    best = [_brute_force_argmax(cost, x) for x in xs]
    assert_allclose(score.array, [s for s, _ in best])
    assert [p.tolist() for p in path] == [z for _, z in best]
    assert all(p.dtype == numpy.int32 for p in path)


def test_backward():
    cost, xs, ys = _data()
    crf = _crf(cost)
    txs, tys = _transposed(xs), _transposed(ys)

    def func(*xs):
        return crf(list(xs), tys)

    gradient_check.check_backward(
        func, tuple(txs), None, params=(crf.cost,), **tolerances(numpy.float64, "backward")
    )


def test_backward_per_sequence_input():
    cost, xs, ys = _data()
    crf = _crf(cost)

    def func(*xs):
        return crf(list(xs), ys, reduce="no", transpose=True)

    gradient_check.check_backward(
        func,
        tuple(xs),
        numpy.array([0.5, -1.0, 2.0]),
        params=(crf.cost,),
        **tolerances(numpy.float64, "backward"),
    )


def test_training_makes_labels_likelier():
    cost, xs, ys = _data()
    crf = CRF1d(K)
    crf.cost.array = crf.cost.array.astype(numpy.float64)
    first = float(crf(xs, ys, transpose=True).array)
    for _ in range(30):
        crf.cleargrads()
        crf(xs, ys, transpose=True).backward()
        crf.cost.array -= 0.5 * crf.cost.grad
    assert float(crf(xs, ys, transpose=True).array) < first


def test_round_trip_and_copy():
    crf = CRF1d(K, initial_cost=initializers.Normal())
    check_round_trip(crf, CRF1d(K))
    check_copy_modes(crf)


def test_variables_as_input():
    cost, xs, ys = _data(numpy.float32)
    crf = _crf(cost)
    vs = [Variable(x) for x in xs]
    crf(vs, ys, transpose=True).backward()
    assert all(v.grad is not None and v.grad.shape == v.shape for v in vs)


_YS = [numpy.zeros(2, numpy.int32)] * 2

test_bad_input = bad_input_test(
    [
        (
            ([numpy.zeros((2, K + 1), numpy.float32)] * 2, _YS),
            InvalidType,
            ("crf1d", "xs[0].shape == (B, 3)"),
        ),
        (
            ([numpy.zeros((2, K), numpy.float64)] * 2, _YS),
            InvalidType,
            "xs[0].dtype == cost.dtype\nActual: float64",
        ),
        (CRF1d, (0,), {}, ValueError, "CRF1d: expected n_label"),
        (CRF1d, (2.0,), {}, TypeError, "CRF1d: expected n_label"),
    ],
    function=CRF1d(K),
)
