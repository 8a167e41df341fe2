import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.evaluation.classification_summary import (
    classification_summary,
    f1_score,
    fbeta_score,
    precision,
    recall,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_summary(y, t, label_num, beta, ignore_label):
    """Count true/false positives and negatives class by class."""
    n_classes = y.shape[1]
    y = y.reshape(y.shape[:2] + t.shape[1:])
    pairs = []
    for index in numpy.ndindex(*t.shape):
        if t[index] == ignore_label:
            continue
        scores = [y[(index[0], j) + index[1:]] for j in range(n_classes)]
        pairs.append((int(numpy.argmax(scores)), int(t[index])))
    if label_num is None:
        label_num = int(t.max()) + 1
    nan = float("nan")
    p, r, f, s = [], [], [], []
    for c in range(label_num):
        tp = sum(1 for pred, true in pairs if pred == c and true == c)
        predicted = sum(1 for pred, _ in pairs if pred == c)
        support = sum(1 for _, true in pairs if true == c)
        pc = tp / predicted if predicted else nan
        rc = tp / support if support else nan
        denominator = beta * beta * pc + rc
        p.append(pc)
        r.append(rc)
        f.append((1 + beta * beta) * pc * rc / denominator if denominator else nan)
        s.append(support)
    return (
        numpy.array(p, numpy.float64),
        numpy.array(r, numpy.float64),
        numpy.array(f, numpy.float64),
        numpy.array(s, numpy.int64),
    )


@testing.parameterize(
    *testing.product(
        {
            "shapes": [((20, 3), (20,)), ((6, 4, 5), (6, 5)), ((8, 3, 1), (8,))],
            "label_num": [None, 5],
            "beta": [1.0, 2.0],
            "ignore_label": [-1, 7],
            "dtype": FLOATS,
        }
    )
)
class TestClassificationSummary(FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        y_shape, t_shape = self.shapes
        y = numpy.random.permutation(numpy.prod(y_shape)).reshape(y_shape) / 8.0
        t = numpy.random.randint(0, y_shape[1], t_shape)
        t[numpy.random.uniform(size=t_shape) < 0.2] = self.ignore_label
        return y.astype(self.dtype), t.astype(numpy.int32)

    def forward(self, inputs, device):
        return classification_summary(
            *inputs, label_num=self.label_num, beta=self.beta, ignore_label=self.ignore_label
        )

    def forward_expected(self, inputs):
        return reference_summary(*inputs, self.label_num, self.beta, self.ignore_label)


def test_values():
    y = numpy.array([[0.9, 0.1], [0.2, 0.8], [0.6, 0.4], [0.3, 0.7]], numpy.float32)
    t = numpy.array([0, 1, 1, -1], numpy.int32)
    p, r, f, s = classification_summary(y, t)
    numpy.testing.assert_allclose(p.array, [0.5, 1.0])
    numpy.testing.assert_allclose(r.array, [1.0, 0.5])
    numpy.testing.assert_allclose(f.array, [2 / 3, 2 / 3])
    numpy.testing.assert_array_equal(s.array, [1, 2])
    assert p.dtype == numpy.float64 and s.dtype == numpy.int64


def test_shortcuts_return_the_value_and_the_support():
    y = numpy.array([[0.9, 0.1, 0.0], [0.2, 0.8, 0.0], [0.6, 0.4, 0.0]], numpy.float32)
    t = numpy.array([0, 1, 1], numpy.int32)
    p, r, f, s = classification_summary(y, t, label_num=3, beta=2.0)
    for (value, support), expected in [
        (precision(y, t, label_num=3), classification_summary(y, t, label_num=3)[0]),
        (recall(y, t, label_num=3), r),
        (fbeta_score(y, t, label_num=3, beta=2.0), f),
        (f1_score(y, t, label_num=3), classification_summary(y, t, label_num=3)[2]),
    ]:
        numpy.testing.assert_array_equal(value.array, expected.array)
        numpy.testing.assert_array_equal(support.array, s.array)
    # Class 2 is never predicted nor present: its precision, recall and F are NaN.
    assert numpy.isnan(p.array[2]) and numpy.isnan(r.array[2]) and numpy.isnan(f.array[2])
    numpy.testing.assert_allclose(f.array[:2], [5 * 0.5 / (4 * 0.5 + 1), 5 * 0.5 / (4 + 0.5)])


def test_label_num_counts_beyond_max_t():
    y = numpy.array([[0.0, 1.0, 0.0, 0.0]], numpy.float32)
    p, r, f, s = classification_summary(y, numpy.array([1], numpy.int32), label_num=4)
    assert p.shape == (4,)
    numpy.testing.assert_array_equal(s.array, [0, 1, 0, 0])


def test_all_ignored_gives_empty_results():
    y = numpy.zeros((2, 3), numpy.float32)
    p, r, f, s = classification_summary(y, numpy.array([-1, -1], numpy.int32))
    assert p.shape == r.shape == f.shape == s.shape == (0,)


def test_summary_passes_no_gradient():
    y = Variable(numpy.array([[0.9, 0.1], [0.2, 0.8]], numpy.float32))
    p, r, f, s = classification_summary(y, numpy.array([0, 1], numpy.int32))
    (p[0] + r[1] + f[0]).backward()
    assert y.grad is None


Y = numpy.zeros((2, 3), numpy.float32)
T = numpy.zeros(2, numpy.int32)

test_bad_input = bad_input_test(
    [
        ((Y, T), {"label_num": 2.0}, TypeError, "classification_summary: expected label_num"),
        ((Y, T), {"label_num": -1}, ValueError, "classification_summary: expected label_num >= 0"),
        (f1_score, (Y, T), {"ignore_label": None}, TypeError, "f1_score: expected ignore_label"),
        (fbeta_score, (Y, T), {"beta": "2"}, TypeError, "fbeta_score: expected beta"),
        (
            precision,
            (Y, numpy.array([0, -2], numpy.int32)),
            {},
            ValueError,
            ("precision: expected t to hold labels >= 0 ", " got -2"),
        ),
        (
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            ("ClassificationSummary", "y.shape[0] == t.shape[0]"),
        ),
        (
            recall,
            (numpy.zeros((2, 3), numpy.float32), numpy.zeros(2, numpy.float32)),
            {},
            InvalidType,
            "t.dtype.kind == 'i'",
        ),
    ],
    function=classification_summary,
)
