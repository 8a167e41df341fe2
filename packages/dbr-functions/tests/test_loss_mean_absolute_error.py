import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, testing
from dbr.core.testing import bad_input_test
from dbr.functions.loss.mean_absolute_error import mean_absolute_error

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(*testing.product({"shape": [(4, 3), (), (2, 3, 2)], "dtype": FLOATS}))
class TestMeanAbsoluteError(families.KinkedPairCase):
    function = staticmethod(mean_absolute_error)

    def forward_expected(self, inputs):
        x0, x1 = inputs
        diff = x0.astype(numpy.float64) - x1.astype(numpy.float64)
        return (numpy.asarray(numpy.mean(numpy.abs(diff))).astype(self.dtype),)


test_bad_input = bad_input_test(families.pair_refusals(mean_absolute_error, "MeanAbsoluteError"))


def test_float16_accumulates_in_float32():
    x0 = numpy.ones(4096, numpy.float16)
    x1 = numpy.zeros(4096, numpy.float16)
    y = mean_absolute_error(x0, x1)
    assert y.dtype == numpy.float16
    assert float(y.array) == 1.0


def test_gradient_values():
    x0 = Variable(numpy.array([[1.0, 2.0], [3.0, 4.0]]))
    x1 = Variable(numpy.array([[0.0, 2.0], [1.0, 5.0]]))
    mean_absolute_error(x0, x1).backward()
    numpy.testing.assert_allclose(x0.grad, [[0.25, 0.0], [0.25, -0.25]])
    numpy.testing.assert_allclose(x1.grad, [[-0.25, 0.0], [-0.25, 0.25]])
