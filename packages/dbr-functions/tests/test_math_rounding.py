import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, ops, testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.rounding import ceil, fix, floor

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

# name: (function, reference, input range)
FUNCTIONS = {
    "ceil": (ceil, numpy.ceil, (-4.0, 4.0)),
    "floor": (floor, numpy.floor, (-4.0, 4.0)),
    "fix": (fix, numpy.trunc, (-4.0, 4.0)),
}


@testing.parameterize(
    *testing.product({"function": list(FUNCTIONS), "shape": [(3, 4), (), (2, 0)], "dtype": FLOATS})
)
class TestRounding(families.UnaryTableCase):
    table = FUNCTIONS
    skip_backward_test = True
    skip_double_backward_test = True


@pytest.mark.parametrize(
    ("function", "expected"),
    [
        (ceil, [-2.0, -1.0, -0.0, 0.0, 1.0, 3.0]),
        (floor, [-3.0, -1.0, -1.0, 0.0, 0.0, 3.0]),
        (fix, [-2.0, -1.0, -0.0, 0.0, 0.0, 3.0]),
    ],
)
def test_known_values(function, expected):
    x = numpy.array([-2.5, -1.0, -0.5, 0.0, 0.5, 3.0], numpy.float32)
    y = function(x)
    assert y.dtype == numpy.float32
    testing.assert_allclose(y, numpy.array(expected), atol=0, rtol=0)


@pytest.mark.parametrize("function", [ceil, floor, fix])
def test_output_carries_no_gradient_and_has_no_creator(function):
    x = Variable(numpy.array([-1.5, 0.25, 2.75], numpy.float32))
    y = function(x)
    assert isinstance(y, Variable)
    assert y.creator is None
    assert not y.requires_grad
    # the graph stops at y: x gets gradients only through the other path
    loss = ops.sum(y * x)
    loss.backward()
    testing.assert_allclose(x.grad, y.array, atol=0, rtol=0)
    (gx,) = grad([ops.sum(y)], [x])
    assert gx is None


@pytest.mark.parametrize("function", [ceil, floor, fix])
@pytest.mark.parametrize("dtype", [numpy.int32, numpy.int64, numpy.uint8])
def test_integer_input_keeps_its_dtype(function, dtype):
    x = numpy.array([0, 3, 7], dtype)
    y = function(x)
    assert y.dtype == dtype
    numpy.testing.assert_array_equal(y.array, x)


@pytest.mark.parametrize("function", [ceil, floor, fix])
def test_0d_input_gives_a_0d_array(function):
    y = function(numpy.array(-1.25, numpy.float64))
    assert isinstance(y.array, numpy.ndarray)
    assert y.shape == ()


def _bad_input_rows(function, name):
    return [
        (
            function,
            (numpy.array([True, False]),),
            {},
            InvalidType,
            (name, "x.dtype.kind in 'fiu'", "'b'"),
        ),
        (
            function,
            ([1.0, 2.0],),
            {},
            TypeError,
            (f"{name}: expected x to be a Variable", "got list"),
        ),
    ]


test_bad_input = bad_input_test(
    _bad_input_rows(ceil, "ceil") + _bad_input_rows(floor, "floor") + _bad_input_rows(fix, "fix")
)
