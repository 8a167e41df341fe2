import math

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.negative_sampling import negative_sampling

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def fixed_sampler(samples):
    """A sampler that always draws ``samples`` (so that every evaluation sees the same ones)."""

    def sampler(shape):
        assert shape == samples.shape
        return samples.copy()

    return sampler


def reference_loss(x, t, W, samples, reduce):
    """-log sigmoid(x.w_t) - sum_n log sigmoid(-x.w_n), row by row, in float64."""
    x = x.astype(numpy.float64)
    W = W.astype(numpy.float64)
    losses = []
    for b in range(len(t)):
        if t[b] == -1:
            losses.append(0.0)
            continue
        loss = math.log1p(math.exp(-float(x[b] @ W[t[b]])))
        for n in samples[b, 1:]:
            loss += math.log1p(math.exp(float(x[b] @ W[n])))
        losses.append(loss)
    losses = numpy.array(losses)
    return losses.sum() if reduce == "sum" else losses


@testing.parameterize(
    *testing.product(
        {
            "batch,vocab,dim,sample_size": [
                (5, 7, 3, 4),
                (3, 4, 2, 1),
                (2, 5, 3, 0),
                (0, 4, 3, 2),
            ],
            "reduce": ["sum", "no"],
            "ignore": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestNegativeSampling(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.random.uniform(-1, 1, (self.batch, self.dim)).astype(self.dtype)
        t = numpy.random.randint(0, self.vocab, self.batch).astype(numpy.int32)
        if self.ignore and self.batch:
            t[0] = -1
        W = numpy.random.uniform(-1, 1, (self.vocab, self.dim)).astype(self.dtype)
        self.samples = numpy.random.randint(
            0, self.vocab, (self.batch, self.sample_size + 1)
        ).astype(numpy.int32)
        return x, t, W

    def forward(self, inputs, device):
        x, t, W = inputs
        sampler = fixed_sampler(device.send(self.samples))
        return (negative_sampling(x, t, W, sampler, self.sample_size, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, t, W = inputs
        return (numpy.asarray(reference_loss(x, t, W, self.samples, self.reduce), self.dtype),)


def test_return_samples_puts_the_labels_first():
    x = numpy.random.uniform(-1, 1, (3, 2)).astype(numpy.float32)
    W = numpy.random.uniform(-1, 1, (6, 2)).astype(numpy.float32)
    t = numpy.array([4, -1, 2], numpy.int32)
    drawn = numpy.array([[0, 1, 2], [3, 4, 5], [5, 5, 5]], numpy.int32)
    loss, samples = negative_sampling(x, t, W, fixed_sampler(drawn), 2, return_samples=True)
    numpy.testing.assert_array_equal(samples, [[4, 1, 2], [-1, 4, 5], [2, 5, 5]])
    expected = reference_loss(x, t, W, samples, "sum")
    testing.assert_allclose(loss.array, expected, atol=1e-5, rtol=1e-5)


def test_sampler_output_is_not_modified():
    drawn = numpy.zeros((2, 3), numpy.int32)
    negative_sampling(
        numpy.zeros((2, 2), numpy.float32),
        numpy.array([1, 1], numpy.int32),
        numpy.zeros((2, 2), numpy.float32),
        lambda shape: drawn,
        2,
    )
    assert not drawn.any()


def test_ignored_rows_get_no_gradient():
    x = Variable(numpy.random.uniform(-1, 1, (3, 2)))
    W = Variable(numpy.random.uniform(-1, 1, (5, 2)))
    t = numpy.array([1, -1, 3], numpy.int32)
    drawn = numpy.array([[0, 2], [4, 4], [2, 0]], numpy.int32)
    loss = negative_sampling(x, t, W, fixed_sampler(drawn), 1, reduce="no")
    assert loss.array[1] == 0
    gx, gW = grad([loss], [x, W], [Variable(numpy.ones(3))])
    numpy.testing.assert_array_equal(gx.array[1], [0.0, 0.0])
    assert not gW.array[4].any()


def test_large_scores_do_not_overflow():
    x = numpy.array([[100.0]], numpy.float32)
    W = numpy.array([[-1.0], [1.0]], numpy.float32)
    xv = Variable(x)
    loss = negative_sampling(
        xv, numpy.array([0], numpy.int32), W, fixed_sampler(numpy.array([[0, 1]])), 1
    )
    # softplus(100) + softplus(100)
    testing.assert_allclose(loss.array, 200.0, atol=0, rtol=1e-6)
    loss.backward()
    testing.assert_allclose(xv.grad, [[2.0]], atol=0, rtol=1e-6)


X = numpy.zeros((2, 3), numpy.float32)
T = numpy.zeros(2, numpy.int32)
W = numpy.zeros((4, 3), numpy.float32)
SAMPLER = fixed_sampler(numpy.zeros((2, 3), numpy.int32))

test_bad_input = bad_input_test(
    [
        (
            (X, T, numpy.zeros((4, 2), numpy.float32), SAMPLER, 2),
            InvalidType,
            ("NegativeSamplingFunction", "W.shape[1] == x.shape[1]"),
        ),
        ((X, T, W.astype(numpy.float64), SAMPLER, 2), InvalidType, "W.dtype == x.dtype"),
        (
            (X, numpy.zeros(3, numpy.int32), W, SAMPLER, 2),
            InvalidType,
            "x.shape[0] == t.shape[0]",
        ),
        ((X, T.astype(numpy.float32), W, SAMPLER, 2), InvalidType, "t.dtype.kind == 'i'"),
        ((X[0], T, W, SAMPLER, 2), InvalidType, "x.ndim == 2"),
        (
            (X, T, W, SAMPLER, 2),
            {"reduce": "mean"},
            ValueError,
            ("negative_sampling: expected reduce ", " got 'mean'"),
        ),
        ((X, T, W, None, 2), TypeError, "negative_sampling: expected sampler to be callable"),
        (
            (X, T, W, SAMPLER, 2.0),
            TypeError,
            "negative_sampling: expected sample_size to be an int",
        ),
        ((X, T, W, SAMPLER, -1), ValueError, "negative_sampling: expected sample_size >= 0"),
        (
            (X, T, W, lambda shape: numpy.zeros((2, 2), numpy.int32), 2),
            ValueError,
            "negative_sampling: expected sampler(2, 3) to return",
        ),
        (
            (X, T, W, lambda shape: numpy.zeros(shape, numpy.float32), 2),
            ValueError,
            "integer array",
        ),
    ],
    function=negative_sampling,
)
