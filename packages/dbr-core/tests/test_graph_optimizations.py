"""static_graph: a replay gives define-by-run's bits, and what it cannot replay is refused."""

import pickle

import numpy
import pytest

import dbr.core
from dbr.core import (
    Chain,
    FunctionNode,
    Parameter,
    Variable,
    ops,
    static_code,
    static_graph,
    using_config,
)


class Noise(FunctionNode):
    """Adds numpy.random draws drawn in forward, as dbr's dropout draws its mask."""

    def __init__(self, scale):
        self.scale = scale
        self.noise = None

    def forward(self, inputs):
        if self.noise is None:
            self.noise = numpy.random.standard_normal(inputs[0].shape) * self.scale
        return (inputs[0] + self.noise,)

    def backward(self, indexes, grad_outputs):
        return grad_outputs


def body(net, x):
    h = ops.matmul(x, net.W) + net.b
    h = Noise(net.scale).apply((h * h,))[0]
    return ops.sum(h * net.V, axis=1)


class Net(Chain):
    def __init__(self, seed=0):
        super().__init__()
        rng = numpy.random.default_rng(seed)
        with self.init_scope():
            self.W = Parameter(rng.standard_normal((3, 4)))
            self.b = Parameter(rng.standard_normal(4))
            self.V = Parameter(rng.standard_normal(4))
        self.scale = 0.1

    def forward(self, x):
        return body(self, x)


class StaticNet(Net):
    forward = static_graph(Net.forward)


def train(net, batches, lr=0.001, x_requires_grad=False):
    """Manual SGD; return every loss, parameter gradient and input gradient on the way."""
    numpy.random.seed(3)
    seen = []
    for x in batches:
        xv = Variable(x, requires_grad=x_requires_grad)
        net.cleargrads()
        loss = ops.sum(net(xv))
        loss.backward()
        seen.append(loss.array)
        seen.extend(p.grad.copy() for p in net.params())
        if x_requires_grad:
            seen.append(xv.grad)
        for p in net.params():
            p.array -= lr * p.grad
    return seen


