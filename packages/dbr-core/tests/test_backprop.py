import gc
import weakref

import numpy
import pytest

from dbr.core import FunctionNode, Variable, backward, grad, ops


def f32(*values):
    return numpy.array(values, dtype=numpy.float32)


def s32(value):
    """A 0-d float32 array: the scalar that backward seeds with 1 without a warning."""
    return numpy.array(value, dtype=numpy.float32)


def assert_equal(actual, expected):
    numpy.testing.assert_array_equal(actual, numpy.asarray(expected, dtype=actual.dtype))


class Exp(FunctionNode):
    """exp(x), whose backward needs only its retained output."""

    def forward(self, inputs):
        self.retain_outputs((0,))
        return (numpy.exp(inputs[0]),)

    def backward(self, indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        return (grad_outputs[0] * y,)


# -- Variable.backward ---------------------------------------------------------


def test_backward_of_a_scalar_seeds_one_and_consumes_it_as_chainer_does():
    x = Variable(f32(1.0, 2.0, 3.0))
    y = ops.sum(x * x)
    assert y.grad is None
    y.backward()
    assert y.grad is None  # the root's gradient is used up, unless retain_grad
    assert_equal(x.grad, [2.0, 4.0, 6.0])
    y = ops.sum(x * x)
    y.backward(retain_grad=True)
    assert y.grad.shape == () and y.grad.dtype == numpy.float32
    assert y.grad == 1.0


def test_backward_consumes_a_given_output_gradient_unless_retain_grad():
    x = Variable(f32(1.0, 2.0))
    y = x * x
    y.grad = f32(1.0, 1.0)
    y.backward()
    assert y.grad_var is None
    y = x * x
    y.grad = f32(1.0, 1.0)
    seed = y.grad_var
    y.backward(retain_grad=True)
    assert y.grad_var is seed


def test_backward_seeds_any_single_element_array_with_a_deprecation_warning():
    x = Variable(f32(3.0).reshape(1, 1))
    y = x * x
    with pytest.warns(DeprecationWarning, match="only one element as a scalar"):
        y.backward()
    assert_equal(x.grad, [[6.0]])


def test_backward_of_a_non_scalar_without_grad_names_the_shape():
    y = Variable(f32(1.0, 2.0)) * 2.0
    with pytest.raises(ValueError, match=r"Variable\.backward.*shape \(2,\).*y\.grad"):
        y.backward()


def test_backward_uses_a_given_output_gradient():
    x = Variable(f32(1.0, 2.0))
    y = x * x
    y.grad = f32(1.0, 10.0)
    y.backward()
    assert_equal(x.grad, [2.0, 40.0])


def test_backward_of_a_leaf_seeds_its_own_gradient():
    x = Variable(s32(3.0))
    x.backward()
    assert x.grad == 1.0
    x.grad = s32(5.0)
    x.backward()
    assert x.grad == 5.0


def test_gradients_accumulate_across_backward_calls_until_cleargrad():
    x = Variable(f32(1.0, 2.0))
    y = ops.sum(x * x)
    y.backward()
    y.backward()
    assert_equal(x.grad, [4.0, 8.0])
    x.cleargrad()
    assert x.grad is None
    y.backward()
    assert_equal(x.grad, [2.0, 4.0])


def test_accumulating_into_a_leaf_gradient_records_no_graph():
    x = Variable(f32(1.0, 2.0))
    y = ops.sum(x * x)
    y.backward()
    y.backward()
    assert x.grad_var.creator is None


def test_intermediate_gradients_are_kept_only_with_retain_grad():
    x = Variable(f32(1.0, 2.0))
    h = x * 3.0
    y = ops.sum(h * h)
    y.backward()
    assert h.grad is None
    assert_equal(x.grad, [18.0, 36.0])

    x.cleargrad()
    y.backward(retain_grad=True)
    assert_equal(h.grad, [6.0, 12.0])
    assert_equal(x.grad, [18.0, 36.0])


def test_inputs_not_requiring_grad_get_no_gradient():
    x = Variable(f32(1.0, 2.0))
    c = Variable(f32(3.0, 4.0), requires_grad=False)
    y = ops.sum(x * c)
    y.backward()
    assert c.grad is None
    assert_equal(x.grad, [3.0, 4.0])
    assert not c.requires_grad and x.requires_grad


def test_a_graph_of_constants_only_gets_no_gradient():
    c = Variable(f32(3.0, 4.0), requires_grad=False)
    y = ops.sum(c * c)
    assert y.requires_grad is False
    y.backward()
    assert c.grad is None


def test_diamond_graphs_accumulate_every_path():
    x = Variable(f32(1.0, 2.0))
    a = x * x  # 2x
    b = x * 3.0  # 3
    c = ops.sum(a + b + x)  # 1
    c.backward()
    assert_equal(x.grad, [6.0, 8.0])


def test_a_variable_used_twice_by_one_function():
    x = Variable(s32(3.0))
    y = x * x
    y.backward()
    assert x.grad == 6.0


def test_broadcast_inputs_get_gradients_of_their_own_shape():
    x = Variable(numpy.ones((2, 3), numpy.float32))
    b = Variable(f32(1.0, 2.0, 3.0))
    ops.sum(x * b).backward()
    assert b.grad.shape == (3,)
    assert_equal(b.grad, [2.0, 2.0, 2.0])
    assert_equal(x.grad, [[1.0, 2.0, 3.0]] * 2)


def test_loss_scale_scales_the_gradients_and_is_remembered():
    x = Variable(f32(1.0, 2.0))
    ops.sum(x * x).backward(loss_scale=8.0)
    assert_equal(x.grad, [16.0, 32.0])
    assert x._loss_scale == 8.0


# -- double backprop -----------------------------------------------------------


def test_double_backprop_through_backward():
    x = Variable(s32(2.0))
    y = x**3
    y.backward(enable_double_backprop=True)
    gx = x.grad_var
    assert gx.array == 12.0
    assert gx.creator is not None
    x.cleargrad()
    gx.backward()
    assert x.grad == 12.0  # d(3x^2)/dx = 6x


def test_without_double_backprop_the_gradient_has_no_graph():
    x = Variable(s32(2.0))
    (x**3).backward()
    assert x.grad_var.creator is None


def test_double_backprop_through_grad():
    x = Variable(f32(3.0))
    y = x * x * x
    (gx,) = grad([y], [x], enable_double_backprop=True)
    (ggx,) = grad([gx], [x])
    assert_equal(gx.array, [27.0])
    assert_equal(ggx.array, [18.0])
    assert x.grad is None


# -- grad ----------------------------------------------------------------------


def test_grad_with_respect_to_intermediates_and_leaves():
    x = Variable(f32(1.0, 2.0))
    h = x * 3.0
    y = ops.sum(h * h)
    gh, gx = grad([y], [h, x])
    assert_equal(gh.array, [6.0, 12.0])
    assert_equal(gx.array, [18.0, 36.0])
    assert x.grad is None and h.grad is None


def test_grad_leaves_existing_leaf_gradients_untouched():
    x = Variable(f32(1.0))
    x.grad = f32(7.0)
    (gx,) = grad([x * 2.0], [x])
    assert_equal(gx.array, [2.0])
    assert_equal(x.grad, [7.0])


def test_grad_outputs_and_grad_inputs():
    x = Variable(f32(1.0, 2.0))
    y = x * x
    (gx,) = grad([y], [x], grad_outputs=[f32(1.0, 10.0)])
    assert_equal(gx.array, [2.0, 40.0])
    (gx,) = grad([y], [x], grad_inputs=[f32(5.0, 5.0)])
    assert_equal(gx.array, [7.0, 9.0])
    (gx,) = grad([y], [x], grad_outputs=[Variable(f32(2.0, 2.0))], grad_inputs=[None])
    assert_equal(gx.array, [4.0, 8.0])


def test_grad_set_grad_stores_the_results():
    x = Variable(f32(1.0, 2.0))
    x.grad = f32(100.0, 100.0)
    (gx,) = grad([x * x], [x], set_grad=True)
    assert x.grad_var is gx
    assert_equal(x.grad, [2.0, 4.0])


def test_grad_of_unreachable_inputs_is_none():
    x = Variable(f32(1.0))
    other = Variable(f32(1.0))
    other.grad = f32(5.0)
    gx, g_other = grad([x * 2.0], [x, other])
    assert_equal(gx.array, [2.0])
    assert g_other is None
    assert_equal(other.grad, [5.0])


def test_grad_retain_grad_keeps_intermediate_gradients():
    x = Variable(f32(1.0, 2.0))
    h = x * 3.0
    k = h * h
    y = ops.sum(k)
    (gx,) = grad([y], [x], retain_grad=True)
    assert_equal(gx.array, [18.0, 36.0])
    assert_equal(k.grad, [1.0, 1.0])
    assert_equal(h.grad, [6.0, 12.0])


def test_grad_runs_only_the_functions_that_lead_to_the_inputs():
    calls = []

    class Traced(FunctionNode):
        def forward(self, inputs):
            return (inputs[0] * 2,)

        def backward(self, indexes, grad_outputs):
            calls.append(self)
            return (grad_outputs[0] * 2.0,)

    a = Variable(f32(1.0))
    b = Variable(f32(1.0))
    y = Traced().apply((a,))[0] + Traced().apply((b,))[0]
    (ga,) = grad([y], [a])
    assert_equal(ga.array, [2.0])
    assert len(calls) == 1


def test_grad_argument_errors_name_the_argument():
    x = Variable(f32(1.0))
    y = x * 2.0
    with pytest.raises(TypeError, match="grad: expected outputs to be a list"):
        grad(y, [x])
    with pytest.raises(TypeError, match="every element of inputs.*ndarray"):
        grad([y], [x.array])
    with pytest.raises(ValueError, match="grad: expected 1 grad_outputs.*got 2"):
        grad([y], [x], grad_outputs=[None, None])
    with pytest.raises(ValueError, match="grad: expected 1 grad_inputs.*got 0"):
        grad([y], [x], grad_inputs=[])


# -- backward() over several roots ---------------------------------------------


def test_backward_over_several_roots_sums_their_contributions():
    a = Variable(f32(1.0, 2.0))
    y1 = a * 2.0
    y2 = a * a
    backward([y1, y2], [f32(1.0, 1.0), Variable(f32(1.0, 10.0))])
    assert_equal(a.grad, [4.0, 42.0])


def test_backward_over_several_roots_uses_their_grads():
    a = Variable(f32(1.0, 2.0))
    y1 = a * 2.0
    y2 = ops.sum(a * a)
    y1.grad = f32(1.0, 1.0)
    y2.grad = numpy.array(1.0, numpy.float32)
    backward([y1, y2])
    assert_equal(a.grad, [4.0, 6.0])


def test_backward_over_roots_without_grad_warns():
    a = Variable(f32(1.0, 2.0))
    with pytest.warns(RuntimeWarning, match="no gradient"):
        backward([a * 2.0])
    assert a.grad is None
    with pytest.raises(ValueError, match="expected 1 grad_outputs.*got 2"):
        backward([a * 2.0], [None, None])


# -- cutting the graph ---------------------------------------------------------


def test_unchain_makes_the_variable_a_leaf_of_the_graph():
    x = Variable(f32(1.0, 2.0))
    h = x * 2.0
    y = ops.sum(h * h)
    h.unchain()
    assert h.creator is None
    y.backward()
    assert_equal(h.grad, [4.0, 8.0])
    assert x.grad is None


def test_unchain_drops_the_creator():
    x = Variable(f32(1.0, 2.0))
    h = x * 2.0
    h.unchain()
    assert h.creator is None and h.creator_node is None
    assert h.rank == 1  # the node keeps its rank, as in Chainer
    ops.sum(h * h).backward()
    assert_equal(h.grad, [4.0, 8.0])
    assert x.grad is None


def test_unchain_backward_cuts_every_link_behind_the_variable():
    x = Variable(f32(1.0, 2.0))
    h = x * 2.0
    k = h * h
    y = ops.sum(k)
    functions = [weakref.ref(v.creator_node) for v in (h, k, y)]
    y.unchain_backward()
    assert y.creator is None and k.creator is None and h.creator is None
    assert [f() for f in functions] == [None, None, None]  # nothing holds them any more
    y.grad = numpy.array(1.0, numpy.float32)
    y.backward()
    assert x.grad is None and h.grad is None


# -- memory --------------------------------------------------------------------


def test_only_retained_inputs_are_kept_in_the_graph():
    x = Variable(f32(1.0, 2.0))
    c = Variable(f32(3.0, 4.0))
    h = x * 2.0  # MulConstant retains nothing
    y = h * c  # Mul retains both inputs
    assert x.node.data is None
    assert h.node.data is h.array
    assert c.node.data is c.array
    assert y.node.data is None


def test_a_dropped_intermediate_leaves_a_node_without_variable_or_data():
    x = Variable(f32(1.0, 2.0))
    h = x * 2.0
    node = h.node
    variable = weakref.ref(h)
    y = ops.sum(h * 3.0)
    del h
    assert variable() is None
    assert node.get_variable_or_none() is None
    assert node.data is None
    assert node.label == "(unknown)"
    y.backward()
    assert_equal(x.grad, [6.0, 6.0])


def test_a_dropped_retained_intermediate_is_rebuilt_from_its_data():
    x = Variable(f32(1.0, 2.0))
    h = x * 2.0
    y = ops.sum(h * h)
    node = h.node
    del h
    rebuilt = node.get_variable()
    assert_equal(rebuilt.array, [2.0, 4.0])
    assert rebuilt.node is node
    y.backward()
    assert_equal(x.grad, [8.0, 16.0])


class ScaledSum(FunctionNode):
    """``x * a + b`` whose ``b`` (input 2) may be None; records what backward retrieved."""

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, a, b = inputs
        return (x * a if b is None else x * a + b,)

    def backward(self, indexes, grad_outputs):
        self.retrieved = self.get_retained_inputs()
        return grad_outputs[0] * self.retrieved[1], None, None


@pytest.mark.parametrize("drop_inputs", [False, True])
def test_a_retained_input_given_as_none_is_retrieved_as_none(drop_inputs):
    x = Variable(f32(1.0, 2.0))
    a = x * 1.0
    node = ScaledSum()
    (y,) = node.apply((x, a, None))
    if drop_inputs:
        del a
    ops.sum(y).backward()
    x_back, a_back, b_back = node.retrieved
    assert x_back is x and b_back is None
    assert_equal(a_back.array, [1.0, 2.0])
    assert_equal(x.grad, [1.0, 2.0])


def test_the_graph_is_freed_by_reference_counting_alone():
    gc.disable()
    try:
        x = Variable(f32(1.0, 2.0))
        h = x * 2.0
        y = ops.sum(h * h)
        y.backward()
        refs = [weakref.ref(h.creator_node), weakref.ref(y.creator_node), weakref.ref(h.node)]
        del h
        assert all(r() is not None for r in refs)  # still reachable from y
        del y
        assert [r() for r in refs] == [None, None, None]
    finally:
        gc.enable()


def test_a_retained_output_whose_variable_was_dropped_is_rebuilt_from_its_data():
    x = Variable(f32(0.0, 1.0))
    y = Exp().apply((x,))[0]
    z = ops.sum(y * 1.0)
    creator = y.creator_node
    del y
    assert creator.outputs[0]().get_variable_or_none() is None
    z.backward()
    numpy.testing.assert_allclose(x.grad, numpy.exp(f32(0.0, 1.0)), rtol=1e-6)


class ExpAndDouble(FunctionNode):
    """(exp(x), 2x); backward always reads the retained exp(x)."""

    def forward(self, inputs):
        self.retain_outputs((0,))
        x = inputs[0]
        return numpy.exp(x), x * 2

    def backward(self, indexes, grad_outputs):
        (y,) = self.get_retained_outputs()
        self.seen = y
        g_exp, g_double = grad_outputs
        gx = g_double * 2.0
        return (gx if g_exp is None else gx + g_exp * y,)


def test_get_retained_outputs_when_the_output_node_itself_is_gone():
    x = Variable(f32(0.0, 1.0))
    creator = ExpAndDouble()
    double = creator.apply((x,))[1]
    assert creator.outputs[0]() is None
    ops.sum(double).backward()
    assert_equal(x.grad, [2.0, 2.0])
    numpy.testing.assert_allclose(creator.seen.array, numpy.exp(f32(0.0, 1.0)), rtol=1e-6)
    assert creator.seen.creator_node is creator
    assert creator.outputs[0]() is creator.seen.node


def test_a_long_chain_backprops_without_recursion_error():
    x = Variable(s32(1.0))
    h = x
    for _ in range(10_000):
        h = h + 1.0
    assert h.rank == 10_000
    h.backward()
    assert h.array == 10_001.0
    assert x.grad == 1.0
    del h  # freeing the chain must not overflow either


# -- FunctionNode contract -----------------------------------------------------


def test_backward_may_return_one_gradient_per_input():
    class FirstOnly(FunctionNode):
        def forward(self, inputs):
            return (inputs[0] + inputs[1],)

        def backward(self, indexes, grad_outputs):
            return (grad_outputs[0], grad_outputs[0] * 2.0)

    a = Variable(s32(1.0))
    b = Variable(s32(1.0), requires_grad=False)
    y = FirstOnly().apply((a, b))[0]
    y.backward()
    assert a.grad == 1.0
    assert b.grad is None


def test_backward_returning_the_wrong_number_of_gradients_is_reported():
    class Wrong(FunctionNode):
        def forward(self, inputs):
            return (inputs[0] + inputs[1],)

        def backward(self, indexes, grad_outputs):
            return (grad_outputs[0],) * 3

    y = Wrong().apply((Variable(s32(1.0)), Variable(s32(1.0))))[0]
    with pytest.raises(
        ValueError,
        match=r"number of gradients returned from backward is incorrect: 3 != expected 2"
        r"(.|\n)*function=Wrong",
    ):
        y.backward()


def test_forward_must_return_a_tuple():
    class NotTuple(FunctionNode):
        def forward(self, inputs):
            return inputs[0]

    with pytest.raises(TypeError, match="NotTuple.forward must return a tuple.*ndarray"):
        NotTuple().apply((f32(1.0),))


def test_ranks_order_the_graph():
    x = Variable(f32(1.0))
    h = x * 2.0
    y = h * h
    assert x.rank == 0
    assert h.creator_node.rank == 0 and h.rank == 1
    assert y.creator_node.rank == 1 and y.rank == 2


def test_leaf_gradients_are_writable_arrays_of_their_own():
    # Sum's backward broadcasts, and Add passes one gradient to both inputs;
    # optimizers and hooks update leaf gradients in place, so each must own its array.
    a = Variable(numpy.ones((2, 3), numpy.float32))
    b = Variable(numpy.ones((2, 3), numpy.float32))
    ops.sum(a + b).backward()
    assert a.grad.flags.writeable and b.grad.flags.writeable
    assert not numpy.shares_memory(a.grad, b.grad)
    a.grad *= 3
    assert_equal(b.grad, numpy.ones((2, 3)))


# -- accumulation of a Variable used many times --------------------------------


def test_many_uses_sum_in_order_bit_for_bit():
    rng = numpy.random.default_rng(0)
    a = Variable(rng.standard_normal((3, 4)).astype(numpy.float32))
    xs = [rng.standard_normal((3, 4)).astype(numpy.float32) for _ in range(20)]
    h = a * xs[0]
    for x in xs[1:]:
        h = h + a * x
    ops.sum(h).backward()
    # Backward runs the products (all of rank 0) in the order it reached them from the
    # last addition down: x19, ..., x2, then x0 and x1 (the first addition's inputs);
    # each use adds to the sum so far.
    order = [*range(19, 1, -1), 0, 1]
    expected = xs[order[0]].copy()
    for i in order[1:]:
        expected = expected + xs[i]
    assert a.grad.dtype == numpy.float32
    assert_equal(a.grad, expected)


def test_accumulation_leaves_gradients_held_elsewhere_alone():
    # Add hands the same gradient to both inputs, and retain_grad keeps it in the
    # output; adding further uses into it in place would change those too.
    a = Variable(f32(1.0, 2.0))
    y = a + a
    z = y * f32(3.0, 5.0) + a + a + a
    loss = ops.sum(z)
    loss.backward(retain_grad=True)
    assert_equal(a.grad, [9.0, 13.0])
    assert_equal(y.grad, [3.0, 5.0])
    assert_equal(z.grad, [1.0, 1.0])


def test_accumulation_does_not_write_into_a_gradient_a_function_keeps():
    kept = f32(1.0, 1.0)

    class Keep(FunctionNode):
        def forward(self, inputs):
            return (inputs[0].copy(),)

        def backward(self, indexes, grad_outputs):
            return (Variable(kept),)

    a = Variable(f32(0.0, 0.0))
    h = Keep().apply((a,))[0]
    for _ in range(3):
        h = h + Keep().apply((a,))[0]
    ops.sum(h).backward()
    assert_equal(a.grad, [4.0, 4.0])
    assert_equal(kept, [1.0, 1.0])


def test_grad_of_a_target_used_many_times():
    a = Variable(f32(1.0, 2.0))
    h = a * a
    y = h + h + h
    (ga,) = grad([ops.sum(y * y)], [a])
    # y = 3 a^2, d(sum y^2)/da = 2 y * 6 a = 36 a^3
    assert_equal(ga.array, [36.0, 288.0])
    (gh,) = grad([ops.sum(y)], [h])
    assert_equal(gh.array, [3.0, 3.0])


def test_output_data_puts_none_where_an_output_is_not_retained():
    class TwoOrOne(FunctionNode):
        def __init__(self, n_out, retained):
            self.n_out, self.retained = n_out, retained

        def forward(self, inputs):
            self.retain_outputs(self.retained)
            return tuple(inputs[0] + i for i in range(self.n_out))

    x = numpy.arange(3.0)
    for n_out, retained, expected in [(1, (0,), [0]), (1, (), [None]), (2, (1,), [None, 1])]:
        node = TwoOrOne(n_out, retained)
        node.apply((x,))
        got = node.output_data
        assert len(got) == n_out
        for g, e in zip(got, expected):
            if e is None:
                assert g is None
            else:
                numpy.testing.assert_array_equal(g, x + e)


def test_an_input_that_is_no_array_is_a_type_error_naming_the_function():
    with pytest.raises(TypeError, match=r"MatMul: expected input 0 to be a Variable or an array"):
        ops.matmul((f32(1.0), f32(2.0)), Variable(f32(1.0, 2.0)))


def test_a_gradient_set_as_an_array_is_differentiable_in_double_backprop():
    # As in Chainer: v.grad = array makes a grad_var that requires grad.
    x = Variable(f32(1.0, 2.0))
    y = x * x
    y.grad = f32(3.0, 5.0)
    gy = y.grad_var
    assert gy.requires_grad
    y.backward(enable_double_backprop=True)
    assert x.grad_var.requires_grad
    x.grad_var.grad = f32(1.0, 1.0)
    x.grad_var.backward()
    assert_equal(gy.grad, [2.0, 4.0])
