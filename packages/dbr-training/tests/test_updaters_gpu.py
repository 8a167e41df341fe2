"""StandardUpdater, ParallelUpdater and MultiprocessParallelUpdater on GPUs against the CPU."""

import numpy
import pytest

from dbr.core import Link, Parameter, ops
from dbr.core.testing import get_test_device
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import optimizers
from dbr.training.updaters import ParallelUpdater, StandardUpdater

W0 = numpy.array([[0.5, 0.1], [-1.0, 0.3], [2.0, -0.2]], numpy.float32)


class Linear(Link):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(W0.copy())

    def forward(self, x, t):
        return ops.sum((ops.matmul(x, self.W) - t) ** 2) / len(x)


def dataset(n=24):
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(numpy.float32)
    t = rng.standard_normal((n, 2)).astype(numpy.float32)
    return TupleDataset(x, t)


def gpu_count():
    get_test_device("@cupy:0")
    import cupy

    return cupy.cuda.runtime.getDeviceCount()


@pytest.mark.gpu
def test_standard_updater_on_gpu_trains_like_the_cpu():
    gpu = get_test_device("@cupy:0")
    results = []
    for device in ("@cupy:0", "@numpy"):
        model = Linear()
        opt = optimizers.Adam(alpha=0.05).setup(model)
        updater = StandardUpdater(SerialIterator(dataset(), 6, shuffle=False), opt, device=device)
        for _ in range(8):
            updater.update()
        results.append(model.W.array)
    assert results[0].device.id == gpu.device_id
    numpy.testing.assert_allclose(results[0].get(), results[1], rtol=1e-5, atol=1e-6)
    assert not numpy.allclose(results[1], W0)


def parallel_run(devices):
    model = Linear()
    opt = optimizers.MomentumSGD(lr=0.05).setup(model)
    updater = ParallelUpdater(SerialIterator(dataset(), 6, shuffle=False), opt, devices=devices)
    for _ in range(6):
        updater.update()
    return model.W.array


@pytest.mark.gpu
def test_parallel_updater_on_one_gpu_matches_the_cpu():
    get_test_device("@cupy:0")
    on_gpu = parallel_run({"main": "@cupy:0"})
    numpy.testing.assert_allclose(
        on_gpu.get(), parallel_run({"main": "@numpy"}), rtol=1e-5, atol=1e-6
    )


@pytest.mark.gpu
def test_parallel_updater_on_two_gpus_matches_two_cpu_copies():
    if gpu_count() < 2:
        pytest.skip("needs two GPUs; this machine has one")
    on_gpus = parallel_run({"main": "@cupy:0", "second": "@cupy:1"})
    on_cpu = parallel_run({"main": "@numpy", "second": "@numpy"})
    numpy.testing.assert_allclose(on_gpus.get(), on_cpu, rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
def test_multiprocess_parallel_updater_on_one_gpu_matches_standard_updater():
    get_test_device("@cupy:0")
    from dbr.training.updaters import MultiprocessParallelUpdater

    if not MultiprocessParallelUpdater.available():
        pytest.skip("NCCL is not available on this machine")
    model = Linear()
    opt = optimizers.SGD(lr=0.05).setup(model)
    with pytest.warns(UserWarning, match="optimizer.lr is changed to 0.05"):
        updater = MultiprocessParallelUpdater(
            [SerialIterator(dataset(), 6, shuffle=False)], opt, devices=["@cupy:0"]
        )
    for _ in range(4):
        updater.update()
    updater.finalize()
    reference = Linear()
    ref_opt = optimizers.SGD(lr=0.05).setup(reference)
    ref = StandardUpdater(SerialIterator(dataset(), 6, shuffle=False), ref_opt)
    for _ in range(4):
        ref.update()
    numpy.testing.assert_allclose(model.W.array.get(), reference.W.array, rtol=1e-5, atol=1e-6)
