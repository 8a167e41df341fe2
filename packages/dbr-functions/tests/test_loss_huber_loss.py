import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.huber_loss import huber_loss

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(x, t, delta, reduce):
    d = x.astype(numpy.float64) - t.astype(numpy.float64)
    a = numpy.abs(d)
    loss = numpy.where(a <= delta, 0.5 * d * d, delta * (a - 0.5 * delta))
    if reduce == "sum_along_second_axis":
        loss = loss.sum(axis=1)
    return numpy.asarray(loss).astype(x.dtype)


@testing.parameterize(
    *testing.product(
        {
            "shape": [(4, 3), (2, 3, 2)],
            "reduce": ["sum_along_second_axis", "no"],
            "delta": [0.5, 1.0],
            "dtype": FLOATS,
        }
    )
    + testing.product({"shape": [(5,), ()], "reduce": ["no"], "delta": [0.5], "dtype": FLOATS})
)
class TestHuberLoss(FunctionTestCase):
    def generate_inputs(self):
        # |x - t| in [0, 2], at least 0.1 away from delta, where the second derivative jumps.
        d = numpy.random.uniform(-2, 2, self.shape)
        d = numpy.where(numpy.abs(numpy.abs(d) - self.delta) < 0.1, d + 0.25, d)
        t = numpy.random.uniform(-1, 1, self.shape)
        return numpy.asarray(t + d).astype(self.dtype), numpy.asarray(t).astype(self.dtype)

    def forward(self, inputs, device):
        x, t = inputs
        return (huber_loss(x, t, self.delta, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, t = inputs
        return (_reference(x, t, self.delta, self.reduce),)


def test_default_reduce_sums_along_second_axis():
    x = numpy.array([[0.5, 3.0], [-2.0, 0.0]], numpy.float64)
    y = huber_loss(x, numpy.zeros_like(x), 1.0)
    numpy.testing.assert_allclose(y.array, [0.125 + 2.5, 1.5])


def test_gradient_is_clipped_difference():
    x = Variable(numpy.array([[0.5, 3.0, -2.0]]))
    y = huber_loss(x, numpy.zeros((1, 3)), 1.0)
    y.grad = numpy.ones(1)
    y.backward()
    numpy.testing.assert_allclose(x.grad, [[0.5, 1.0, -1.0]])


def test_empty_batch():
    x = numpy.zeros((0, 3), numpy.float32)
    assert huber_loss(x, x, 1.0).shape == (0,)
    assert huber_loss(x, x, 1.0, reduce="no").shape == (0, 3)


X = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros((3, 2), numpy.float32), 1.0),
            InvalidType,
            ("HuberLoss", "x.shape == t.shape"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros((2, 3), numpy.float64), 1.0),
            InvalidType,
            "x.dtype == t.dtype",
        ),
        (
            (numpy.zeros((2, 3), numpy.int32), numpy.zeros((2, 3), numpy.int32), 1.0),
            InvalidType,
            "x.dtype.kind == 'f'",
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.float32), 1.0),
            InvalidType,
            "x.ndim >= 2",
        ),
        (
            (X, X, 1.0),
            {"reduce": "mean"},
            ValueError,
            "huber_loss: expected reduce to be 'sum_along_second_axis' or 'no', got 'mean'",
        ),
    ]
    + [
        (
            (X, X, delta),
            ValueError,
            f"huber_loss: expected delta to be a positive number, got {delta!r}",
        )
        for delta in [0, -1.0, float("nan"), "1"]
    ],
    function=huber_loss,
)
