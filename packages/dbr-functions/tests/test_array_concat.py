import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.concat import Concat, concat
from dbr.functions.array.split_axis import SplitAxis

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shapes,axis": [
                ([(2, 3), (2, 1), (2, 4)], 1),
                ([(2, 3), (2, 1), (2, 4)], -1),
                ([(1, 3), (3, 3)], 0),
                ([(1, 3), (3, 3)], -2),
                ([(4,), (2,)], 0),
                ([(2, 3, 4)], 1),
                ([(2, 0, 4), (2, 3, 4), (2, 1, 4)], 1),
                ([(2, 3, 2), (2, 3, 5), (2, 3, 1), (2, 3, 1)], 2),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestConcat(FunctionTestCase):
    def generate_inputs(self):
        return tuple([uniform(s, self.dtype) for s in self.shapes])

    def forward(self, inputs, device):
        return (concat(inputs, axis=self.axis),)

    def forward_expected(self, inputs):
        ndim = inputs[0].ndim
        axis = self.axis % ndim
        # Reference: place each input into a preallocated output by offsets.
        total = sum(x.shape[axis] for x in inputs)
        shape = list(inputs[0].shape)
        shape[axis] = total
        y = numpy.empty(shape, self.dtype)
        start = 0
        for x in inputs:
            index = [slice(None)] * ndim
            index[axis] = slice(start, start + x.shape[axis])
            y[tuple(index)] = x
            start += x.shape[axis]
        return (y,)

    function = staticmethod(concat)

    def bad_inputs(self):
        f32 = numpy.float32
        return [
            (
                ((numpy.zeros((2, 3), f32), numpy.zeros((3, 3), f32)),),
                InvalidType,
                ("Concat", "xs[1].shape[0] == xs[0].shape[0]"),
            ),
            (
                ((numpy.zeros((2, 3), f32), numpy.zeros((2, 3), numpy.float64)),),
                InvalidType,
                "xs[1].dtype == xs[0].dtype",
            ),
            (
                ((numpy.zeros((2, 3), f32), numpy.zeros((2, 3, 1), f32)),),
                InvalidType,
                "xs[1].ndim == xs[0].ndim",
            ),
            (((numpy.zeros((2, 3), f32),),), {"axis": 2}, InvalidType, "xs[0].ndim > 2"),
            (((numpy.zeros((2, 3), f32),),), {"axis": -3}, InvalidType, "-xs[0].ndim <= -3"),
            (((numpy.zeros((), f32),),), {"axis": 0}, InvalidType, "Concat"),
            (((),), InvalidType, "in_types.size() > 0"),
            (
                ((numpy.zeros((2, 3), f32),),),
                {"axis": 1.0},
                TypeError,
                "concat: expected axis to be an int, got 1.0",
            ),
        ]


def test_concat_default_axis_is_1():
    a = numpy.zeros((2, 1), numpy.float32)
    b = numpy.ones((2, 2), numpy.float32)
    assert concat([a, b]).shape == (2, 3)


def test_concat_of_integers_and_variables():
    a = numpy.arange(4, dtype=numpy.int32).reshape(2, 2)
    b = Variable(numpy.arange(2, dtype=numpy.int32).reshape(2, 1), requires_grad=False)
    y = concat((a, b))
    numpy.testing.assert_array_equal(y.array, [[0, 1, 0], [2, 3, 1]])
    assert y.dtype == numpy.int32


def test_concat_gradient_is_split_by_split_axis():
    xs = [Variable(numpy.zeros((2, n), numpy.float32)) for n in (1, 2, 3)]
    y = concat(xs)
    assert isinstance(y.creator, Concat)
    y.grad = numpy.arange(12, dtype=numpy.float32).reshape(2, 6)
    y.backward()
    numpy.testing.assert_array_equal(xs[0].grad, [[0], [6]])
    numpy.testing.assert_array_equal(xs[1].grad, [[1, 2], [7, 8]])
    numpy.testing.assert_array_equal(xs[2].grad, [[3, 4, 5], [9, 10, 11]])


def test_concat_gradient_only_for_inputs_that_need_it():
    a = Variable(numpy.ones((2, 2), numpy.float32))
    b = numpy.ones((2, 3), numpy.float32)
    y = concat((a, b))
    y.grad = numpy.arange(10, dtype=numpy.float32).reshape(2, 5)
    y.backward()
    numpy.testing.assert_array_equal(a.grad, [[0, 1], [5, 6]])


def test_double_backward_goes_through_split_axis():
    a = Variable(numpy.ones((2, 2)))
    b = Variable(numpy.ones((2, 3)))
    y = concat((a, b))
    y.grad_var = Variable(numpy.ones((2, 5)))
    y.backward(enable_double_backprop=True)
    assert isinstance(a.grad_var.creator, SplitAxis)
