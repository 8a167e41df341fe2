import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.math.average import Mean, MeanGrad, WeightedAverage, average, mean

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def uniform(shape, dtype, low=-1, high=1):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axis": families.REDUCTION_AXES,
            "keepdims": [False, True],
            "function": ["average", "mean"],
            "dtype": FLOATS,
        }
    )
)
class TestMean(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        f = average if self.function == "average" else mean
        return (f(inputs[0], axis=self.axis, keepdims=self.keepdims),)

    def forward_expected(self, inputs):
        x = inputs[0].astype(numpy.float64)
        return (numpy.asarray(x.mean(axis=self.axis, keepdims=self.keepdims), self.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,axis,w_shape": [
                ((3, 4), None, (3, 4)),
                ((3, 4), 0, (3,)),
                ((3, 4), 1, (4,)),
                ((2, 3, 4), -2, (3,)),
                ((2, 3, 4), (2,), (4,)),
                ((5,), 0, (5,)),
                ((), None, ()),
            ],
            "keepdims": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestWeightedAverage(FunctionTestCase):
    def generate_inputs(self):
        # Positive weights keep the sum of weights away from zero.
        return uniform(self.x_shape, self.dtype), uniform(self.w_shape, self.dtype, 0.5, 1.5)

    def forward(self, inputs, device):
        x, w = inputs
        return (average(x, axis=self.axis, weights=w, keepdims=self.keepdims),)

    def forward_expected(self, inputs):
        x, w = (a.astype(numpy.float64) for a in inputs)
        axis = self.axis[0] if isinstance(self.axis, tuple) else self.axis
        if axis is not None:
            shape = [1] * x.ndim
            shape[axis] = -1
            w = w.reshape(shape)
        y = (x * w).sum(axis=axis, keepdims=self.keepdims) / w.sum()
        return (numpy.asarray(y, self.dtype),)


def test_mean_of_float16_accumulates_in_float32():
    x = numpy.full(4096, 0.1, numpy.float16) + numpy.float16(1000)
    y = mean(x)
    assert y.dtype == numpy.float16
    testing.assert_allclose(y, numpy.float64(x[0]), atol=0, rtol=1e-3)


def test_mean_gradient_is_one_over_n_and_its_gradient_is_a_mean():
    x = Variable(numpy.ones((2, 4)))
    (gx,) = grad([mean(x, axis=1)], [x], enable_double_backprop=True)
    testing.assert_allclose(gx, numpy.full((2, 4), 0.25), atol=0, rtol=0)
    assert type(gx.creator) is MeanGrad
    assert type(mean(x).creator) is Mean


def test_weighted_average_gradients_of_weights_by_hand():
    x = Variable(numpy.array([1.0, 2.0, 6.0]))
    w = Variable(numpy.array([1.0, 1.0, 2.0]))
    y = average(x, weights=w)
    assert type(y.creator) is WeightedAverage
    testing.assert_allclose(y, 15.0 / 4.0, atol=0, rtol=1e-15)
    y.backward()
    testing.assert_allclose(x.grad, [0.25, 0.25, 0.5], atol=0, rtol=1e-15)
    testing.assert_allclose(
        w.grad, (numpy.array([1.0, 2.0, 6.0]) - 3.75) / 4.0, atol=1e-15, rtol=0
    )


_X23 = numpy.zeros((2, 3), numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_X23,),
            {"axis": (0, 1), "weights": numpy.ones(6, numpy.float32)},
            ValueError,
            "average: expected axis to be None or a single axis",
        ),
        (
            (_X23,),
            {"axis": None, "weights": numpy.ones((3,), numpy.float32)},
            InvalidType,
            ("WeightedAverage", "weights.shape == x.shape"),
        ),
        (
            (_X23,),
            {"axis": 1, "weights": numpy.ones((2,), numpy.float32)},
            InvalidType,
            ("WeightedAverage", "weights.shape[0] == x.shape[1]"),
        ),
        (
            (_X23,),
            {"axis": 0, "weights": numpy.ones((2, 1), numpy.float32)},
            InvalidType,
            ("WeightedAverage", "weights.ndim == 1"),
        ),
        (
            (numpy.zeros(3, numpy.float32),),
            {"weights": numpy.ones(3, numpy.float64)},
            InvalidType,
            "weights.dtype == x.dtype",
        ),
        (
            mean,
            (numpy.zeros((2, 3), numpy.int32),),
            {},
            InvalidType,
            ("Mean", "x.dtype.kind == 'f'"),
        ),
        ((_X23,), {"axis": -3}, InvalidType, ("Mean", "x.ndim == 2")),
        (mean, (_X23,), {"axis": (0, 0)}, ValueError, "average: duplicate value in axis (0, 0)"),
        (mean, (_X23,), {"axis": 1.0}, TypeError, "average: expected axis"),
    ],
    function=average,
)


def test_axes_naming_one_axis_twice_are_a_value_error():
    # 1 and -2 are the same axis of a 3-d x (Chainer raises a ValueError)
    from dbr.functions.math.average import average
    from dbr.functions.math.logsumexp import logsumexp
    from dbr.functions.math.minmax import max as max_

    x = numpy.zeros((2, 3, 4), numpy.float32)
    for function, name in ((average, "average"), (logsumexp, "logsumexp"), (max_, "max")):
        with pytest.raises(ValueError, match=f"{name}: duplicate value in axis \\(1, -2\\)"):
            function(x, axis=(1, -2))
