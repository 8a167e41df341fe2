import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, testing
from dbr.core.testing import bad_input_test
from dbr.functions.loss.absolute_error import absolute_error

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(*testing.product({"shape": [(4, 3), (), (2, 3, 2)], "dtype": FLOATS}))
class TestAbsoluteError(families.KinkedPairCase):
    function = staticmethod(absolute_error)

    def forward_expected(self, inputs):
        x0, x1 = inputs
        return (numpy.asarray(numpy.abs(x0 - x1)).astype(self.dtype),)


def test_gradient_is_sign_of_the_difference():
    x0 = Variable(numpy.array([1.0, -2.0, 3.0]))
    x1 = Variable(numpy.array([0.0, 1.0, 3.0]))
    y = absolute_error(x0, x1)
    y.grad = numpy.ones(3)
    y.backward()
    numpy.testing.assert_array_equal(x0.grad, [1.0, -1.0, 0.0])
    numpy.testing.assert_array_equal(x1.grad, [-1.0, 1.0, 0.0])


test_bad_input = bad_input_test(families.pair_refusals(absolute_error, "AbsoluteError"))
