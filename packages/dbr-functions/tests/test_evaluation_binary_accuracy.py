import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.evaluation.binary_accuracy import binary_accuracy

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_binary_accuracy(y, t):
    correct = total = 0
    for score, label in zip(y.ravel().tolist(), t.ravel().tolist()):
        if label == -1:
            continue
        total += 1
        correct += int((1 if score >= 0 else 0) == label)
    return correct / total if total else 0.0


@testing.parameterize(
    *testing.product(
        {
            "shape": [(10,), (4, 3), (2, 3, 4), (), (0,)],
            "labels": [(0, 1), (-1, 0, 1), (-1,)],
            "dtype": FLOATS,
        }
    )
)
class TestBinaryAccuracy(FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        y = numpy.random.uniform(-1, 1, self.shape)
        y[numpy.random.uniform(size=self.shape) < 0.2] = 0  # a score of 0 predicts 1
        t = numpy.random.choice(self.labels, self.shape).astype(numpy.int32)
        return numpy.asarray(y).astype(self.dtype), numpy.asarray(t)

    def forward(self, inputs, device):
        return (binary_accuracy(*inputs),)

    def forward_expected(self, inputs):
        return (numpy.asarray(reference_binary_accuracy(*inputs), self.dtype),)

    function = staticmethod(binary_accuracy)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32), numpy.zeros((3, 2), numpy.int32)),
                InvalidType,
                ("BinaryAccuracy", "t.shape == y.shape"),
            ),
            (
                (numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.uint8)),
                InvalidType,
                "t.dtype.kind == 'i'",
            ),
            (
                (numpy.zeros(3, numpy.int32), numpy.zeros(3, numpy.int32)),
                InvalidType,
                "y.dtype.kind == 'f'",
            ),
        ]


def test_values():
    y = numpy.array([[-2.0, 0.0], [3.0, -5.0]], numpy.float32)
    assert float(binary_accuracy(y, numpy.array([[0, 1], [1, 0]], numpy.int32)).array) == 1.0
    assert float(binary_accuracy(y, numpy.array([[0, 0], [1, 1]], numpy.int32)).array) == 0.5
    assert float(binary_accuracy(y, numpy.array([[0, -1], [1, -1]], numpy.int32)).array) == 1.0
    assert float(binary_accuracy(y, numpy.full((2, 2), -1, numpy.int64)).array) == 0.0


def test_binary_accuracy_passes_no_gradient():
    y = Variable(numpy.array([0.5, -0.5], numpy.float32))
    acc = binary_accuracy(y, numpy.array([1, 1], numpy.int32))
    acc.backward()
    assert y.grad is None
