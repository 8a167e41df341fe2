import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.hyperbolic import arctanh, cosh, sinh

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# name: (function, float64 reference, input range)
FUNCTIONS = {
    "sinh": (sinh, numpy.sinh, (-2.0, 2.0)),
    "cosh": (cosh, numpy.cosh, (-2.0, 2.0)),
    "arctanh": (arctanh, numpy.arctanh, (-0.8, 0.8)),
}


@testing.parameterize(
    *testing.product(
        {"function": list(FUNCTIONS), "shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS}
    )
)
class TestHyperbolic(FunctionTestCase):
    def generate_inputs(self):
        low, high = FUNCTIONS[self.function][2]
        x = numpy.random.uniform(low, high, self.shape)
        return (numpy.asarray(x).astype(self.dtype),)

    def forward(self, inputs, device):
        return (FUNCTIONS[self.function][0](inputs[0]),)

    def forward_expected(self, inputs):
        x = inputs[0]
        y = FUNCTIONS[self.function][1](x.astype(numpy.float64))
        return (numpy.asarray(y).astype(x.dtype),)


def test_known_values():
    x = numpy.array([0.0, 1.0, -1.0])
    e = numpy.e
    testing.assert_allclose(sinh(x), [0.0, (e - 1 / e) / 2, -(e - 1 / e) / 2], atol=0, rtol=1e-14)
    testing.assert_allclose(cosh(x), [1.0, (e + 1 / e) / 2, (e + 1 / e) / 2], atol=0, rtol=1e-14)
    testing.assert_allclose(arctanh(numpy.array([0.0, 0.5])), [0.0, 0.5 * numpy.log(3.0)], 1e-15)


@pytest.mark.parametrize(
    ("function", "first", "second"),
    [
        (sinh, numpy.cosh, numpy.sinh),
        (cosh, numpy.sinh, numpy.cosh),
        (arctanh, lambda x: 1 / (1 - x * x), lambda x: 2 * x / (1 - x * x) ** 2),
    ],
)
def test_first_and_second_derivatives_have_the_closed_form(function, first, second):
    data = numpy.array([-0.7, 0.2, 0.6])
    x = Variable(data)
    (gx,) = grad([function(x)], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    testing.assert_allclose(gx, first(data), atol=0, rtol=1e-12)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(ggx, second(data), atol=0, rtol=1e-12)


@pytest.mark.parametrize(
    ("function", "label"), [(sinh, "Sinh"), (cosh, "Cosh"), (arctanh, "Arctanh")]
)
def test_integer_input_raises_invalid_type(function, label):
    with pytest.raises(InvalidType) as info:
        function(numpy.arange(3))
    assert label in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
