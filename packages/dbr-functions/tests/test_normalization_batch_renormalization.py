import numpy
import pytest

from dbr.core import Variable, grad, testing
from dbr.core.testing import FunctionTestCase
from dbr.core.type_check import InvalidType
from dbr.functions.normalization.batch_normalization import fixed_batch_normalization
from dbr.functions.normalization.batch_renormalization import (
    batch_renormalization,
    fixed_batch_renormalization,
)

FLOATS = [numpy.float16, numpy.float32, numpy.float64]


def uniform(low, high, shape, dtype):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


def reference(x, gamma, beta, rmax, dmax, running_mean, running_var, eps=2e-5):
    """y, r and d of batch renormalization, in float64."""
    x = x.astype(numpy.float64)
    axes = (0,) + tuple(range(gamma.ndim + 1, x.ndim))

    def e(p):
        return numpy.expand_dims(p.astype(numpy.float64), axes)

    mean = x.mean(axis=axes)
    std = numpy.sqrt(x.var(axis=axes) + eps)
    running_std = numpy.sqrt(running_var.astype(numpy.float64) + eps)
    r = numpy.clip(std / running_std, 1 / rmax, rmax)
    d = numpy.clip((mean - running_mean) / running_std, -dmax, dmax)
    y = e(gamma) * ((x - e(mean)) / e(std) * e(r) + e(d)) + e(beta)
    return y, r, d


@testing.parameterize(
    *testing.product(
        {
            "x_shape,gamma_shape": [((5, 3), (3,)), ((4, 3, 2, 2), (3,)), ((3, 2, 3, 2), (2, 3))],
            "dtype": FLOATS,
        }
    )
)
class TestBatchRenormalizationClipped(FunctionTestCase):
    """Running statistics far from the batch ones: r and d sit at their bounds.

    There r and d are locally constant, so the gradient (which treats them as
    constants) is the true derivative and the numerical check applies.
    """

    rmax = 1.5
    dmax = 0.5

    def before_test(self, test_name):
        # Alternate signs so that d is clipped at both bounds.
        signs = numpy.where(numpy.arange(numpy.prod(self.gamma_shape)) % 2 == 0, 1.0, -1.0)
        self.running_mean = (10.0 * signs).reshape(self.gamma_shape).astype(self.dtype)
        self.running_var = numpy.full(self.gamma_shape, 100.0, self.dtype)

    def generate_inputs(self):
        return (
            uniform(-1, 1, self.x_shape, self.dtype),
            uniform(0.5, 1.5, self.gamma_shape, self.dtype),
            uniform(-1, 1, self.gamma_shape, self.dtype),
        )

    def forward(self, inputs, device):
        x, gamma, beta = inputs
        y = batch_renormalization(
            x,
            gamma,
            beta,
            self.rmax,
            self.dmax,
            running_mean=device.send(self.running_mean.copy()),
            running_var=device.send(self.running_var.copy()),
        )
        return (y,)

    def forward_expected(self, inputs):
        y, r, d = reference(*inputs, self.rmax, self.dmax, self.running_mean, self.running_var)
        numpy.testing.assert_allclose(r, 1 / self.rmax)
        numpy.testing.assert_allclose(numpy.abs(d), self.dmax)
        return (y.astype(self.dtype),)

    function = staticmethod(batch_renormalization)

    def bad_inputs(self):
        x = numpy.zeros((2, 3), numpy.float32)
        p = numpy.ones(3, numpy.float32)
        q = numpy.ones(4, numpy.float32)
        return [
            (
                (x, q, q, 1.0, 0.0),
                {"running_mean": q, "running_var": q},
                InvalidType,
                ("BatchRenormalization", "x.shape[1] =="),
            ),
            (
                (x, p, p, 1.0, 0.0),
                {"running_mean": numpy.ones(2, numpy.float32), "running_var": p},
                InvalidType,
                "running_mean.shape == gamma.shape",
            ),
        ]


@pytest.mark.parametrize("dtype", FLOATS)
def test_forward_with_unclipped_corrections(dtype):
    numpy.random.seed(0)
    x = uniform(-1, 1, (6, 3, 2), dtype)
    gamma = uniform(0.5, 1.5, (3,), dtype)
    beta = uniform(-1, 1, (3,), dtype)
    running_mean = uniform(-0.1, 0.1, (3,), dtype)
    running_var = uniform(0.3, 0.4, (3,), dtype)
    y = batch_renormalization(
        x, gamma, beta, 3.0, 1.0, running_mean=running_mean, running_var=running_var
    )
    expected, r, d = reference(x, gamma, beta, 3.0, 1.0, running_mean, running_var)
    assert (numpy.abs(r - 1) > 1e-3).all() and (r > 1 / 3).all() and (r < 3).all()
    assert (numpy.abs(d) < 1).all()
    tol = {"atol": 1e-2, "rtol": 1e-2} if dtype == numpy.float16 else {"atol": 1e-5, "rtol": 1e-5}
    assert y.dtype == dtype
    testing.assert_allclose(y.array, expected, **tol)


