import pathlib
import runpy
import types

import numpy
import pytest

from dbr.core import testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.math.tensordot import TensorDot, tensordot

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# Shared families, run by path: no test folder is on sys.path (--import-mode=importlib).
_FAMILIES = pathlib.Path(__file__).parent / "fixtures" / "families.py"
families = types.SimpleNamespace(**runpy.run_path(str(_FAMILIES)))


@testing.parameterize(
    *testing.product(
        {
            "a_shape,b_shape,axes": [
                ((5, 3, 2), (3, 2, 4), 2),
                ((5, 3, 2), (2, 4), 1),
                ((3, 2), (4, 5), 0),
                ((3, 2), (3, 2), 2),
                ((2, 3, 4), (4, 2, 5), ([0, 2], [1, 0])),
                ((2, 3, 4), (4, 3, 2), ((2, 1, 0), (0, 1, 2))),
                ((2, 3, 4), (5, 3), (1, 1)),
                ((2, 3, 4), (3, 5), ([-2], [-2])),
                ((4,), (4,), 1),
                ((), (2, 3), 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestTensorDot(FunctionTestCase):
    def generate_inputs(self):
        return families.uniform_inputs(self.dtype, self.a_shape, self.b_shape)

    def forward(self, inputs, device):
        a, b = inputs
        return (tensordot(a, b, axes=self.axes),)

    def forward_expected(self, inputs):
        a, b = (x.astype(numpy.float64) for x in inputs)
        return (numpy.asarray(numpy.tensordot(a, b, axes=self.axes)).astype(self.dtype),)


def test_tensordot_records_its_node():
    y = tensordot(numpy.ones((2, 3), numpy.float32), numpy.ones((3, 4), numpy.float32), axes=1)
    assert type(y.creator) is TensorDot
    testing.assert_allclose(y, numpy.full((2, 4), 3.0), atol=0, rtol=0)


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "axes", "expect"),
    [
        ((2, 3), (4, 5), 1, "a.shape[1] == b.shape[0]"),
        ((2, 3), (3,), 2, "a.ndim >= 2 and b.ndim >= 2"),
        ((2, 3), (3, 2), ([2], [0]), "distinct axes of a"),
        ((2, 3), (3, 2), ([1], [0, 0]), None),
        ((2, 3), (3, 2), ([1, 1], [0, 1]), "distinct axes of a"),
    ],
)
def test_bad_shapes_or_axes(a_shape, b_shape, axes, expect):
    a = numpy.ones(a_shape, numpy.float32)
    b = numpy.ones(b_shape, numpy.float32)
    if expect is None:
        with pytest.raises(ValueError, match="tensordot: expected as many axes of a as of b"):
            tensordot(a, b, axes=axes)
        return
    with pytest.raises(InvalidType) as info:
        tensordot(a, b, axes=axes)
    message = str(info.value)
    assert "TensorDot" in message and expect in message


def test_bad_dtypes_and_axes_arguments():
    a = numpy.ones((2, 3), numpy.float32)
    with pytest.raises(InvalidType, match="b.dtype == a.dtype"):
        tensordot(a, numpy.ones((3, 2), numpy.float64), axes=1)
    with pytest.raises(InvalidType, match="a.dtype.kind == 'f'"):
        tensordot(a.astype(numpy.int32), a.astype(numpy.int32), axes=0)
    with pytest.raises(TypeError, match="tensordot: expected axes to be an int or a pair"):
        tensordot(a, a, axes=1.0)
    with pytest.raises(TypeError, match="tensordot: expected axes to be an int or a pair"):
        tensordot(a, a, axes=([0], [0], [1]))
    with pytest.raises(ValueError, match="tensordot: expected axes to be non-negative"):
        tensordot(a, a, axes=-1)
