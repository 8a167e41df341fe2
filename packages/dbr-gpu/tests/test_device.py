"""GpuDevice: specifiers, the registry, the current device, and moving arrays, Variables, Links."""

import re

import numpy
import pytest

import dbr.gpu
from dbr.core import Link, Parameter, Variable, backend
from dbr.core.testing import get_test_device
from dbr.gpu.device import GpuDevice, get_device_from_id, resolve

no_gpu = pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")


@pytest.fixture
def gpu():
    return get_test_device("@cupy:0")


def _gpu_count(cupy):
    return cupy.cuda.runtime.getDeviceCount()


# -- without a GPU ---------------------------------------------------------------


@pytest.mark.parametrize("spec", ["@cupy:x", "@cupy:", "@cupy:-1", "@cupy:1.0", "@cupy:0:1"])
def test_malformed_specifiers_raise_value_error_naming_them(spec):
    named = re.escape(repr(spec))
    with pytest.raises(ValueError, match=f"malformed GPU device specifier {named}"):
        resolve(spec)
    with pytest.raises(ValueError, match=re.escape(repr(spec))):
        backend.get_device(spec)


@pytest.mark.parametrize("device_id", ["0", 1.0, True, None])
def test_ids_must_be_ints(device_id):
    with pytest.raises(TypeError, match="a GPU id must be an int"):
        get_device_from_id(device_id)


@no_gpu
def test_get_device_from_id_and_gpu_device_raise_the_require_error():
    reason = re.escape(dbr.gpu.unavailable_reason)
    with pytest.raises(RuntimeError, match=r"GPU device @cupy:0 needs a CUDA GPU.*" + reason):
        get_device_from_id(0)
    with pytest.raises(RuntimeError, match=r"GpuDevice\(1\) needs a CUDA GPU.*" + reason):
        GpuDevice(1)
    with pytest.raises(RuntimeError, match=r"device '@cupy' needs a CUDA GPU.*" + reason):
        resolve("@cupy")


# -- on a GPU ----------------------------------------------------------------------


@pytest.mark.gpu
def test_registry_returns_one_device_per_id(gpu):
    cupy = dbr.gpu.cupy
    assert isinstance(gpu, GpuDevice)
    assert gpu.name == "@cupy:0" and str(gpu) == "@cupy:0"
    assert gpu.device_id == 0 and gpu.xp is cupy
    assert backend.get_device("@cupy:0") is gpu
    assert backend.get_device(0) is gpu
    assert get_device_from_id(0) is gpu
    assert GpuDevice(0) == gpu and hash(GpuDevice(0)) == hash(gpu)
    assert gpu != backend.cpu
    count = _gpu_count(cupy)
    with pytest.raises(ValueError, match=rf"no GPU {count}; {count} GPU\(s\) are visible"):
        get_device_from_id(count)


@pytest.mark.gpu
def test_current_device_and_context_manager(gpu):
    cupy = dbr.gpu.cupy
    gpu.use()
    assert cupy.cuda.runtime.getDevice() == 0
    assert resolve("@cupy") is gpu
    assert backend.get_device("@cupy") is gpu
    with gpu as entered:
        assert entered is gpu
        with gpu:
            assert cupy.cuda.runtime.getDevice() == 0
    assert cupy.cuda.runtime.getDevice() == 0


@pytest.mark.gpu
def test_context_manager_restores_the_previous_device(gpu):
    cupy = dbr.gpu.cupy
    if _gpu_count(cupy) < 2:
        pytest.skip("needs two GPUs to see the device switch back")
    other = get_device_from_id(1)
    gpu.use()
    with other:
        assert cupy.cuda.runtime.getDevice() == 1
        assert resolve("@cupy") is other
        with gpu:
            assert cupy.cuda.runtime.getDevice() == 0
        assert cupy.cuda.runtime.getDevice() == 1
    assert cupy.cuda.runtime.getDevice() == 0
    x = other.send_array(gpu.send_array(numpy.arange(4.0)))
    assert x.device.id == 1
    numpy.testing.assert_array_equal(x.get(), numpy.arange(4.0))


