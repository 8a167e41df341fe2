import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.type_check import InvalidType
from dbr.functions.math.scale import scale

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(*testing.product({"case": families.BROADCAST_CASES, "dtype": FLOATS}))
class TestScale(families.BroadcastCase):
    function = staticmethod(scale)
    combine = staticmethod(numpy.multiply)

    def bad_inputs(self):
        x = numpy.zeros((2, 3, 4), numpy.float32)
        return [
            (
                (x, numpy.zeros((3, 5), numpy.float32)),
                InvalidType,
                ("Scale", "x.shape[1:3] == y.shape"),
            ),
            ((x, numpy.zeros(3, numpy.float16)), InvalidType, "y.dtype == x.dtype"),
            (
                (x, numpy.zeros(3, numpy.float32)),
                {"axis": 4},
                ValueError,
                "scale: expected axis in [-3, 3]",
            ),
            (
                (x, numpy.zeros(3, numpy.float32)),
                {"axis": None},
                TypeError,
                "scale: expected axis to be an int",
            ),
        ]


def test_default_axis_is_one():
    x = numpy.ones((2, 3, 4), numpy.float32)
    y = numpy.arange(3, dtype=numpy.float32)
    numpy.testing.assert_array_equal(scale(x, y).array, numpy.broadcast_to(y[:, None], (2, 3, 4)))


def test_gradients():
    xd = numpy.arange(24, dtype=numpy.float64).reshape(2, 3, 4)
    yd = numpy.array([1.0, -2.0, 0.5])
    x = Variable(xd)
    y = Variable(yd)
    gx, gy = grad([scale(x, y)], [x, y], [Variable(numpy.ones((2, 3, 4)))])
    numpy.testing.assert_array_equal(gx.array, numpy.broadcast_to(yd[:, None], (2, 3, 4)))
    numpy.testing.assert_array_equal(gy.array, xd.sum(axis=(0, 2)))
