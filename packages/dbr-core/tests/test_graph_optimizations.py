"""static_graph and static_code: Chainer's decorators, running the code define-by-run."""

import numpy
import pytest

import dbr.core
from dbr.core import Chain, Parameter, ops, using_config


def make_net(decorate):
    class Net(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.W = Parameter(numpy.arange(6, dtype=numpy.float64).reshape(3, 2) / 10)
            self.calls = 0

        @decorate
        def forward(self, x):
            self.calls += 1  # a side effect that Chainer's static chain would skip
            h = ops.matmul(x, self.W)
            return h * h if self.calls % 2 else h + 1.0

    return Net()


@pytest.mark.parametrize(
    "decorate",
    [
        dbr.core.static_graph,
        dbr.core.static_graph(),
        dbr.core.static_graph(
            force_test_define_by_run=True,
            minimize_cache_size=False,
            verbosity_level=2,
            enable_double_backprop=True,
        ),
    ],
)
def test_a_static_graph_chain_runs_define_by_run_every_call(decorate):
    static, plain = make_net(decorate), make_net(lambda f: f)
    rng = numpy.random.default_rng(0)
    for batch, train in [(4, True), (4, True), (2, True), (3, False)]:
        x = rng.standard_normal((batch, 3))
        with using_config("train", train):
            y, expected = static(x), plain(x)
        numpy.testing.assert_array_equal(y.array, expected.array)
        static.cleargrads(), plain.cleargrads()
        ops.sum(y).backward()
        ops.sum(expected).backward()
        numpy.testing.assert_array_equal(static.W.grad, plain.W.grad)
    assert static.calls == plain.calls == 4
    assert not hasattr(static, "schedule_manager")


def test_the_decorated_function_is_returned_unchanged():
    def f(x):
        return x

    assert dbr.core.static_graph(f) is f
    assert dbr.core.static_graph(verbosity_level=1)(f) is f
    assert dbr.core.static_code(f) is f
    assert dbr.core.static_code(func_name="f")(f) is f


def test_static_code_runs_on_every_call_with_its_own_arguments():
    seen = []

    @dbr.core.static_code(func_name="record")
    def record(value, inputs=None, outputs=None):
        seen.append((value, inputs, outputs))
        return value * 2

    @dbr.core.static_code
    def count():
        seen.append("count")

    assert record(3, inputs=[1]) == 6
    count()
    count()
    assert seen == [(3, [1], None), "count", "count"]


@pytest.mark.parametrize("decorator", ["static_graph", "static_code"])
def test_bad_uses_name_the_decorator(decorator):
    make = getattr(dbr.core, decorator)
    with pytest.raises(TypeError, match=f"{decorator}: unexpected keyword argument.*'fast'"):
        make(fast=True)
    with pytest.raises(TypeError, match=f"{decorator}: expected a function to decorate, got int"):
        make(3)
    with pytest.raises(TypeError, match=f"{decorator}: expected to decorate one function"):
        make(len, len)
    with pytest.raises(TypeError, match=f"{decorator}: expected a function to decorate"):
        make()(None)
