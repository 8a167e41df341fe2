import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.triplet import triplet

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(a, p, n, margin, reduce):
    a, p, n = (v.astype(numpy.float64) for v in (a, p, n))
    d = ((a - p) ** 2).sum(axis=1) - ((a - n) ** 2).sum(axis=1) + margin
    loss = numpy.maximum(d, 0)
    return loss.mean() if reduce == "mean" else loss


@testing.parameterize(
    *testing.product(
        {
            "margin": [0.2, 1.0],
            "reduce": ["mean", "no"],
            "shape": [(6, 3), (1, 4)],
            "dtype": FLOATS,
        }
    )
)
class TestTriplet(FunctionTestCase):
    def generate_inputs(self):
        while True:
            a, p, n = (numpy.random.uniform(-1, 1, self.shape) for _ in range(3))
            raw = ((a - p) ** 2).sum(axis=1) - ((a - n) ** 2).sum(axis=1) + self.margin
            if numpy.abs(raw).min() > 0.1:  # keep away from the hinge's kink
                break
        return a.astype(self.dtype), p.astype(self.dtype), n.astype(self.dtype)

    def forward(self, inputs, device):
        return (triplet(*inputs, margin=self.margin, reduce=self.reduce),)

    def forward_expected(self, inputs):
        loss = _reference(*inputs, self.margin, self.reduce)
        return (numpy.asarray(loss).astype(self.dtype),)


def test_defaults():
    a = numpy.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], numpy.float32)
    p = numpy.array([[-2.1, 2.8, 0.5], [4.9, 2.0, -0.4]], numpy.float32)
    n = numpy.array([[-2.1, 2.7, 0.7], [4.9, 2.0, -0.7]], numpy.float32)
    assert float(triplet(a, p, n).array) == pytest.approx(0.14, rel=1e-5)
    numpy.testing.assert_allclose(triplet(a, p, n, reduce="no").array, [0.11, 0.17], rtol=1e-5)


def test_gradient_values():
    a = Variable(numpy.array([[0.0, 0.0], [0.0, 0.0]]))
    p = Variable(numpy.array([[1.0, 0.0], [0.1, 0.0]]))
    n = Variable(numpy.array([[0.0, 1.0], [0.0, 2.0]]))
    triplet(a, p, n, margin=0.5).backward()
    # Only the first sample is active (1 - 1 + 0.5 > 0; 0.01 - 4 + 0.5 < 0).
    numpy.testing.assert_allclose(a.grad, [[-1.0, 1.0], [0.0, 0.0]])
    numpy.testing.assert_allclose(p.grad, [[1.0, 0.0], [0.0, 0.0]])
    numpy.testing.assert_allclose(n.grad, [[0.0, -1.0], [0.0, 0.0]])


_F = numpy.float32
_ANCHOR = numpy.zeros((2, 3), _F)

test_bad_input = bad_input_test(
    [
        (
            (_ANCHOR,) * 3,
            {"margin": 0},
            ValueError,
            "triplet: expected margin to be a positive number, got 0",
        ),
        (
            (_ANCHOR,) * 3,
            {"reduce": "sum"},
            ValueError,
            "triplet: expected reduce to be 'mean' or 'no', got 'sum'",
        ),
        (
            (numpy.zeros((2, 3), numpy.int32),) * 3,
            InvalidType,
            ("Triplet", "anchor.dtype.kind == 'f'"),
        ),
        (
            (_ANCHOR, numpy.zeros((2, 3), numpy.float64), _ANCHOR),
            InvalidType,
            ("Triplet", "anchor.dtype == positive.dtype"),
        ),
        (
            (_ANCHOR, _ANCHOR, numpy.zeros((2, 3), numpy.float16)),
            InvalidType,
            ("Triplet", "anchor.dtype == negative.dtype"),
        ),
        (
            (_ANCHOR, numpy.zeros((2, 4), _F), _ANCHOR),
            InvalidType,
            ("Triplet", "anchor.shape == positive.shape"),
        ),
        (
            (_ANCHOR, _ANCHOR, numpy.zeros((3, 3), _F)),
            InvalidType,
            ("Triplet", "anchor.shape == negative.shape"),
        ),
        ((numpy.zeros((0, 3), _F),) * 3, InvalidType, ("Triplet", "anchor.shape[0] > 0")),
        ((numpy.zeros(3, _F),) * 3, InvalidType, ("Triplet", "anchor.ndim == 2")),
    ],
    function=triplet,
)
