import numpy

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, uniform
from dbr.core.type_check import InvalidType
from dbr.functions.array.separate import separate
from dbr.functions.array.stack import Stack

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


@testing.parameterize(
    *testing.product(
        {
            "shape,axis": [
                ((3,), 0),
                ((3, 4), 0),
                ((3, 4), 1),
                ((3, 4), -1),
                ((2, 3, 4), 1),
                ((2, 3, 4), -3),
                ((1, 0), 0),
            ],
            "dtype": FLOATS,
        }
    )
)
class TestSeparate(FunctionTestCase):
    def generate_inputs(self):
        return (uniform(self.shape, self.dtype),)

    def forward(self, inputs, device):
        return separate(inputs[0], axis=self.axis)

    def forward_expected(self, inputs):
        x = inputs[0]
        axis = self.axis % x.ndim
        return tuple([x[(slice(None),) * axis + (i,)].copy() for i in range(x.shape[axis])])

    function = staticmethod(separate)

    def bad_inputs(self):
        return [
            ((numpy.zeros((), numpy.float32),), InvalidType, ("Separate", "x.ndim > 0")),
            ((numpy.zeros((2, 3), numpy.float32),), {"axis": -3}, InvalidType, "-x.ndim <= -3"),
            (
                (numpy.zeros((2, 3), numpy.float32),),
                {"axis": None},
                TypeError,
                "separate: expected axis to be an int, got None",
            ),
        ]


def test_default_axis_and_views():
    x = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    ys = separate(x)
    assert len(ys) == 2 and ys[0].shape == (3,)
    assert all(numpy.shares_memory(y.array, x) for y in ys)


def test_separate_of_a_vector_gives_0d_arrays():
    ys = separate(numpy.array([1.0, 2.0], numpy.float32))
    assert all(type(y.array) is numpy.ndarray and y.shape == () for y in ys)


def test_empty_axis_gives_no_outputs():
    assert separate(numpy.zeros((0, 3), numpy.float32)) == ()


def test_unused_outputs_get_zero_gradients_through_stack():
    x = Variable(numpy.ones((3, 2), numpy.float32))
    ys = separate(x, axis=0)
    ys[2].grad = numpy.array([5, 6], numpy.float32)
    ys[2].backward(enable_double_backprop=True)
    numpy.testing.assert_array_equal(x.grad, [[0, 0], [0, 0], [5, 6]])
    assert isinstance(x.grad_var.creator, Stack)
