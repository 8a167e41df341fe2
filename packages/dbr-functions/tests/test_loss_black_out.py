import math

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.black_out import black_out

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_black_out(x, t, W, samples, reduce):
    """-log p(t) - sum_s log(1 - p(s)) with p the softmax over the true label and the samples."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    losses = []
    for b in range(len(t)):
        scores = [float(W[t[b]] @ x[b])] + [float(W[s] @ x[b]) for s in samples[b]]
        z = sum(math.exp(s) for s in scores)
        p = [math.exp(s) / z for s in scores]
        losses.append(-math.log(p[0]) - sum(math.log(1 - q) for q in p[1:]))
    losses = numpy.array(losses)
    return losses.mean() if reduce == "mean" else losses


@testing.parameterize(
    *testing.product(
        {
            "batch,vocab,dim,n_samples": [(4, 6, 3, 3), (2, 3, 2, 1), (3, 5, 2, 0)],
            "reduce": ["mean", "no"],
            "dtype": FLOATS,
        }
    )
)
class TestBlackOut(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, (self.batch, self.dim)).astype(self.dtype)
        t = numpy.random.randint(0, self.vocab, self.batch).astype(numpy.int32)
        W = numpy.random.uniform(-1, 1, (self.vocab, self.dim)).astype(self.dtype)
        samples = numpy.random.randint(0, self.vocab, (self.batch, self.n_samples))
        return x, t, W, samples.astype(numpy.int32)

    def forward(self, inputs, device):
        return (black_out(*inputs, reduce=self.reduce),)

    def forward_expected(self, inputs):
        return (numpy.asarray(reference_black_out(*inputs, self.reduce)).astype(self.dtype),)


def test_large_scores_stay_finite():
    x = Variable(numpy.array([[50.0, 0.0]], numpy.float32))
    W = numpy.array([[1.0, 0.0], [2.0, 0.0], [-1.0, 0.0]], numpy.float32)
    loss = black_out(x, numpy.array([1], numpy.int32), W, numpy.array([[0, 2]], numpy.int32))
    # p(t) ~ 1 - e^-50, p(0) ~ e^-50, p(2) ~ e^-150: the loss is ~ 2 e^-50.
    assert 0 <= float(loss.array) < 1e-6
    (gx,) = grad([loss], [x])
    assert numpy.isfinite(gx.array).all()


_BO_X = numpy.zeros((2, 3), numpy.float32)
_BO_T = numpy.zeros(2, numpy.int32)
_BO_W = numpy.zeros((4, 3), numpy.float32)
_BO_SAMPLES = numpy.zeros((2, 2), numpy.int32)

test_bad_input = bad_input_test(
    [
        (
            (_BO_X, _BO_T, _BO_W, _BO_SAMPLES),
            {"reduce": "sum"},
            ValueError,
            ("black_out: expected reduce to be one of ", " got 'sum'"),
        ),
        (
            (_BO_X.astype(numpy.int32), _BO_T, _BO_W, _BO_SAMPLES),
            InvalidType,
            ("black_out", "x.dtype.kind == 'f'"),
        ),
        ((_BO_X[0], _BO_T, _BO_W, _BO_SAMPLES), InvalidType, ("black_out", "x.ndim == 2")),
        (
            (_BO_X, _BO_T.astype(numpy.float32), _BO_W, _BO_SAMPLES),
            InvalidType,
            ("black_out", "t.dtype.kind == 'i'"),
        ),
        (
            (_BO_X, numpy.zeros(3, numpy.int32), _BO_W, _BO_SAMPLES),
            InvalidType,
            ("black_out", "t.shape == x.shape[:1]"),
        ),
        (
            (_BO_X, _BO_T, _BO_W.astype(numpy.float64), _BO_SAMPLES),
            InvalidType,
            ("black_out", "W.dtype == x.dtype"),
        ),
        (
            (_BO_X, _BO_T, numpy.zeros((4, 2), numpy.float32), _BO_SAMPLES),
            InvalidType,
            ("black_out", "W.shape[1] == x.shape[1]"),
        ),
        (
            (_BO_X, _BO_T, _BO_W, _BO_SAMPLES.astype(numpy.float32)),
            InvalidType,
            ("black_out", "samples.dtype.kind == 'i'"),
        ),
        (
            (_BO_X, _BO_T, _BO_W, _BO_SAMPLES[0]),
            InvalidType,
            ("black_out", "samples.ndim == 2"),
        ),
        (
            (_BO_X, _BO_T, _BO_W, numpy.zeros((3, 2), numpy.int32)),
            InvalidType,
            ("black_out", "samples.shape[0] == x.shape[0]"),
        ),
    ],
    function=black_out,
)
