import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.activation.selu import selu

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SELU_ALPHA = 1.6732632423543772
SELU_SCALE = 1.0507009873554805


def away_from_zero(shape, dtype, low=0.1, high=2.0):
    """Values with magnitude in [low, high) and a random sign (clear of the kink at 0)."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


def reference(x, alpha, scale):
    x64 = x.astype(numpy.float64)
    y = numpy.where(x64 > 0, x64, alpha * numpy.expm1(numpy.minimum(x64, 0)))
    return numpy.asarray(scale * y).astype(x.dtype)


@testing.parameterize(
    *testing.product({"shape": [(3, 2), ()], "params": [None, (2.0, 0.5)], "dtype": FLOATS})
)
class TestSELU(FunctionTestCase):
    def generate_inputs(self):
        return (away_from_zero(self.shape, self.dtype),)

    def forward(self, inputs, device):
        if self.params is None:
            return (selu(inputs[0]),)
        alpha, scale = self.params
        return (selu(inputs[0], alpha=alpha, scale=scale),)

    def forward_expected(self, inputs):
        alpha, scale = (SELU_ALPHA, SELU_SCALE) if self.params is None else self.params
        return (reference(inputs[0], alpha, scale),)

    function = staticmethod(selu)

    def bad_inputs(self):
        x = numpy.zeros(3, numpy.float32)
        return [
            ((x.astype(numpy.int32),), InvalidType, "x.dtype.kind == 'f'"),
            ((x,), {"alpha": None}, TypeError, "selu: expected alpha to be a real number"),
            ((x,), {"scale": [1.0]}, TypeError, "selu: expected scale to be a real number"),
        ]


def test_selu_fixed_point_constants():
    x = numpy.array([-1.0, 1.0])
    testing.assert_allclose(
        selu(x).array, [SELU_SCALE * SELU_ALPHA * numpy.expm1(-1.0), SELU_SCALE], rtol=1e-14
    )
