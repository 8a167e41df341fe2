"""pure_nccl on one GPU: a 1-rank NCCL world (no mpiexec), run by ``nox -s gpu`` on a CUDA machine.

With one rank the mean over the ranks is the rank's own gradient, so each
check has an exact reference; the exchange still goes through NCCL.
"""

import numpy as np
import pytest

import dbr.distributed as dist
import dbr.links as L
from dbr.core import Chain, Parameter
from dbr.core.testing import get_test_device
from dbr.training import optimizers

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    device = get_test_device("@cupy:0")
    from dbr.gpu import nccl

    if not nccl.available():
        pytest.skip(f"NCCL is not available: {nccl._probe()[1]}")
    device.use()
    return device


def model_on(device, seed=0):
    rng = np.random.RandomState(seed)
    model = L.Linear(4, 3, initialW=rng.randn(3, 4).astype(np.float32))
    model.to_device(device)
    return model


def test_mean_grad_of_a_one_rank_nccl_world_keeps_the_gradients(gpu):
    comm = dist.create_communicator("pure_nccl")
    model = model_on(gpu)
    xp = model.W.xp
    model.W.grad = xp.arange(12, dtype=xp.float32).reshape(3, 4) / 7
    model.b.grad = xp.full(3, 0.1, dtype=xp.float32)
    expected = {name: p.grad.get() for name, p in model.namedparams()}
    comm.multi_node_mean_grad(model)
    for name, p in model.namedparams():
        assert type(p.grad) is xp.ndarray
        np.testing.assert_allclose(p.grad.get(), expected[name], rtol=1e-7)
    comm.finalize()
    comm.finalize()  # idempotent


def test_allreduce_grad_dtype_float16_rounds_the_gradients_to_half(gpu):
    comm = dist.create_communicator("pure_nccl", allreduce_grad_dtype=np.float16)
    model = model_on(gpu)
    xp = model.W.xp
    grad = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4) / 3
    model.W.grad = xp.asarray(grad)
    model.b.grad = xp.zeros(3, dtype=xp.float32)
    comm.multi_node_mean_grad(model)
    assert model.W.grad.dtype == np.float32
    np.testing.assert_array_equal(model.W.grad.get(), grad.astype(np.float16).astype(np.float32))
    comm.finalize()


def test_multi_node_optimizer_on_one_gpu_equals_the_plain_optimizer(gpu):
    comm = dist.create_communicator("pure_nccl")
    x = np.random.RandomState(1).randn(5, 4).astype(np.float32)
    plain, distributed = model_on(gpu), model_on(gpu)
    plain_opt = optimizers.MomentumSGD(lr=0.1).setup(plain)
    opt = dist.create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.1), comm).setup(distributed)
    xp = plain.W.xp
    opt.update()  # the first update broadcasts rank 0's parameters instead
    for _ in range(3):
        for model, optimizer in ((plain, plain_opt), (distributed, opt)):
            model.cleargrads()
            y = model(xp.asarray(x))
            loss = (y * y).reshape(-1)
            loss.grad = xp.ones(loss.shape, dtype=xp.float32)
            loss.backward()
            optimizer.update()
    for (name, p), q in zip(plain.namedparams(), distributed.params(), strict=True):
        np.testing.assert_allclose(q.array.get(), p.array.get(), rtol=1e-6, err_msg=name)
    comm.finalize()


@pytest.mark.parametrize("name", ["flat", "pure_nccl"])
def test_mean_grad_of_cupy_gradients_across_chunks_fills_the_same_arrays(gpu, name):
    # flat takes CuPy gradients through the host one chunk at a time.
    comm = dist.create_communicator(name)
    comm._grad_chunk_bytes = 12  # three float32 values, one float64 value per all-reduce
    model = Chain()
    with model.init_scope():
        model.a = Parameter(np.zeros((2, 3), np.float32))
        model.b = Parameter(np.zeros(5, np.float16))
        model.c = Parameter(np.zeros(3, np.float64))
        model.d = Parameter(np.zeros(7, np.float32))
    model.to_device(gpu)
    xp = model.a.xp
    rng = np.random.RandomState(0)
    for p in model.params():
        p.grad = xp.asarray(rng.standard_normal(p.shape).astype(p.dtype))
    model.a.grad = xp.arange(6, dtype=xp.float32).reshape(3, 2).T  # not C-contiguous
    held = {k: p.grad for k, p in model.namedparams()}
    expected = {k: p.grad.get() for k, p in model.namedparams()}
    comm.multi_node_mean_grad(model)
    for k, p in model.namedparams():
        assert p.grad is held[k], k
        assert p.grad.dtype == expected[k].dtype, k
        np.testing.assert_array_equal(p.grad.get(), expected[k], err_msg=k)
    comm.finalize()
