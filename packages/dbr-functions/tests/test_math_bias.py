import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.bias import bias

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def test_default_axis_is_one():
    x = numpy.zeros((2, 3, 4), numpy.float32)
    y = numpy.arange(3, dtype=numpy.float32)
    numpy.testing.assert_array_equal(bias(x, y).array, numpy.broadcast_to(y[:, None], (2, 3, 4)))


def test_gradient_of_y_is_summed_over_the_other_axes():
    x = Variable(numpy.zeros((2, 3, 4)))
    y = Variable(numpy.zeros(3))
    gx, gy = grad([bias(x, y)], [x, y], [Variable(numpy.ones((2, 3, 4)))])
    numpy.testing.assert_array_equal(gx.array, numpy.ones((2, 3, 4)))
    numpy.testing.assert_array_equal(gy.array, [8.0, 8.0, 8.0])


X_3D = numpy.zeros((2, 3, 4), numpy.float32)
X_2D = numpy.zeros((2, 3), numpy.float32)
Y = numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (X_3D, numpy.zeros(4, numpy.float32)),
            InvalidType,
            ("Bias", "x.shape[1:2] == y.shape", "(3,) != (4,)"),
        ),
        (
            (X_3D, numpy.zeros((4, 1), numpy.float32)),
            {"axis": 2},
            InvalidType,
            "y.ndim + 2 <= x.ndim",
        ),
        ((X_3D, numpy.zeros(3, numpy.float64)), InvalidType, "y.dtype == x.dtype"),
        (
            (X_3D.astype(numpy.int32), numpy.zeros(3, numpy.int32)),
            InvalidType,
            "x.dtype.kind == 'f'",
        ),
        (
            (X_2D, Y),
            {"axis": 3},
            ValueError,
            "bias: expected axis in [-2, 2] for x of ndim 2, got 3",
        ),
        ((X_2D, Y), {"axis": -3}, ValueError, "got -3"),
        ((X_2D, Y), {"axis": 1.0}, TypeError, "bias: expected axis to be an int, got 1.0"),
        (([1.0, 2.0], Y), TypeError, "bias: expected x to be a Variable or an array, got list"),
    ],
    function=bias,
)


@testing.parameterize(*testing.product({"case": families.BROADCAST_CASES, "dtype": FLOATS}))
class TestBias(families.BroadcastCase):
    function = staticmethod(bias)
    combine = staticmethod(numpy.add)
