import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase, bad_input_test
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.batch_normalization import (
    BatchNormalization,
    batch_normalization,
    fixed_batch_normalization,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]

# (x shape, gamma shape, axis): the channel axes are those not in axis.
LAYOUTS = [
    ((5, 3), (3,), None),
    ((4, 3, 2, 3), (3,), None),
    ((3, 2, 3, 2), (2, 3), None),
    ((2, 3, 4), (4,), (0, 1)),
    ((3, 4, 2), (4,), (-3, -1)),
    ((3, 2, 4, 2), (2, 2), (0, 2)),
    ((2, 3, 2), (2, 2), 1),
    ((6,), (), None),
]


def reduced_axes(x_ndim, gamma_ndim, axis):
    if axis is None:
        return (0,) + tuple(range(gamma_ndim + 1, x_ndim))
    axis = (axis,) if isinstance(axis, int) else axis
    return tuple(sorted(a % x_ndim for a in axis))


def expand(p, x_ndim, axes):
    """Per-channel parameters reshaped to broadcast against x."""
    return numpy.expand_dims(p, axes) if axes else p


def reference(x, gamma, beta, axis=None, eps=2e-5):
    x64 = x.astype(numpy.float64)
    axes = reduced_axes(x.ndim, gamma.ndim, axis)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    g = expand(gamma.astype(numpy.float64), x.ndim, axes)
    b = expand(beta.astype(numpy.float64), x.ndim, axes)
    return g * (x64 - mean) / numpy.sqrt(var + eps) + b


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


@testing.parameterize(
    *testing.product({"x_shape,gamma_shape,axis": LAYOUTS, "dtype": FLOATS, "eps": [2e-5, 0.5]})
)
class TestBatchNormalization(FunctionTestCase):
    def generate_inputs(self):
        x = uniform(-1, 1, self.x_shape, self.dtype) + self.dtype(0.5)
        gamma = uniform(0.5, 1.5, self.gamma_shape, self.dtype)
        beta = uniform(-1, 1, self.gamma_shape, self.dtype)
        return x, gamma, beta

    def forward(self, inputs, device):
        x, gamma, beta = inputs
        return (batch_normalization(x, gamma, beta, eps=self.eps, axis=self.axis),)

    def forward_expected(self, inputs):
        y = reference(*inputs, axis=self.axis, eps=self.eps)
        return (y.astype(self.dtype),)


@testing.parameterize(
    *testing.product(
        {"x_dtype,param_dtype": [(numpy.float16, numpy.float32), (numpy.float32, numpy.float64)]}
    )
)
class TestBatchNormalizationMixedDtypes(FunctionTestCase):
    """float32 parameters for a float16 input (mixed precision), and the like."""

    def generate_inputs(self):
        x = uniform(-1, 1, (4, 3, 2), self.x_dtype)
        return (
            x,
            uniform(0.5, 1.5, (3,), self.param_dtype),
            uniform(-1, 1, (3,), self.param_dtype),
        )

    def forward(self, inputs, device):
        return (batch_normalization(*inputs),)

    def forward_expected(self, inputs):
        return (reference(*inputs).astype(self.x_dtype),)


def test_mixed_dtypes_give_gradients_of_each_input_dtype():
    x = Variable(numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float16))
    gamma = Variable(numpy.ones(3, numpy.float32))
    beta = Variable(numpy.zeros(3, numpy.float32))
    y = batch_normalization(x, gamma, beta)
    assert y.dtype == numpy.float16
    gx, ggamma, gbeta = grad([y * y], [x, gamma, beta])
    assert (gx.dtype, ggamma.dtype, gbeta.dtype) == (numpy.float16,) + (numpy.float32,) * 2


@pytest.mark.parametrize("dtype", FLOATS)
def test_running_statistics_are_updated_in_place(dtype):
    numpy.random.seed(0)
    x = uniform(-1, 3, (6, 3, 2, 2), dtype)
    gamma, beta = numpy.ones(3, dtype), numpy.zeros(3, dtype)
    running_mean = uniform(-1, 1, (3,), dtype)
    running_var = uniform(0.5, 1.5, (3,), dtype)
    expected_mean = running_mean.astype(numpy.float64).copy()
    expected_var = running_var.astype(numpy.float64).copy()
    mean_id, var_id = id(running_mean), id(running_var)
    decay = 0.8
    for _ in range(2):
        batch_normalization(
            x, gamma, beta, running_mean=running_mean, running_var=running_var, decay=decay
        )
        x64 = x.astype(numpy.float64)
        m = x.size // 3
        expected_mean = decay * expected_mean + (1 - decay) * x64.mean(axis=(0, 2, 3))
        unbiased = x64.var(axis=(0, 2, 3)) * m / (m - 1)
        expected_var = decay * expected_var + (1 - decay) * unbiased
    assert id(running_mean) == mean_id and id(running_var) == var_id
    assert running_mean.dtype == dtype and running_var.dtype == dtype
    tol = {"atol": 2e-3, "rtol": 2e-3} if dtype == numpy.float16 else {"atol": 1e-6, "rtol": 1e-5}
    testing.assert_allclose(running_mean, expected_mean, **tol)
    testing.assert_allclose(running_var, expected_var, **tol)


