"""Data-parallel training equals one process training on the global batch (run under mpiexec).

Every rank also trains the single-process reference itself, on the whole
global batch, so that no second job is needed. With ``--static``, it checks
instead that a model whose forward is a ``@static_graph`` trains to the same
bits as define-by-run under the multi-node optimizer.
"""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, static_graph
from dbr.training import optimizers

GLOBAL_BATCH = 12
STEPS = 6


class MLP(Chain):
    def __init__(self, seed):
        super().__init__()
        rng = np.random.RandomState(seed)
        with self.init_scope():
            self.l1 = L.Linear(4, 5, initialW=rng.randn(5, 4).astype(np.float32))
            self.l2 = L.Linear(5, 3, initialW=rng.randn(3, 5).astype(np.float32))

    def forward(self, x, t):
        return F.softmax_cross_entropy(self.l2(F.tanh(self.l1(x))), t)


class StaticMLP(MLP):
    forward = static_graph(MLP.forward)


def make_optimizer(name):
    return {
        "SGD": lambda: optimizers.SGD(lr=0.1),
        "MomentumSGD": lambda: optimizers.MomentumSGD(lr=0.1, momentum=0.9),
        "Adam": lambda: optimizers.Adam(alpha=0.01),
    }[name]()


def data():
    rng = np.random.RandomState(0)
    x = rng.randn(STEPS, GLOBAL_BATCH, 4).astype(np.float32)
    t = rng.randint(0, 3, size=(STEPS, GLOBAL_BATCH)).astype(np.int32)
    return x, t


def reference(name, double_buffering):
    """One process, global batch; with double buffering, the update of step t
    applies the gradient of step t-1 (the first step only sets things up)."""
    model = MLP(seed=0)
    opt = make_optimizer(name).setup(model)
    x, t = data()
    previous = None
    for step in range(STEPS):
        model.cleargrads()
        model(x[step], t[step]).backward()
        if not double_buffering:
            if step > 0:
                opt.update()
            continue
        grads = [p.grad.copy() for p in model.params()]
        if step >= 2:
            for p, g in zip(model.params(), previous):
                p.grad = g
            opt.update()
        previous = grads
    return {k: p.array.copy() for k, p in model.namedparams()}


def distributed(comm, name, double_buffering, model_class=MLP):
    # Every rank starts from different weights: the first update broadcasts rank 0's.
    model = model_class(seed=comm.rank)
    if comm.rank == 0:
        model = model_class(seed=0)
    opt = dist.create_multi_node_optimizer(
        make_optimizer(name), comm, double_buffering=double_buffering
    ).setup(model)
    x, t = data()
    share = GLOBAL_BATCH // comm.size
    mine = slice(comm.rank * share, (comm.rank + 1) * share)
    for step in range(STEPS):
        opt.update(model, x[step][mine], t[step][mine])
    if double_buffering:
        opt.wait()
    return {k: p.array.copy() for k, p in model.namedparams()}


def main():
    comm = dist.create_communicator(sys.argv[1] if len(sys.argv) > 1 else "naive")
    assert GLOBAL_BATCH % comm.size == 0
    if "--static" in sys.argv:
        for name in ("SGD", "MomentumSGD", "Adam"):
            got = distributed(comm, name, False, StaticMLP)
            want = distributed(comm, name, False)
            for k in want:
                np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name} {k}")
        MPI.COMM_WORLD.Barrier()
        print(f"rank {comm.rank}: static graph equivalence ok", file=sys.stderr)
        return
    for name in ("SGD", "MomentumSGD", "Adam"):
        for double_buffering in (False, True):
            got = distributed(comm, name, double_buffering)
            want = reference(name, double_buffering)
            assert got.keys() == want.keys()
            for k in want:
                np.testing.assert_allclose(
                    got[k],
                    want[k],
                    rtol=1e-5,
                    atol=1e-6,
                    err_msg=f"{name} db={double_buffering} {k}",
                )
            initial = {k: p.array for k, p in MLP(seed=0).namedparams()}
            assert not np.allclose(want["/l1/W"], initial["/l1/W"]), "training did not move"
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: equivalence ok", file=sys.stderr)


if __name__ == "__main__":
    main()
