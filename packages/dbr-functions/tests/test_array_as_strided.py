import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.array.as_strided import _stride_array, as_strided

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def _as_strided_reference(x, shape, strides, offset):
    flat = x.ravel()
    out = numpy.empty(shape, x.dtype)
    for index in numpy.ndindex(*shape):
        out[index] = flat[offset + sum(i * s for i, s in zip(index, strides))]
    return out


@testing.parameterize(
    *testing.product(
        {
            "x_shape,shape,strides,offset": [
                ((4,), (3, 2), (1, 1), 0),
                ((3, 4), (4, 3), (1, 4), None),
                ((3, 4), (2, 2, 2), (4, 2, 1), 1),
                ((6,), (3,), (-2,), 5),
                ((2, 5), (3, 4), (2, 0), 2),
                ((2, 3), (), (), 4),
                ((2, 3), (0, 5), (7, 9), 0),
                ((10,), (4, 3), (2, 1), 1),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestAsStrided(FunctionTestCase):
    def generate_inputs(self):
        return (numpy.random.uniform(-1, 1, self.x_shape).astype(self.dtype),)

    def forward(self, inputs, device):
        return (as_strided(inputs[0], self.shape, self.strides, self.offset),)

    def forward_expected(self, inputs):
        offset = 0 if self.offset is None else self.offset
        return (_as_strided_reference(inputs[0], self.shape, self.strides, offset),)

    function = staticmethod(as_strided)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        return [
            ((x, (3, 2), (2, 1), 1), InvalidType, ("AsStrided", "elements 1 to 6", "x.size == 6")),
            ((x, (3,), (-1,), 1), InvalidType, "elements -1 to 1"),
            ((x, (3, 2), (1,)), ValueError, "as_strided: expected one stride per axis"),
            ((x, (-1,), (1,)), ValueError, "as_strided: expected non-negative dimensions"),
            ((x, (1,), (1,), -2), ValueError, "as_strided: expected storage_offset >= 0, got -2"),
            ((x, (2,), (1.0,)), TypeError, "as_strided: expected strides to be a tuple of ints"),
            ((x, (2,), (1,), 0.5), TypeError, "as_strided: expected storage_offset to be an int"),
        ]


def test_chainer_documentation_example():
    x = Variable(numpy.arange(4, dtype=numpy.float32))
    y = as_strided(x, (3, 2), (1, 1), 0)
    testing.assert_allclose(y.array, [[0, 1], [1, 2], [2, 3]], atol=0, rtol=0)
    y.grad = numpy.ones((3, 2), numpy.float32)
    y.backward()
    testing.assert_allclose(x.grad, [1, 2, 2, 1], atol=0, rtol=0)


def test_output_is_a_copy_and_ignores_the_input_layout():
    base = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    x = base.T  # not C-contiguous: the elements are read in x's C order
    y = as_strided(x, (2,), (1,), 1)
    testing.assert_allclose(y.array, [4, 8], atol=0, rtol=0)
    y.array[...] = -1
    assert base.min() == 0


def test_stride_array_helper():
    x = numpy.arange(8.0)
    numpy.testing.assert_array_equal(_stride_array(x, (4,), (-1,), 3), [3.0, 2.0, 1.0, 0.0])
    numpy.testing.assert_array_equal(
        _stride_array(x, (3, 3), (-1, 2), 3), [[3, 5, 7], [2, 4, 6], [1, 3, 5]]
    )
    assert numpy.shares_memory(_stride_array(x, (2,), (1,), 0), x)
    # x's elements in C order, not its allocation: a reversed view reads reversed
    numpy.testing.assert_array_equal(_stride_array(x[::-1], (3,), (1,), 0), [7.0, 6.0, 5.0])
    with pytest.raises(ValueError, match="as_strided: the view reads elements -1 to 5 of 8"):
        _stride_array(x, (3, 3), (-1, 2), 1)