def test_running_statistics_follow_the_axis_argument():
    x = numpy.random.uniform(-1, 1, (4, 5, 3)).astype(numpy.float32)
    running_mean = numpy.zeros(3, numpy.float32)
    running_var = numpy.ones(3, numpy.float32)
    gamma, beta = numpy.ones(3, numpy.float32), numpy.zeros(3, numpy.float32)
    batch_normalization(
        x, gamma, beta, running_mean=running_mean, running_var=running_var, axis=(0, 1)
    )
    x64 = x.astype(numpy.float64)
    testing.assert_allclose(running_mean, 0.1 * x64.mean(axis=(0, 1)), atol=1e-7, rtol=1e-5)
    expected_var = 0.9 + 0.1 * x64.var(axis=(0, 1), ddof=1)
    testing.assert_allclose(running_var, expected_var, atol=1e-7, rtol=1e-5)


def test_float16_statistics_are_accumulated_in_float32():
    # 4096 values near 1000: their float16 sum (about 4e6) would overflow float16.
    numpy.random.seed(1)
    x = (1000 + numpy.random.uniform(-8, 8, (4096, 2))).astype(numpy.float16)
    y = batch_normalization(x, numpy.ones(2, numpy.float16), numpy.zeros(2, numpy.float16))
    assert y.dtype == numpy.float16
    assert numpy.isfinite(y.array).all()
    testing.assert_allclose(y.array, reference(x, numpy.ones(2), numpy.zeros(2)), atol=0.05)


def test_statistics_are_accurate_for_large_batches():
    numpy.random.seed(2)
    x = (numpy.random.standard_normal((64, 8, 32, 32)) * 2 + 3).astype(numpy.float32)
    gamma, beta = numpy.ones(8, numpy.float32), numpy.zeros(8, numpy.float32)
    y = batch_normalization(x, gamma, beta)
    testing.assert_allclose(y.array, reference(x, gamma, beta), atol=2e-5, rtol=1e-4)


def test_only_the_requested_gradients_are_computed():
    x = numpy.random.uniform(-1, 1, (5, 3)).astype(numpy.float32)
    gamma = Variable(numpy.random.uniform(0.5, 1.5, 3).astype(numpy.float32))
    beta = Variable(numpy.zeros(3, numpy.float32))
    y = batch_normalization(x, gamma, beta)
    gy = numpy.random.uniform(-1, 1, (5, 3)).astype(numpy.float32)
    ggamma, gbeta = grad([y], [gamma, beta], [Variable(gy)])
    x64 = x.astype(numpy.float64)
    x_hat = (x64 - x64.mean(0)) / numpy.sqrt(x64.var(0) + 2e-5)
    testing.assert_allclose(ggamma, (gy * x_hat).sum(0), atol=1e-5, rtol=1e-4)
    testing.assert_allclose(gbeta, gy.sum(0), atol=1e-6, rtol=1e-5)
    node = y.creator
    assert isinstance(node, BatchNormalization)


def test_gradient_with_respect_to_x_matches_the_closed_form():
    numpy.random.seed(3)
    x = numpy.random.uniform(-1, 1, (6, 2, 3))
    gamma = numpy.array([0.5, 2.0])
    gy = numpy.random.uniform(-1, 1, x.shape)
    xv = Variable(x)
    (gx,) = grad([batch_normalization(xv, gamma, numpy.zeros(2), eps=1e-3)], [xv], [Variable(gy)])
    axes = (0, 2)
    mean = x.mean(axis=axes, keepdims=True)
    inv_std = 1 / numpy.sqrt(x.var(axis=axes, keepdims=True) + 1e-3)
    x_hat = (x - mean) * inv_std
    m = 6 * 3
    g = gamma[None, :, None]
    expected = (
        g
        * inv_std
        * (
            gy
            - gy.sum(axes, keepdims=True) / m
            - x_hat * (gy * x_hat).sum(axes, keepdims=True) / m
        )
    )
    testing.assert_allclose(gx, expected, atol=1e-12, rtol=1e-10)


