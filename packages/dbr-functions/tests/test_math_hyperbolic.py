import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import testing
from dbr.core.type_check import InvalidType
from dbr.functions.math.hyperbolic import arctanh, cosh, sinh

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

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
class TestHyperbolic(families.UnaryTableCase):
    table = FUNCTIONS


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
    families.check_closed_form_derivatives(function, numpy.array([-0.7, 0.2, 0.6]), first, second)


@pytest.mark.parametrize(
    ("function", "label"), [(sinh, "Sinh"), (cosh, "Cosh"), (arctanh, "Arctanh")]
)
def test_integer_input_raises_invalid_type(function, label):
    with pytest.raises(InvalidType) as info:
        function(numpy.arange(3))
    assert label in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
