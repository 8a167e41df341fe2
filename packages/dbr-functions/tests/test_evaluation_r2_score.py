import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.evaluation.r2_score import r2_score

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def reference_r2(pred, true, multioutput):
    pred = pred.astype(numpy.float64)
    true = true.astype(numpy.float64)
    n = true.shape[0]
    out_shape = true.shape[1:]
    scores = numpy.zeros(out_shape)
    for j in numpy.ndindex(*out_shape):
        p = [pred[(i,) + j] for i in range(n)]
        y = [true[(i,) + j] for i in range(n)]
        mean = sum(y) / n if n else 0.0
        ss_tot = sum((v - mean) ** 2 for v in y)
        ss_res = sum((a - b) ** 2 for a, b in zip(p, y))
        scores[j] = 0.0 if ss_tot == 0 else 1 - ss_res / ss_tot
    return scores.mean() if multioutput == "uniform_average" else scores


@testing.parameterize(
    *testing.product(
        {
            "shape": [(10,), (8, 3), (5, 2, 3)],
            "multioutput": ["uniform_average", "raw_values"],
            "dtype": FLOATS,
        }
    )
)
class TestR2Score(FunctionTestCase):
    skip_backward_test = True
    skip_double_backward_test = True

    def generate_inputs(self):
        true = numpy.random.uniform(-1, 1, self.shape)
        pred = true + numpy.random.uniform(-0.3, 0.3, self.shape)
        return pred.astype(self.dtype), true.astype(self.dtype)

    def forward(self, inputs, device):
        return (r2_score(*inputs, multioutput=self.multioutput),)

    def forward_expected(self, inputs):
        return (numpy.asarray(reference_r2(*inputs, self.multioutput)).astype(self.dtype),)


def test_scikit_learn_example():
    true = numpy.array([3.0, -0.5, 2.0, 7.0])
    pred = numpy.array([2.5, 0.0, 2.0, 8.0])
    testing.assert_allclose(r2_score(pred, true).array, 0.9486081370449679, atol=0, rtol=1e-12)


def test_constant_target_scores_zero():
    true = numpy.array([[1.0, 0.0], [1.0, 2.0], [1.0, 4.0]], numpy.float32)
    pred = numpy.array([[0.0, 0.0], [5.0, 2.0], [1.0, 3.0]], numpy.float32)
    r2 = r2_score(pred, true, multioutput="raw_values").array
    testing.assert_allclose(r2, [0.0, 1 - 1 / 8], atol=0, rtol=1e-6)
    testing.assert_allclose(r2_score(pred, true).array, (1 - 1 / 8) / 2, atol=0, rtol=1e-6)


def test_empty_batch_scores_zero():
    empty = numpy.zeros((0, 2), numpy.float32)
    r2 = r2_score(empty, empty, multioutput="raw_values").array
    numpy.testing.assert_array_equal(r2, [0.0, 0.0])


def test_r2_score_passes_no_gradient():
    pred = Variable(numpy.array([1.0, 2.0, 4.0]))
    r2_score(pred, numpy.array([1.0, 2.0, 3.0])).backward()
    assert pred.grad is None


X = numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (numpy.zeros((3, 2), numpy.float32), numpy.zeros((2, 3), numpy.float32)),
            InvalidType,
            ("R2Score", "pred.shape == true.shape"),
        ),
        (
            (numpy.zeros(3, numpy.float32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            "true.dtype.kind == 'f'",
        ),
        (
            (numpy.zeros((), numpy.float32), numpy.zeros((), numpy.float32)),
            InvalidType,
            "pred.ndim >= 1",
        ),
        (
            (X, X),
            {"sample_weight": numpy.ones(3)},
            NotImplementedError,
            ("r2_score: ", "sample_weight"),
        ),
        (
            (X, X),
            {"multioutput": "variance_weighted"},
            ValueError,
            ("r2_score: expected multioutput ", " got 'variance_weighted'"),
        ),
    ],
    function=r2_score,
)
