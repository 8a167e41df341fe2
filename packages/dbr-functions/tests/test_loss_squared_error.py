import pathlib
import runpy
import types

import numpy

from dbr.core import testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.functions.loss.squared_error import squared_difference, squared_error

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))

FUNCTIONS = {"squared_error": squared_error, "squared_difference": squared_difference}


@testing.parameterize(
    *testing.product(
        {"function": list(FUNCTIONS), "shape": [(4, 3), (), (2, 3, 2)], "dtype": FLOATS}
    )
)
class TestSquaredError(FunctionTestCase):
    def generate_inputs(self):
        x0 = numpy.random.uniform(-1, 1, self.shape)
        x1 = numpy.random.uniform(-1, 1, self.shape)
        return numpy.asarray(x0).astype(self.dtype), numpy.asarray(x1).astype(self.dtype)

    def forward(self, inputs, device):
        return (FUNCTIONS[self.function](*inputs),)

    def forward_expected(self, inputs):
        x0, x1 = inputs
        diff = x0.astype(numpy.float64) - x1.astype(numpy.float64)
        return (numpy.asarray(diff * diff).astype(self.dtype),)


test_bad_input = bad_input_test(
    families.pair_refusals(squared_error, "SquaredError", other_dtype=numpy.float16)
    + families.pair_refusals(
        squared_difference, "SquaredDifference", ("x1", "x2"), other_dtype=numpy.float16
    )
)
