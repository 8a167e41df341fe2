import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.group_normalization import group_normalization

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def reference(x, groups, gamma, beta, eps):
    """Loop over samples and groups, normalizing each group's elements."""
    x64 = x.astype(numpy.float64)
    y = numpy.empty_like(x64)
    size = x.shape[1] // groups
    for n in range(x.shape[0]):
        for g in range(groups):
            block = x64[n, g * size : (g + 1) * size]
            y[n, g * size : (g + 1) * size] = (block - block.mean()) / numpy.sqrt(
                block.var() + eps
            )
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return y * gamma.astype(numpy.float64).reshape(shape) + beta.reshape(shape)


def spread_out(shape, groups, dtype, min_std=0.1):
    """Uniform inputs in [-0.5, 1.5) whose every group has a std of at least ``min_std``."""
    while True:
        x = uniform(-1, 1, shape, dtype) + dtype(0.5)
        std = x.astype(numpy.float64).reshape(shape[0], groups, -1).std(axis=2)
        if std.min(initial=numpy.inf) >= min_std:
            return x


@testing.parameterize(
    *testing.product(
        {
            "x_shape,groups": [
                ((2, 6, 3, 2), 1),
                ((2, 6, 3, 2), 2),
                ((2, 6, 3, 2), 3),
                ((2, 6, 3, 2), 6),
                ((3, 4), 2),
                ((2, 4, 5), 4),
                ((1, 3, 2, 2, 2), 3),
            ],
            "dtype": FLOATS,
            "eps": [1e-5, 0.5],
        }
    )
)
class TestGroupNormalization(FunctionTestCase):
    def generate_inputs(self):
        channels = self.x_shape[1]
        # A group whose elements nearly coincide (two elements of (3, 4) with groups=2
        # drawn 0.02 apart) is normalized to almost a step; the central difference's
        # error, about (1e-3 / std) ** 2, then exceeds float64's 1e-5 rtol. Redraw.
        x = spread_out(self.x_shape, self.groups, self.dtype)
        return (
            x,
            uniform(0.5, 1.5, (channels,), self.dtype),
            uniform(-1, 1, (channels,), self.dtype),
        )

    def forward(self, inputs, device):
        x, gamma, beta = inputs
        return (group_normalization(x, self.groups, gamma, beta, eps=self.eps),)

    def forward_expected(self, inputs):
        x, gamma, beta = inputs
        return (reference(x, self.groups, gamma, beta, self.eps).astype(self.dtype),)


@testing.parameterize(
    *testing.product(
        {
            "x_shape,groups": [((2, 6, 3, 2), 3), ((3, 4), 2)],
            "x_dtype,param_dtype": [
                (numpy.float16, numpy.float32),
                (numpy.float32, numpy.float64),
                (numpy.float64, numpy.float32),
            ],
        }
    )
)
class TestGroupNormalizationParamsOfAnotherDtype(FunctionTestCase):
    """gamma and beta may have another dtype than x (float32 for float16 x under mixed16)."""

    def generate_inputs(self):
        channels = self.x_shape[1]
        return (
            spread_out(self.x_shape, self.groups, self.x_dtype),
            uniform(0.5, 1.5, (channels,), self.param_dtype),
            uniform(-1, 1, (channels,), self.param_dtype),
        )

    def forward(self, inputs, device):
        x, gamma, beta = inputs
        return (group_normalization(x, self.groups, gamma, beta),)

    def forward_expected(self, inputs):
        x, gamma, beta = inputs
        return (reference(x, self.groups, gamma, beta, 1e-5).astype(self.x_dtype),)


def test_params_of_another_dtype_get_gradients_of_their_dtype():
    numpy.random.seed(0)
    x = Variable(spread_out((2, 4, 3), 2, numpy.float16))
    gamma = Variable(uniform(0.5, 1.5, (4,), numpy.float32))
    beta = Variable(uniform(-1, 1, (4,), numpy.float32))
    y = group_normalization(x, 2, gamma, beta)
    assert y.dtype == numpy.float16
    gy16 = uniform(-1, 1, y.shape, numpy.float16)
    y.grad = gy16
    y.backward()
    assert x.grad.dtype == numpy.float16
    assert gamma.grad.dtype == numpy.float32 and beta.grad.dtype == numpy.float32
    x_hat = reference(x.array, 2, numpy.ones(4), numpy.zeros(4), 1e-5)
    gy = gy16.astype(numpy.float64)
    testing.assert_allclose(gamma.grad, (gy * x_hat).sum(axis=(0, 2)), atol=1e-2, rtol=1e-2)
    testing.assert_allclose(beta.grad, gy.sum(axis=(0, 2)), atol=1e-2, rtol=1e-2)


