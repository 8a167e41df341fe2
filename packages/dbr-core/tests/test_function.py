"""The old-style Function adapter: array forward/backward running on FunctionNode."""

import numpy
import pytest

from dbr.core import Variable, grad
from dbr.core.function import Function, FunctionAdapter
from dbr.core.type_check import InvalidType, expect


class Square(Function):
    def check_type_forward(self, in_types):
        expect(in_types.size() == 1, in_types[0].dtype.kind == "f")

    def forward(self, inputs):
        return (inputs[0] ** 2,)

    def backward(self, inputs, grad_outputs):
        return (2 * inputs[0] * grad_outputs[0],)


class SplitSum(Function):
    """Two outputs from two inputs: (a + b, a - b); dispatches through _cpu variants."""

    def forward_cpu(self, inputs):
        a, b = inputs
        return a + b, a - b

    def backward_cpu(self, inputs, grad_outputs):
        g_sum, g_diff = grad_outputs
        g_sum = 0 if g_sum is None else g_sum
        g_diff = 0 if g_diff is None else g_diff
        return g_sum + g_diff, g_sum - g_diff


def test_single_output_is_a_variable_with_the_function_as_creator():
    x = Variable(numpy.array([1.0, 3.0], numpy.float32))
    f = Square()
    y = f(x)
    assert isinstance(y, Variable)
    numpy.testing.assert_array_equal(y.array, [1.0, 9.0])
    assert y.creator is f
    assert isinstance(y.creator_node, FunctionAdapter)
    assert f.label == "Square"
    assert f.inputs[0] is x.node
    assert f.rank == 0


def test_backward_calls_the_array_backward():
    x = Variable(numpy.array([1.0, 3.0], numpy.float32))
    y = Square()(x)
    y.grad = numpy.ones(2, numpy.float32)
    y.backward()
    numpy.testing.assert_array_equal(x.grad, [2.0, 6.0])


def test_several_outputs_and_cpu_variants():
    a = Variable(numpy.array([1.0, 2.0]))
    b = Variable(numpy.array([5.0, 7.0]))
    s, d = SplitSum()(a, b)
    numpy.testing.assert_array_equal(s.array, [6.0, 9.0])
    numpy.testing.assert_array_equal(d.array, [-4.0, -5.0])
    gs = numpy.array([1.0, 1.0])
    ga, gb = grad([s], [a, b], grad_outputs=[gs])
    numpy.testing.assert_array_equal(ga.array, [1.0, 1.0])
    numpy.testing.assert_array_equal(gb.array, [1.0, 1.0])


def test_old_style_gradients_are_first_order_only():
    x = Variable(numpy.array([2.0]))
    y = Square()(x)
    (gx,) = grad([y], [x], enable_double_backprop=True)
    numpy.testing.assert_array_equal(gx.array, [4.0])
    assert gx.creator is None


def test_type_check_failure_names_the_function():
    x = Variable(numpy.array([1, 2], numpy.int32))
    with pytest.raises(InvalidType) as info:
        Square()(x)
    message = str(info.value)
    assert "Square (Forward)" in message
    assert "in_types[0].dtype.kind == 'f'" in message


def test_missing_forward_raises_naming_the_function():
    class Empty(Function):
        pass

    with pytest.raises(NotImplementedError, match="Empty"):
        Empty()(numpy.zeros(1, numpy.float32))


def test_backward_returning_the_wrong_count_raises():
    class Bad(Function):
        def forward(self, inputs):
            return (inputs[0] * 1,)

        def backward(self, inputs, grad_outputs):
            return (grad_outputs[0], grad_outputs[0])

    x = Variable(numpy.ones(()))
    y = Bad()(x)
    with pytest.raises(ValueError, match="Bad.backward must return a tuple of 1"):
        y.backward()


def test_retain_outputs_gives_output_data():
    class Exp(Function):
        def forward(self, inputs):
            self.retain_inputs(())
            self.retain_outputs((0,))
            return (numpy.exp(inputs[0]),)

        def backward(self, inputs, grad_outputs):
            assert inputs == (None,)
            return (self.output_data[0] * grad_outputs[0],)

    x = Variable(numpy.array([0.0, 1.0]))
    f = Exp()
    y = f(x)
    y.grad = numpy.ones(2)
    y.backward()
    numpy.testing.assert_allclose(x.grad, numpy.exp([0.0, 1.0]))
