import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.det import BatchDet, Det, batch_det, det

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def well_conditioned(shape, dtype):
    n = shape[-1]
    a = numpy.random.uniform(-0.5, 0.5, shape) + numpy.eye(n)
    return a.astype(dtype)


@testing.parameterize(
    *testing.product({"shape": [(1, 1), (3, 3)], "batched": [False], "dtype": FLOATS})
    + testing.product({"shape": [(2, 3, 3), (4, 1, 1)], "batched": [True], "dtype": FLOATS})
)
class TestDet(FunctionTestCase):
    def generate_inputs(self):
        return (well_conditioned(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return ((batch_det if self.batched else det)(inputs[0]),)

    def forward_expected(self, inputs):
        return (numpy.asarray(numpy.linalg.det(inputs[0].astype(numpy.float64)), self.dtype),)


def test_det_gradient_is_det_times_inverse_transpose():
    a = numpy.array([[2.0, 1.0], [1.0, 3.0]])
    x = Variable(a)
    y = det(x)
    assert type(y.creator) is Det and y.shape == ()
    (gx,) = grad([y], [x])
    testing.assert_allclose(gx, 5.0 * numpy.linalg.inv(a).T, atol=1e-14, rtol=0)


def test_batch_det_of_float16_is_computed_in_float32():
    a = numpy.stack([numpy.eye(3) * 30, numpy.eye(3) * 0.5]).astype(numpy.float16)
    y = batch_det(a)
    assert type(y.creator) is BatchDet and y.dtype == numpy.float16
    testing.assert_allclose(y, [27000.0, 0.125], atol=0, rtol=1e-3)


def test_gradient_of_a_singular_matrix_raises_value_error():
    x = Variable(numpy.ones((2, 2)))
    y = det(x)
    testing.assert_allclose(y, 0.0, atol=1e-15, rtol=0)
    with pytest.raises(ValueError, match="inv: the input has a singular matrix"):
        y.backward()


test_bad_input = bad_input_test(
    [
        (
            (numpy.ones((2, 3), numpy.float32),),
            InvalidType,
            ("Det", "a.shape[-1] == a.shape[-2]"),
        ),
        ((numpy.ones((2, 2, 2), numpy.float32),), InvalidType, ("Det", "a.ndim == 2")),
        ((numpy.ones((2, 2), numpy.int64),), InvalidType, ("Det", "a.dtype.kind == 'f'")),
        (
            batch_det,
            (numpy.ones((2, 2), numpy.float32),),
            {},
            InvalidType,
            ("BatchDet", "a.ndim == 3"),
        ),
        (
            batch_det,
            (numpy.ones((2, 3, 2), numpy.float32),),
            {},
            InvalidType,
            ("BatchDet", "a.shape[-1] == a.shape[-2]"),
        ),
    ],
    function=det,
)
