import numpy
import pytest

from dbr.core import DebugMode, Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.sigmoid_cross_entropy import sigmoid_cross_entropy

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _reference(x, t, normalize, reduce):
    x = x.astype(numpy.float64)
    p = 1 / (1 + numpy.exp(-x))
    loss = numpy.where(t == -1, 0.0, -(t * numpy.log(p) + (1 - t) * numpy.log(1 - p)))
    if reduce == "no":
        return loss
    count = (t != -1).sum() if normalize else (x.shape[0] if x.ndim else 1)
    return loss.sum() / max(count, 1)


@testing.parameterize(
    *testing.product(
        {
            "shape": [(4, 3), (5,), (2, 3, 2), ()],
            "dtype": FLOATS,
            "reduce": ["mean", "no"],
            "normalize": [True, False],
            "with_ignored": [False, True],
        }
    )
)
class TestSigmoidCrossEntropy(FunctionTestCase):
    def generate_inputs(self):
        x = numpy.asarray(numpy.random.uniform(-3, 3, self.shape)).astype(self.dtype)
        t = numpy.asarray(numpy.random.randint(0, 2, self.shape)).astype(numpy.int32)
        if self.with_ignored and t.size > 1:
            t.ravel()[::2] = -1
        return x, t

    def forward(self, inputs, device):
        x, t = inputs
        return (sigmoid_cross_entropy(x, t, normalize=self.normalize, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, t = inputs
        return (numpy.asarray(_reference(x, t, self.normalize, self.reduce)).astype(self.dtype),)


def test_chainer_example():
    x = numpy.array([[-2.0, 3.0, 0.5], [5.0, 2.0, -0.5]], numpy.float32)
    t = numpy.array([[0, 1, 0], [1, 1, -1]], numpy.int32)
    assert float(sigmoid_cross_entropy(x, t).array) == pytest.approx(0.25664714, rel=1e-6)
    assert float(sigmoid_cross_entropy(x, t, normalize=False).array) == pytest.approx(
        0.64161783, rel=1e-6
    )
    y = sigmoid_cross_entropy(x, t, reduce="no")
    assert y.array[1, 2] == 0.0 and not numpy.signbit(y.array[1, 2])


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_scores_are_stable(dtype):
    x = Variable(numpy.array([100.0, -100.0, 100.0, -100.0], dtype))
    t = numpy.array([1, 0, 0, 1], numpy.int32)
    y = sigmoid_cross_entropy(x, t, reduce="no")
    numpy.testing.assert_allclose(y.array.astype(numpy.float64), [0, 0, 100, 100], atol=1e-6)
    y.grad = numpy.ones(4, dtype)
    y.backward()
    numpy.testing.assert_allclose(x.grad.astype(numpy.float64), [0, 0, 1, -1], atol=1e-6)


def test_all_ignored_gives_zero():
    x = Variable(numpy.ones((2, 2), numpy.float32))
    y = sigmoid_cross_entropy(x, numpy.full((2, 2), -1, numpy.int32))
    assert float(y.array) == 0.0
    y.backward()
    numpy.testing.assert_array_equal(x.grad, numpy.zeros((2, 2)))


def test_empty_batch():
    x = numpy.zeros((0, 3), numpy.float32)
    t = numpy.zeros((0, 3), numpy.int32)
    assert float(sigmoid_cross_entropy(x, t).array) == 0.0
    assert sigmoid_cross_entropy(x, t, reduce="no").shape == (0, 3)


def test_gradient_values():
    x = Variable(numpy.array([[0.0, 1.0], [2.0, -1.0]]))
    t = numpy.array([[1, 0], [-1, 1]], numpy.int32)
    sigmoid_cross_entropy(x, t).backward()
    sig = 1 / (1 + numpy.exp(-x.array))
    expected = (sig - t) * (t != -1) / 3
    numpy.testing.assert_allclose(x.grad, expected, rtol=1e-12)


@pytest.mark.parametrize("label", [2, -2])
def test_label_out_of_range_in_debug_mode(label):
    x = numpy.zeros((2, 2), numpy.float32)
    t = numpy.array([[0, 1], [label, -1]], numpy.int32)
    with DebugMode(True), pytest.raises(ValueError):
        sigmoid_cross_entropy(x, t)


test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((2, 2), numpy.float32), numpy.array([[0, 1], [label, -1]], numpy.int32)),
            ValueError,
            "sigmoid_cross_entropy: expected every label t to be 0, 1 or -1 (ignored), "
            f"got t == {label}",
        )
        for label in [2, -2]
    ]
    + [
        (
            (numpy.zeros(2, numpy.float32), numpy.zeros(2, numpy.int32)),
            {"reduce": "sum"},
            ValueError,
            "sigmoid_cross_entropy: expected reduce to be 'mean' or 'no', got 'sum'",
        ),
        (
            (numpy.zeros(3, numpy.int32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            ("SigmoidCrossEntropy", "x.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.float32)),
            InvalidType,
            ("SigmoidCrossEntropy", "t.dtype.kind == 'i'"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(4, numpy.int32)),
            InvalidType,
            ("SigmoidCrossEntropy", "x.shape == t.shape"),
        ),
    ],
    function=sigmoid_cross_entropy,
)
