"""MultiNodeBatchNormalization equals BatchNormalization on the global batch (run under mpiexec).

Ranks hold batches of different sizes (rank r has r + 2 rows), so the
global statistics are not the mean of per-rank statistics.
"""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
import dbr.links as L
from dbr.core import Chain, ChainList, Variable


def batches(size, shape):
    rng = np.random.RandomState(0)
    return [rng.randn(r + 2, *shape).astype(np.float64) * (r + 1) + r for r in range(size)]


def check(comm, shape):
    channels = shape[0]
    xs = batches(comm.size, shape)
    gys = [np.random.RandomState(10 + r).randn(*x.shape) for r, x in enumerate(xs)]
    gamma = np.random.RandomState(1).rand(channels) + 0.5
    beta = np.random.RandomState(2).randn(channels)

    whole = L.BatchNormalization(
        channels, dtype=np.float64, initial_gamma=gamma, initial_beta=beta
    )
    xw = Variable(np.concatenate(xs))
    yw = whole(xw)
    yw.grad = np.concatenate(gys)
    yw.backward()

    mnbn = dist.links.MultiNodeBatchNormalization(
        channels, comm, dtype=np.float64, initial_gamma=gamma, initial_beta=beta
    )
    x = Variable(xs[comm.rank])
    y = mnbn(x)
    y.grad = gys[comm.rank]
    y.backward()

    offset = sum(len(b) for b in xs[: comm.rank])
    mine = slice(offset, offset + len(xs[comm.rank]))
    np.testing.assert_allclose(y.array, yw.array[mine], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(x.grad, xw.grad[mine], rtol=1e-8, atol=1e-10)
    # parameter gradients are per rank; their sum over ranks is the global one
    np.testing.assert_allclose(comm.allreduce(mnbn.gamma.grad), whole.gamma.grad, rtol=1e-8)
    np.testing.assert_allclose(comm.allreduce(mnbn.beta.grad), whole.beta.grad, rtol=1e-8)
    np.testing.assert_allclose(mnbn.avg_mean, whole.avg_mean, rtol=1e-10)
    np.testing.assert_allclose(mnbn.avg_var, whole.avg_var, rtol=1e-10)


def check_create_mnbn_model(comm):
    class Net(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l = L.Linear(3, 4)
                self.bn = L.BatchNormalization(4)
                self.seq = ChainList(L.BatchNormalization(4), L.Linear(4, 2))

    net = Net()
    net.bn.avg_mean[...] = 3.0
    mn = dist.links.create_mnbn_model(net, comm)
    assert type(mn.bn) is dist.links.MultiNodeBatchNormalization
    assert type(mn.seq[0]) is dist.links.MultiNodeBatchNormalization
    assert type(net.bn) is L.BatchNormalization, "the original is left alone"
    assert np.array_equal(mn.bn.avg_mean, net.bn.avg_mean)
    assert np.array_equal(mn.l.W.array, net.l.W.array) and mn.l.W is not net.l.W
    assert sorted(k for k, _ in mn.namedparams()) == sorted(k for k, _ in net.namedparams())


def main():
    comm = dist.create_communicator("naive")
    check(comm, (3,))
    check(comm, (2, 4, 5))
    check_create_mnbn_model(comm)
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: mnbn ok", file=sys.stderr)


if __name__ == "__main__":
    main()
