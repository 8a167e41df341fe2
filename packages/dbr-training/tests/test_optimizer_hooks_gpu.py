"""Optimizer hooks on '@cupy:0' against the same hooks on NumPy arrays."""

import types

import numpy
import pytest

from dbr.core import Link, Parameter
from dbr.core.testing import get_test_device
from dbr.training.optimizer_hooks import (
    GradientClipping,
    GradientHardClipping,
    GradientLARS,
    GradientNoise,
    Lasso,
    WeightDecay,
)

P0 = numpy.array([[1.5, -2.0, 0.0], [0.25, 3.0, -0.5]])
G0 = numpy.array([[0.1, 0.2, -0.3], [-4.0, 0.5, 2.5]])
RULE = types.SimpleNamespace(t=3)
TOL = {numpy.float16: 2e-3, numpy.float32: 1e-6, numpy.float64: 1e-14}
DTYPES = pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.float64])


def param_on(device, dtype, p=P0, g=G0):
    param = Parameter(device.send(p.astype(dtype)))
    param.grad = device.send(g.astype(dtype))
    return param


def to_numpy(array):
    return array if isinstance(array, numpy.ndarray) else array.get()


PER_PARAM = [
    WeightDecay(0.3),
    Lasso(0.5),
    GradientHardClipping(-0.25, 1.0),
    GradientLARS(threshold=0.01, weight_decay=0.2, eps=1e-3),
    GradientLARS(threshold=100.0, weight_decay=0.2),
    GradientNoise(0.2, noise_func=lambda xp, shape, dtype, hook, opt: xp.full(shape, 0.5, dtype)),
]


@pytest.mark.gpu
@DTYPES
@pytest.mark.parametrize("hook", PER_PARAM, ids=lambda h: f"{h.name}")
def test_per_parameter_hook_matches_cpu(hook, dtype):
    gpu = get_test_device("@cupy:0")
    on_gpu, on_cpu = param_on(gpu, dtype), param_on(get_test_device("@numpy"), dtype)
    grad = on_gpu.grad
    hook(RULE, on_gpu)
    hook(RULE, on_cpu)
    assert on_gpu.grad is grad and on_gpu.grad.dtype == dtype
    numpy.testing.assert_allclose(
        to_numpy(on_gpu.grad), on_cpu.grad, rtol=TOL[dtype], atol=TOL[dtype]
    )
    assert not numpy.array_equal(on_cpu.grad, G0.astype(dtype))


class TwoParams(Link):
    def __init__(self, device, dtype, scale):
        super().__init__()
        with self.init_scope():
            self.a = Parameter(numpy.ones(3, dtype))
            self.b = Parameter(numpy.ones((2, 2), dtype))
        self.to_device(device)
        self.a.grad = device.send(numpy.array([3.0, 0.0, -1.0], dtype) * scale)
        self.b.grad = device.send(numpy.array([[0.0, 4.0], [2.0, -1.0]], dtype) * scale)


@pytest.mark.gpu
@DTYPES
@pytest.mark.parametrize("scale", [1.0, 0.1], ids=["clipped", "left-alone"])
def test_gradient_clipping_matches_cpu(dtype, scale):
    gpu = get_test_device("@cupy:0")
    links = [TwoParams(d, dtype, scale) for d in (gpu, get_test_device("@numpy"))]
    for link in links:
        GradientClipping(2.0)(types.SimpleNamespace(target=link))
    for name in ("a", "b"):
        got, want = (getattr(link, name).grad for link in links)
        numpy.testing.assert_allclose(to_numpy(got), want, rtol=TOL[dtype], atol=TOL[dtype])
    norm = numpy.sqrt(
        (to_numpy(links[0].a.grad) ** 2).sum() + (to_numpy(links[0].b.grad) ** 2).sum()
    )
    assert norm <= 2.0 * (1 + 1e-3)


@pytest.mark.gpu
def test_default_gradient_noise_on_gpu_has_the_scheduled_std():
    gpu = get_test_device("@cupy:0")
    n, eta = 200_000, 0.3
    param = param_on(gpu, numpy.float32, numpy.zeros(n), numpy.ones(n))
    GradientNoise(eta)(RULE, param)
    noise = param.grad.get() - 1.0
    expected_std = (eta / (1 + RULE.t) ** 0.55) ** 0.5
    assert abs(noise.mean()) < 5 * expected_std / n**0.5
    assert abs(noise.std() - expected_std) < 5 * expected_std / (2 * n) ** 0.5
