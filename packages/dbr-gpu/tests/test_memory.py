"""Memory pools, limits, usage, pinned buffers and asynchronous host-to-device copies."""

import re

import numpy
import pytest

import dbr.gpu
from dbr.core.testing import get_test_device
from dbr.gpu import memory

no_gpu = pytest.mark.skipif(dbr.gpu.available, reason="a GPU is usable here")

MiB = 1 << 20


@pytest.fixture
def gpu():
    device = get_test_device("@cupy:0")
    memory.free_all_blocks(device=device)
    yield device
    memory.set_limit(size=0, device=device)
    memory.free_all_blocks(device=device)


# -- without a GPU ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "give exactly one of size and fraction, got size=None, fraction=None"),
        ({"size": 1, "fraction": 0.5}, "give exactly one of size and fraction"),
        ({"size": -1}, r"size must be an int >= 0 \(bytes\), got -1"),
        ({"size": 1.5}, "size must be an int >= 0"),
        ({"fraction": 1.5}, r"fraction must be in \[0, 1\], got 1.5"),
        ({"fraction": -0.1}, r"fraction must be in \[0, 1\]"),
    ],
)
def test_set_limit_checks_its_arguments_before_touching_cuda(kwargs, message):
    with pytest.raises(ValueError, match=message):
        memory.set_limit(**kwargs)


@no_gpu
@pytest.mark.parametrize(
    ("call", "who"),
    [
        (lambda: memory.set_limit(size=MiB), "set_limit"),
        (lambda: memory.free_all_blocks(), "free_all_blocks"),
        (lambda: memory.usage(), "usage"),
        (lambda: memory.install_pools(), "dbr.gpu.memory"),
        (lambda: memory.memory_pool(), "dbr.gpu.memory"),
        (lambda: memory.pinned_memory_pool(), "dbr.gpu.memory"),
        (lambda: memory.PinnedBuffer().array((2, 3), numpy.float32), "PinnedBuffer"),
        (lambda: memory.async_to_device(numpy.zeros(3)), "async_to_device"),
        (lambda: memory.usage(device="@cupy:0"), "device '@cupy:0'"),
    ],
)
def test_memory_functions_raise_the_require_error(call, who):
    reason = re.escape(dbr.gpu.unavailable_reason)
    with pytest.raises(RuntimeError, match=rf"^{re.escape(who)} needs a CUDA GPU.*{reason}"):
        call()


def test_a_cpu_device_is_refused():
    with pytest.raises(ValueError, match="usage: @numpy is not a GPU device"):
        memory.usage(device="@numpy")


def test_a_new_pinned_buffer_holds_nothing():
    assert memory.PinnedBuffer(1024).nbytes == 0


# -- on a GPU ----------------------------------------------------------------------


@pytest.mark.gpu
def test_usage_follows_allocations_and_free_all_blocks(gpu):
    cupy = gpu.xp
    before = memory.usage()
    assert set(before) == {
        "used_bytes",
        "total_bytes",
        "free_bytes",
        "limit",
        "free_blocks",
        "pinned_free_blocks",
    }
    a = cupy.empty(8 * MiB, dtype=numpy.uint8)
    during = memory.usage(device=gpu)
    assert during["used_bytes"] >= before["used_bytes"] + 8 * MiB
    assert during["total_bytes"] >= during["used_bytes"]
    del a
    cached = memory.usage()
    assert cached["used_bytes"] <= during["used_bytes"] - 8 * MiB
    assert cached["free_bytes"] >= 8 * MiB
    memory.free_all_blocks()
    after = memory.usage()
    assert after["total_bytes"] <= during["total_bytes"] - 8 * MiB
    # Blocks that share a chunk with an array still in use stay cached; the freed
    # 8 MiB block had a chunk of its own.
    assert after["free_bytes"] <= cached["free_bytes"] - 8 * MiB
    assert after["free_blocks"] < cached["free_blocks"]
    assert after["pinned_free_blocks"] == 0
    assert memory.memory_pool() is cupy.get_default_memory_pool()
    assert memory.pinned_memory_pool() is cupy.get_default_pinned_memory_pool()


