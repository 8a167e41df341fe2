import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

from dbr.core import Link, Parameter
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.updaters import multiprocess_parallel_updater as mpu_module
from dbr.training.updaters.multiprocess_parallel_updater import MultiprocessParallelUpdater

# The tests' minimal optimizer, run by path: no test folder is on sys.path (importlib mode).
_FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PlainSGD = runpy.run_path(str(_FIXTURES / "plain_sgd.py"))["PlainSGD"]
Linear = runpy.run_path(str(_FIXTURES / "linear_model.py"))["Linear"]


def iterators(n=2):
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((8, 3)), rng.standard_normal((8, 1))
    return [SerialIterator(TupleDataset(x, t), 4, shuffle=False) for _ in range(n)]


def test_importing_does_not_import_dbr_gpu():
    # available() itself imports dbr.gpu.nccl where dbr-gpu is installed.
    code = (
        "import sys, dbr.training.updaters.multiprocess_parallel_updater as m;"
        "assert not any(k.startswith('dbr.gpu') for k in sys.modules);"
        "assert 'cupy' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.skipif(
    mpu_module._nccl_module() is not None, reason="dbr-gpu is installed on this machine"
)
def test_without_gpus_construction_says_what_is_needed():
    assert MultiprocessParallelUpdater.available() is False
    opt = PlainSGD().setup(Linear())
    with pytest.raises(RuntimeError) as info:
        MultiprocessParallelUpdater(iterators(), opt, devices=["@cupy:0", "@cupy:1"])
    message = str(info.value)
    assert "needs CUDA GPUs with NCCL" in message
    assert "dbr-gpu (issue 8)" in message
    assert opt.lr == 0.1  # nothing was changed


class FakeNccl:
    def __init__(self, available):
        self._available = available

    def available(self):
        return self._available


def test_nccl_unavailable(monkeypatch):
    monkeypatch.setattr(mpu_module, "_nccl_module", lambda: FakeNccl(False))
    assert MultiprocessParallelUpdater.available() is False
    with pytest.raises(RuntimeError, match="NCCL is not available on this machine"):
        MultiprocessParallelUpdater(iterators(), PlainSGD().setup(Linear()), devices=[0, 1])


def test_single_device_path_runs_without_workers(monkeypatch):
    # With one device there is no worker and no communicator: the CPU can run it.
    monkeypatch.setattr(mpu_module, "_nccl_module", lambda: FakeNccl(True))
    model = Linear()
    opt = PlainSGD(lr=0.1).setup(model)
    (it,) = iterators(1)
    with pytest.warns(UserWarning, match="optimizer.lr is changed to 0.1"):
        updater = MultiprocessParallelUpdater([it], opt, devices={"main": "@numpy"})
    xs = np.stack([e[0] for e in it.dataset[0:4]])
    ts = np.stack([e[1] for e in it.dataset[0:4]])
    W0 = model.W.array.copy()
    updater.update()
    updater.update()
    expected = W0 - 0.1 * 2 * xs.T @ (xs @ W0 - ts) / 4
    xs2 = np.stack([e[0] for e in it.dataset[4:8]])
    ts2 = np.stack([e[1] for e in it.dataset[4:8]])
    expected = expected - 0.1 * 2 * xs2.T @ (xs2 @ expected - ts2) / 4
    np.testing.assert_allclose(model.W.array, expected, rtol=1e-12)
    assert opt.epoch == 1
    updater.finalize()


def test_lr_rescaled_for_several_devices(monkeypatch):
    monkeypatch.setattr(mpu_module, "_nccl_module", lambda: FakeNccl(True))
    opt = PlainSGD(lr=0.1).setup(Linear())
    with pytest.warns(UserWarning, match="optimizer.lr is changed to 0.05"):
        MultiprocessParallelUpdater(iterators(2), opt, devices=["@numpy", "@numpy"])
    assert opt.lr == pytest.approx(0.05)


def test_bad_arguments():
    opt = PlainSGD().setup(Linear())
    with pytest.raises(ValueError, match="iterators must be a non-empty list"):
        MultiprocessParallelUpdater([], opt, devices=[0])
    with pytest.raises(ValueError, match="devices must be a list or a dict of GPU devices"):
        MultiprocessParallelUpdater(iterators(), opt)
    with pytest.raises(ValueError, match="GPU devices must be specified"):
        MultiprocessParallelUpdater(iterators(), opt, devices=[0, None])
    with pytest.raises(ValueError, match="got 2 iterators for 3 devices"):
        MultiprocessParallelUpdater(iterators(), opt, devices=[0, 1, 2])
    with pytest.raises(ValueError, match="a dict of devices must have a 'main' entry"):
        MultiprocessParallelUpdater(iterators(), opt, devices={"a": 0, "b": 1})


@pytest.mark.parametrize(
    "function",
    [
        mpu_module.gather_grads,
        mpu_module.gather_params,
        lambda link: mpu_module.scatter_grads(link, np.zeros(3, np.float32)),
        lambda link: mpu_module.scatter_params(link, np.zeros(3, np.float32)),
    ],
)
def test_gather_and_scatter_need_a_gpu(function):
    with pytest.raises(
        RuntimeError, match="works only on a GPU, but the parameters of the Linear"
    ):
        function(Linear())


class TwoParams(Link):
    def __init__(self, dtype):
        super().__init__()
        with self.init_scope():
            self.b = Parameter(np.arange(3, dtype=dtype))
            self.a = Parameter(np.arange(4, dtype=dtype).reshape(2, 2) + 10)
            self.lazy = Parameter()


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_gather_and_scatter_round_trip_on_a_gpu(dtype):
    from dbr.core.testing import get_test_device

    device = get_test_device("@cupy:0")
    source = TwoParams(dtype).to_device(device)
    source.a.grad = source.xp.full((2, 2), 0.5, dtype)
    packed = mpu_module.gather_params(source)
    # sorted by name: 'a' then 'b'; the uninitialized 'lazy' is skipped
    assert packed.dtype == np.float32
    assert packed.get().tolist() == [10, 11, 12, 13, 0, 1, 2]
    assert mpu_module.gather_grads(source).get().tolist() == [0.5] * 4 + [0] * 3

    target = TwoParams(dtype).to_device(device)
    target.a.array[...] = 0
    mpu_module.scatter_params(target, packed * 2)
    assert target.a.array.get().tolist() == [[20, 22], [24, 26]]
    assert target.b.array.dtype == dtype and target.b.array.get().tolist() == [0, 2, 4]
    mpu_module.scatter_grads(target, mpu_module.gather_grads(source))
    assert target.b.grad.get().tolist() == [0, 0, 0] and target.b.grad.dtype == dtype
    with pytest.raises(ValueError, match="expected a 1-d array of the 7 values"):
        mpu_module.scatter_params(target, packed[:5])
