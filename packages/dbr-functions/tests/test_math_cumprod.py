import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.cumprod import Cumprod, LinearScan, cumprod, exclusive_cumprod

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def uniform(shape, dtype, low=0.5, high=1.5):
    """Factors with random signs and magnitudes in [low, high), so products stay moderate."""
    sign = numpy.where(numpy.random.uniform(size=shape) < 0.5, -1.0, 1.0)
    return numpy.asarray(sign * numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(*testing.product({"x_shape,axis": families.SCAN_CASES, "dtype": FLOATS}))
class TestCumprod(families.ScanCase):
    function = staticmethod(cumprod)
    reference = staticmethod(numpy.cumprod)
    draw = staticmethod(uniform)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": -3},
                InvalidType,
                ("Cumprod", "x.ndim == 2"),
            ),
            ((numpy.zeros(3, numpy.int32),), InvalidType, ("Cumprod", "x.dtype.kind == 'f'")),
            (
                (numpy.zeros(3, numpy.float32),),
                {"axis": 0.0},
                TypeError,
                "cumprod: expected axis to be None or an int",
            ),
        ]


@testing.parameterize(*testing.product({"zeros": [(1,), (0, 3), (2, 4), (4,)], "dtype": FLOATS}))
class TestCumprodWithZeros(FunctionTestCase):
    """Exact zeros: the gradients must not divide by the input (and stay differentiable)."""

    def generate_inputs(self):
        x = uniform((2, 5), self.dtype)
        x[:, list(self.zeros)] = 0
        return (x,)

    def forward(self, inputs, device):
        return (cumprod(inputs[0], axis=1),)

    def forward_expected(self, inputs):
        return (numpy.cumprod(inputs[0].astype(numpy.float64), axis=1).astype(self.dtype),)


@testing.parameterize(*testing.product({"reverse": [False, True], "dtype": FLOATS}))
class TestExclusiveCumprod(FunctionTestCase):
    def generate_inputs(self):
        x = uniform((3, 4), self.dtype)
        x[1, 2] = 0
        return (x,)

    def forward(self, inputs, device):
        return (exclusive_cumprod(inputs[0], -1, reverse=self.reverse),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        if self.reverse:
            x = x[:, ::-1]
        y = numpy.concatenate([numpy.ones((3, 1)), numpy.cumprod(x, axis=1)[:, :-1]], axis=1)
        if self.reverse:
            y = y[:, ::-1]
        return (y.astype(self.dtype),)


@testing.parameterize(*testing.product({"forward_direction": [True, False], "dtype": FLOATS}))
class TestLinearScan(FunctionTestCase):
    """The recurrence behind cumprod's gradients, checked on its own."""

    def generate_inputs(self):
        return uniform((4, 3), self.dtype), uniform((4, 3), self.dtype, -1, 1)

    def forward(self, inputs, device):
        return LinearScan(0, self.forward_direction).apply(inputs)

    def forward_expected(self, inputs):
        a, b = (v.astype(numpy.float64) for v in inputs)
        s = numpy.zeros_like(b)
        order = range(4) if self.forward_direction else range(3, -1, -1)
        previous = numpy.zeros(3)
        for i in order:
            previous = a[i] * previous + b[i]
            s[i] = previous
        return (s.astype(self.dtype),)


def test_cumprod_gradient_at_zeros_by_hand():
    x = Variable(numpy.array([2.0, 0.0, 3.0]))
    y = cumprod(x)
    assert type(y.creator) is Cumprod
    (gx,) = grad([y], [x], enable_double_backprop=True)
    # d/dx of x0 + x0 x1 + x0 x1 x2 at (2, 0, 3)
    testing.assert_allclose(gx, [1.0, 2.0 + 6.0, 0.0], atol=0, rtol=0)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    testing.assert_allclose(ggx, [0.0 + 1 + 3, 1 + 3 + 2, 0 + 2], atol=0, rtol=0)


def test_cumprod_of_float16_accumulates_in_float32():
    x = numpy.full(1000, 1.001, numpy.float16)
    expected = numpy.prod(x.astype(numpy.float64))
    # Rounding every partial product to float16 would give 2.45 instead of 2.65.
    testing.assert_allclose(cumprod(x).array[-1], expected, atol=0, rtol=2e-3)