def assert_same_bits(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        numpy.testing.assert_array_equal(x, y, strict=True)


def batches(n=8, shape=(5, 3)):
    rng = numpy.random.default_rng(1)
    return [rng.standard_normal(shape) for _ in range(n)]


@pytest.mark.parametrize("x_requires_grad", [False, True])
def test_replays_give_define_by_run_bits(x_requires_grad):
    static = StaticNet()
    expected = train(Net(), batches(), x_requires_grad=x_requires_grad)
    assert_same_bits(train(static, batches(), x_requires_grad=x_requires_grad), expected)
    assert sum(len(s) for s in static.schedule_manager.schedules.values()) == 2


def test_a_replay_builds_one_node_for_the_call():
    net = StaticNet()
    for _ in range(3):
        y = net(numpy.ones((2, 3)))
    assert y.creator.label == "StaticSchedule"
    assert {id(x) for x in y.creator.inputs} >= {id(p.node) for p in net.params()}


def test_each_signature_records_its_own_schedule():
    static, plain = StaticNet(), Net()
    rng = numpy.random.default_rng(2)
    for shape, train_mode, backprop in [((5, 3), True, True), ((2, 3), True, True)] * 3 + [
        ((5, 3), False, False)
    ] * 3:
        x = rng.standard_normal(shape)
        numpy.random.seed(4)
        with using_config("train", train_mode), using_config("enable_backprop", backprop):
            y = static(x)
        numpy.random.seed(4)
        with using_config("train", train_mode), using_config("enable_backprop", backprop):
            expected = plain(x)
        numpy.testing.assert_array_equal(y.array, expected.array)
        assert y.creator is None if not backprop else y.creator.label == "StaticSchedule"


def test_several_calls_per_iteration_get_a_schedule_each():
    def unrolled(net, steps):
        numpy.random.seed(5)
        net.cleargrads()
        h = Variable(numpy.ones((2, 3)))
        total = 0
        for _ in range(steps):
            y = net(h)
            h = ops.broadcast_to(ops.reshape(y, (2, 1)), (2, 3))
            total = total + ops.sum(y)
        total.backward()
        return [total.array, *(p.grad.copy() for p in net.params())]

    static, plain = StaticNet(), Net()
    for _ in range(3):
        assert_same_bits(unrolled(static, 4), unrolled(plain, 4))
    assert [len(s) for s in static.schedule_manager.schedules.values()] == [4]


def test_static_code_runs_on_every_replay_with_that_replays_arrays():
    seen = []

    class Logged(Net):
        @static_graph
        def forward(self, x):
            h = ops.matmul(x, self.W)
            log(h)
            return ops.sum(h)

    @static_code
    def log(h):
        seen.append(h.array.copy())

    net = Logged()
    for k in range(4):
        net(numpy.full((1, 3), float(k)))
    expected = [numpy.full((1, 3), float(k)) @ net.W.array for k in range(4)]
    assert_same_bits(seen, expected)
    assert static_code(lambda: 7)() == 7  # outside a static chain: a plain call


def test_static_code_may_change_link_attributes_on_every_call():
    class Counting(Net):
        @static_code
        def count(self):
            self.calls = getattr(self, "calls", 0) + 1

        @static_graph
        def forward(self, x):
            self.count()
            return ops.sum(ops.matmul(x, self.W))

    net = Counting()
    for _ in range(5):
        net(numpy.ones((1, 3)))
    assert net.calls == 5


def test_a_branch_on_a_value_is_refused():
    class Branching(Net):
        @static_graph
        def forward(self, x):
            h = ops.matmul(x, self.W)
            return ops.sum(h * h) if float(h.array.sum()) > 0 else ops.sum(h)

    net = Branching()
    net(numpy.ones((1, 3)) * numpy.sign(net.W.array.sum()))
    with pytest.raises(RuntimeError, match="other functions on its second call.*branch"):
        net(-numpy.ones((1, 3)) * numpy.sign(net.W.array.sum()))


def test_a_side_effect_of_the_forward_is_refused():
    class Counting(Net):
        @static_graph
        def forward(self, x):
            self.calls = getattr(self, "calls", 0) + 1
            return ops.sum(ops.matmul(x, self.W))

    net = Counting()
    net(numpy.ones((1, 3)))  # the first call may initialize attributes
    with pytest.raises(RuntimeError, match=r"changed /calls from 1 to 2.*@static_code"):
        net(numpy.ones((1, 3)))


def test_a_baked_hyperparameter_changed_later_is_refused_until_cleared():
    static, plain = StaticNet(), Net()
    x = numpy.ones((2, 3))
    for _ in range(3):
        static(x)
    static.scale = plain.scale = 0.5
    with pytest.raises(RuntimeError, match=r"/scale changed from 0.1 to 0.5.*clear\(\)"):
        static(x)
    static.schedule_manager.clear()
    numpy.random.seed(0)
    y = static(x)
    numpy.random.seed(0)
    numpy.testing.assert_array_equal(y.array, plain(x).array)


def test_a_new_parameter_is_refused():
    net = StaticNet()
    for _ in range(3):
        net(numpy.ones((2, 3)))
    with net.init_scope():
        net.extra = Parameter(numpy.zeros(2))
    with pytest.raises(RuntimeError, match="number of params of link '/' changed from 3 to 4"):
        net(numpy.ones((2, 3)))


class Stateful(Net):
    """Keeps a running state on the chain, as a stateful RNN link does."""

    def reset_state(self):
        self.h = None

    def forward(self, x):
        h = ops.matmul(x, self.W)
        if getattr(self, "h", None) is not None:
            h = h + self.h * 0.5
        self.h = h
        return ops.sum(h * self.V, axis=1)


class StaticStateful(Stateful):
    forward = static_graph(Stateful.forward)


def test_state_kept_on_a_link_is_read_and_written_by_every_replay():
    def unrolled(net):
        seen = []
        for x in batches(4, (2, 3)):
            net.reset_state()
            net.cleargrads()
            total = 0
            for step in range(4):
                total = total + ops.sum(net(x * (step + 1)))
            total.backward()
            seen.extend([total.array, net.h.array, net.W.grad.copy(), net.V.grad.copy()])
        return seen

    static = StaticStateful()
    assert_same_bits(unrolled(static), unrolled(Stateful()))
    # With no state (after reset_state) and with it: two signatures.
    assert len(static.schedule_manager.schedules) == 2


def test_a_replaced_persistent_array_records_again():
    class Shifted(Net):
        def __init__(self):
            super().__init__()
            self.add_persistent("shift", numpy.zeros(4))

        @static_graph
        def forward(self, x):
            return ops.sum(ops.matmul(x, self.W) + self.shift)

    net = Shifted()
    for _ in range(3):
        net(numpy.ones((1, 3)))
    net.shift = numpy.ones(4)
    assert float(net(numpy.ones((1, 3))).array) == float(net.W.array.sum() + 4)


def test_backward_twice_or_double_backprop_through_a_replay_is_refused():
    net = StaticNet()
    for _ in range(3):
        y = ops.sum(net(numpy.ones((2, 3))))
    y.backward()
    with pytest.raises(RuntimeError, match="already ran"):
        y.backward()
    y = ops.sum(net(numpy.ones((2, 3))))
    with pytest.raises(RuntimeError, match="enable_double_backprop"):
        y.backward(enable_double_backprop=True)


def test_define_by_run_when_switched_off_or_debugging():
    for name, value in [("use_static_graph", False), ("debug", True)]:
        net = StaticNet()
        with using_config(name, value):
            for _ in range(3):
                y = net(numpy.ones((2, 3)))
        assert y.creator.label != "StaticSchedule"
        assert not hasattr(net, "schedule_manager")
    net = StaticNet()
    with using_config("train", False):
        net.forward = static_graph(force_test_define_by_run=True)(Net.forward).__get__(net)
        assert net(numpy.ones((2, 3))).creator.label != "StaticSchedule"


def test_a_copied_or_pickled_chain_records_its_own_schedules():
    net = StaticNet()
    for _ in range(3):
        net(numpy.ones((2, 3)))
    copy = net.copy(mode="copy")
    copy.W.array[...] = 0
    y = copy(numpy.ones((2, 3)))
    assert copy.schedule_manager is not net.schedule_manager
    assert float(y.array.sum()) == pytest.approx(
        float(ops.sum(Net.forward(copy, numpy.ones((2, 3)))).array), abs=1
    )
    restored = pickle.loads(pickle.dumps(net.schedule_manager))
    assert restored.schedules == {}


def test_options_are_checked():
    with pytest.raises(TypeError, match="unexpected keyword argument.*'speed'"):
        static_graph(speed=2)
    with pytest.raises(TypeError, match="expected a function to decorate, got int"):
        static_graph(3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        static_code(name="f")
    with pytest.raises(TypeError, match="static_code: 'bad' must return None, an array"):

        class Bad(Net):
            @static_graph
            def forward(self, x):
                return ops.sum(bad(ops.matmul(x, self.W)))

        @static_code
        def bad(h):
            return "text"

        Bad()(numpy.ones((1, 3)))
    assert dbr.core.graph_optimizations.ScheduleManager().schedules == {}


# -- a replay's backward on arrays ------------------------------------------------------


class Halve(FunctionNode):
    """``y = x / 2``; its gradient node holds a plain copy of the forward's attribute."""

    def forward(self, inputs):
        self.factor = 0.5
        return (inputs[0] * self.factor,)

    def backward(self, indexes, grad_outputs):
        return Scale(self.factor).apply(grad_outputs)


class MeanOfPositive(FunctionNode):
    """Mean of the positive entries; the forward sets the count from the data."""

    def forward(self, inputs):
        x = inputs[0]
        self.retain_inputs((0,))
        self.inv_count = 1.0 / max(int((x > 0).sum()), 1)
        return (numpy.asarray((x * (x > 0)).sum() * self.inv_count),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        mask = PositiveMask().apply((x,))[0]
        return Scale(self.inv_count).apply((mask * grad_outputs[0],))


class Scale(FunctionNode):
    def __init__(self, factor):
        self.factor = factor

    def forward(self, inputs):
        return (inputs[0] * self.factor,)

    def backward(self, indexes, grad_outputs):
        return Scale(self.factor).apply(grad_outputs)


class PositiveMask(FunctionNode):
    def forward(self, inputs):
        return ((inputs[0] > 0).astype(inputs[0].dtype),)


class OpaqueRelu(FunctionNode):
    """A backward that computes its gradient with its own array code (no gradient node)."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (numpy.maximum(inputs[0], 0),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (Variable(numpy.where(x.array > 0, grad_outputs[0].array, 0.0)),)


class Probe(Net):
    """``W`` and ``b``'s affine map, then one of the functions above."""

    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, x):
        h = ops.matmul(x, self.W) + self.b
        return self.func().apply((Halve().apply((h,))[0],))[0]


class StaticProbe(Probe):
    forward = static_graph(Probe.forward)


def probe_gradients(net, xs):
    grads = []
    for x in xs:
        net.cleargrads()
        y = net(x)
        ops.sum(y).backward()
        grads.extend([y.array, net.W.grad.copy(), net.b.grad.copy()])
    return grads


def array_plans(net):
    """{function class name: kinds of its backward plans} over every schedule of ``net``."""
    from dbr.core.graph_optimizations._node_backward import ArrayPlan

    kinds = {}
    for schedules in net.schedule_manager.schedules.values():
        for schedule in schedules:
            for node_backward, _, _ in schedule._backward:
                for plan in node_backward._plans.values():
                    kind = (
                        "arrays"
                        if type(plan) is ArrayPlan
                        else str(plan[0] if isinstance(plan, tuple) else plan)
                    )
                    kinds.setdefault(type(node_backward.func).__name__, set()).add(kind)
    return kinds


def probe_batches():
    # The first three batches have 3 positive entries per row; later ones other counts.
    rng = numpy.random.default_rng(7)
    fixed = [numpy.array([[1.0, 2.0, 3.0], [0.5, 0.25, 2.0]]) for _ in range(3)]
    return fixed + [rng.standard_normal((2, 3)) for _ in range(5)]


def test_a_replays_backward_runs_on_arrays_once_two_recordings_agree():
    static = StaticNet()
    assert_same_bits(train(static, batches()), train(Net(), batches()))
    kinds = array_plans(static)
    assert kinds["MatMul"] == kinds["Sum"] == {"arrays", "first"}


def test_an_attribute_the_forward_sets_from_the_data_is_read_on_every_replay():
    # MeanOfPositive's count is the same in the first recordings, then changes: a plan
    # that baked it in would give the wrong gradient from the fourth batch on.
    static, plain = StaticProbe(MeanOfPositive), Probe(MeanOfPositive)
    assert_same_bits(
        probe_gradients(static, probe_batches()), probe_gradients(plain, probe_batches())
    )
    assert "arrays" in array_plans(static)["MeanOfPositive"]


def test_a_backward_computing_with_its_own_array_code_keeps_the_variable_path():
    static, plain = StaticProbe(OpaqueRelu), Probe(OpaqueRelu)
    assert_same_bits(
        probe_gradients(static, probe_batches()), probe_gradients(plain, probe_batches())
    )
    kinds = array_plans(static)
    assert kinds["OpaqueRelu"] == {"refused"}
    assert "arrays" in kinds["Halve"]


def test_a_hook_watching_the_backward_sees_the_gradient_nodes_of_a_replay():
    class Seen(dbr.core.FunctionHook):
        def __init__(self):
            self.labels = []

        def forward_preprocess(self, function, in_data):
            self.labels.append(function.label)

    static = StaticProbe(MeanOfPositive)
    xs = probe_batches()
    probe_gradients(static, xs[:4])
    y = static(xs[4])
    with Seen() as seen:
        ops.sum(y).backward()
    assert {"PositiveMask", "Scale"} <= set(seen.labels)


class DoubledInPlace(FunctionNode):
    """A backward that doubles a gradient node's output in place (its own array code)."""

    def forward(self, inputs):
        return (inputs[0] * 2,)

    def backward(self, indexes, grad_outputs):
        (gx,) = Scale(1.0).apply(grad_outputs)
        gx.array *= 2
        return (gx,)


def test_a_backward_writing_into_an_array_in_place_keeps_the_variable_path():
    static, plain = StaticProbe(DoubledInPlace), Probe(DoubledInPlace)
    assert_same_bits(
        probe_gradients(static, probe_batches()), probe_gradients(plain, probe_batches())
    )
    assert array_plans(static)["DoubledInPlace"] == {"refused"}


class Recurrent(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.a = Parameter(numpy.full((1, 4), 0.5))
            self.b = Parameter(numpy.full((1, 4), 0.25))

    def forward(self, h):
        for _ in range(10):
            h = h * self.a + self.b
        return ops.sum(h)


class StaticRecurrent(Recurrent):
    forward = static_graph(Recurrent.forward)


def recurrent_steps(net, combine):
    grads = []
    for x in batches(4, (1, 4)):
        net.cleargrads()
        combine(net, x).backward()
        grads.extend([net.a.grad.copy(), net.b.grad.copy()])
    return grads


def test_like_backward_plans_are_one_object_across_nodes_and_calls():
    def twice_in_a_row(net, x):  # two calls: two schedules per iteration
        return net(ops.broadcast_to(ops.reshape(net(x), (1, 1)), (1, 4)))

    static = StaticRecurrent()
    assert_same_bits(
        recurrent_steps(static, twice_in_a_row), recurrent_steps(Recurrent(), twice_in_a_row)
    )
    plans = {}
    for schedules in static.schedule_manager.schedules.values():
        for schedule in schedules:
            for node_backward, _, _ in schedule._backward:
                plan = node_backward._single
                if plan is not None:
                    plans.setdefault(type(node_backward.func).__name__, set()).add(id(plan))
    # 10 Mul and 10 Add nodes in each of the replayed schedules: one plan per function, and
    # a second for the first call's first Mul, whose input (an array) needs no gradient.
    assert {name: len(ids) for name, ids in plans.items()} == {"Mul": 2, "Add": 1, "Sum": 1}


def test_calls_whose_graphs_meet_only_at_the_loss_sum_gradients_in_another_order():
    # Define-by-run interleaves the two calls' functions by rank, so that the parameters'
    # gradients are summed across the calls step by step; each replay adds its own ten
    # at once. The sums are the same up to rounding (a documented deviation).
    def side_by_side(net, x):
        return net(x) + net(x * 2)

    static = recurrent_steps(StaticRecurrent(), side_by_side)
    plain = recurrent_steps(Recurrent(), side_by_side)
    for a, b in zip(static, plain, strict=True):
        numpy.testing.assert_allclose(a, b, rtol=1e-14, atol=0)


class IntAndFloat(Recurrent):
    @static_graph
    def forward(self, h):
        h = Scale(1).apply((h * self.a,))[0]
        return ops.sum(Scale(1.0).apply((h + self.b,))[0])


def test_plans_baking_equal_values_of_other_types_are_not_shared():
    net = IntAndFloat()
    for x in batches(4, (1, 4)):
        net(x).backward()
    (schedule, *_), *_ = net.schedule_manager.schedules.values()
    plans = {
        node_backward.func.factor.__class__: node_backward._single
        for node_backward, _, _ in schedule._backward
        if isinstance(node_backward.func, Scale)
    }
    assert plans[int] is not None and plans[float] is not None
    assert plans[int] is not plans[float]


class MaskedWhenPositive(FunctionNode):
    """Keeps a mask only when the batch's sum is positive; its backward branches on that."""

    def forward(self, inputs):
        x = inputs[0]
        self.mask = (x > 0).astype(x.dtype) if x.sum() > 0 else None
        return (x if self.mask is None else x * self.mask,)

    def backward(self, indexes, grad_outputs):
        if self.mask is None:
            return Scale(1.0).apply(grad_outputs)
        return Masked(self.mask).apply(grad_outputs)


class Masked(FunctionNode):
    def __init__(self, mask):
        self.mask = mask

    def forward(self, inputs):
        return (inputs[0] * self.mask,)


def test_an_attribute_that_is_an_array_on_some_calls_and_none_on_others():
    # The first batches keep a mask (recorded); later ones with a negative sum keep None.
    rng = numpy.random.default_rng(8)
    xs = [numpy.abs(rng.standard_normal((2, 3))) for _ in range(4)]
    xs += [-numpy.abs(rng.standard_normal((2, 3))) for _ in range(3)]
    static, plain = StaticProbe(MaskedWhenPositive), Probe(MaskedWhenPositive)
    for net in (static, plain):
        net.W.array[...] = numpy.eye(3, 4)
        net.b.array[...] = 0
    assert_same_bits(probe_gradients(static, xs), probe_gradients(plain, xs))
    assert "arrays" in array_plans(static)["MaskedWhenPositive"]


def test_what_a_replays_functions_kept_for_backward_goes_after_it():
    net = StaticNet()
    x = numpy.ones((2, 3))
    for _ in range(4):
        ops.sum(net(x)).backward()
    (schedule, *_), *_ = net.schedule_manager.schedules.values()
    noise = next(step.func for step in schedule.steps if isinstance(step.func, Noise))
    y = net(x)
    assert noise.noise is not None  # the replay's draw, kept for its backward
    ops.sum(y).backward()
    assert noise.noise is None and noise._retained_output_data is None
    assert all(node.data is None for node in schedule._retaining_nodes)


class ProductGrad(FunctionNode):
    """``sum(x * gy)`` over the batch: a new array, as a weight's gradient node makes one."""

    _new_outputs = True
    made = []  # what it returned, for the test to find (it keeps no array but for that)

    def forward(self, inputs):
        x, gy = inputs
        g = (x * gy).sum(axis=0, keepdims=True)
        ProductGrad.made.append(g)
        return (g,)


class ViewOf(FunctionNode):
    """``x`` reshaped: a view of its input, which a backward may return as a gradient."""

    def forward(self, inputs):
        return (inputs[0].reshape(inputs[0].shape),)


class ScaledTwice(FunctionNode):
    """``x * a + x * b``; ``b``'s gradient is computed again, or it is ``a``'s array, or a
    view of ``a``'s array (``b_grad`` says which)."""

    def __init__(self, b_grad):
        self.b_grad = b_grad

    def forward(self, inputs):
        x, a, b = inputs
        self.retain_inputs((0, 1, 2))
        return (x * a + x * b,)

    def backward(self, indexes, grad_outputs):
        x, a, b = self.get_retained_inputs()
        (gy,) = grad_outputs
        ga = ProductGrad().apply((x, gy))[0]
        gb = {
            "again": lambda: ProductGrad().apply((x, gy))[0],
            "same": lambda: ga,
            "view": lambda: ViewOf().apply((ga,))[0],
        }[self.b_grad]()
        return (gy * (a + b), ga, gb)


def shared(b_grad, static):
    """A chain of ten ``ScaledTwice`` steps on ``a`` and ``b``: each sums ten gradients."""

    def forward(self, h):
        for _ in range(10):
            h = ScaledTwice(b_grad).apply((h, self.a, self.b))[0]
        return ops.sum(h)

    return type(
        "Shared", (Recurrent,), {"forward": static_graph(forward) if static else forward}
    )()


def new_gradients(net):
    """``new`` of the backward plans of ``net``'s ScaledTwice nodes."""
    (schedule, *_), *_ = net.schedule_manager.schedules.values()
    return {
        node_backward._single.new
        for node_backward, _, _ in schedule._backward
        if isinstance(node_backward.func, ScaledTwice)
    }


def one_step(net, x):
    return net(x)


def test_a_gradient_nodes_new_array_takes_the_later_replays_gradients_in_place():
    net = shared("again", static=True)
    assert_same_bits(
        recurrent_steps(net, one_step), recurrent_steps(shared("again", False), one_step)
    )
    # (The first step's input needs no gradient: its plan returns two.)
    assert new_gradients(net) == {(False, True, True), (True, True)}
    ProductGrad.made.clear()
    recurrent_steps(net, one_step)
    # Each sum is the first of its ten arrays, which took the other nine in place.
    assert any(net.a.grad is g for g in ProductGrad.made)
    assert any(net.b.grad is g for g in ProductGrad.made)
    ProductGrad.made.clear()


@pytest.mark.parametrize("b_grad", ["same", "view"])
def test_a_new_array_that_a_plan_returns_twice_or_reads_again_is_not_added_into(b_grad):
    net = shared(b_grad, static=True)
    assert_same_bits(
        recurrent_steps(net, one_step), recurrent_steps(shared(b_grad, False), one_step)
    )
    assert new_gradients(net) == {None}
    ProductGrad.made.clear()
