import numpy
import pytest

from dbr.core import Link, Parameter, Variable, config, grad, ops, testing
from dbr.core.testing import FunctionTestCase
from dbr.functions.util.forget import Forget, forget

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def two_outputs(a, b):
    return a * b + a * a, b * 2.0 - a


FUNCTIONS = {
    "one input": (lambda a: a * a * a + a, 1),
    "two inputs": (lambda a, b: a * b + a / (b * b + 1.0), 2),
    "two outputs": (two_outputs, 2),
}


def reference(name, xs):
    xs = [x.astype(numpy.float64) for x in xs]
    if name == "one input":
        (a,) = xs
        return (a**3 + a,)
    a, b = xs
    if name == "two inputs":
        return (a * b + a / (b * b + 1.0),)
    return (a * b + a * a, b * 2.0 - a)


@testing.parameterize(*testing.product({"function": list(FUNCTIONS), "dtype": FLOATS}))
class TestForget(FunctionTestCase):
    """Values and gradients equal those of calling the function (no second order: Chainer's)."""

    skip_double_backward_test = True

    def generate_inputs(self):
        n_inputs = FUNCTIONS[self.function][1]
        return tuple(
            numpy.random.uniform(-1, 1, (3, 2)).astype(self.dtype) for _ in range(n_inputs)
        )

    def forward(self, inputs, device):
        ys = forget(FUNCTIONS[self.function][0], *inputs)
        return ys if isinstance(ys, tuple) else (ys,)

    def forward_expected(self, inputs):
        return tuple(y.astype(self.dtype) for y in reference(self.function, inputs))


def test_no_graph_is_kept_in_forward_and_func_is_recomputed_in_backward():
    calls = []
    intermediates = []

    def f(a):
        calls.append(config.in_recomputing)
        h = a * a
        intermediates.append(h)
        return h * a

    x = Variable(numpy.array([1.0, 2.0]))
    y = forget(f, x)
    assert calls == [False]
    assert intermediates[0].creator is None
    assert isinstance(y.creator, Forget)
    y.grad = numpy.ones(2)
    y.backward()
    assert calls == [False, True]
    assert intermediates[1].creator is not None
    testing.assert_allclose(x.grad, 3 * x.array**2, rtol=1e-12)


def test_double_backprop_through_forget_is_refused_as_in_chainer():
    x = Variable(numpy.array([0.5, -1.5]))
    y = forget(lambda a: a * a * a * a, x)
    with pytest.raises(RuntimeError, match="forget: double backpropagation"):
        grad([y], [x], enable_double_backprop=True)


def test_the_same_variable_passed_twice():
    x = Variable(numpy.array([1.0, -3.0]))
    y = forget(lambda a, b: a * b * b, x, x)
    (gx,) = grad([y], [x])
    testing.assert_allclose(gx, 3 * x.array**2, rtol=1e-12)


class _Affine(Link):
    """x @ W.T + b: a link of dbr-core's, so that this test needs no dbr-links."""

    def __init__(self, seed):
        super().__init__()
        rng = numpy.random.default_rng(seed)
        with self.init_scope():
            self.W = Parameter(rng.standard_normal((2, 3)).astype(numpy.float32))
            self.b = Parameter(rng.standard_normal(2).astype(numpy.float32))

    def forward(self, x):
        return ops.matmul(x, self.W, transb=True) + ops.broadcast_to(self.b, (x.shape[0], 2))


def test_a_link_as_the_function_gets_its_parameters_gradients():
    plain, forgetful = _Affine(0), _Affine(0)
    x = numpy.random.rand(4, 3).astype(numpy.float32)
    for y in (plain(x), forget(forgetful, x)):
        y.grad = numpy.ones_like(y.array)
        y.backward()
    assert forgetful.W.grad is not None and forgetful.b.grad is not None
    testing.assert_allclose(forgetful.W.grad, plain.W.grad, rtol=1e-6)
    testing.assert_allclose(forgetful.b.grad, plain.b.grad, rtol=1e-6)


def test_an_unused_output_and_an_input_that_does_not_matter():
    x = Variable(numpy.array([2.0]))
    z = Variable(numpy.array([5.0]))
    y1, y2 = forget(lambda a, b: (a * 3.0, b * 0.0 + 1.0), x, z)
    gx, gz = grad([y1], [x, z])
    testing.assert_allclose(gx, [3.0])
    assert gz is None


def test_func_returning_an_input_and_a_one_tuple():
    x = Variable(numpy.array([2.0, 3.0]))
    y = forget(lambda a: (a,), x)
    assert isinstance(y, Variable)
    (gx,) = grad([y], [x], [Variable(numpy.array([1.0, -1.0]))])
    numpy.testing.assert_array_equal(gx.array, [1.0, -1.0])


def test_arrays_become_variables_in_the_graph():
    y = forget(lambda a: a * 2.0, numpy.array([1.0, 2.0]))
    assert isinstance(y.creator, Forget)
    assert y.creator.inputs[0].requires_grad


def test_func_must_be_callable():
    with pytest.raises(TypeError, match="forget: expected func to be callable, got int"):
        forget(3, numpy.ones(2))


def test_func_must_return_variables():
    with pytest.raises(RuntimeError, match="forget: expected func to return a Variable.*got list"):
        forget(lambda a: [a], numpy.ones(2))
    with pytest.raises(RuntimeError, match="the 2nd element of the returned tuple is ndarray"):
        forget(lambda a: (a, a.array), numpy.ones(2))
