import numpy
import pytest

from dbr.core import Variable, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.log_softmax import log_softmax

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPE_AXIS = [((3, 4), 1), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((5,), 0)]


def reference(x, axis):
    x64 = x.astype(numpy.float64)
    m = x64.max(axis=axis, keepdims=True)
    lse = m + numpy.log(numpy.exp(x64 - m).sum(axis=axis, keepdims=True))
    return numpy.asarray(x64 - lse).astype(x.dtype)


@testing.parameterize(*testing.product({"shape,axis": SHAPE_AXIS, "dtype": FLOATS}))
class TestLogSoftmax(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.asarray(numpy.random.uniform(-2, 2, self.shape)).astype(self.dtype),)

    def forward(self, inputs, device):
        return (log_softmax(inputs[0], axis=self.axis),)

    def forward_expected(self, inputs):
        return (reference(inputs[0], self.axis),)

    function = staticmethod(log_softmax)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.int32),),
                InvalidType,
                ("LogSoftmax", "x.dtype.kind == 'f'"),
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 2},
                InvalidType,
                ("LogSoftmax", "x.ndim > 2"),
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 1.0},
                TypeError,
                "log_softmax: expected axis to be an int, got 1.0",
            ),
        ]


def test_default_axis_is_one():
    x = numpy.random.uniform(-1, 1, (2, 3, 4)).astype(numpy.float32)
    testing.assert_allclose(log_softmax(x).array, reference(x, 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_stays_finite_where_log_of_softmax_underflows(dtype):
    x = numpy.array([[1000.0, 0.0, -1000.0], [-5e4, -5e4, -5e4]]).astype(dtype)
    y = log_softmax(x).array
    assert y.dtype == dtype
    assert numpy.isfinite(y).all()
    expected = numpy.array([[0.0, -1000.0, -2000.0], [-numpy.log(3)] * 3])
    testing.assert_allclose(y, expected, **testing.tolerances(dtype))


def test_gradient():
    x = numpy.array([[0.5, -1.0, 2.0]])
    gy = numpy.array([[1.0, -2.0, 0.5]])
    v = Variable(x)
    y = log_softmax(v)
    y.grad = gy
    y.backward()
    s = numpy.exp(reference(x, 1)[0])
    testing.assert_allclose(v.grad[0], gy[0] - s * gy[0].sum(), atol=1e-14, rtol=1e-12)


def test_empty_batch_and_empty_axis():
    x = Variable(numpy.zeros((0, 5), numpy.float32))
    y = log_softmax(x)
    assert y.shape == (0, 5)
    ops.sum(y).backward()
    assert x.grad.shape == (0, 5)
    with pytest.raises(InvalidType) as e:
        log_softmax(numpy.zeros((3, 0), numpy.float32))
    assert "x.shape[1] > 0" in str(e.value)
