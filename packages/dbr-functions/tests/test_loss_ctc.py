import itertools
import math

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.ctc import connectionist_temporal_classification

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def collapse(path, blank):
    """Merge repeated symbols, then drop blanks."""
    out = []
    previous = None
    for s in path:
        if s != previous and s != blank:
            out.append(s)
        previous = s
    return out


def brute_force_nll(xs, labels, blank, n_steps):
    """-log of the total probability of every alignment of ``labels`` to ``n_steps`` steps."""
    probs = [numpy.exp(x - x.max()) / numpy.exp(x - x.max()).sum() for x in xs[:n_steps]]
    total = 0.0
    for path in itertools.product(range(len(xs[0])), repeat=n_steps):
        if collapse(path, blank) == list(labels):
            total += math.prod(float(p[s]) for p, s in zip(probs, path))
    return -math.log(total) if total > 0 else math.inf


def reference_ctc(xs, t, blank, input_length, label_length, reduce):
    xs = [x.astype(numpy.float64) for x in xs]
    losses = numpy.array(
        [
            brute_force_nll(
                [x[b] for x in xs], t[b, : label_length[b]], blank, int(input_length[b])
            )
            for b in range(t.shape[0])
        ]
    )
    return losses.mean() if reduce == "mean" else losses


@testing.parameterize(
    *testing.product(
        {
            "case": [
                # (T, B, V, labels, blank, input_length, label_length)
                (4, 2, 3, [[1, 2], [2, 2]], 0, None, None),
                (4, 3, 3, [[1, 1], [2, 0], [1, 2]], 0, [4, 3, 2], [2, 1, 1]),
                (3, 2, 4, [[0, 1, 0], [2, 2, 2]], 3, [3, 3], [3, 0]),
                (1, 2, 2, [[1], [0]], 0, None, [1, 0]),
                (5, 1, 3, [[2, 0]], 1, [4], None),
            ],
            "reduce": ["mean", "no"],
            "dtype": FLOATS,
        }
    )
)
class TestCTC(FunctionTestCase):
    def generate_inputs(self):
        n_time, n_batch, n_vocab, labels, _, input_length, label_length = self.case
        xs = tuple(
            numpy.random.uniform(-2, 2, (n_batch, n_vocab)).astype(self.dtype)
            for _ in range(n_time)
        )
        t = numpy.array(labels, numpy.int32)
        extra = []
        if input_length is not None:
            extra.append(numpy.array(input_length, numpy.int32))
        if label_length is not None:
            extra.append(numpy.array(label_length, numpy.int32))
        return xs + (t,) + tuple(extra)

    def _split(self, inputs):
        n_time, _, _, _, blank, input_length, label_length = self.case
        xs = inputs[:n_time]
        rest = list(inputs[n_time + 1 :])
        il = rest.pop(0) if input_length is not None else None
        ll = rest.pop(0) if label_length is not None else None
        return xs, inputs[n_time], blank, il, ll

    def forward(self, inputs, device):
        xs, t, blank, il, ll = self._split(inputs)
        loss = connectionist_temporal_classification(
            list(xs), t, blank, input_length=il, label_length=ll, reduce=self.reduce
        )
        return (loss,)

    def forward_expected(self, inputs):
        xs, t, blank, il, ll = self._split(inputs)
        n_time, n_batch = len(xs), t.shape[0]
        il = numpy.full(n_batch, n_time) if il is None else il
        ll = numpy.full(n_batch, t.shape[1]) if ll is None else ll
        loss = reference_ctc(xs, t, blank, il, ll, self.reduce)
        return (numpy.asarray(loss).astype(self.dtype),)


def test_uniform_two_steps():
    # Over {blank, a}, uniform: the alignments of "a" in two steps are "a-", "-a", "aa".
    x = [numpy.zeros((1, 2), numpy.float32)] * 2
    loss = connectionist_temporal_classification(x, numpy.array([[1]], numpy.int32), 0)
    testing.assert_allclose(loss.array, -math.log(0.75), atol=0, rtol=1e-6)


def test_steps_past_input_length_get_no_gradient():
    xs = [Variable(numpy.random.uniform(-1, 1, (2, 3))) for _ in range(4)]
    loss = connectionist_temporal_classification(
        xs,
        numpy.array([[1, 2], [1, 2]], numpy.int32),
        0,
        input_length=numpy.array([4, 2], numpy.int32),
    )
    loss.backward()
    for x in xs[2:]:
        numpy.testing.assert_array_equal(x.grad[1], 0)
    assert all(numpy.abs(x.grad[0]).sum() > 0 for x in xs)


