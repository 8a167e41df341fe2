"""FunctionNode.apply_in_backward and apply_gradient: a backward's one formula, run on arrays
when nothing records."""

import contextlib
import operator

import numpy
import pytest

from dbr.core import FunctionHook, Variable, gradient_check, ops, using_config
from dbr.core.function_node import _output_variable
from dbr.core.ops.arithmetic import DivGrad, Mul, MulGrad, PowVarConstGrad
from dbr.core.ops.sum import SumGrad
from dbr.core.variable import VariableNode

RNG = numpy.random.default_rng(5)


def _data(shape):
    return RNG.uniform(0.5, 2.0, shape).astype(numpy.float32)


@pytest.mark.parametrize(
    "make_node, n_inputs",
    [(Mul, 2), (DivGrad, 3), (lambda: PowVarConstGrad(3.5), 2)],
    ids=["Mul", "DivGrad", "PowVarConstGrad"],
)
@pytest.mark.parametrize(
    "flags", [(False, False, False), (False, True, False), (True, True, True)]
)
def test_it_gives_the_outputs_apply_gives(make_node, n_inputs, flags):
    inputs = [Variable(_data((2, 3)), requires_grad=f) for f in flags[:n_inputs]]
    with using_config("enable_backprop", False):
        on_arrays = make_node().apply_in_backward(inputs)
        applied = make_node().apply(inputs)
    assert len(on_arrays) == len(applied)
    for fast, reference in zip(on_arrays, applied):
        assert fast.creator is None
        assert fast.requires_grad == reference.requires_grad == any(flags[:n_inputs])
        assert fast.dtype == reference.dtype and fast.shape == reference.shape
        numpy.testing.assert_array_equal(fast.array, reference.array)


def test_it_records_the_node_when_the_backward_is_recorded():
    x, gy = Variable(_data((3,))), Variable(_data((3,)))
    with using_config("enable_backprop", True):
        (gx,) = PowVarConstGrad(2.0).apply_in_backward((x, gy))
    assert isinstance(gx.creator, PowVarConstGrad)


# The ways a backward runs: on arrays (nothing records it), through apply without a
# graph (a function hook watches it) and recorded (enable_double_backprop).
_MODES = {
    "on_arrays": (contextlib.nullcontext, False),
    "hooked": (FunctionHook, False),
    "recorded": (contextlib.nullcontext, True),
}


def _gradients(op, a_data, b_data, b_requires_grad, mode):
    context, double = _MODES[mode]
    a = Variable(a_data)
    b = Variable(b_data, requires_grad=b_requires_grad)
    y = op(a, b)
    y.grad = numpy.full(y.shape, 0.75, y.dtype)
    with context():
        y.backward(enable_double_backprop=double)
    assert (a.grad_var.creator is not None) == double
    return [(g.array, g.requires_grad) for g in (a.grad_var, b.grad_var) if g is not None]


@pytest.mark.parametrize(
    "op",
    [
        operator.mul,
        operator.truediv,
        lambda a, b: a**2 * b,
        lambda a, b: (a**3.5) / b,
        lambda a, b: ops.sum(a * b, axis=1, keepdims=True) * 2.0,
        lambda a, b: ops.sum(a, axis=0) * ops.sum(b),
    ],
    ids=["mul", "div", "pow2", "pow3.5", "sum-keepdims", "sum-axis"],
)
@pytest.mark.parametrize("shapes", [((2, 3), (2, 3)), ((2, 3), (3,))], ids=["same", "broadcast"])
@pytest.mark.parametrize("b_requires_grad", [True, False])
def test_every_way_of_running_a_backward_gives_the_same_bits_and_flags(
    op, shapes, b_requires_grad
):
    a_data, b_data = _data(shapes[0]), _data(shapes[1])
    results = {mode: _gradients(op, a_data, b_data, b_requires_grad, mode) for mode in _MODES}
    reference = results.pop("on_arrays")
    for mode, grads in results.items():
        assert len(grads) == len(reference), mode
        for (array, flag), (expected, expected_flag) in zip(grads, reference):
            # A recorded backward leaves a leaf the gradient it computed, where the others
            # give a leaf its own copy of a broadcast one (sum's), which requires no grad.
            assert flag == expected_flag or mode == "recorded", mode
            assert array.dtype == expected.dtype and array.shape == expected.shape, mode
            numpy.testing.assert_array_equal(array, expected, err_msg=mode)


