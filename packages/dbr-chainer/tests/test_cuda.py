"""dbr.chainer.cuda / backends.cuda: Chainer's CUDA names, lazily, through dbr.core and dbr.gpu."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import dbr.core.backend
from dbr.chainer.backends import cuda

HAS_CUPY = importlib.util.find_spec("cupy") is not None


def test_cpu_names_are_dbr_core_backend_objects():
    assert cuda.to_cpu is dbr.core.backend.to_cpu
    assert cuda.get_array_module is dbr.core.backend.get_array_module
    assert cuda.get_device_from_array is dbr.core.backend.get_device_from_array
    x = np.arange(3.0)
    assert cuda.to_cpu(x) is x
    assert cuda.get_array_module(x) is np


def test_importing_cuda_imports_no_cupy():
    code = (
        "import sys, dbr.chainer as chainer, dbr.chainer.cuda, dbr.chainer.backend\n"
        "import numpy\n"
        "chainer.cuda.to_cpu(numpy.zeros(2)); chainer.cuda.get_array_module(numpy.zeros(2))\n"
        "assert 'cupy' not in sys.modules and 'dbr.gpu' not in sys.modules, sorted(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(HAS_CUPY, reason="checks the answers without CuPy")
def test_without_cupy():
    assert cuda.cupy is None
    assert cuda.available is False
    assert cuda.cudnn_enabled is False
    assert not isinstance(np.zeros(2), cuda.ndarray)
    with pytest.raises(RuntimeError, match="CuPy|dbr-gpu"):
        cuda.check_cuda_available()
    with pytest.raises(RuntimeError, match="CuPy|dbr-gpu"):
        cuda.to_gpu(np.zeros(2))
    with pytest.raises(AttributeError, match="'Stream'.*CuPy is not installed"):
        _ = cuda.Stream


def test_to_gpu_refuses_the_cpu():
    with pytest.raises(ValueError, match="to_gpu: device must be a GPU"):
        cuda.to_gpu(np.zeros(2), -1)
    with pytest.raises(ValueError, match="to_gpu: device must be a GPU"):
        cuda.to_gpu(np.zeros(2), dbr.core.backend.cpu)


def test_gpu_names_are_dbr_gpu_objects():
    gpu = pytest.importorskip("dbr.gpu", reason="dbr-gpu is not installed (extra [gpu])")
    assert cuda.GpuDevice is gpu.GpuDevice
    assert cuda.elementwise is gpu.elementwise
    assert cuda.cupy is gpu.cupy
    assert cuda.available is gpu.available


def test_get_device_from_id_gives_the_dummy_device_for_the_cpu():
    # As Chainer's: None or a negative id is the CPU, a device that does nothing.
    assert cuda.get_device_from_id(None) is cuda.DummyDevice
    assert cuda.get_device_from_id(-1) is cuda.DummyDevice
    assert cuda.get_device_from_id(np.int64(-1)) is cuda.DummyDevice
    device = cuda.get_device_from_id(-1)
    device.use()
    device.synchronize()
    with device as entered:
        assert entered is device
    assert int(device) == -1 and device.id == -1
    assert cuda.DummyDeviceType() == cuda.DummyDevice
    assert cuda.DummyDevice != 1 and cuda.DummyDevice != -1
    with pytest.raises(TypeError, match="get_device_from_id: device_id must be an int or None"):
        cuda.get_device_from_id("0")


def test_get_device_from_id_forwards_a_gpu_id_to_dbr_gpu():
    gpu = pytest.importorskip("dbr.gpu", reason="dbr-gpu is not installed (extra [gpu])")
    if not gpu.available:
        with pytest.raises(RuntimeError, match="CuPy|GPU"):
            cuda.get_device_from_id(0)
    else:
        assert cuda.get_device_from_id(0) is gpu.get_device_from_id(0)


def test_unknown_name():
    with pytest.raises(AttributeError, match="'no_such_name'"):
        _ = cuda.no_such_name


@pytest.mark.gpu
def test_to_gpu_and_back():
    gpu = pytest.importorskip("dbr.gpu", reason="dbr-gpu is not installed (extra [gpu])")
    if not gpu.available:
        pytest.skip(gpu.unavailable_reason)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = cuda.to_gpu(x)
    assert isinstance(y, cuda.ndarray) and y.device.id == 0
    assert cuda.get_array_module(y) is cuda.cupy
    assert cuda.to_gpu(y, 0) is y
    a, b = cuda.to_gpu((x, x), device=cuda.get_device_from_id(0))
    np.testing.assert_array_equal(cuda.to_cpu(a), x)
    np.testing.assert_array_equal(cuda.to_cpu(y), x)
    assert cuda.available is True
