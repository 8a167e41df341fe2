import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.type_check import InvalidType
from dbr.functions.math.sqrt import rsqrt, sqrt

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

# name: (function, float64 reference, input range)
FUNCTIONS = {
    "sqrt": (sqrt, numpy.sqrt, (0.5, 3.0)),
    "rsqrt": (rsqrt, lambda x: 1.0 / numpy.sqrt(x), (0.5, 3.0)),
}


@testing.parameterize(
    *testing.product(
        {"function": list(FUNCTIONS), "shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS}
    )
)
class TestSqrt(families.UnaryTableCase):
    table = FUNCTIONS


def test_known_values():
    x = numpy.array([0.25, 1.0, 16.0])
    numpy.testing.assert_array_equal(sqrt(x).array, [0.5, 1.0, 4.0])
    numpy.testing.assert_array_equal(rsqrt(x).array, [2.0, 1.0, 0.25])


@pytest.mark.parametrize(
    ("function", "first", "second"),
    [
        (sqrt, lambda x: 0.5 * x**-0.5, lambda x: -0.25 * x**-1.5),
        (rsqrt, lambda x: -0.5 * x**-1.5, lambda x: 0.75 * x**-2.5),
    ],
)
def test_first_and_second_derivatives_have_the_closed_form(function, first, second):
    families.check_closed_form_derivatives(function, numpy.array([0.3, 1.0, 2.5]), first, second)


@pytest.mark.parametrize("function", [sqrt, rsqrt])
def test_retains_its_output_not_its_input(function):
    y = function(Variable(numpy.array([0.5], numpy.float32)))
    assert y.creator._input_indexes_to_retain is None
    assert y.creator._output_indexes_to_retain == (0,)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("function", [sqrt, rsqrt])
def test_dtype_is_kept_for_0d_input(function, dtype):
    x = Variable(numpy.array(4.0, dtype))
    y = function(x)
    assert y.dtype == dtype and isinstance(y.array, numpy.ndarray)
    y.backward()
    assert x.grad.dtype == dtype


@pytest.mark.parametrize(("function", "label"), [(sqrt, "Sqrt"), (rsqrt, "Rsqrt")])
def test_integer_input_raises_invalid_type(function, label):
    with pytest.raises(InvalidType) as info:
        function(numpy.arange(1, 4))
    assert label in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
