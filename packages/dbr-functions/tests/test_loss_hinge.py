import numpy
import pytest

from dbr.core import DebugMode, Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.hinge import hinge

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(x, t, norm, reduce):
    x = x.astype(numpy.float64)
    sign = numpy.ones_like(x)
    sign[numpy.arange(len(t)), t] = -1
    loss = numpy.maximum(0, 1 + sign * x)
    if norm == "L2":
        loss = loss**2
    if reduce == "mean":
        loss = loss.sum() / len(x)
    return loss


@testing.parameterize(
    *testing.product(
        {
            "norm": ["L1", "L2"],
            "reduce": ["mean", "no"],
            "shape": [(5, 4), (1, 3)],
            "dtype": FLOATS,
        }
    )
)
class TestHinge(FunctionTestCase):
    def generate_inputs(self):
        # Margins 1 + s * x at least 0.1 away from the kink at 0.
        x = numpy.random.uniform(-2, 2, self.shape)
        x = numpy.where(numpy.abs(numpy.abs(x) - 1) < 0.1, x * 1.5, x)
        t = numpy.random.randint(0, self.shape[1], self.shape[0]).astype(numpy.int32)
        return x.astype(self.dtype), t

    def forward(self, inputs, device):
        x, t = inputs
        return (hinge(x, t, norm=self.norm, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, t = inputs
        return (numpy.asarray(_reference(x, t, self.norm, self.reduce)).astype(self.dtype),)


def test_gradient_values():
    x = Variable(numpy.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]]))
    t = numpy.array([1, 0], numpy.int32)
    hinge(x, t).backward()
    numpy.testing.assert_allclose(x.grad, [[0.0, 0.0, 0.5], [0.0, 0.5, 0.5]])
    x.cleargrad()
    hinge(x, t, norm="L2").backward()
    numpy.testing.assert_allclose(x.grad, [[0.0, 0.0, 1.5], [0.0, 3.0, 0.5]])


def test_int64_labels():
    x = numpy.array([[-2.0, 3.0, 0.5]], numpy.float32)
    assert float(hinge(x, numpy.array([1], numpy.int64)).array) == 1.5


def test_empty_batch():
    x = numpy.zeros((0, 3), numpy.float32)
    t = numpy.zeros(0, numpy.int32)
    assert hinge(x, t, reduce="no").shape == (0, 3)
    assert float(hinge(x, t).array) == 0.0


@pytest.mark.parametrize("label", [3, -1])
def test_label_out_of_range_in_debug_mode(label):
    x = numpy.zeros((2, 3), numpy.float32)
    t = numpy.array([0, label], numpy.int32)
    with DebugMode(True), pytest.raises(ValueError):
        hinge(x, t)


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.array([0, label], numpy.int32)),
            ValueError,
            f"hinge: expected every label t to satisfy 0 <= t < x.shape[1] == 3, got t == {label}",
        )
        for label in [3, -1]
    ]
    + [
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.int32)),
            {"norm": "L3"},
            ValueError,
            "hinge: expected norm to be 'L1' or 'L2', got 'L3'",
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.int32)),
            {"reduce": "sum"},
            ValueError,
            "hinge: expected reduce to be 'mean' or 'no', got 'sum'",
        ),
        (
            (numpy.zeros((2, 3), numpy.int32), numpy.zeros(2, numpy.int32)),
            InvalidType,
            ("Hinge", "x.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.float32)),
            InvalidType,
            ("Hinge", "t.dtype.kind == 'i'"),
        ),
        (
            (numpy.zeros((2, 3, 1), numpy.float32), numpy.zeros(2, numpy.int32)),
            InvalidType,
            ("Hinge", "x.ndim == 2"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros((2, 1), numpy.int32)),
            InvalidType,
            ("Hinge", "t.ndim == 1"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            ("Hinge", "x.shape[0] == t.shape[0]"),
        ),
    ],
    function=hinge,
)


def test_an_unknown_norm_is_also_chainers_not_implemented_error():
    x, t = numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.int32)
    with pytest.raises(NotImplementedError, match="hinge: expected norm to be 'L1' or 'L2'"):
        hinge(x, t, norm="L3")
