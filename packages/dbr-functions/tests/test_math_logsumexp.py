import pathlib
import runpy
import types

import numpy

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.logsumexp import LogSumExp, logsumexp

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def reference(x, axis=None, keepdims=False):
    x = x.astype(numpy.float64)
    m = x.max(axis=axis, keepdims=True)
    y = numpy.log(numpy.exp(x - m).sum(axis=axis, keepdims=True)) + m
    if not keepdims:
        y = y.reshape(numpy.sum(x, axis=axis).shape)
    return y


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axis": families.REDUCTION_AXES,
            "keepdims": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestLogSumExp(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-2, 2, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (logsumexp(inputs[0], axis=self.axis, keepdims=self.keepdims),)

    def forward_expected(self, inputs):
        y = reference(inputs[0], self.axis, self.keepdims)
        return (numpy.asarray(y, self.dtype),)

    function = staticmethod(logsumexp)

    def bad_inputs(self):
        return [
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": 2},
                InvalidType,
                ("LogSumExp", "x.ndim == 2"),
            ),
            ((numpy.zeros(3, numpy.int32),), InvalidType, ("LogSumExp", "x.dtype.kind == 'f'")),
            ((numpy.zeros((0, 3), numpy.float32),), {"axis": 0}, InvalidType, "x.shape[0] > 0"),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": (1, 1)},
                ValueError,
                "logsumexp: duplicate value in axis (1, 1)",
            ),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": "1"},
                TypeError,
                "logsumexp: expected axis",
            ),
        ]


@testing.parameterize(*testing.product({"dtype": FLOATS}))
class TestLogSumExpOfLargeValues(FunctionTestCase):
    """exp(x) overflows every dtype here; the shifted computation must not."""

    def generate_inputs(self):
        scale = 60000.0 if self.dtype == numpy.float16 else 1e5
        return ((scale + numpy.random.uniform(-2, 2, (3, 4))).astype(self.dtype),)

    def forward(self, inputs, device):
        return (logsumexp(inputs[0], axis=1),)

    def forward_expected(self, inputs):
        return (numpy.asarray(reference(inputs[0], 1), self.dtype),)


def test_infinite_slices_keep_their_infinity():
    x = numpy.array([[-numpy.inf, -numpy.inf], [numpy.inf, 0.0], [1000.0, 1000.0]], numpy.float32)
    y = logsumexp(x, axis=1)
    assert y.array[0] == -numpy.inf and y.array[1] == numpy.inf
    testing.assert_allclose(y.array[2], 1000.0 + numpy.log(2.0), atol=0, rtol=1e-6)


def test_gradient_is_the_softmax_and_second_order_matches_its_jacobian():
    x_data = numpy.array([[0.5, -1.0, 2.0], [0.0, 0.0, 0.0]])
    x = Variable(x_data)
    (gx,) = grad([logsumexp(x, axis=1)], [x], enable_double_backprop=True)
    p = numpy.exp(x_data) / numpy.exp(x_data).sum(axis=1, keepdims=True)
    testing.assert_allclose(gx, p, atol=0, rtol=1e-12)
    v = numpy.array([[1.0, 2.0, -1.0], [0.5, 0.0, 1.0]])
    (ggx,) = grad([gx], [x], [Variable(v)])
    expected = p * (v - (v * p).sum(axis=1, keepdims=True))
    testing.assert_allclose(ggx, expected, atol=1e-15, rtol=1e-12)


def test_float16_is_computed_in_float32():
    x = numpy.zeros(4096, numpy.float16)
    y = logsumexp(x)
    assert y.dtype == numpy.float16
    testing.assert_allclose(y, numpy.log(4096.0), atol=0, rtol=1e-3)
    assert type(y.creator) is LogSumExp
