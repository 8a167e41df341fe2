import math
import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.trigonometric import arccos, arcsin, arctan, arctan2, cos, sin, tan

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


# name: (function, float64 reference, input range)
UNARY = {
    "sin": (sin, numpy.sin, (-3.0, 3.0)),
    "cos": (cos, numpy.cos, (-3.0, 3.0)),
    "tan": (tan, numpy.tan, (-1.1, 1.1)),
    "arcsin": (arcsin, numpy.arcsin, (-0.8, 0.8)),
    "arccos": (arccos, numpy.arccos, (-0.8, 0.8)),
    "arctan": (arctan, numpy.arctan, (-3.0, 3.0)),
}


@testing.parameterize(
    *testing.product(
        {"function": list(UNARY), "shape": [(3, 2), (), (2, 3, 4), (0, 3)], "dtype": FLOATS}
    )
)
class TestUnary(families.UnaryTableCase):
    table = UNARY


@pytest.mark.parametrize(
    ("function", "x", "expected"),
    [
        (sin, [0.0, math.pi / 6, -math.pi / 2], [0.0, 0.5, -1.0]),
        (cos, [0.0, math.pi / 3, math.pi], [1.0, 0.5, -1.0]),
        (tan, [0.0, math.pi / 4, -math.pi / 4], [0.0, 1.0, -1.0]),
        (arcsin, [0.0, 0.5, -1.0], [0.0, math.pi / 6, -math.pi / 2]),
        (arccos, [1.0, 0.5, -1.0], [0.0, math.pi / 3, math.pi]),
        (arctan, [0.0, 1.0, -1.0], [0.0, math.pi / 4, -math.pi / 4]),
    ],
)
def test_known_values(function, x, expected):
    y = function(numpy.array(x))
    assert isinstance(y, Variable)
    testing.assert_allclose(y, numpy.array(expected), atol=1e-12, rtol=1e-12)


