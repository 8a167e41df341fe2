import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.batch_l2_norm_squared import (
    BatchL2NormSquared,
    BatchL2NormSquaredGrad,
    batch_l2_norm_squared,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product({"shape": [(4, 3), (4, 3, 2), (1, 5), (3, 1, 1, 2), (0, 3)], "dtype": FLOATS})
)
class TestBatchL2NormSquared(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (batch_l2_norm_squared(inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64).reshape(len(inputs[0]), -1 if inputs[0].size else 3)
        return ((x * x).sum(axis=1).astype(self.dtype),)


def test_float16_is_accumulated_in_float32():
    x = numpy.full((2, 20000), 0.5, numpy.float16)
    y = batch_l2_norm_squared(x)
    assert type(y.creator) is BatchL2NormSquared
    assert y.dtype == numpy.float16
    # Summing 0.25 in float16 would stall far below 5000.
    testing.assert_allclose(y, [5000.0, 5000.0], atol=0, rtol=1e-3)


def test_gradient_node_is_recorded():
    x = Variable(numpy.ones((2, 3)))
    y = batch_l2_norm_squared(x)
    y.grad = numpy.array([1.0, 2.0])
    y.backward(enable_double_backprop=True)
    assert type(x.grad_var.creator) is BatchL2NormSquaredGrad
    testing.assert_allclose(x.grad, [[2.0] * 3, [4.0] * 3], atol=0, rtol=0)


@pytest.mark.parametrize(
    ("shape", "dtype", "expect"),
    [((3,), numpy.float32, "x.ndim >= 2"), ((2, 3), numpy.int32, "x.dtype.kind == 'f'")],
)
def test_bad_input_raises_invalid_type(shape, dtype, expect):
    with pytest.raises(InvalidType) as info:
        batch_l2_norm_squared(numpy.ones(shape, dtype))
    message = str(info.value)
    assert "BatchL2NormSquared" in message and expect in message