# -- apply_gradient: a backward's gradient node applied to what the node retained ---------


def _retaining_node(kind, x_requires_grad):
    # A node retaining its input (x ** 2) or its output (2 ** x), with the Variable it
    # retained dropped, as in the middle of a chain.
    x = Variable(_data((2, 3)), requires_grad=x_requires_grad)
    y = x**2.0 if kind == "input" else 2.0**x
    return y.creator_node


@pytest.mark.parametrize("kind", ["input", "output"])
@pytest.mark.parametrize("x_requires_grad", [True, False])
@pytest.mark.parametrize("mode", ["on_arrays", "hooked", "recorded"])
def test_apply_gradient_applies_the_node_to_the_retained_values_and_the_gradients(
    kind, x_requires_grad, mode
):
    node = _retaining_node(kind, x_requires_grad)
    gy = Variable(_data((2, 3)), requires_grad=False)
    context, double = _MODES[mode]
    with context(), using_config("enable_backprop", double):
        (fast,) = node.apply_gradient(Mul(), (gy,))
    with using_config("enable_backprop", False):
        retained = (*node.get_retained_inputs(), *node.get_retained_outputs())
        (reference,) = Mul().apply((*retained, gy))
    assert (fast.creator is not None) == double
    assert fast.requires_grad == reference.requires_grad
    numpy.testing.assert_array_equal(fast.array, reference.array)


@pytest.mark.parametrize("make_node", [MulGrad, DivGrad], ids=["MulGrad", "DivGrad"])
@pytest.mark.parametrize("indexes", [(0,), (1,), (0, 1)])
def test_the_gradient_nodes_of_some_inputs_are_differentiable(make_node, indexes):
    # x0 (2, 3) times or over x1 (3,), as a broadcasting Mul or Div would give them.
    x0 = RNG.uniform(0.5, 2.0, (2, 3))
    x1 = RNG.uniform(0.5, 2.0, (3,))
    gy = RNG.uniform(-1.0, 1.0, (2, 3))
    ggxs = tuple([RNG.uniform(-1.0, 1.0, (2, 3)) for _ in indexes])
    gradient_check.check_backward(
        lambda *xs: make_node(indexes).apply(xs), (x0, x1, gy), ggxs, dtype=numpy.float64
    )


@pytest.mark.parametrize(
    "x_shape, axis, keepdims",
    [((2, 3), None, False), ((2, 3, 4), (0, 2), False), ((2, 3), (1,), True), ((), None, False)],
)
def test_the_gradient_node_of_sum_is_differentiable(x_shape, axis, keepdims):
    x = RNG.uniform(-1.0, 1.0, x_shape)
    gy = RNG.uniform(-1.0, 1.0, x.sum(axis=axis, keepdims=keepdims).shape)
    ggx = RNG.uniform(-1.0, 1.0, x_shape)
    gradient_check.check_backward(
        lambda g: SumGrad(x.shape, x.dtype, axis, keepdims).apply((g,)), (gy,), (ggx,)
    )


# -- output Variables -----------------------------------------------------------------


def test_an_output_node_has_every_slot_a_constructed_node_has():
    creator = Mul()
    creator.rank = 4
    y = numpy.ones(3, numpy.float32)
    var = _output_variable(creator, y, True, 5)
    expected = VariableNode(Variable.from_array(y), True, creator)
    for slot in VariableNode.__slots__:
        if slot == "__weakref__":
            continue
        value = getattr(var._node, slot)
        if slot == "_variable":
            assert value() is var
        else:
            assert value is getattr(expected, slot) or value == getattr(expected, slot), slot
