"""Per-rank checks of the communicator's properties and collectives (run under mpiexec)."""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
import dbr.links as L
from dbr.core import Chain, Parameter


class CountingComm:
    """An mpi4py communicator that counts the buffer all-reduces made through it."""

    def __init__(self, comm):
        self.comm = comm
        self.allreduces = 0

    def Allreduce(self, *args, **kwargs):
        self.allreduces += 1
        return self.comm.Allreduce(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.comm, name)


def check_properties(comm):
    world = MPI.COMM_WORLD
    assert comm.rank == world.rank and comm.size == world.size
    # mpiexec -n N on one machine: every process is on the same host.
    assert (comm.intra_rank, comm.intra_size) == (comm.rank, comm.size)
    assert (comm.inter_rank, comm.inter_size) == (0, 1)
    sub = comm.split(comm.rank % 2, comm.rank)
    assert type(sub) is type(comm)
    assert sub.size == len(range(comm.rank % 2, comm.size, 2))
    assert sub.rank == comm.rank // 2


def local(rank, shape=(2, 3), dtype=np.float32):
    return (np.arange(np.prod(shape)).reshape(shape) + 10 * rank).astype(dtype)


def check_arrays(comm):
    r, n = comm.rank, comm.size
    for dtype in (np.float16, np.float32, np.float64, np.int32, np.int64):
        total = comm.allreduce(local(r, dtype=dtype))
        expected = sum(local(i, dtype=np.float64) for i in range(n)).astype(dtype)
        assert total.dtype == dtype and np.array_equal(total, expected), (dtype, total)

        got = comm.bcast(local(r, dtype=dtype) if r == 1 else None, root=1)
        assert got.dtype == dtype and np.array_equal(got, local(1, dtype=dtype))

    # gather/allgather with a different shape on every rank
    mine = np.full((r + 1, 2), r, dtype=np.float64)
    gathered = comm.gather(mine, root=0)
    everyone = [np.full((i + 1, 2), i, dtype=np.float64) for i in range(n)]
    if r == 0:
        assert len(gathered) == n and all(np.array_equal(a, b) for a, b in zip(gathered, everyone))
    else:
        assert gathered is None
    all_gathered = comm.allgather(mine)
    assert all(np.array_equal(a, b) for a, b in zip(all_gathered, everyone))

    # alltoall: rank r sends [r, j] (j+1 times) to rank j
    xs = tuple(np.full(j + 1, 100 * r + j, dtype=np.int32) for j in range(n))
    ys = comm.alltoall(xs)
    assert all(np.array_equal(ys[i], np.full(r + 1, 100 * i + r, np.int32)) for i in range(n))

    # scatter, as a tuple of differently shaped arrays and as one stacked array
    pieces = tuple(np.arange(i + 2, dtype=np.float32) * (i + 1) for i in range(n))
    got = comm.scatter(pieces if r == 0 else None, root=0)
    assert np.array_equal(got, pieces[r])
    stacked = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    got = comm.scatter(stacked if r == n - 1 else None, root=n - 1)
    assert np.array_equal(got, stacked[r])

    # point to point: a ring, single arrays and tuples
    right, left = (r + 1) % n, (r - 1) % n
    if n > 1:
        if r % 2 == 0:
            comm.send(local(r, dtype=np.float16), dest=right, tag=3)
            a = comm.recv(source=left, tag=3)
            comm.send((local(r), local(r, (4,))), dest=right, tag=4)
            b = comm.recv(source=left, tag=4)
        else:
            a = comm.recv(source=left, tag=3)
            comm.send(local(r, dtype=np.float16), dest=right, tag=3)
            b = comm.recv(source=left, tag=4)
            comm.send((local(r), local(r, (4,))), dest=right, tag=4)
        assert a.dtype == np.float16 and np.array_equal(a, local(left, dtype=np.float16))
        assert isinstance(b, tuple) and np.array_equal(b[1], local(left, (4,)))


