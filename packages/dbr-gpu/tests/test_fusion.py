import uuid

import numpy as np
import pytest

import dbr.gpu
from dbr.core.testing import get_test_device
from dbr.gpu.fusion import array_module, fuse
from dbr.gpu.testing import count_nvrtc_compilations


def _swish_grad(x, beta, gy):
    xp = array_module(x)
    s = 1 / (1 + xp.exp(-beta * x))
    return gy * (s + beta * x * s * (1 - s))


def test_numpy_path_equals_the_plain_function_and_keeps_its_name():
    fused = fuse()(_swish_grad)
    rng = np.random.default_rng(0)
    x, gy = rng.standard_normal((2, 5, 4))
    np.testing.assert_array_equal(fused(x, 1.5, gy), _swish_grad(x, 1.5, gy))
    assert fused.__name__ == "_swish_grad"
    assert fused.__wrapped__ is _swish_grad


def test_array_module_is_numpy_for_numpy_arrays_and_scalars():
    assert array_module(np.ones(2), 1.5) is np
    assert array_module(np.float32(2)) is np


def test_numpy_path_never_touches_cupy(monkeypatch):
    monkeypatch.setattr(dbr.gpu._cupy, "require", pytest.fail)
    assert fuse(kernel_name="dbr_add")(lambda a, b: a + b)(np.ones(2), 2.0).tolist() == [3.0, 3.0]


@pytest.mark.gpu
def test_cupy_path_runs_one_fused_kernel_equal_to_numpy():
    """One NVRTC compilation for the whole chain (see ``count_nvrtc_compilations``).

    The kernel name is unique to this run, so the fused kernel cannot be in
    any cache; unfused, the chain would launch CuPy's ufunc kernels, which
    compile zero (already cached) or several modules, never exactly one.
    A second call compiles nothing.
    """
    get_test_device("@cupy:0")
    cupy = dbr.gpu.cupy
    fused = fuse(kernel_name=f"dbr_test_swish_grad_{uuid.uuid4().hex[:12]}")(_swish_grad)
    rng = np.random.default_rng(1)
    x, gy = rng.standard_normal((2, 64, 33)).astype(np.float32)
    with count_nvrtc_compilations() as compiled:
        out = fused(cupy.asarray(x), np.float32(1.5), cupy.asarray(gy))
        cupy.cuda.Stream.null.synchronize()
        assert len(compiled) == 1
        fused(cupy.asarray(x), np.float32(1.5), cupy.asarray(gy))
        assert len(compiled) == 1
    assert isinstance(out, cupy.ndarray)
    want = _swish_grad(x, np.float32(1.5), gy)
    np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-6)
