import numpy
import pytest

from dbr.core import Variable, ops, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.activation.softmax import softmax

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPE_AXIS = [((3, 4), 1), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((5,), 0)]


def reference(x, axis):
    x64 = x.astype(numpy.float64)
    e = numpy.exp(x64 - x64.max(axis=axis, keepdims=True))
    return numpy.asarray(e / e.sum(axis=axis, keepdims=True)).astype(x.dtype)


@testing.parameterize(*testing.product({"shape,axis": SHAPE_AXIS, "dtype": FLOATS}))
class TestSoftmax(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (softmax(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.axis),)


def test_default_axis_is_one():
    x = numpy.random.uniform(-1, 1, (2, 3, 4)).astype(numpy.float32)
    testing.assert_allclose(softmax(x).array, reference(x, 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_large_inputs_are_stable(dtype):
    x = numpy.array([[1000.0, 1000.0, -1000.0], [-5e4, -5e4, -5e4]]).astype(dtype)
    y = softmax(x).array
    assert y.dtype == dtype
    expected = [[0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]]
    testing.assert_allclose(y, expected, **testing.tolerances(dtype))


def test_float16_is_computed_in_float32():
    # exp(11) overflows float16 (max 65504): a float16 computation of the sum would give inf.
    x = numpy.zeros((1, 4096), numpy.float16)
    x[0, 0] = 11.0
    y = softmax(x).array
    expected = reference(x, 1)
    testing.assert_allclose(y, expected, atol=1e-5, rtol=1e-2)
    testing.assert_allclose(y.astype(numpy.float32).sum(), 1.0, atol=2e-3, rtol=0)


def test_gradient_matches_the_jacobian():
    x = numpy.array([[0.5, -1.0, 2.0]])
    gy = numpy.array([[1.0, -2.0, 0.5]])
    v = Variable(x)
    y = softmax(v)
    y.grad = gy
    y.backward()
    s = reference(x, 1)[0]
    jacobian = numpy.diag(s) - numpy.outer(s, s)
    testing.assert_allclose(v.grad[0], jacobian.T @ gy[0], atol=1e-14, rtol=1e-12)


_SOFTMAX_X = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        ((_SOFTMAX_X.astype(numpy.int32),), InvalidType, ("Softmax", "x.dtype.kind == 'f'")),
        ((_SOFTMAX_X,), {"axis": 2}, InvalidType, ("Softmax", "x.ndim > 2")),
        ((_SOFTMAX_X,), {"axis": -3}, InvalidType, "-x.ndim <= -3"),
        ((numpy.zeros((), numpy.float32),), {"axis": 0}, InvalidType, ("Softmax", "x.ndim > 0")),
        (
            (_SOFTMAX_X,),
            {"axis": (0, 1)},
            TypeError,
            "softmax: expected axis to be an int, got (0, 1)",
        ),
    ],
    function=softmax,
)


def test_empty_batch_and_empty_axis():
    x = Variable(numpy.zeros((0, 5), numpy.float32))
    y = softmax(x)
    assert y.shape == (0, 5)
    ops.sum(y).backward()
    assert x.grad.shape == (0, 5)
    with pytest.raises(InvalidType) as e:
        softmax(numpy.zeros((3, 0), numpy.float32))
    assert "x.shape[1] > 0" in str(e.value)