@pytest.mark.parametrize(
    ("function", "derivative"),
    [
        (sin, lambda x: math.cos(x)),
        (cos, lambda x: -math.sin(x)),
        (tan, lambda x: 1 / math.cos(x) ** 2),
        (arcsin, lambda x: 1 / math.sqrt(1 - x * x)),
        (arccos, lambda x: -1 / math.sqrt(1 - x * x)),
        (arctan, lambda x: 1 / (1 + x * x)),
    ],
)
def test_first_derivative_has_the_closed_form(function, derivative):
    data = numpy.array([-0.6, 0.1, 0.7])
    x = Variable(data)
    (gx,) = grad([function(x)], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(gx, [derivative(v) for v in data], atol=0, rtol=1e-12)


def test_second_derivative_of_sin_is_minus_sin():
    data = numpy.array([-1.2, 0.3, 2.0])
    x = Variable(data)
    (gx,) = grad([sin(x)], [x], [Variable(numpy.ones(3))], enable_double_backprop=True)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(ggx, -numpy.sin(data), atol=0, rtol=1e-12)


def test_tan_retains_its_output_not_its_input():
    x = Variable(numpy.array([0.1, 0.2], numpy.float32))
    y = tan(x)
    assert y.creator._input_indexes_to_retain is None
    assert y.creator._output_indexes_to_retain == (0,)


@pytest.mark.parametrize("function", [sin, cos, tan, arcsin, arccos, arctan])
@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_and_0d_shape_are_kept(function, dtype):
    y = function(numpy.array(0.5, dtype))
    assert y.dtype == dtype
    assert y.shape == ()
    assert isinstance(y.array, numpy.ndarray)


# -- arctan2 -----------------------------------------------------------------------------


def _away_from_origin(shape, dtype):
    """Values in [0.5, 1.5) with a random sign, so that x1**2 + x2**2 stays >= 0.25."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(0.5, 1.5, shape)).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [((3, 2), (3, 2)), ((), ()), ((3, 2), (2,)), ((3, 1), (1, 4)), ((), (2,))],
            "dtype": FLOATS,
        }
    )
)
class TestArctan2(FunctionTestCase):
    def generate_inputs(self):
        shape1, shape2 = self.shapes
        return _away_from_origin(shape1, self.dtype), _away_from_origin(shape2, self.dtype)

    def forward(self, inputs, device):
        return (arctan2(*inputs),)

    def forward_expected(self, inputs):
        x1, x2 = inputs
        y = numpy.arctan2(x1.astype(numpy.float64), x2.astype(numpy.float64))
        return (numpy.asarray(y).astype(self.dtype),)


def test_arctan2_quadrants():
    x1 = numpy.array([1.0, 1.0, -1.0, -1.0, 0.0])
    x2 = numpy.array([1.0, -1.0, -1.0, 1.0, -1.0])
    expected = [math.pi / 4, 3 * math.pi / 4, -3 * math.pi / 4, -math.pi / 4, math.pi]
    testing.assert_allclose(arctan2(x1, x2), expected, atol=1e-15, rtol=1e-15)


def test_arctan2_gradients_have_the_closed_form():
    a = Variable(numpy.array([0.5, -2.0]))
    b = Variable(numpy.array([1.5, -0.5]))
    ga, gb = grad([arctan2(a, b)], [a, b], [Variable(numpy.ones(2))])
    r = a.array**2 + b.array**2
    testing.assert_allclose(ga, b.array / r, atol=0, rtol=1e-12)
    testing.assert_allclose(gb, -a.array / r, atol=0, rtol=1e-12)


def test_arctan2_gradient_of_one_input_only():
    a = Variable(numpy.array([0.5, -2.0]))
    b = numpy.array([1.5, -0.5])
    (ga,) = grad([arctan2(a, b)], [a], [Variable(numpy.ones(2))])
    testing.assert_allclose(ga, b / (a.array**2 + b**2), atol=0, rtol=1e-12)


_INTS = numpy.array([1, 2], numpy.int32)
_X23 = numpy.ones((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (sin, (_INTS,), {}, InvalidType, ("Sin", "x.dtype.kind == 'f'", "i != f")),
        (cos, (_INTS,), {}, InvalidType, ("Cos", "x.dtype.kind == 'f'", "i != f")),
        (tan, (_INTS,), {}, InvalidType, ("Tan", "x.dtype.kind == 'f'", "i != f")),
        (arcsin, (_INTS,), {}, InvalidType, ("Arcsin", "x.dtype.kind == 'f'", "i != f")),
        (arccos, (_INTS,), {}, InvalidType, ("Arccos", "x.dtype.kind == 'f'", "i != f")),
        (arctan, (_INTS,), {}, InvalidType, ("Arctan", "x.dtype.kind == 'f'", "i != f")),
        (
            arctan2,
            (_X23, numpy.ones((2, 3), numpy.float64)),
            {},
            InvalidType,
            ("Arctan2", "x2.dtype == x1.dtype"),
        ),
        (
            arctan2,
            (_X23, numpy.ones((4,), numpy.float32)),
            {},
            InvalidType,
            ("x1.shape", "x2.shape", "(2, 3)", "(4,)"),
        ),
        (
            arctan2,
            (numpy.ones(2, numpy.int64), numpy.ones(2, numpy.int64)),
            {},
            InvalidType,
            "x1.dtype.kind == 'f'",
        ),
    ]
)


def test_labels_are_the_function_names_as_in_chainer():
    from dbr.functions.math.exponential import exp
    from dbr.functions.math.sqrt import sqrt

    x = numpy.array([0.5])
    for function, label in (
        (sin, "sin"),
        (cos, "cos"),
        (tan, "tan"),
        (arcsin, "arcsin"),
        (arccos, "arccos"),
        (arctan, "arctan"),
        (exp, "exp"),
        (sqrt, "sqrt"),
    ):
        assert function(x).creator.label == label