def test_gradient_rows_sum_to_zero():
    # softmax(x) and the posterior of the symbols are both distributions.
    xs = [Variable(numpy.random.uniform(-1, 1, (3, 4))) for _ in range(5)]
    t = numpy.array([[1, 2, 3], [3, 3, 0], [2, 0, 0]], numpy.int32)
    loss = connectionist_temporal_classification(
        xs, t, 0, label_length=numpy.array([3, 2, 1], numpy.int32), reduce="no"
    )
    gxs = grad([loss], xs, [Variable(numpy.ones(3))])
    for gx in gxs:
        testing.assert_allclose(gx.array.sum(axis=1), numpy.zeros(3), atol=1e-12, rtol=0)


def test_infeasible_sample_has_infinite_loss_and_no_gradient():
    # "aa" needs at least three steps (a, blank, a).
    xs = [Variable(numpy.random.uniform(-1, 1, (2, 2))) for _ in range(2)]
    t = numpy.array([[1, 1], [1, 0]], numpy.int32)
    loss = connectionist_temporal_classification(
        xs, t, 0, label_length=numpy.array([2, 1], numpy.int32), reduce="no"
    )
    assert loss.array[0] == numpy.inf and numpy.isfinite(loss.array[1])
    gxs = grad([loss], xs, [Variable(numpy.ones(2))])
    for gx in gxs:
        numpy.testing.assert_array_equal(gx.array[0], 0)
        assert numpy.isfinite(gx.array).all()


def test_empty_input_and_labels():
    xs = [numpy.zeros((2, 3), numpy.float32)]
    loss = connectionist_temporal_classification(
        xs,
        numpy.zeros((2, 1), numpy.int32),
        0,
        input_length=numpy.array([0, 0], numpy.int32),
        label_length=numpy.array([0, 1], numpy.int32),
        reduce="no",
    )
    numpy.testing.assert_array_equal(loss.array, [0.0, numpy.inf])


_CTC_X = [numpy.zeros((2, 3), numpy.float32)] * 2
_CTC_T = numpy.zeros((2, 1), numpy.int32)


def _third_order_grad():
    """Differentiate a CTC loss three times; the third time is refused."""
    xs = [Variable(numpy.random.uniform(-1, 1, (1, 2))) for _ in range(2)]
    loss = connectionist_temporal_classification(xs, numpy.array([[1]], numpy.int32), 0)
    gxs = grad([loss], xs, enable_double_backprop=True)
    total = gxs[0] * gxs[0]
    g2 = grad([total], [xs[0]], enable_double_backprop=True)[0]
    return grad([g2 * g2], [xs[0]])


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 2, 3), numpy.float32), _CTC_T, 0),
            TypeError,
            "expected x to be a non-empty list",
        ),
        (([], _CTC_T, 0), TypeError, "expected x to be a non-empty list"),
        ((_CTC_X, _CTC_T, 0.0), TypeError, "expected blank_symbol to be an int"),
        ((_CTC_X, _CTC_T, 3), ValueError, "expected blank_symbol in [0, 3), got 3"),
        ((_CTC_X, _CTC_T, 0), {"reduce": "sum"}, ValueError, "expected reduce to be one of"),
        (
            (_CTC_X, _CTC_T, 0),
            {"input_length": numpy.array([3, 1], numpy.int32)},
            ValueError,
            "input_length in [0, len(x)] = [0, 2]",
        ),
        (
            (_CTC_X, _CTC_T, 0),
            {"label_length": numpy.array([2, 1], numpy.int32)},
            ValueError,
            "label_length in [0, t.shape[1]] = [0, 1]",
        ),
        (
            (_CTC_X, numpy.array([[1], [5]], numpy.int32), 0),
            ValueError,
            "labels within label_length to be in [0, 3), got 5",
        ),
        ((_CTC_X, [[1], [1]], 0), TypeError, "expected t to be an array or a Variable, got list"),
        (_third_order_grad, (), {}, NotImplementedError, "third-order"),
        (
            (_CTC_X, numpy.zeros((3, 1), numpy.int32), 0),
            InvalidType,
            ("ConnectionistTemporalClassification", "t.shape[0] == x[0].shape[0]"),
        ),
        (
            ([_CTC_X[0], numpy.zeros((2, 4), numpy.float32)], _CTC_T, 0),
            InvalidType,
            "x[1].shape == x[0].shape",
        ),
        (
            ([_CTC_X[0], _CTC_X[1].astype(numpy.float64)], _CTC_T, 0),
            InvalidType,
            "x[1].dtype == x[0].dtype",
        ),
        ((_CTC_X, _CTC_T.astype(numpy.float32), 0), InvalidType, "t.dtype.kind == 'i'"),
        (
            (_CTC_X, _CTC_T, 0),
            {"input_length": numpy.array([2, 2, 2], numpy.int32)},
            InvalidType,
            "input_length.shape[0] == x[0].shape[0]",
        ),
        (
            ([numpy.zeros((2, 3), numpy.int32)] * 2, _CTC_T, 0),
            InvalidType,
            "x[0].dtype.kind == 'f'",
        ),
    ],
    function=connectionist_temporal_classification,
)