def test_third_order_gradient_is_defined():
    x = Variable(numpy.random.uniform(-1, 1, (4, 2)))
    gamma = Variable(numpy.array([1.5, 0.5]))
    y = batch_normalization(x, gamma, numpy.zeros(2))
    (gx,) = grad([y * y * y], [x], enable_double_backprop=True)
    (ggamma,) = grad([gx * gx], [gamma], enable_double_backprop=True)
    (gx3,) = grad([ggamma], [x])
    assert gx3.shape == (4, 2) and numpy.isfinite(gx3.array).all()


def test_single_sample_batch_warns():
    gamma, beta = numpy.ones(3, numpy.float32), numpy.zeros(3, numpy.float32)
    with pytest.warns(UserWarning, match="batch_normalization received a batch with no more"):
        y = batch_normalization(numpy.ones((1, 3), numpy.float32), gamma, beta)
    numpy.testing.assert_array_equal(y.array, numpy.zeros((1, 3), numpy.float32))
    with pytest.warns(UserWarning, match="reduced axes all have length one"):
        batch_normalization(numpy.ones((3, 1), numpy.float32), gamma, beta, axis=1)


# -- fixed batch normalization ---------------------------------------------------------------


@testing.parameterize(*testing.product({"x_shape,gamma_shape,axis": LAYOUTS[:6], "dtype": FLOATS}))
class TestFixedBatchNormalization(FunctionTestCase):
    def generate_inputs(self):
        x = uniform(-1, 1, self.x_shape, self.dtype)
        gamma = uniform(0.5, 1.5, self.gamma_shape, self.dtype)
        beta = uniform(-1, 1, self.gamma_shape, self.dtype)
        mean = uniform(-0.5, 0.5, self.gamma_shape, self.dtype)
        var = uniform(0.5, 1.5, self.gamma_shape, self.dtype)
        return x, gamma, beta, mean, var

    def forward(self, inputs, device):
        return (fixed_batch_normalization(*inputs, eps=1e-3, axis=self.axis),)

    def forward_expected(self, inputs):
        x, gamma, beta, mean, var = [a.astype(numpy.float64) for a in inputs]
        axes = reduced_axes(x.ndim, gamma.ndim, self.axis)

        def e(p):
            return expand(p, x.ndim, axes)

        y = e(gamma) * (x - e(mean)) / numpy.sqrt(e(var) + 1e-3) + e(beta)
        return (y.astype(self.dtype),)


def test_fixed_batch_normalization_of_an_empty_batch():
    p = numpy.ones(3, numpy.float32)
    y = fixed_batch_normalization(numpy.zeros((0, 3, 2), numpy.float32), p, p, p, p)
    assert y.shape == (0, 3, 2) and y.dtype == numpy.float32


_X = numpy.zeros((2, 3), numpy.float32)
_GAMMA, _BETA = numpy.ones(3, numpy.float32), numpy.zeros(3, numpy.float32)

