import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math import minmax
from dbr.functions.math.minmax import ArgMax, ArgMin, Max, Min, argmax, argmin

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


def distinct(shape, dtype):
    """Values without ties, at least 0.05 apart (so finite differences never swap them)."""
    size = int(numpy.prod(shape))
    values = (numpy.random.permutation(size) - size / 2) * (1.6 / max(size, 1))
    return values.reshape(shape).astype(dtype)


@testing.parameterize(
    *testing.product(
        {
            "function": ["max", "min"],
            "x_shape,axis": families.REDUCTION_AXES,
            "keepdims": [False, True],
            "dtype": FLOATS,
        }
    )
)
class TestMaxMin(FunctionTestCase):
    def generate_inputs(self):
        return (distinct(self.x_shape, self.dtype),)

    def forward(self, inputs, device):
        f = minmax.max if self.function == "max" else minmax.min
        return (f(inputs[0], axis=self.axis, keepdims=self.keepdims),)

    def forward_expected(self, inputs):
        f = numpy.amax if self.function == "max" else numpy.amin
        return (numpy.asarray(f(inputs[0], axis=self.axis, keepdims=self.keepdims)),)


def test_max_gives_the_gradient_to_every_tied_maximum():
    x = Variable(numpy.array([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]], numpy.float32))
    y = minmax.max(x, axis=1)
    y.grad = numpy.array([10.0, 20.0], numpy.float32)
    y.backward()
    testing.assert_allclose(x.grad, [[0, 10, 10], [20, 0, 0]], atol=0, rtol=0)


def test_min_second_order_gradient_is_zero_and_first_order_is_linear_in_gy():
    x = Variable(numpy.array([3.0, 1.0, 2.0]))
    (gx,) = grad([minmax.min(x)], [x], enable_double_backprop=True)
    testing.assert_allclose(gx, [0.0, 1.0, 0.0], atol=0, rtol=0)
    (ggx,) = grad([gx], [x], [Variable(numpy.ones(3))])
    assert ggx is None or not ggx.array.any()


@testing.parameterize(
    *testing.product(
        {
            "function": ["argmax", "argmin"],
            "x_shape,axis": [
                ((3, 4), None),
                ((3, 4), 0),
                ((3, 4), -1),
                ((2, 3, 4), 1),
                ((5,), 0),
                ((0, 4), 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestArgMaxMin:
    def test_forward(self):
        x = distinct(self.x_shape, self.dtype)
        f = argmax if self.function == "argmax" else argmin
        y = f(x, axis=self.axis)
        expected = (numpy.argmax if self.function == "argmax" else numpy.argmin)(x, axis=self.axis)
        assert y.dtype == numpy.int32
        assert y.shape == numpy.shape(expected)
        numpy.testing.assert_array_equal(y.array, expected)


@pytest.mark.parametrize("f", [argmax, argmin])
def test_argmax_argmin_stop_backprop(f):
    x = Variable(numpy.array([[1.0, 3.0], [4.0, 2.0]], numpy.float32))
    index = f(x, axis=1)
    assert type(index.creator) in (ArgMax, ArgMin)
    y = minmax.max(x)
    y.backward()
    testing.assert_allclose(x.grad, [[0, 0], [1, 0]], atol=0, rtol=0)
    (g,) = index.creator.backward((0,), (None,))
    assert g is None


def test_argmax_returns_the_first_of_ties():
    x = numpy.array([[2.0, 5.0, 5.0], [1.0, 1.0, 0.0]], numpy.float32)
    numpy.testing.assert_array_equal(argmax(x, axis=1).array, [1, 0])
    numpy.testing.assert_array_equal(argmin(x, axis=1).array, [0, 2])


@pytest.mark.parametrize(("f", "label"), [(minmax.max, "Max"), (minmax.min, "Min")])
@pytest.mark.parametrize("axis", [2, -3, (0, 2)])
def test_max_min_over_a_missing_axis_raise_invalid_type(f, label, axis):
    with pytest.raises(InvalidType) as info:
        f(numpy.zeros((2, 3), numpy.float32), axis=axis)
    message = str(info.value)
    assert label in message and "x.ndim == 2" in message


@pytest.mark.parametrize(
    ("f", "label"),
    [(minmax.max, "Max"), (minmax.min, "Min"), (argmax, "ArgMax"), (argmin, "ArgMin")],
)
def test_integer_input_raises_invalid_type(f, label):
    with pytest.raises(InvalidType) as info:
        f(numpy.arange(3, dtype=numpy.int32))
    message = str(info.value)
    assert label in message and "x.dtype.kind == 'f'" in message


@pytest.mark.parametrize(
    ("f", "label"),
    [(minmax.max, "Max"), (minmax.min, "Min"), (argmax, "ArgMax"), (argmin, "ArgMin")],
)
def test_reducing_an_empty_axis_raises_invalid_type(f, label):
    with pytest.raises(InvalidType) as info:
        f(numpy.zeros((0, 3), numpy.float32), axis=0)
    message = str(info.value)
    assert label in message and "x.shape[0] > 0" in message and "(0, 3)" in message


def test_repeated_or_malformed_axes_raise_before_computing():
    x = numpy.zeros((2, 3), numpy.float32)
    with pytest.raises(ValueError, match=r"max: duplicate value in axis \(1, 1\)"):
        minmax.max(x, axis=(1, 1))
    with pytest.raises(TypeError, match="min: expected axis to be None, an int or a tuple"):
        minmax.min(x, axis=[0])
    with pytest.raises(TypeError, match="argmax: expected axis to be None or an int"):
        argmax(x, axis=(0,))
    with pytest.raises(InvalidType, match="ArgMin"):
        argmin(x, axis=2)


def test_max_min_nodes_are_recorded():
    x = Variable(numpy.ones((2, 3), numpy.float32))
    assert type(minmax.max(x).creator) is Max
    assert type(minmax.min(x, axis=0).creator) is Min