def test_spread_out_inputs_pass_the_float64_check_where_close_pairs_fail():
    def f(x, gamma, beta):
        return group_normalization(x, 2, gamma, beta, eps=1e-5)

    gamma, beta, gy = numpy.ones(4), numpy.zeros(4), numpy.linspace(-1, 1, 12).reshape(3, 4)
    close = numpy.array([[0.5, 0.51, 0.3, 0.29], [1.2, 1.19, -0.1, -0.09], [0.0, 0.01, 0.8, 0.81]])
    numpy.random.seed(0)
    with pytest.raises(AssertionError, match="check_backward failed"):
        check_backward(f, (close, gamma, beta), gy, dtype=numpy.float64, atol=1e-6, rtol=1e-5)
    numpy.random.seed(1)
    for _ in range(20):
        x = spread_out((3, 4), 2, numpy.float64)
        check_backward(f, (x, gamma, beta), gy, dtype=numpy.float64, atol=1e-6, rtol=1e-5)


def test_each_group_has_zero_mean_and_unit_variance():
    numpy.random.seed(0)
    x = numpy.random.uniform(-3, 5, (4, 8, 5, 5)).astype(numpy.float32)
    y = group_normalization(x, 4, numpy.ones(8, numpy.float32), numpy.zeros(8, numpy.float32))
    groups = y.array.astype(numpy.float64).reshape(4, 4, -1)
    testing.assert_allclose(groups.mean(axis=2), 0.0, atol=1e-5)
    testing.assert_allclose(groups.var(axis=2), 1.0, atol=1e-4)


def test_empty_batch():
    p = numpy.ones(4, numpy.float32)
    x = Variable(numpy.zeros((0, 4, 3), numpy.float32))
    y = group_normalization(x, 2, p, p)
    assert y.shape == (0, 4, 3)
    (gx,) = grad([y], [x])
    assert gx.shape == (0, 4, 3)


def test_float16_is_computed_in_float32():
    numpy.random.seed(1)
    x = (500 + numpy.random.uniform(-4, 4, (2, 2, 64, 64))).astype(numpy.float16)
    p = numpy.ones(2, numpy.float16)
    y = group_normalization(x, 1, p, numpy.zeros(2, numpy.float16))
    assert y.dtype == numpy.float16 and numpy.isfinite(y.array).all()
    testing.assert_allclose(y.array, reference(x, 1, p, numpy.zeros(2), 1e-5), atol=0.05)


_X24 = numpy.zeros((2, 4), numpy.float32)
_P4 = numpy.ones(4, numpy.float32)
_X = numpy.zeros((2, 6), numpy.float32)
_P = numpy.ones(6, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_X24, 2.0, _P4, _P4),
            TypeError,
            "group_normalization: expected groups to be an int",
        ),
        ((_X24, 0, _P4, _P4), ValueError, "group_normalization: expected groups >= 1, got 0"),
        (
            (_X24, 2, _P4, _P4),
            {"eps": -1.0},
            ValueError,
            "group_normalization: expected eps >= 0",
        ),
        ((_X, 4, _P, _P), InvalidType, ("GroupNormalization", "x.shape[1] % 4 == 0")),
        (
            (_X, 2, numpy.ones(5, numpy.float32), numpy.ones(5, numpy.float32)),
            InvalidType,
            ("GroupNormalization", "x.shape[1] =="),
        ),
        (
            (_X, 2, _P, _P.astype(numpy.float64)),
            InvalidType,
            ("GroupNormalization", "beta.dtype == gamma.dtype"),
        ),
        (
            (_X, 2, _P.astype(numpy.int32), _P.astype(numpy.int32)),
            InvalidType,
            ("GroupNormalization", "gamma.dtype.kind == 'f'"),
        ),
        (
            (_X.astype(numpy.int32), 2, _P, _P),
            InvalidType,
            ("GroupNormalization", "x.dtype.kind == 'f'"),
        ),
        (
            (numpy.zeros(6, numpy.float32), 2, _P, _P),
            InvalidType,
            ("GroupNormalization", "x.ndim >= 2"),
        ),
        (
            (numpy.zeros((2, 6, 0), numpy.float32), 2, _P, _P),
            InvalidType,
            ("GroupNormalization", "each group has at least one"),
        ),
    ],
    function=group_normalization,
)
