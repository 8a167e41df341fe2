import numpy
import pytest

import dbr.functions as F
from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
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
    # as_strided reads x's memory, so its result depends on x's layout: the
    # harness's non-contiguous copies would read other elements.
    contiguous = "C"

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
            ((x, (3, 2), (2, 1), 1), ValueError, "reads elements 1 to 6 of the 6 in the input's"),
            ((x, (3,), (-1,), 1), ValueError, "reads elements -1 to 1"),
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


def test_output_is_a_copy_of_the_memory_the_input_lies_in():
    base = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)
    y = as_strided(base.T, (2,), (1,), 1)  # the memory, not base.T's C order
    testing.assert_allclose(y.array, [1, 2], atol=0, rtol=0)
    y.array[...] = -1
    assert base.min() == 0
    # a reversed view reads the memory forwards
    y = as_strided(base[::-1], (12,), (1,), 0)
    testing.assert_allclose(y.array, numpy.arange(12), atol=0, rtol=0)
    # storage_offset None starts at the view's own first element; reading
    # past the view but inside its allocation is allowed
    y = as_strided(base[1], (6,), (1,))
    testing.assert_allclose(y.array, [4, 5, 6, 7, 8, 9], atol=0, rtol=0)


def test_memory_of_another_itemsize_falls_back_to_the_c_order_of_the_input():
    records = numpy.zeros(3, dtype=[("a", numpy.float64), ("b", numpy.float32)])
    records["a"] = [1, 2, 3]
    x = records["a"]  # a stride of 12 bytes is no multiple of 8
    y = as_strided(x, (2,), (1,), 1)
    testing.assert_allclose(y.array, [2, 3], atol=0, rtol=0)


def test_gradient_is_layout_agnostic():
    # x aliases memory: x[i, j] = memory[3 - i + 2j]; y reads memory[i + 2j]
    memory = numpy.arange(8, dtype=numpy.float64)
    x = Variable(_stride_array(memory, (3, 3), (-1, 2), 3))
    y = as_strided(x, (3, 3), (1, 2), 0)
    testing.assert_allclose(y.array, [[0, 2, 4], [1, 3, 5], [2, 4, 6]], atol=0, rtol=0)
    y.grad = numpy.ones((3, 3))
    y.backward()
    # each position's gradient is shared among the elements of x aliasing it
    expected = [[0.5, 0.5, 0.0], [2.0, 2.0, 1.0], [1.0, 0.5, 0.5]]
    testing.assert_allclose(x.grad, expected, atol=0, rtol=0)

    x = Variable(numpy.broadcast_to(numpy.arange(3.0), (2, 3)))
    y = as_strided(x, (3,), (1,), 0)
    y.grad = numpy.ones(3)
    y.backward()
    testing.assert_allclose(x.grad, numpy.full((2, 3), 0.5), atol=0, rtol=0)


def test_gradient_of_the_gradient_is_its_transpose():
    rng = numpy.random.default_rng(0)
    x = Variable(_stride_array(numpy.arange(8.0), (3, 3), (-1, 2), 3))
    y = as_strided(x, (2, 3), (1, 2), 1)
    gy = Variable(rng.normal(size=(2, 3)))
    (gx,) = grad([y], [x], [gy], enable_double_backprop=True)
    ggx = rng.normal(size=(3, 3))
    (ggy,) = grad([F.sum(gx * ggx)], [gy])
    numpy.testing.assert_allclose(
        numpy.sum(ggy.array * gy.array), numpy.sum(gx.array * ggx), rtol=1e-12
    )


@pytest.mark.parametrize("dtype", [numpy.int16, numpy.int32, numpy.int64])
def test_integer_gradient_is_a_type_error(dtype):
    x = Variable(numpy.arange(4, dtype=dtype))
    y = as_strided(x, (4,), (-1,), 3)
    y.grad = numpy.ones(4, dtype)
    message = "as_strided: the gradient is defined for floating dtypes only, got "
    with pytest.raises(TypeError, match=message + numpy.dtype(dtype).name):
        y.backward()


def test_stride_array_helper():
    x = numpy.arange(8.0)
    numpy.testing.assert_array_equal(_stride_array(x, (4,), (-1,), 3), [3.0, 2.0, 1.0, 0.0])
    numpy.testing.assert_array_equal(
        _stride_array(x, (3, 3), (-1, 2), 3), [[3, 5, 7], [2, 4, 6], [1, 3, 5]]
    )
    assert numpy.shares_memory(_stride_array(x, (2,), (1,), 0), x)
    # the memory of a view, not its elements: a reversed view reads forwards
    numpy.testing.assert_array_equal(_stride_array(x[::-1], (3,), (1,), 0), [0.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="as_strided: the view reads elements -1 to 5 of the 8"):
        _stride_array(x, (3, 3), (-1, 2), 1)