@pytest.mark.gpu
def test_send_array(gpu):
    cupy = dbr.gpu.cupy
    host = numpy.arange(12, dtype=numpy.float32).reshape(3, 4)[:, ::2]
    x = gpu.send_array(host)
    assert isinstance(x, cupy.ndarray) and x.device.id == 0
    assert x.dtype == host.dtype and x.shape == host.shape
    numpy.testing.assert_array_equal(x.get(), host)
    assert gpu.send_array(x) is x
    assert gpu.is_array_supported(x) and not gpu.is_array_supported(host)
    assert backend.cpu.is_array_supported(backend.cpu.send_array(x))
    s = gpu.send_array(numpy.float16(2.5))
    assert isinstance(s, cupy.ndarray) and s.shape == () and s.dtype == numpy.float16
    assert float(s.get()) == 2.5
    with pytest.raises(TypeError, match=r"@cupy:0: can send only NumPy or CuPy arrays.*list"):
        gpu.send_array([1, 2])
    nested = gpu.send({"a": (host, None), "b": [numpy.ones(2)]})
    assert isinstance(nested["a"][0], cupy.ndarray) and nested["a"][1] is None
    numpy.testing.assert_array_equal(nested["b"][0].get(), numpy.ones(2))


@pytest.mark.gpu
def test_array_module_and_device_of_cupy_arrays_and_variables(gpu):
    cupy = dbr.gpu.cupy
    x = gpu.send_array(numpy.ones(3))
    assert backend.get_array_module(x) is cupy
    assert backend.get_array_module(numpy.ones(1), x) is cupy
    assert backend.get_array_module(Variable(x)) is cupy
    assert backend.get_array_module(numpy.ones(1)) is numpy
    assert backend.get_device_from_array(x) is gpu
    assert backend.get_device_from_array(Variable(x)) is gpu
    assert Variable(x).device == gpu and Variable(x).xp is cupy


@pytest.mark.gpu
def test_variable_to_device_moves_data_and_grad(gpu):
    cupy = dbr.gpu.cupy
    data = numpy.random.default_rng(0).standard_normal((2, 3)).astype(numpy.float32)
    grad = numpy.full((2, 3), 0.5, dtype=numpy.float32)
    v = Variable(data.copy())
    v.grad = grad.copy()
    v.to_device("@cupy:0")
    assert isinstance(v.array, cupy.ndarray) and isinstance(v.grad, cupy.ndarray)
    assert v.device == gpu
    numpy.testing.assert_array_equal(v.array.get(), data)
    numpy.testing.assert_array_equal(v.grad.get(), grad)
    v.to_device("@numpy")
    assert isinstance(v.array, numpy.ndarray) and isinstance(v.grad, numpy.ndarray)
    numpy.testing.assert_array_equal(v.array, data)
    numpy.testing.assert_array_equal(v.grad, grad)


class _Scale(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.w = Parameter(numpy.array([1.0, -2.0, 3.0], dtype=numpy.float32))
            self.lazy = Parameter()
        self.add_persistent("running", numpy.array([4.0, 5.0]))
        self.add_persistent("steps", 7)

    def forward(self, x):
        return self.w * x * x


@pytest.mark.gpu
def test_link_to_device_moves_params_grads_and_persistents_and_computes_the_cpu_result(gpu):
    cupy = dbr.gpu.cupy
    x_host = numpy.array([0.5, 1.5, -2.0], dtype=numpy.float32)
    w_host = numpy.array([1.0, -2.0, 3.0], dtype=numpy.float32)
    link = _Scale()
    link.w.grad = numpy.ones(3, dtype=numpy.float32)
    assert link.to_device("@cupy:0") is link
    assert link.device == gpu and link.xp is cupy
    assert isinstance(link.w.array, cupy.ndarray) and isinstance(link.w.grad, cupy.ndarray)
    assert isinstance(link.running, cupy.ndarray) and link.steps == 7
    numpy.testing.assert_array_equal(link.running.get(), [4.0, 5.0])
    link.lazy.initialize((2,))
    assert isinstance(link.lazy.array, cupy.ndarray)

    link.cleargrads()
    x = Variable(gpu.send_array(x_host))
    y = link(x)
    y.grad = gpu.send_array(numpy.ones(3, dtype=numpy.float32))
    y.backward()
    assert isinstance(y.array, cupy.ndarray)
    numpy.testing.assert_allclose(y.array.get(), w_host * x_host**2, rtol=1e-6)
    numpy.testing.assert_allclose(link.w.grad.get(), x_host**2, rtol=1e-6)
    numpy.testing.assert_allclose(x.grad.get(), 2 * w_host * x_host, rtol=1e-6)

    link.to_device("@numpy")
    assert isinstance(link.w.array, numpy.ndarray) and isinstance(link.running, numpy.ndarray)
    numpy.testing.assert_allclose(link.w.grad, x_host**2, rtol=1e-6)