@pytest.mark.gpu
def test_set_limit_by_size_bounds_allocations(gpu):
    cupy = gpu.xp
    limit = memory.usage()["total_bytes"] + 4 * MiB
    memory.set_limit(size=limit)
    assert memory.usage()["limit"] == limit
    small = cupy.empty(MiB, dtype=numpy.uint8)
    with pytest.raises(cupy.cuda.memory.OutOfMemoryError):
        cupy.empty(16 * MiB, dtype=numpy.uint8)
    del small
    memory.set_limit(size=0)
    assert memory.usage()["limit"] == 0
    big = cupy.empty(16 * MiB, dtype=numpy.uint8)
    assert big.nbytes == 16 * MiB


@pytest.mark.gpu
def test_set_limit_by_fraction(gpu):
    total = gpu.xp.cuda.runtime.memGetInfo()[1]
    memory.set_limit(fraction=0.25)
    limit = memory.usage()["limit"]
    assert 0 < limit <= total // 2
    assert abs(limit - total // 4) <= total // 100


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float32, numpy.int64, numpy.bool_])
def test_async_to_device_on_a_stream_equals_the_source(gpu, dtype):
    cupy = gpu.xp
    rng = numpy.random.default_rng(1)
    host = (rng.standard_normal((3, 5, 7)) * 10).astype(dtype)
    stream = cupy.cuda.Stream(non_blocking=True)
    x = memory.async_to_device(host[:, ::2], stream=stream, device="@cupy:0")
    stream.synchronize()
    assert isinstance(x, cupy.ndarray) and x.device.id == 0 and x.flags.c_contiguous
    assert x.dtype == host.dtype and x.shape == (3, 3, 7)
    numpy.testing.assert_array_equal(x.get(), host[:, ::2])


@pytest.mark.gpu
def test_async_to_device_on_the_current_stream_and_of_scalars_and_gpu_arrays(gpu):
    host = numpy.arange(10, dtype=numpy.float32)
    x = memory.async_to_device(host)
    y = x * 2
    numpy.testing.assert_array_equal(y.get(), host * 2)
    s = memory.async_to_device(numpy.float64(1.25))
    assert s.shape == () and float(s.get()) == 1.25
    assert memory.async_to_device(x) is x
    empty = memory.async_to_device(numpy.zeros((0, 4), dtype=numpy.float32))
    assert empty.shape == (0, 4)


@pytest.mark.gpu
def test_a_reused_pinned_buffer_waits_for_the_previous_copy(gpu):
    cupy = gpu.xp
    stream = cupy.cuda.Stream(non_blocking=True)
    buffer = memory.PinnedBuffer()
    n = 8 * MiB
    batches = [numpy.full(n, i, dtype=numpy.float32) for i in range(4)]
    results = [memory.async_to_device(b, stream=stream, buffer=buffer) for b in batches]
    stream.synchronize()
    for i, r in enumerate(results):
        assert int((r != i).sum()) == 0, f"batch {i} was overwritten while being copied"
    assert buffer.nbytes == n * 4


@pytest.mark.gpu
def test_pinned_buffer_views_grow_only_when_too_small(gpu):
    buffer = memory.PinnedBuffer()
    a = buffer.array((4, 8), numpy.float32)
    assert a.shape == (4, 8) and a.dtype == numpy.float32 and a.flags.writeable
    assert buffer.nbytes == 128
    b = buffer.array(16, numpy.int16)
    assert b.shape == (16,) and buffer.nbytes == 128
    assert b.ctypes.data == a.ctypes.data
    c = buffer.array((3, 100), numpy.float64)
    assert buffer.nbytes == 2400 and c.shape == (3, 100)
    c[...] = 1.0
    assert c.sum() == 300.0
