import itertools

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.crf1d import argmax_crf1d, crf1d

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def sequences(xs, ys=None):
    """Split the transposed batch back into per-sequence score lists (and labels)."""
    n_batch = xs[0].shape[0]
    for b in range(n_batch):
        steps = [i for i, x in enumerate(xs) if x.shape[0] > b]
        scores = [xs[i][b].astype(numpy.float64) for i in steps]
        labels = None if ys is None else [int(ys[i][b]) for i in steps]
        yield scores, labels


def path_score(cost, scores, labels):
    total = sum(float(s[label]) for s, label in zip(scores, labels))
    total += sum(float(cost[a, b]) for a, b in zip(labels, labels[1:]))
    return total


def brute_force(cost, scores):
    """Every label sequence with its score."""
    n_label = cost.shape[0]
    for labels in itertools.product(range(n_label), repeat=len(scores)):
        yield labels, path_score(cost, scores, labels)


def reference_crf1d(cost, xs, ys, reduce):
    cost = cost.astype(numpy.float64)
    losses = []
    for scores, labels in sequences(xs, ys):
        all_scores = numpy.array([s for _, s in brute_force(cost, scores)])
        m = all_scores.max()
        log_z = m + numpy.log(numpy.exp(all_scores - m).sum())
        losses.append(log_z - path_score(cost, scores, labels))
    losses = numpy.array(losses)
    return losses.sum() / len(losses) if reduce == "mean" else losses


BATCH_SIZES = [[3, 3, 3], [3, 2, 2, 1], [2], [4, 1], [1, 1, 1, 1]]


@testing.parameterize(
    *testing.product(
        {
            "batch_sizes": BATCH_SIZES,
            "n_label": [3],
            "reduce": ["mean", "no"],
            "dtype": FLOATS,
        }
    )
)
class TestCrf1d(FunctionTestCase):
    def generate_inputs(self):
        k = self.n_label
        cost = numpy.random.uniform(-1, 1, (k, k)).astype(self.dtype)
        xs = tuple(
            numpy.random.uniform(-1, 1, (b, k)).astype(self.dtype) for b in self.batch_sizes
        )
        ys = tuple(numpy.random.randint(0, k, b).astype(numpy.int32) for b in self.batch_sizes)
        return (cost,) + xs + ys

    def forward(self, inputs, device):
        n = len(self.batch_sizes)
        cost, xs, ys = inputs[0], list(inputs[1 : n + 1]), list(inputs[n + 1 :])
        return (crf1d(cost, xs, ys, reduce=self.reduce),)

    def forward_expected(self, inputs):
        n = len(self.batch_sizes)
        cost, xs, ys = inputs[0], inputs[1 : n + 1], inputs[n + 1 :]
        return (numpy.asarray(reference_crf1d(cost, xs, ys, self.reduce)).astype(self.dtype),)


@testing.parameterize(*testing.product({"batch_sizes": BATCH_SIZES, "dtype": FLOATS}))
class TestArgmaxCrf1dScore(FunctionTestCase):
    def generate_inputs(self):
        cost = numpy.random.uniform(-1, 1, (3, 3)).astype(self.dtype)
        xs = tuple(
            numpy.random.uniform(-1, 1, (b, 3)).astype(self.dtype) for b in self.batch_sizes
        )
        return (cost,) + xs

    def forward(self, inputs, device):
        return (argmax_crf1d(inputs[0], list(inputs[1:]))[0],)

    def forward_expected(self, inputs):
        cost, xs = inputs[0].astype(numpy.float64), inputs[1:]
        best = [max(s for _, s in brute_force(cost, scores)) for scores, _ in sequences(xs)]
        return (numpy.array(best).astype(self.dtype),)


