import math

import numpy
import pytest

from dbr.core import Variable, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.loss.vae import bernoulli_nll, gaussian_kl_divergence, gaussian_nll

FLOATS = [numpy.float16, numpy.float32, numpy.float64]
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((), ())]


def _uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def _reduced(loss, reduce, dtype):
    reduced = {"sum": loss.sum, "mean": loss.mean}.get(reduce)
    return numpy.asarray(loss if reduced is None else reduced()).astype(dtype)


@testing.parameterize(
    *testing.product({"shapes": SHAPES, "reduce": ["sum", "mean", "no"], "dtype": FLOATS})
)
class TestBernoulliNLL(FunctionTestCase):
    def generate_inputs(self):
        x_shape, y_shape = self.shapes
        return _uniform(0, 1, x_shape, self.dtype), _uniform(-3, 3, y_shape, self.dtype)

    def forward(self, inputs, device):
        return (bernoulli_nll(*inputs, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, y = (a.astype(numpy.float64) for a in inputs)
        p = 1 / (1 + numpy.exp(-y))
        loss = -(x * numpy.log(p) + (1 - x) * numpy.log(1 - p))
        return (_reduced(loss, self.reduce, self.dtype),)


@testing.parameterize(
    *testing.product({"shapes": SHAPES, "reduce": ["sum", "mean", "no"], "dtype": FLOATS})
)
class TestGaussianKLDivergence(FunctionTestCase):
    def generate_inputs(self):
        mean_shape, ln_var_shape = self.shapes
        return _uniform(-1, 1, mean_shape, self.dtype), _uniform(-1, 1, ln_var_shape, self.dtype)

    def forward(self, inputs, device):
        return (gaussian_kl_divergence(*inputs, reduce=self.reduce),)

    def forward_expected(self, inputs):
        mean, ln_var = (a.astype(numpy.float64) for a in inputs)
        var = numpy.exp(ln_var)
        # KL(N(mu, var) || N(0, 1)) = (var + mu**2 - 1 - log var) / 2 per dimension.
        loss = 0.5 * (var + mean**2 - 1 - numpy.log(var))
        return (_reduced(loss, self.reduce, self.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "shapes": [((3, 4),) * 3, ((3, 4), (4,), (3, 1)), ((4,), (3, 4), ()), ((),) * 3],
            "reduce": ["sum", "mean", "no"],
            "dtype": FLOATS,
        }
    )
)
class TestGaussianNLL(FunctionTestCase):
    def generate_inputs(self):
        x_shape, mean_shape, ln_var_shape = self.shapes
        return (
            _uniform(-1, 1, x_shape, self.dtype),
            _uniform(-1, 1, mean_shape, self.dtype),
            _uniform(-1, 1, ln_var_shape, self.dtype),
        )

    def forward(self, inputs, device):
        return (gaussian_nll(*inputs, reduce=self.reduce),)

    def forward_expected(self, inputs):
        x, mean, ln_var = (a.astype(numpy.float64) for a in inputs)
        sigma = numpy.sqrt(numpy.exp(ln_var))
        density = numpy.exp(-((x - mean) ** 2) / (2 * sigma**2)) / (sigma * math.sqrt(2 * math.pi))
        return (_reduced(-numpy.log(density), self.reduce, self.dtype),)


def test_bernoulli_nll_is_stable_for_large_logits():
    y = Variable(numpy.array([100.0, -100.0], numpy.float32))
    loss = bernoulli_nll(numpy.array([1.0, 1.0], numpy.float32), y, reduce="no")
    numpy.testing.assert_allclose(loss.array, [0.0, 100.0], atol=1e-6)
    loss.grad = numpy.ones(2, numpy.float32)
    loss.backward()
    numpy.testing.assert_allclose(y.grad, [0.0, -1.0], atol=1e-6)


def test_gradients_reach_every_input():
    x = Variable(numpy.array([[0.5, -0.5]]))
    mean = Variable(numpy.array([0.0, 0.5]))
    ln_var = Variable(numpy.array([0.0, 1.0]))
    gaussian_nll(x, mean, ln_var).backward()
    precision = numpy.exp(-ln_var.array)
    diff = x.array[0] - mean.array
    numpy.testing.assert_allclose(x.grad, [diff * precision])
    numpy.testing.assert_allclose(mean.grad, -diff * precision)
    numpy.testing.assert_allclose(ln_var.grad, 0.5 * (1 - diff**2 * precision))


@pytest.mark.parametrize(
    "function, args",
    [
        (bernoulli_nll, 2),
        (gaussian_kl_divergence, 2),
        (gaussian_nll, 3),
    ],
)
def test_mean_is_the_sum_over_the_broadcast_size(function, args):
    # Chainer 7 averages over the elementwise loss, whose shape is the broadcast one.
    inputs = [Variable(numpy.random.uniform(-1, 1, (3, 4))) for _ in range(args - 1)]
    inputs.append(Variable(numpy.random.uniform(-1, 1, (4,))))
    total = function(*inputs, reduce="sum")
    total.backward()
    summed_grads = [v.grad.copy() for v in inputs]
    for v in inputs:
        v.cleargrad()
    mean = function(*inputs, reduce="mean")
    assert mean.shape == ()
    numpy.testing.assert_allclose(mean.array, total.array / 12, rtol=1e-12)
    mean.backward()
    for v, g in zip(inputs, summed_grads):
        numpy.testing.assert_allclose(v.grad, g / 12, rtol=1e-12)


def _bad_input_rows(function, label, names):
    n = len(names)
    f32, f64, i32 = numpy.float32, numpy.float64, numpy.int32
    return [
        (
            function,
            (numpy.zeros(2, i32),) * n,
            {},
            InvalidType,
            (label, f"{names[0]}.dtype.kind == 'f'"),
        ),
        (
            function,
            (numpy.zeros(2, f32),) * (n - 1) + (numpy.zeros(2, f64),),
            {},
            InvalidType,
            f"{names[0]}.dtype == {names[-1]}.dtype",
        ),
        (
            function,
            (numpy.zeros(2, f32),) * (n - 1) + (numpy.zeros(3, f32),),
            {},
            InvalidType,
            ("broadcast", f"{names[-1]}.shape"),
        ),
        (
            function,
            (numpy.zeros(2, f32),) * n,
            {"reduce": "avg"},
            ValueError,
            f"{function.__name__}: expected reduce to be 'sum', 'mean' or 'no', got 'avg'",
        ),
    ]


test_bad_input = bad_input_test(
    _bad_input_rows(bernoulli_nll, "BernoulliNLL", ("x", "y"))
    + _bad_input_rows(gaussian_kl_divergence, "GaussianKLDivergence", ("mean", "ln_var"))
    + _bad_input_rows(gaussian_nll, "GaussianNLL", ("x", "mean", "ln_var"))
)
