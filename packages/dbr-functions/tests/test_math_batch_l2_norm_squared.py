import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
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


test_bad_input = bad_input_test(
    [
        (
            (numpy.ones((3,), numpy.float32),),
            InvalidType,
            ("BatchL2NormSquared", "x.ndim >= 2"),
        ),
        (
            (numpy.ones((2, 3), numpy.int32),),
            InvalidType,
            ("BatchL2NormSquared", "x.dtype.kind == 'f'"),
        ),
    ],
    function=batch_l2_norm_squared,
)
