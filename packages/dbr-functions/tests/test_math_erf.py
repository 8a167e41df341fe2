import math
import pathlib
import re
import runpy
import sys
import types

import numpy
import pytest

INSTALL_HINT = 'pip install "dbr-functions[special]"'
pytest.importorskip("scipy.special", reason=f"the special functions need SciPy: {INSTALL_HINT}")

from dbr.core import Variable, grad, testing  # noqa: E402
from dbr.core.type_check import InvalidType  # noqa: E402
from dbr.functions.math.erf import erf, erfc, erfcinv, erfcx, erfinv  # noqa: E402

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def invert_decreasing(f, target, low=-8.0, high=8.0):
    """The root of ``f(y) == target`` for a decreasing ``f``, by bisection in float64."""
    for _ in range(200):
        mid = 0.5 * (low + high)
        if f(mid) > target:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def erfcx_ref(x):
    return math.exp(x * x) * math.erfc(x)


def erfcx_asymptotic(x, terms=8):
    """``erfcx(x) ~ 1 / (x sqrt(pi)) * sum_n (-1)^n (2n - 1)!! / (2 x^2)^n`` for large ``x``."""
    total, term = 0.0, 1.0
    for n in range(terms):
        total += term
        term *= -(2 * n + 1) / (2 * x * x)
    return total / (x * math.sqrt(math.pi))


def erfinv_ref(p):
    if abs(p) == 1.0:
        return math.copysign(math.inf, p)
    return invert_decreasing(lambda y: -math.erf(y), -p)


def erfcinv_ref(p):
    return invert_decreasing(math.erfc, p)


# function, reference, input range (well-conditioned: away from the poles of erfinv/erfcinv)
FUNCTIONS = {
    "erf": (erf, math.erf, (-2.0, 2.0)),
    "erfc": (erfc, math.erfc, (-2.0, 2.0)),
    "erfcx": (erfcx, erfcx_ref, (-1.5, 3.0)),
    "erfinv": (erfinv, erfinv_ref, (-0.8, 0.8)),
    "erfcinv": (erfcinv, erfcinv_ref, (0.2, 1.8)),
}


@testing.parameterize(
    *testing.product({"function": list(FUNCTIONS), "shape": [(3, 2), ()], "dtype": FLOATS})
)
class TestErrorFunction(families.UnaryTableCase):
    table = FUNCTIONS
    scalar_reference = True


@pytest.mark.parametrize(
    "function, x, expected",
    [
        (erf, [-math.inf, 0.0, 6.0, math.inf], [-1.0, 0.0, 1.0, 1.0]),
        (erfc, [10.0, 26.0, -math.inf, math.inf], [math.erfc(10.0), math.erfc(26.0), 2.0, 0.0]),
        (erfcx, [30.0, 1e10], [erfcx_asymptotic(30.0), erfcx_asymptotic(1e10)]),
        (erfinv, [-1.0, 1.0, 1.5, 0.0], [-math.inf, math.inf, math.nan, 0.0]),
        (erfcinv, [0.0, 2.0, -0.5], [math.inf, -math.inf, math.nan]),
    ],
)
def test_extreme_and_out_of_domain_values(function, x, expected):
    y = function(numpy.array(x, numpy.float64))
    testing.assert_allclose(y, numpy.array(expected), atol=0, rtol=1e-12)


def test_erfcinv_of_tiny_argument_matches_its_definition():
    y = erfcinv(numpy.array([1e-100], numpy.float64)).array
    testing.assert_allclose(math.erfc(y[0]), 1e-100, atol=0, rtol=1e-10)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inverse_functions_invert(dtype):
    x = numpy.linspace(-0.9, 0.9, 11).astype(dtype)
    testing.assert_allclose(erf(erfinv(x)), x, **testing.tolerances(dtype))
    p = numpy.linspace(0.1, 1.9, 11).astype(dtype)
    testing.assert_allclose(erfc(erfcinv(p)), p, **testing.tolerances(dtype))


def test_third_derivative_of_erf():
    # erf''' = 4 / sqrt(pi) (2 x^2 - 1) exp(-x^2)
    x = Variable(numpy.array([-1.3, 0.2, 0.7]))
    (g1,) = grad([erf(x)], [x], enable_double_backprop=True)
    (g2,) = grad([g1], [x], enable_double_backprop=True)
    (g3,) = grad([g2], [x])
    xs = x.array
    expected = 4 / math.sqrt(math.pi) * (2 * xs**2 - 1) * numpy.exp(-(xs**2))
    testing.assert_allclose(g3, expected, atol=1e-12, rtol=1e-10)


def test_third_derivative_of_erfcx():
    # erfcx' = 2 x y - c, erfcx'' = 2 y + 2 x y', erfcx''' = 4 y' + 2 x y''
    x = Variable(numpy.array([-0.4, 0.5, 2.0]))
    (g1,) = grad([erfcx(x)], [x], enable_double_backprop=True)
    (g2,) = grad([g1], [x], enable_double_backprop=True)
    (g3,) = grad([g2], [x])
    xs = x.array
    y = numpy.vectorize(erfcx_ref)(xs)
    d1 = 2 * xs * y - 2 / math.sqrt(math.pi)
    d2 = 2 * y + 2 * xs * d1
    testing.assert_allclose(g3, 4 * d1 + 2 * xs * d2, atol=1e-12, rtol=1e-10)


def test_accepts_arrays_and_variables():
    x = numpy.array([0.5], numpy.float32)
    y_array = erf(x)
    y_var = erf(Variable(x))
    assert isinstance(y_array, Variable) and isinstance(y_var, Variable)
    numpy.testing.assert_array_equal(y_array.array, y_var.array)


@pytest.mark.parametrize("function", [f for f, _, _ in FUNCTIONS.values()])
def test_integer_input_is_rejected(function):
    label = {erf: "Erf", erfc: "Erfc", erfcx: "Erfcx", erfinv: "ErfInv", erfcinv: "ErfcInv"}
    with pytest.raises(InvalidType) as e:
        function(numpy.array([1, 2], numpy.int32))
    assert label[function] in str(e.value)
    assert "x.dtype.kind" in str(e.value)


@pytest.mark.parametrize("function, name", [(f, name) for name, (f, _, _) in FUNCTIONS.items()])
def test_without_scipy_the_error_says_how_to_install_it(monkeypatch, function, name):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=rf"^{name} needs SciPy.*{re.escape(INSTALL_HINT)}"):
        function(numpy.array([0.5], numpy.float32))