@pytest.mark.parametrize("batch_sizes", BATCH_SIZES)
def test_argmax_crf1d_path(batch_sizes):
    cost = numpy.random.uniform(-1, 1, (3, 3))
    xs = [numpy.random.uniform(-1, 1, (b, 3)) for b in batch_sizes]
    score, path = argmax_crf1d(cost, xs)
    assert len(path) == len(xs)
    for p, x in zip(path, xs):
        assert p.dtype == numpy.int32 and p.shape == x.shape[:1]
    for b, (scores, _) in enumerate(sequences(xs)):
        best_labels, best_score = max(brute_force(cost, scores), key=lambda pair: pair[1])
        assert [int(path[i][b]) for i in range(len(scores))] == list(best_labels)
        testing.assert_allclose(score.array[b], best_score, atol=0, rtol=1e-12)


def test_crf1d_accepts_variables_and_gives_gradients():
    cost = Variable(numpy.random.uniform(-1, 1, (2, 2)))
    xs = [Variable(numpy.random.uniform(-1, 1, (2, 2))) for _ in range(3)]
    ys = [Variable(numpy.array([0, 1], numpy.int32), requires_grad=False) for _ in range(3)]
    loss = crf1d(cost, xs, ys)
    gcost, gx0 = grad([loss], [cost, xs[0]])
    assert gcost.shape == (2, 2) and gx0.shape == (2, 2)


_CRF_COST = numpy.zeros((3, 3), numpy.float32)
_CRF_XS = [numpy.zeros((2, 3), numpy.float32)] * 2
_CRF_YS = [numpy.zeros(2, numpy.int32)] * 2

test_bad_input = bad_input_test(
    [
        (
            (_CRF_COST, _CRF_XS, _CRF_YS),
            {"reduce": "sum"},
            ValueError,
            ("crf1d: expected reduce to be one of ", " got 'sum'"),
        ),
        (
            (_CRF_COST, _CRF_XS, _CRF_YS[:1]),
            ValueError,
            "crf1d: expected len(ys) == len(xs) == 2, got 1",
        ),
        ((_CRF_COST, [], []), TypeError, "crf1d: expected xs to be a non-empty list"),
        (
            argmax_crf1d,
            (_CRF_COST, numpy.zeros((2, 2, 3), numpy.float32)),
            {},
            TypeError,
            "argmax_crf1d: expected xs to be a non-empty list",
        ),
        (
            (numpy.zeros((3, 2), numpy.float32), _CRF_XS, _CRF_YS),
            InvalidType,
            ("crf1d", "cost.shape == (K, K)"),
        ),
        (
            (_CRF_COST.astype(numpy.int32), _CRF_XS, _CRF_YS),
            InvalidType,
            ("crf1d", "cost.dtype.kind == 'f'"),
        ),
        (
            (_CRF_COST, [_CRF_XS[0], numpy.zeros((2, 3))], _CRF_YS),
            InvalidType,
            ("crf1d", "xs[1].dtype == cost.dtype"),
        ),
        (
            (_CRF_COST, [_CRF_XS[0], numpy.zeros((2, 4), numpy.float32)], _CRF_YS),
            InvalidType,
            ("crf1d", "xs[1].shape == (B, 3)"),
        ),
        (
            (_CRF_COST, [_CRF_XS[0][:1], _CRF_XS[0]], [_CRF_YS[0][:1], _CRF_YS[0]]),
            InvalidType,
            ("crf1d", "xs[1].shape[0] <= xs[0].shape[0]"),
        ),
        (
            (_CRF_COST, _CRF_XS, [_CRF_YS[0], numpy.zeros(2, numpy.float32)]),
            InvalidType,
            ("crf1d", "ys[1].dtype.kind == 'i'"),
        ),
        (
            (_CRF_COST, _CRF_XS, [_CRF_YS[0], numpy.zeros(3, numpy.int32)]),
            InvalidType,
            ("crf1d", "ys[1].shape == xs[1].shape[:1]"),
        ),
        (
            argmax_crf1d,
            (_CRF_COST, [_CRF_XS[0], numpy.zeros((2, 4), numpy.float32)]),
            {},
            InvalidType,
            ("argmax_crf1d", "xs[1].shape == (B, 3)"),
        ),
    ],
    function=crf1d,
)
