import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import Variable, grad, testing
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


def test_bad_shapes_and_dtypes_raise_invalid_type():
    x = numpy.zeros((2, 3, 4), numpy.float32)
    with pytest.raises(InvalidType) as info:
        bias(x, numpy.zeros(4, numpy.float32))
    message = str(info.value)
    assert "Bias" in message and "x.shape[1:2] == y.shape" in message and "(3,) != (4,)" in message
    with pytest.raises(InvalidType) as info:
        bias(x, numpy.zeros((4, 1), numpy.float32), axis=2)
    assert "y.ndim + 2 <= x.ndim" in str(info.value)
    with pytest.raises(InvalidType) as info:
        bias(x, numpy.zeros(3, numpy.float64))
    assert "y.dtype == x.dtype" in str(info.value)
    with pytest.raises(InvalidType) as info:
        bias(x.astype(numpy.int32), numpy.zeros(3, numpy.int32))
    assert "x.dtype.kind == 'f'" in str(info.value)


def test_bad_axis():
    x = numpy.zeros((2, 3), numpy.float32)
    y = numpy.zeros(3, numpy.float32)
    with pytest.raises(
        ValueError, match=r"bias: expected axis in \[-2, 2\] for x of ndim 2, got 3"
    ):
        bias(x, y, axis=3)
    with pytest.raises(ValueError, match="got -3"):
        bias(x, y, axis=-3)
    with pytest.raises(TypeError, match="bias: expected axis to be an int, got 1.0"):
        bias(x, y, axis=1.0)
    with pytest.raises(TypeError, match="bias: expected x to be a Variable or an array, got list"):
        bias([1.0, 2.0], y)


@testing.parameterize(*testing.product({"case": families.BROADCAST_CASES, "dtype": FLOATS}))
class TestBias(families.BroadcastCase):
    function = staticmethod(bias)
    combine = staticmethod(numpy.add)