def test_gradient_treats_r_and_d_as_constants():
    numpy.random.seed(1)
    x = numpy.random.uniform(-1, 1, (6, 3))
    gamma = numpy.random.uniform(0.5, 1.5, 3)
    running_mean = numpy.random.uniform(-0.1, 0.1, 3)
    running_var = numpy.random.uniform(0.3, 0.4, 3)
    gy = numpy.random.uniform(-1, 1, x.shape)
    xv, gv, bv = Variable(x), Variable(gamma), Variable(numpy.zeros(3))
    y = batch_renormalization(
        xv, gv, bv, 3.0, 1.0, running_mean=running_mean, running_var=running_var
    )
    gx, ggamma, gbeta = grad([y], [xv, gv, bv], [Variable(gy)])
    _, r, d = reference(x, gamma, numpy.zeros(3), 3.0, 1.0, running_mean, running_var)
    mean, inv_std = x.mean(0), 1 / numpy.sqrt(x.var(0) + 2e-5)
    x_hat = (x - mean) * inv_std
    m = x.shape[0]
    expected_gx = gamma * r * inv_std * (gy - gy.sum(0) / m - x_hat * (gy * x_hat).sum(0) / m)
    testing.assert_allclose(gx, expected_gx, atol=1e-12, rtol=1e-10)
    testing.assert_allclose(ggamma, (gy * (x_hat * r + d)).sum(0), atol=1e-12, rtol=1e-10)
    testing.assert_allclose(gbeta, gy.sum(0), atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("update_statistics", [False, True])
def test_running_statistics(update_statistics):
    numpy.random.seed(2)
    x = numpy.random.uniform(-1, 2, (5, 2, 3)).astype(numpy.float32)
    gamma, beta = numpy.ones(2, numpy.float32), numpy.zeros(2, numpy.float32)
    running_mean = numpy.array([0.1, -0.2], numpy.float32)
    running_var = numpy.array([0.5, 2.0], numpy.float32)
    before_mean, before_var = running_mean.copy(), running_var.copy()
    y = batch_renormalization(
        x,
        gamma,
        beta,
        2.0,
        1.0,
        running_mean=running_mean,
        running_var=running_var,
        decay=0.7,
        update_statistics=update_statistics,
    )
    # r and d come from the running statistics before the update.
    expected, _, _ = reference(x, gamma, beta, 2.0, 1.0, before_mean, before_var)
    testing.assert_allclose(y.array, expected, atol=1e-5, rtol=1e-5)
    if not update_statistics:
        numpy.testing.assert_array_equal(running_mean, before_mean)
        numpy.testing.assert_array_equal(running_var, before_var)
        return
    x64 = x.astype(numpy.float64)
    testing.assert_allclose(
        running_mean, 0.7 * before_mean + 0.3 * x64.mean(axis=(0, 2)), atol=1e-6, rtol=1e-5
    )
    unbiased = x64.var(axis=(0, 2), ddof=1)
    testing.assert_allclose(running_var, 0.7 * before_var + 0.3 * unbiased, atol=1e-6, rtol=1e-5)


def test_double_backward_through_the_effective_scale():
    numpy.random.seed(3)
    x = numpy.random.uniform(-1, 1, (5, 2))
    running_mean = numpy.array([10.0, -10.0])
    running_var = numpy.array([100.0, 100.0])

    def f(x, gamma, beta):
        return batch_renormalization(
            x,
            gamma,
            beta,
            1.5,
            0.5,
            running_mean=running_mean.copy(),
            running_var=running_var.copy(),
        )

    from dbr.core.gradient_check import check_double_backward

    inputs = (x, numpy.array([0.7, 1.3]), numpy.array([0.1, -0.4]))
    gy = numpy.random.uniform(-1, 1, x.shape)
    ggs = (numpy.random.uniform(-1, 1, x.shape),) + tuple(numpy.random.uniform(-1, 1, (2, 2)))
    check_double_backward(f, inputs, gy, ggs, atol=1e-6, rtol=1e-5)


def test_fixed_batch_renormalization_is_deprecated_fixed_batch_normalization():
    numpy.random.seed(4)
    x = numpy.random.uniform(-1, 1, (4, 3)).astype(numpy.float32)
    p = [numpy.random.uniform(0.5, 1.5, 3).astype(numpy.float32) for _ in range(4)]
    with pytest.warns(DeprecationWarning, match="fixed_batch_renormalization is deprecated"):
        y = fixed_batch_renormalization(x, *p, eps=1e-3)
    numpy.testing.assert_array_equal(y.array, fixed_batch_normalization(x, *p, eps=1e-3).array)


def test_arguments_are_checked():
    x = numpy.zeros((2, 3), numpy.float32)
    p = numpy.ones(3, numpy.float32)
    with pytest.raises(TypeError, match="batch_renormalization: running_mean is required"):
        batch_renormalization(x, p, p, 1.0, 0.0, running_var=p.copy())
    with pytest.raises(TypeError, match="batch_renormalization: running_var is required"):
        batch_renormalization(x, p, p, 1.0, 0.0, running_mean=p.copy())
    with pytest.raises(ValueError, match=r"batch_renormalization: expected rmax > 0, got 0"):
        batch_renormalization(x, p, p, 0, 0.0, running_mean=p.copy(), running_var=p.copy())
    with pytest.raises(ValueError, match=r"expected dmax >= 0, got -1"):
        batch_renormalization(x, p, p, 1.0, -1, running_mean=p.copy(), running_var=p.copy())
