import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.type_check import InvalidType
from dbr.functions.math.exponential import exp, log2, log10

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

# name: (function, float64 reference, input range)
FUNCTIONS = {
    "exp": (exp, numpy.exp, (-2.0, 2.0)),
    "log2": (log2, numpy.log2, (0.5, 3.0)),
    "log10": (log10, numpy.log10, (0.5, 3.0)),
}


@testing.parameterize(
    *testing.product(
        {"function": list(FUNCTIONS), "shape": [(3, 2), (), (2, 3, 4), (0, 2)], "dtype": FLOATS}
    )
)
class TestExponential(families.UnaryTableCase):
    table = FUNCTIONS


def test_known_values():
    testing.assert_allclose(exp(numpy.array([0.0, 1.0])), [1.0, numpy.e], atol=0, rtol=1e-15)
    testing.assert_allclose(log2(numpy.array([1.0, 0.5, 1024.0])), [0.0, -1.0, 10.0], 0, 1e-15)
    testing.assert_allclose(log10(numpy.array([1.0, 0.1, 1e5])), [0.0, -1.0, 5.0], 0, 1e-15)


@pytest.mark.parametrize(
    ("function", "first", "second"),
    [
        (exp, numpy.exp, numpy.exp),
        (log2, lambda x: 1 / (x * numpy.log(2)), lambda x: -1 / (x * x * numpy.log(2))),
        (log10, lambda x: 1 / (x * numpy.log(10)), lambda x: -1 / (x * x * numpy.log(10))),
    ],
)
def test_first_and_second_derivatives_have_the_closed_form(function, first, second):
    families.check_closed_form_derivatives(function, numpy.array([0.3, 1.0, 2.5]), first, second)


def test_exp_retains_its_output_not_its_input():
    y = exp(Variable(numpy.array([0.5], numpy.float32)))
    assert y.creator._input_indexes_to_retain is None
    assert y.creator._output_indexes_to_retain == (0,)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dtype_is_kept_for_0d_input(dtype):
    for function in (exp, log2, log10):
        y = function(numpy.array(2.0, dtype))
        assert y.dtype == dtype and isinstance(y.array, numpy.ndarray)
        x = Variable(numpy.array(2.0, dtype))
        function(x).backward()
        assert x.grad.dtype == dtype


@pytest.mark.parametrize(("function", "label"), [(exp, "Exp"), (log2, "Log2"), (log10, "Log10")])
def test_integer_input_raises_invalid_type(function, label):
    with pytest.raises(InvalidType) as info:
        function(numpy.arange(1, 4))
    assert label in str(info.value)
    assert "x.dtype.kind == 'f'" in str(info.value)
