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
from dbr.functions.math.ndtr import log_ndtr, ndtr, ndtri  # noqa: E402

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))
SQRT2 = math.sqrt(2.0)


def ndtr_ref(x):
    return 0.5 * math.erfc(-x / SQRT2)


def ndtri_ref(p):
    low, high = -10.0, 10.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if ndtr_ref(mid) < p:
            low = mid
        else:
            high = mid
    return 0.5 * (low + high)


def pdf(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def lower_tail_series(x, terms=8):
    """``ndtr(x) ~ pdf(x) / (-x) * S(x)`` for very negative ``x``; returns ``S(x)``.

    ``S(x) = sum_n (-1)^n (2n - 1)!! / x^(2n)`` (asymptotic).
    """
    total, term = 0.0, 1.0
    for n in range(terms):
        total += term
        term *= -(2 * n + 1) / (x * x)
    return total


def mills_ratio_in_lower_tail(x):
    """``pdf(x) / ndtr(x)`` for very negative ``x``."""
    return -x / lower_tail_series(x)


def log_ndtr_ref(x):
    if x > 0:
        return math.log1p(-0.5 * math.erfc(x / SQRT2))
    if x < -20:
        return (
            -0.5 * x * x
            - 0.5 * math.log(2 * math.pi)
            - math.log(-x)
            + math.log(lower_tail_series(x))
        )
    return math.log(0.5 * math.erfc(-x / SQRT2))


FUNCTIONS = {
    "ndtr": (ndtr, ndtr_ref, (-3.0, 3.0)),
    "log_ndtr": (log_ndtr, log_ndtr_ref, (-5.0, 3.0)),
    "ndtri": (ndtri, ndtri_ref, (0.15, 0.85)),
}


@testing.parameterize(
    *testing.product({"function": list(FUNCTIONS), "shape": [(3, 2), ()], "dtype": FLOATS})
)
class TestNormalDistributionFunction(families.UnaryTableCase):
    table = FUNCTIONS
    scalar_reference = True


def test_log_ndtr_deep_in_both_tails():
    x = numpy.array([-40.0, -10.0, 10.0, 40.0])
    expected = [log_ndtr_ref(-40.0), log_ndtr_ref(-10.0), -0.5 * math.erfc(10.0 / SQRT2), 0.0]
    testing.assert_allclose(log_ndtr(x), numpy.array(expected), atol=1e-300, rtol=1e-12)


def test_log_ndtr_gradient_does_not_underflow_or_overflow():
    x = Variable(numpy.array([-1e4, -40.0, 10.0, 40.0]))
    (gx,) = grad([log_ndtr(x)], [x])
    expected = [
        mills_ratio_in_lower_tail(-1e4),
        mills_ratio_in_lower_tail(-40.0),
        pdf(10.0) / ndtr_ref(10.0),
        0.0,
    ]
    testing.assert_allclose(gx, numpy.array(expected), atol=1e-300, rtol=1e-12)
    assert numpy.isfinite(gx.array).all()


def test_log_ndtr_second_derivative_in_the_lower_tail():
    # (pdf / ndtr)' = -r (x + r) with r = pdf / ndtr
    x = Variable(numpy.array([-30.0, -2.0, 0.5]))
    (g1,) = grad([log_ndtr(x)], [x], enable_double_backprop=True)
    (g2,) = grad([g1], [x])
    r = numpy.array(
        [mills_ratio_in_lower_tail(-30.0), pdf(-2.0) / ndtr_ref(-2.0), pdf(0.5) / ndtr_ref(0.5)]
    )
    testing.assert_allclose(g2, -r * (x.array + r), atol=1e-12, rtol=1e-9)


def test_ndtri_ends_and_out_of_domain():
    y = ndtri(numpy.array([0.0, 1.0, 0.5, -0.1, 1.1]))
    testing.assert_allclose(
        y, numpy.array([-math.inf, math.inf, 0.0, math.nan, math.nan]), atol=0, rtol=0
    )


@pytest.mark.parametrize("dtype", FLOATS)
def test_ndtri_inverts_ndtr(dtype):
    p = numpy.linspace(0.02, 0.98, 9).astype(dtype)
    testing.assert_allclose(ndtr(ndtri(p)), p, **testing.tolerances(dtype))


def test_ndtr_gradient_is_the_normal_density():
    x = Variable(numpy.array([-2.0, 0.0, 1.5]))
    (gx,) = grad([ndtr(x)], [x])
    testing.assert_allclose(gx, [pdf(v) for v in x.array], atol=0, rtol=1e-12)


@pytest.mark.parametrize(
    "function, label", [(ndtr, "Ndtr"), (log_ndtr, "LogNdtr"), (ndtri, "Ndtri")]
)
def test_integer_input_is_rejected(function, label):
    with pytest.raises(InvalidType) as e:
        function(numpy.array([0, 1], numpy.int32))
    assert label in str(e.value)
    assert "x.dtype.kind" in str(e.value)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_without_scipy_the_error_says_how_to_install_it(monkeypatch, name):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match=rf"^{name} needs SciPy.*{re.escape(INSTALL_HINT)}"):
        FUNCTIONS[name][0](numpy.array([0.5], numpy.float32))


def test_log_ndtr_backward_without_scipy_names_log_ndtr(monkeypatch):
    x = Variable(numpy.array([0.5], numpy.float32))
    y = log_ndtr(x)
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "scipy.special", None)
    with pytest.raises(ImportError, match="^log_ndtr needs SciPy"):
        grad([y], [x])