def check_objects(comm):
    r, n = comm.rank, comm.size
    assert comm.bcast_obj({"from": r} if r == 0 else None) == {"from": 0}
    big = list(range(1000))
    assert comm.bcast_obj(big if r == 0 else None, max_buf_len=100) == big
    got = comm.gather_obj(("rank", r), root=0)
    assert got == ([("rank", i) for i in range(n)] if r == 0 else None)
    assert comm.allreduce_obj(r + 1) == n * (n + 1) // 2
    if n > 1:
        if r == 0:
            comm.send_obj({"x": [1, 2]}, dest=1, tag=7)
        elif r == 1:
            assert comm.recv_obj(source=0) == {"x": [1, 2]}


class TwoDtypes(Chain):
    def __init__(self, rank):
        super().__init__()
        with self.init_scope():
            self.a = L.Linear(3, 2)
            self.b = L.Linear(2, 2)
            self.c = Parameter(np.full(4, rank, dtype=np.float64))
            self.unused = Parameter(np.zeros(2, dtype=np.float32))
            self.lazy = L.Linear(None, 2)
        self.b.to_device("@numpy")
        for p in self.b.params():
            p.array = p.array.astype(np.float64)


def check_models(name):
    counting = CountingComm(MPI.COMM_WORLD)
    comm = dist.create_communicator(name, mpi_comm=counting)
    r, n = comm.rank, comm.size
    np.random.seed(r)
    model = TwoDtypes(r)
    comm.bcast_data(model)
    reference = dist.create_communicator("naive").gather_obj(
        {k: p.array.copy() for k, p in model.namedparams() if p.array is not None}
    )
    if r == 0:
        for other in reference[1:]:
            for k, v in other.items():
                assert np.array_equal(v, reference[0][k]), k
    assert np.array_equal(model.c.array, np.zeros(4))

    grads = {}
    for k, p in model.namedparams():
        if p.array is not None and k != "/unused":
            ramp = 1 + np.arange(p.size).reshape(p.shape)
            p.grad = ((r + 1) * ramp).astype(p.array.dtype)
            grads[k] = p.grad.copy()
    counting.allreduces = 0
    comm.multi_node_mean_grad(model, zero_fill=False)
    # float32 and float64 gradients: one all-reduce each, not one per parameter
    assert counting.allreduces == 2, counting.allreduces
    mean_factor = sum(i + 1 for i in range(n)) / n
    for k, p in model.namedparams():
        if k in grads:
            assert p.grad.dtype == grads[k].dtype
            np.testing.assert_allclose(p.grad, grads[k] / (r + 1) * mean_factor, rtol=1e-6)
    assert model.unused.grad is None and model.lazy.W.array is None

    # Chunks of three float32 (one float64) values: parameters straddle the
    # chunks, and each chunk is one all-reduce.
    comm._grad_chunk_bytes = 12
    held = {}
    for k, p in model.namedparams():
        if k in grads:
            p.grad = grads[k].copy()
            held[k] = p.grad
    counting.allreduces = 0
    comm.multi_node_mean_grad(model, zero_fill=False)
    sizes = {"float32": 0, "float64": 0}
    for g in grads.values():
        sizes[g.dtype.name] += g.size
    assert counting.allreduces == -(-sizes["float32"] // 3) + sizes["float64"]
    for k, p in model.namedparams():
        if k in grads:
            assert p.grad is held[k], k
            np.testing.assert_allclose(p.grad, grads[k] / (r + 1) * mean_factor, rtol=1e-6)

    comm.multi_node_mean_grad(model, zero_fill=True)
    assert np.array_equal(model.unused.grad, np.zeros(2, np.float32))


def main():
    comm = dist.create_communicator("naive")
    check_properties(comm)
    check_arrays(comm)
    check_objects(comm)
    for name in ("naive", "flat"):
        check_models(name)
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: collectives ok", file=sys.stderr)


if __name__ == "__main__":
    main()
