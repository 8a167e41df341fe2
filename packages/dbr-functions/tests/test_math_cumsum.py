import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, testing
from dbr.core.testing import uniform
from dbr.core.type_check import InvalidType
from dbr.functions.math.cumsum import Cumsum, cumsum

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(*testing.product({"x_shape,axis": families.SCAN_CASES, "dtype": FLOATS}))
class TestCumsum(families.ScanCase):
    function = staticmethod(cumsum)
    reference = staticmethod(numpy.cumsum)
    draw = staticmethod(uniform)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 2},
                InvalidType,
                ("Cumsum", "x.ndim == 2"),
            ),
            ((numpy.zeros(3, numpy.int64),), InvalidType, ("Cumsum", "x.dtype.kind == 'f'")),
            (
                (numpy.zeros(3, numpy.float32),),
                {"axis": (0,)},
                TypeError,
                "cumsum: expected axis to be None or an int",
            ),
        ]


def test_cumsum_of_float16_accumulates_in_float32():
    x = numpy.full(3000, 1.0, numpy.float16)
    y = cumsum(x)
    assert y.dtype == numpy.float16
    # float16 accumulation would stall at 2048.
    testing.assert_allclose(y.array[-1], 3000.0, atol=0, rtol=1e-3)


def test_cumsum_gradient_is_a_reverse_cumsum():
    x = Variable(numpy.zeros(4))
    y = cumsum(x)
    assert type(y.creator) is Cumsum
    y.grad = numpy.array([1.0, 2.0, 3.0, 4.0])
    y.backward()
    testing.assert_allclose(x.grad, [10.0, 9.0, 7.0, 4.0], atol=0, rtol=0)
