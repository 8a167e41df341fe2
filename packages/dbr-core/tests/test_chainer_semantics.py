"""Behaviours of Variable, VariableNode, FunctionNode and the operators that follow Chainer v7."""

import copy
import inspect

import numpy
import pytest

from dbr.core import Function, FunctionNode, Parameter, Variable, grad, initializers, type_check
from dbr.core.backend import CpuDevice
from dbr.core.configuration import using_config
from dbr.core.ops import arithmetic
from dbr.core.variable import VariableNode


def s32(value):
    return numpy.array(value, dtype=numpy.float32)


class Identity(Function):
    """An old-style Function: array backward, so its gradients cannot be differentiated."""

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, inputs, grad_outputs):
        return (grad_outputs[0],)


# -- operators -------------------------------------------------------------------------


def test_floordiv_is_the_floor_of_the_quotient_and_not_differentiable():
    x = Variable(numpy.array([7.0, -7.0], numpy.float32))
    y = Variable(numpy.array([2.0, 2.0], numpy.float32))
    for z, expected in ((x // y, [3.0, -4.0]), (x // 2.0, [3.0, -4.0]), (7.0 // y, [3.0, 3.0])):
        assert z.dtype == numpy.float32
        numpy.testing.assert_array_equal(z.array, expected)
        assert z.creator is None and not z.requires_grad
    numpy.testing.assert_array_equal(x.__rfloordiv__(numpy.float32(15.0)).array, [2.0, -3.0])


@pytest.mark.parametrize(
    ("value", "text"),
    [(2, "2"), (0, "0"), (-2, "(-2)"), (2.0, "2.0"), (-2.0, "(-2.0)"), (numpy.float32(2), "2.0")],
)
def test_constants_read_in_labels_as_chainer_writes_them(value, text):
    assert arithmetic._convert_value_to_string(value) == text
    assert arithmetic.AddConstant(value).label == f"_ + {text}"
    assert arithmetic.PowConstVar(value).label == f"{text} ** _"


def test_an_array_constant_reads_constant_array_and_anything_else_is_an_error():
    a = numpy.array([1, 2])
    assert arithmetic._convert_value_to_string(a) == "constant array"
    assert arithmetic._convert_value_to_string(Variable(a)) == "constant array"
    with pytest.raises(ValueError, match="got object"):
        arithmetic._convert_value_to_string(object())


def test_errors_of_an_operator_name_its_label_and_its_class():
    x = Variable(numpy.ones(2, numpy.float32))
    with pytest.raises(type_check.InvalidType, match=r"in: _ \+ _ \(Add\) \(Forward\)"):
        x + Variable(numpy.ones(2, numpy.float64))


def test_the_cpu_device_sends_a_numpy_scalar_as_a_0d_array():
    sent = CpuDevice().send(numpy.float16(3.0))
    assert type(sent) is numpy.ndarray and sent.shape == () and sent.dtype == numpy.float16
    a = numpy.ones(2)
    assert CpuDevice().send(a) is a


# -- Variable and its node ---------------------------------------------------------------


def test_a_variable_made_by_user_code_has_its_node_at_once():
    x = Variable(s32(1.0), requires_grad=False)
    assert isinstance(x._node, VariableNode) and x._node is x.node
    assert x._node._requires_grad is False
    assert x._has_chainerx_array is False


def test_the_node_private_names_are_its_rank_and_flag():
    x = Variable(s32(1.0))
    x.node._rank = 3
    assert x.rank == 3 and x.node.rank == 3
    x.node._requires_grad = False
    assert x.node.requires_grad is False
    y = (x * 2.0).creator_node
    assert y.rank == 3


def test_a_node_refuses_a_gradient_argument():
    with pytest.raises(ValueError, match="pass the gradient to the Variable"):
        VariableNode(Variable(), "", grad=None)
    with pytest.raises(TypeError, match="unexpected keyword arguments"):
        VariableNode(Variable(), other=1)


def test_init_unchecked_wraps_without_validation():
    a = numpy.ones(3, numpy.float32)
    x = Variable._init_unchecked(a, name="x", requires_grad=False)
    assert x.array is a and x.name == "x" and not x.requires_grad
    assert isinstance(x.node, VariableNode)
    node = VariableNode(Variable(a), True)
    assert Variable._init_unchecked(a, node=node).node is node


def test_unchain_and_a_none_creator_keep_the_rank():
    x = Variable(s32(1.0))
    h = x * 2.0 * 3.0
    assert h.rank == 2
    h.unchain()
    assert h.creator is None and h.rank == 2
    g = x * 2.0 * 3.0
    creator = g.creator_node
    g.creator = None
    assert g.rank == 2
    g.node._rank = -1
    g.creator_node = creator
    assert g.rank == creator.rank + 1


def test_an_old_style_function_has_a_node_before_it_is_called():
    f = Identity()
    f.node.rank = 10
    v = Variable(s32(1.0))
    v.set_creator(f)
    assert v.creator is f and v.creator_node is f.node and v.rank == 11
    fresh = Variable()
    fresh.creator = Identity()
    assert fresh.rank == 1


def test_private_grad_is_the_gradient_array():
    x = Variable(s32(1.0))
    assert x._grad is None
    x.grad = s32(2.0)
    assert x._grad is x.grad


def test_copydata_between_two_empty_variables_does_nothing():
    a, b = Parameter(), Parameter()
    a.copydata(b)
    assert a.array is None and b.array is None


def test_addgrad_initializes_an_uninitialized_parameter():
    x = Parameter()
    y = Parameter(numpy.ones((3, 2), numpy.float32))
    y.grad = numpy.full((3, 2), 2.0, numpy.float32)
    x.cleargrad()
    x.addgrad(y)
    assert x.array.shape == (3, 2)
    numpy.testing.assert_array_equal(x.grad, y.grad)


def test_zerograd_fills_the_gradient_in_place_and_cuts_its_graph():
    a = Variable(numpy.ones(3, numpy.float32))
    g = Variable(numpy.full(3, numpy.nan, numpy.float32))
    g.creator_node = FunctionNode()
    a.grad_var = g
    with pytest.warns(DeprecationWarning):
        a.zerograd()
    assert a.grad_var is g and g.creator_node is None
    numpy.testing.assert_array_equal(a.grad, 0.0)


def test_parameter_dtype_is_an_error_only_for_an_initializer_without_one():
    class Plain:
        def __call__(self, array):
            array.fill(1)

    with pytest.raises(RuntimeError, match="has no dtype attribute"):
        Parameter(Plain()).dtype  # noqa: B018
    assert Parameter(initializers.Zero(numpy.float16)).dtype == numpy.float16


def test_a_copy_of_a_variable_has_a_node_of_its_own():
    x = Variable(s32(1.0))
    y = copy.copy(x)
    assert y.node is not x.node and y.node.get_variable_or_none() is y


# -- backward --------------------------------------------------------------------------


def test_a_gradient_of_an_old_style_function_cannot_be_differentiated_again():
    x = Variable(s32(42.0))
    y = Identity()(x)
    y.backward(enable_double_backprop=True)
    assert x.grad == 1.0
    with pytest.raises(RuntimeError, match="cannot twice-differentiate an old style Function"):
        x.grad_var.backward()
    z = x * 2.0
    y = Identity()(z)
    y.backward(enable_double_backprop=True, retain_grad=True)
    with pytest.raises(RuntimeError, match="twice-differentiate"):
        grad([x.grad_var], [z])


def test_an_old_style_backward_is_checked_against_its_inputs():
    class Returns(Function):
        label = "returns"

        def __init__(self, gradient):
            self.gradient = gradient

        def forward(self, inputs):
            return (inputs[0].copy(),)

        def backward(self, inputs, grad_outputs):
            return [self.gradient]

    cases = [
        (1, TypeError, "to be an array"),
        (numpy.array([1], numpy.int32), TypeError, "dtype float32, got int32"),
        (numpy.array([1, 2], numpy.float32), ValueError, r"shape \(1,\), got \(2,\)"),
    ]
    for gradient, error, message in cases:
        x = Variable(numpy.array([1.0], numpy.float32))
        y = Returns(gradient)(x)
        y.grad = numpy.ones(1, numpy.float32)
        with pytest.raises(error, match=f"returns.backward.*{message}"):
            y.backward()


class ReturnsGradient(FunctionNode):
    def __init__(self, gradients):
        self.gradients = gradients

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, indexes, grad_outputs):
        return self.gradients


@pytest.mark.parametrize(
    ("gradients", "initial", "message"),
    [
        ((numpy.ones(1, numpy.float32),), None, "type of gradients returned from backward"),
        ((Variable(numpy.ones(2, numpy.float32)),), None, "shape of gradients returned"),
        ((Variable(numpy.ones(1, numpy.int64)),), numpy.ones(1, numpy.float32), "dtype of grad"),
        ((), None, "number of gradients returned from backward is incorrect: 0 != expected 1"),
    ],
)
def test_debug_mode_checks_each_gradient_a_backward_returns(gradients, initial, message):
    x = Variable(numpy.ones(1, numpy.float32))
    y = ReturnsGradient(gradients).apply((x,))[0]
    if initial is not None:
        x.grad = initial
    y.grad = numpy.ones(1, numpy.float32)
    with using_config("debug", True), pytest.raises(ValueError, match=message) as info:
        y.backward()
    assert "function=ReturnsGradient" in str(info.value)


def test_a_backward_error_in_debug_mode_shows_where_the_function_was_applied():
    class Raises(FunctionNode):
        def forward(self, inputs):
            return (inputs[0].copy(),)

        def backward(self, indexes, grad_outputs):
            raise FloatingPointError("divide by zero")

    x = Variable(numpy.ones(1, numpy.float32))
    with using_config("debug", True):
        line = inspect.currentframe().f_lineno + 1
        y = Raises().apply((x,))[0]
        y.grad = numpy.ones(1, numpy.float32)
        with pytest.raises(FloatingPointError, match="divide by zero") as info:
            y.backward()
    message = str(info.value)
    assert "Stacktrace of the function is below" in message and f"line {line}" in message


def test_grad_takes_lists_or_tuples_only():
    x = Variable(numpy.ones(3, numpy.float32))
    y = x * x
    g = Variable(numpy.ones(3, numpy.float32))
    assert grad((y,), (x,), (g,), (g,))[0] is not None
    for args in ((y, [x]), ([y], x), ([y], [x], g), ([y], [x], [g], g)):
        with pytest.raises(TypeError, match="list or tuple"):
            grad(*args)


def test_forward_outputs_must_be_arrays():
    class Bad(FunctionNode):
        def forward(self, inputs):
            return (object(),)

    with pytest.raises(TypeError, match="forward output must be a tuple of ndarrays"):
        Bad().apply((numpy.ones(1, numpy.float32),))


def test_a_plain_function_node_runs_a_check_set_on_the_instance():
    seen = []
    f = FunctionNode()
    f.check_type_forward = seen.append
    f.forward = lambda inputs: (inputs[0],)
    f.apply((numpy.ones(2, numpy.float32),))
    assert len(seen) == 1 and isinstance(seen[0], type_check.LightTypeInfoTuple)
