"""scatter_dataset's shares and the multi-node evaluator's global mean (run under mpiexec)."""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
from dbr.core import Link, report
from dbr.datasets import SerialIterator
from dbr.training.extensions import Evaluator


class MeanOfX(Link):
    """Reports the batch mean of its input as 'value'."""

    def forward(self, x):
        report({"value": float(np.mean(x))}, self)


def check_scatter(comm):
    n = comm.size
    for total in (0, 1, 7, 10, 12):
        for equal in (True, False):
            data = list(range(total)) if comm.rank == 0 else None
            mine = dist.scatter_dataset(data, comm, force_equal_length=equal)
            shares = comm.gather_obj([mine[i] for i in range(len(mine))])
            if comm.rank == 0:
                covered = sorted({v for share in shares for v in share})
                assert covered == list(range(total)), (total, shares)
                lengths = {len(s) for s in shares}
                if equal:
                    assert lengths == {-(-total // n)}, (total, shares)
                else:
                    assert max(lengths) - min(lengths) <= 1
                    assert sum(len(s) for s in shares) == total
    # shuffle with a seed: the same permutation on every rank, covering the data
    data = list(range(20)) if comm.rank == 1 else None
    mine = dist.scatter_dataset(data, comm, root=1, shuffle=True, seed=3, force_equal_length=False)
    shares = comm.allreduce_obj([[mine[i] for i in range(len(mine))]])
    flat = [v for share in shares for v in share]
    assert sorted(flat) == list(range(20)) and flat != list(range(20))
    assert flat == list(np.random.RandomState(3).permutation(20))


def check_evaluator(comm):
    total = 6 * comm.size
    values = np.arange(total, dtype=np.float64) ** 2
    data = list(values) if comm.rank == 0 else None
    mine = dist.scatter_dataset(data, comm)
    iterator = SerialIterator(mine, 2, repeat=False, shuffle=False)
    evaluator = dist.create_multi_node_evaluator(Evaluator(iterator, MeanOfX()), comm)
    result = evaluator()
    assert np.isclose(result["main/value"], values.mean()), (result, values.mean())


def main():
    comm = dist.create_communicator("naive")
    check_scatter(comm)
    check_evaluator(comm)
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: scatter/evaluate ok", file=sys.stderr)


if __name__ == "__main__":
    main()