test_bad_input = bad_input_test(
    [
        (
            (_X, _GAMMA, _BETA),
            {"train": True},
            ValueError,
            "batch_normalization: the train argument",
        ),
        (
            (_X, _GAMMA, _BETA),
            {"foo": 1},
            TypeError,
            ("batch_normalization() got unexpected ", ": foo"),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"running_mean": numpy.zeros(3, numpy.float32)},
            ValueError,
            "running_mean and running_var to be both",
        ),
        ((_X, _GAMMA, _BETA), {"axis": (2, 0)}, ValueError, "ascending order, got (2, 0)"),
        (
            (_X, _GAMMA, _BETA),
            {"axis": [0]},
            TypeError,
            "batch_normalization: expected axis to be None",
        ),
        (
            (_X, _GAMMA, _BETA),
            {"eps": -1},
            ValueError,
            "batch_normalization: expected eps >= 0, got -1",
        ),
        ((_X, _GAMMA, _BETA), {"decay": "0.9"}, TypeError, "expected decay to be a real number"),
        (
            (_X, numpy.ones(4, numpy.float32), numpy.zeros(4, numpy.float32)),
            InvalidType,
            ("BatchNormalization", "x.shape[1] == "),
        ),
        (
            (_X.astype(numpy.int32), _GAMMA, _BETA),
            InvalidType,
            ("BatchNormalization", "x.dtype.kind == 'f'"),
        ),
        (
            (_X, _GAMMA, _BETA.astype(numpy.float64)),
            InvalidType,
            ("BatchNormalization", "beta.dtype == gamma.dtype"),
        ),
        (
            (_X, _GAMMA, numpy.zeros(2, numpy.float32)),
            InvalidType,
            ("BatchNormalization", "beta.shape == gamma.shape"),
        ),
        (
            (numpy.zeros(3, numpy.float32), _GAMMA, _BETA),
            InvalidType,
            ("BatchNormalization", "x.ndim >= gamma.ndim + 1"),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"axis": 2},
            InvalidType,
            ("BatchNormalization", "-x.ndim <= 2 < x.ndim"),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"axis": (-2, 0)},
            InvalidType,
            ("BatchNormalization", "ascending order once negative"),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"axis": (0, 1)},
            InvalidType,
            ("BatchNormalization", "gamma.ndim == 0"),
        ),
        (
            (numpy.zeros((0, 3), numpy.float32), _GAMMA, _BETA),
            InvalidType,
            ("BatchNormalization", "x.shape[0] > 0"),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"running_mean": numpy.zeros(2, numpy.float32), "running_var": _GAMMA.copy()},
            InvalidType,
            (
                "BatchNormalization",
                "running_mean is a floating array and running_mean.shape == gamma.shape",
            ),
        ),
        (
            (_X, _GAMMA, _BETA),
            {"running_mean": Variable(_GAMMA.copy()), "running_var": _GAMMA.copy()},
            InvalidType,
            ("BatchNormalization", "running_mean is Variable of shape (3,)"),
        ),
        (
            fixed_batch_normalization,
            (_X, _GAMMA, _GAMMA, numpy.ones(2, numpy.float32), _GAMMA),
            {},
            InvalidType,
            ("FixedBatchNormalization", "mean.shape == gamma.shape"),
        ),
        (
            fixed_batch_normalization,
            (_X, _GAMMA, _GAMMA, _GAMMA, _GAMMA.astype(numpy.float64)),
            {},
            InvalidType,
            "var.dtype == gamma.dtype",
        ),
        (
            fixed_batch_normalization,
            (_X, _GAMMA, _GAMMA, _GAMMA, _GAMMA),
            {"axis": (1, 0)},
            ValueError,
            "fixed_batch_normalization: expected the values of axis",
        ),
    ],
    function=batch_normalization,
)


@testing.parameterize(*testing.product({"dtype": FLOATS, "offset": [3.0, 60.0]}))
class TestBatchNormalizationOfOffsetData(FunctionTestCase):
    """A mean far from zero against the spread: the one-pass variance is ill-conditioned.

    The statistics and gradients are then computed from the centred data.
    """

    def generate_inputs(self):
        x = uniform(-1, 1, (6, 3, 2), numpy.float64) + self.offset
        return (
            x.astype(self.dtype),
            uniform(0.5, 1.5, (3,), self.dtype),
            uniform(-1, 1, (3,), self.dtype),
        )

    def forward(self, inputs, device):
        return (batch_normalization(*inputs),)

    def forward_expected(self, inputs):
        return (reference(*inputs).astype(self.dtype),)


def test_large_mean_keeps_the_variance_accurate():
    numpy.random.seed(5)
    x = (1000 + numpy.random.standard_normal((256, 4, 8, 8))).astype(numpy.float32)
    gamma, beta = numpy.ones(4, numpy.float32), numpy.zeros(4, numpy.float32)
    xv = Variable(x)
    y = batch_normalization(xv, gamma, beta)
    testing.assert_allclose(y.array, reference(x, gamma, beta), atol=1e-4, rtol=1e-4)
    gy = numpy.random.standard_normal(x.shape).astype(numpy.float32)
    (gx,) = grad([y], [xv], [Variable(gy)])
    x64, gy64 = x.astype(numpy.float64), gy.astype(numpy.float64)
    axes = (0, 2, 3)
    x_hat = (x64 - x64.mean(axes, keepdims=True)) / numpy.sqrt(x64.var(axes, keepdims=True) + 2e-5)
    m = x.size // 4
    inv_std = 1 / numpy.sqrt(x64.var(axes, keepdims=True) + 2e-5)
    expected = inv_std * (
        gy64
        - gy64.sum(axes, keepdims=True) / m
        - x_hat * (gy64 * x_hat).sum(axes, keepdims=True) / m
    )
    testing.assert_allclose(gx, expected, atol=1e-4, rtol=1e-3)
