import numpy
import pytest

from dbr.core import Variable, testing, using_config
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.evaluation.accuracy import accuracy

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_accuracy(y, t, ignore_label):
    """Count sample by sample."""
    n_classes = y.shape[1]
    y = y.reshape(y.shape[:2] + t.shape[1:])
    correct = total = 0
    for index in numpy.ndindex(*t.shape):
        label = t[index]
        if ignore_label is not None and label == ignore_label:
            continue
        scores = [y[(index[0], j) + index[1:]] for j in range(n_classes)]
        correct += int(numpy.argmax(scores) == label)
        total += 1
    return correct / total if total else 0.0


@testing.parameterize(
    *testing.product(
        {
            "shapes": [
                ((10, 3), (10,)),
                ((7, 4, 5), (7, 5)),
                ((3, 4, 2, 2), (3, 2, 2)),
                ((6, 3, 1, 1), (6,)),
                ((0, 3), (0,)),
            ],
            "ignore_label": [None, 0, -1],
            "dtype": FLOATS,
        }
    )
)
class TestAccuracy(FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        y_shape, t_shape = self.shapes
        # Distinct scores so that the argmax is unique in every dtype.
        y = numpy.random.permutation(numpy.prod(y_shape)).reshape(y_shape) / 8.0
        # Labels outside [0, C) are an error unless they are the ignore_label.
        low = -1 if self.ignore_label == -1 else 0
        t = numpy.random.randint(low, y_shape[1], t_shape).astype(numpy.int32)
        return y.astype(self.dtype), t

    def forward(self, inputs, device):
        return (accuracy(*inputs, ignore_label=self.ignore_label),)

    def forward_expected(self, inputs):
        y, t = inputs
        return (numpy.asarray(reference_accuracy(y, t, self.ignore_label), self.dtype),)

    function = staticmethod(accuracy)

    def bad_inputs(self):
        y = numpy.zeros((4, 3), numpy.float32)
        return [
            ((y, numpy.zeros(4, numpy.float32)), InvalidType, ("Accuracy", "t.dtype.kind == 'i'")),
            (
                (numpy.zeros((4, 3), numpy.int32), numpy.zeros(4, numpy.int32)),
                InvalidType,
                "y.dtype.kind == 'f'",
            ),
            ((y, numpy.zeros(5, numpy.int32)), InvalidType, "y.shape[0] == t.shape[0]"),
            (
                (numpy.zeros((4, 3, 2), numpy.float32), numpy.zeros((4, 3), numpy.int32)),
                InvalidType,
                "y.shape[2:3] == t.shape[1:]",
            ),
            (
                (numpy.zeros((4, 3, 2), numpy.float32), numpy.zeros(4, numpy.int32)),
                InvalidType,
                "y.shape[2] == 1",
            ),
            (
                (numpy.zeros(4, numpy.float32), numpy.zeros(4, numpy.int32)),
                InvalidType,
                "y.ndim >= t.ndim + 1",
            ),
            (
                (y, numpy.zeros(4, numpy.int32)),
                {"ignore_label": 0.5},
                TypeError,
                "accuracy: expected ignore_label",
            ),
        ]


def test_values_and_ignore_label():
    y = numpy.array([[0.1, 0.7, 0.2], [8.0, 1.0, 2.0], [-8.0, 1.0, 2.0], [-8.0, -1.0, -2.0]])
    assert float(accuracy(y, numpy.array([1, 0, 2, 1], numpy.int32)).array) == 1.0
    t = numpy.array([1, 0, 0, 0], numpy.int32)
    assert float(accuracy(y, t).array) == 0.5
    assert float(accuracy(y, t, ignore_label=0).array) == 1.0
    # Every label ignored: nothing is counted and the accuracy is 0.
    assert float(accuracy(y, numpy.full(4, 3, numpy.int32), ignore_label=3).array) == 0.0


def test_int64_labels_are_accepted():
    y = numpy.array([[0.0, 1.0], [1.0, 0.0]], numpy.float32)
    assert float(accuracy(y, numpy.array([1, 1], numpy.int64)).array) == 0.5


def test_accuracy_passes_no_gradient():
    y = Variable(numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32))
    acc = accuracy(y, numpy.array([0, 1, 2, 0], numpy.int32))
    assert acc.requires_grad
    acc.backward()
    assert y.grad is None


@pytest.mark.parametrize(
    ("t", "ignore_label", "message"),
    [
        (
            [1, 3],
            None,
            r"F.accuracy: t must hold labels in \[0, 3\) \(y has 3 classes\) "
            r"\(pass ignore_label for padding labels\), got 3",
        ),
        ([-1, 0], None, r"\[0, 3\) \(y has 3 classes\) \(pass ignore_label .*\), got -1"),
        ([-1, 7], -1, r"\[0, 3\) \(y has 3 classes\) or ignore_label \(-1\), got 7"),
    ],
)
def test_labels_out_of_range_are_an_error(t, ignore_label, message):
    y = numpy.array([[0.1, 0.7, 0.2], [8.0, 1.0, 2.0]], numpy.float32)
    with pytest.raises(ValueError, match=message):
        accuracy(y, numpy.array(t, numpy.int32), ignore_label=ignore_label)


@pytest.mark.gpu
def test_labels_on_a_gpu_are_checked_in_debug_mode_only():
    device = testing.get_test_device("@cupy:0")
    y = device.send(numpy.array([[0.1, 0.7, 0.2], [8.0, 1.0, 2.0]], numpy.float32))
    t = device.send(numpy.array([1, 3], numpy.int32))
    assert float(accuracy(y, t).array) == 0.5  # the label 3 counts as wrong, as in Chainer
    message = r"F.accuracy: t must hold labels in \[0, 3\)"
    with using_config("debug", True), pytest.raises(ValueError, match=message):
        accuracy(y, t)


def test_the_ignore_label_may_lie_outside_the_classes():
    y = numpy.array([[0.1, 0.7, 0.2], [8.0, 1.0, 2.0]], numpy.float32)
    t = numpy.array([1, -1], numpy.int32)
    assert accuracy(y, t, ignore_label=-1).array == 1.0
