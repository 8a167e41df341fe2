"""Multi-node extensions: generic evaluator, AllreducePersistent, snapshot, checkpointer.

``extensions.py checks OUT`` runs the in-process checks; ``extensions.py
checkpoint OUT PHASE`` trains with a checkpointer (PHASE ``full``,
``crash``: rank 1 kills itself during iteration 7, or ``resume``; an
optional ``CP,GC`` sets the checkpointer's intervals, 3,2 by default) and
writes every rank's final parameters and starting iteration to OUT.
"""

import os
import signal
import sys
import warnings

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
import dbr.functions as F
import dbr.links as L
from dbr.core import Chain
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import Extension, StandardUpdater, Trainer, extensions, optimizers

STOP = 10


class MLP(Chain):
    def __init__(self, seed):
        super().__init__()
        rng = np.random.RandomState(seed)
        with self.init_scope():
            self.l1 = L.Linear(3, 4, initialW=rng.randn(4, 3).astype(np.float32))
            self.l2 = L.Linear(4, 2, initialW=rng.randn(2, 4).astype(np.float32))

    def forward(self, x):
        return self.l2(F.tanh(self.l1(x)))


def dataset(n=40):
    rng = np.random.RandomState(0)
    return TupleDataset(
        rng.randn(n, 3).astype(np.float32), rng.randint(0, 2, size=n).astype(np.int32)
    )


class SumAndCount(dist.extensions.GenericMultiNodeEvaluator):
    def calc_local(self, x):
        return float(x.sum()), len(x)

    def aggregate(self, results):
        return sum(s for s, _ in results), sum(c for _, c in results)


def check_generic_evaluator(comm):
    r, n = comm.rank, comm.size
    every = [np.arange(5 + 7 * k, dtype=np.float64) + 100 * k for k in range(n)]
    # batches of 1: rank 1 has 12 of them, more than one gathering round of 8
    iterator = SerialIterator(list(every[r]), 1, repeat=False, shuffle=False)
    calls = []
    evaluator = SumAndCount(comm, iterator, target=None, root=n - 1, progress_hook=calls.append)
    for _ in range(2):  # the iterator is reset between calls
        result = evaluator()
        if r == n - 1:
            total = np.concatenate(every)
            assert np.isclose(result[0], total.sum()) and result[1] == total.size, result
        else:
            assert result is None
    assert len(calls) == (2 * len(every[r]) if r == n - 1 else 0)
    default = dist.extensions.GenericMultiNodeEvaluator(
        comm, SerialIterator(list(every[r]), 4, repeat=False, shuffle=False), lambda x: len(x)
    )
    got = default()
    if r == 0:
        assert sorted(got) == sorted(
            len(every[k][i : i + 4]) for k in range(n) for i in range(0, len(every[k]), 4)
        )


def check_allreduce_persistent(comm):
    r, n = comm.rank, comm.size
    model = Chain()
    with model.init_scope():
        model.bn = L.BatchNormalization(3)
    model.bn.avg_mean[...] = np.arange(3) + 10 * r
    model.bn.avg_var[...] = r + 1.0
    model.bn.N = r
    dist.extensions.AllreducePersistent(model, comm)()
    np.testing.assert_allclose(model.bn.avg_mean, np.arange(3) + 10 * (n - 1) / 2)
    np.testing.assert_allclose(model.bn.avg_var, np.full(3, (n + 1) / 2))
    assert int(model.bn.N) == r  # not a floating array: left alone


def trainer_for(comm, out, stop):
    model = L.Classifier(MLP(seed=comm.rank))
    opt = dist.create_multi_node_optimizer(optimizers.MomentumSGD(lr=0.1), comm).setup(model)
    train = dist.scatter_dataset(dataset() if comm.rank == 0 else None, comm)
    np.random.seed(comm.rank)
    updater = StandardUpdater(SerialIterator(train, 4, shuffle=True), opt)
    return Trainer(updater, (stop, "iteration"), out=out), model, opt


def check_multi_node_snapshot(comm, out):
    r = comm.rank
    out = os.path.join(out, "snapshots")
    trainer, _, _ = trainer_for(comm, out, 2)
    snap = extensions.snapshot(filename="snap_{.updater.iteration}", autoload=True)
    wrapped = dist.extensions.multi_node_snapshot(comm, snap, [0])
    trainer.extend(wrapped, trigger=(1, "iteration"))
    trainer.run()
    comm.mpi_comm.Barrier()
    names = sorted(os.listdir(out))
    assert names == ["snap_1.0", "snap_1.1", "snap_2.0", "snap_2.1"], names
    assert wrapped.is_master == (r in (0, 1))

    # a new job resumes at iteration 2 on every rank, also on rank 2 that saved nothing
    trainer, model, _ = trainer_for(comm, out, 3)
    snap = extensions.snapshot(filename="snap_{.updater.iteration}", autoload=True)
    wrapped = dist.extensions.multi_node_snapshot(comm, snap, [0])
    trainer.extend(wrapped, trigger=(1, "iteration"))
    wrapped.initialize(trainer)
    assert trainer.updater.iteration == 2, trainer.updater.iteration
    params = comm.gather_obj({k: p.array.copy() for k, p in model.namedparams()})
    if r == 0:
        for other in params[1:]:
            for k, v in other.items():
                np.testing.assert_array_equal(v, params[0][k])


class KillAt(Extension):
    """Kills this process (SIGKILL, no clean-up) when the trainer reaches ``iteration``."""

    trigger = 1, "iteration"
    priority = 1000  # before the checkpointer of the same iteration

    def __init__(self, iteration):
        self.iteration = iteration

    def __call__(self, trainer):
        if trainer.updater.iteration == self.iteration:
            sys.stderr.flush()
            os.kill(os.getpid(), signal.SIGKILL)


def run_checkpointed(comm, out, phase, intervals="3,2"):
    trainer, model, opt = trainer_for(comm, out, STOP)
    cp_interval, gc_interval = map(int, intervals.split(","))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        checkpointer = dist.create_multi_node_checkpointer(
            "run", comm, cp_interval=cp_interval, gc_interval=gc_interval
        )
    trainer.extend(checkpointer, trigger=(1, "iteration"))
    if phase == "crash" and comm.rank == 1:
        trainer.extend(KillAt(7))
    checkpointer.maybe_load(trainer, opt)
    start = trainer.updater.iteration
    trainer.run()
    final = {k.replace("/", "_"): p.array for k, p in model.namedparams()}
    np.savez(os.path.join(out, f"{phase}.{comm.rank}.npz"), start=start, **final)


def main():
    comm = dist.create_communicator("naive")
    mode, out = sys.argv[1], sys.argv[2]
    if mode == "checks":
        check_generic_evaluator(comm)
        check_allreduce_persistent(comm)
        check_multi_node_snapshot(comm, out)
    else:
        run_checkpointed(comm, out, *sys.argv[3:])
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: extensions {mode} ok", file=sys.stderr)


if __name__ == "__main__":
    main()
