"""Ranks that disagree: every rank must raise the same named error, and nothing must move.

``mismatch.py layout VARIANT`` gives rank 1 a parameter that differs from rank
0's (``transposed``: (4, 6) for (6, 4); ``count``: (5, 4); ``dtype``: float64;
``name``: another name) and checks that ``bcast_data`` and
``multi_node_mean_grad`` raise ValueError on every rank naming the parameter
and each rank's shape, leaving every array as it was.
``mismatch.py objects`` makes one rank's object unpicklable (or two objects
impossible to add) in each object collective, and checks that every rank
raises the same named error and that the communicator still works after it.
Run with ``DBR_DISTRIBUTED_ABORT_ON_EXCEPTION=0``: the error is caught here.
"""

import pickle
import sys
import threading

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
from dbr.core import Chain, Parameter

SHAPES = {"transposed": (4, 6), "count": (5, 4), "dtype": (6, 4), "name": (6, 4)}


def model_of(rank, variant):
    shape, dtype, name = (6, 4), np.float32, "w"
    if rank == 1:
        shape = SHAPES[variant]
        dtype = np.float64 if variant == "dtype" else np.float32
        name = "v" if variant == "name" else "w"
    model = Chain()
    with model.init_scope():
        model.a = Parameter(np.full(3, rank, np.float32))
        setattr(model, name, Parameter(np.full(shape, rank + 1, dtype)))
        model.z = Parameter(np.full(2, rank, np.float32))
    for p in model.params():
        p.grad = np.full(p.shape, 10.0 * (rank + 1), p.dtype)
    return model


def expect_error(call, *fragments):
    try:
        call()
    except ValueError as error:
        text = str(error)
        missing = [f for f in fragments if f not in text]
        assert not missing, f"{missing} not in {text!r}"
        return text
    raise AssertionError(f"{call} raised nothing: the ranks' values were mixed")


def check_layout(variant):
    comm = dist.create_communicator("naive")
    r = comm.rank
    model = model_of(r, variant)
    before = {k: (p.array.copy(), p.grad.copy()) for k, p in model.namedparams()}
    if variant == "name":
        fragments = ["'/v'", "rank 0: absent", "rank 1: (6, 4) float32"]
    else:
        other = "float64" if variant == "dtype" else "float32"
        fragments = ["/w", "rank 0: (6, 4) float32", f"rank 1: {SHAPES[variant]} {other}"]
    texts = [
        expect_error(lambda: comm.bcast_data(model), "bcast_data", *fragments),
        expect_error(lambda: comm.multi_node_mean_grad(model), "multi_node_mean_grad", *fragments),
    ]
    for k, p in model.namedparams():
        assert np.array_equal(p.array, before[k][0]) and np.array_equal(p.grad, before[k][1]), k
    # every rank raises the same message
    assert len(set(sum(comm.mpi_comm.allgather(texts), []))) == 2
    # a model that agrees still works with the same communicator afterwards
    fine = model_of(0, variant)
    comm.bcast_data(fine)
    comm.multi_node_mean_grad(fine)
    print(f"rank {r}: {texts[1]}", file=sys.stderr)


def expect_same_error(comm, call, error_type, *fragments):
    try:
        call()
    except error_type as error:
        text = str(error)
        missing = [f for f in fragments if f not in text]
        assert not missing, f"{missing} not in {text!r}"
        texts = comm.mpi_comm.allgather(text)
        assert len(set(texts)) == 1, texts
        return text
    raise AssertionError(f"{call} raised no {error_type.__name__}")


def check_objects():
    comm = dist.create_communicator("naive")
    r, n = comm.rank, comm.size
    lock = threading.Lock()
    texts = [
        expect_same_error(
            comm,
            lambda: comm.bcast_obj(lock if r == 0 else None),
            pickle.PicklingError,
            "bcast_obj",
            "rank 0",
            "lock",
        ),
        expect_same_error(
            comm,
            lambda: comm.bcast_obj(lock if r == 1 else None, root=1, max_buf_len=7),
            pickle.PicklingError,
            "bcast_obj",
            "rank 1",
        ),
        expect_same_error(
            comm,
            lambda: comm.gather_obj(lock if r == n - 1 else r, root=0),
            pickle.PicklingError,
            "gather_obj",
            f"rank {n - 1}",
        ),
        expect_same_error(
            comm,
            lambda: comm.allreduce_obj(lock if r == 1 else r),
            pickle.PicklingError,
            "allreduce_obj",
            "rank 1",
        ),
        expect_same_error(
            comm,
            lambda: comm.allreduce_obj("text" if r == 1 else r),
            TypeError,
            "allreduce_obj",
            "rank 1",
        ),
    ]
    if r == 0:
        try:
            comm.send_obj(lock, dest=1, tag=5)
        except pickle.PicklingError as error:
            texts.append(str(error))
        else:
            raise AssertionError("send_obj of a lock raised nothing")
    elif r == 1:
        try:
            comm.recv_obj(source=0, tag=5)
        except pickle.PicklingError as error:
            assert "recv_obj" in str(error) and "rank 0" in str(error), str(error)
            texts.append(str(error))
        else:
            raise AssertionError("recv_obj of a failed send_obj raised nothing")
    # nothing was left in flight: the same collectives work afterwards
    assert comm.bcast_obj({"ok": r} if r == 0 else None) == {"ok": 0}
    assert comm.bcast_obj(list(range(50)) if r == 1 else None, root=1, max_buf_len=7) == list(
        range(50)
    )
    assert comm.gather_obj(r, root=0) == (list(range(n)) if r == 0 else None)
    assert comm.allreduce_obj(r + 1) == n * (n + 1) // 2
    if r == 0:
        comm.send_obj({"x": 1}, dest=1, tag=6)
    elif r == 1:
        assert comm.recv_obj(source=0, tag=6) == {"x": 1}
    for text in texts:
        print(f"rank {r}: {text}", file=sys.stderr)


def main():
    if sys.argv[1] == "layout":
        check_layout(sys.argv[2])
    else:
        check_objects()
    MPI.COMM_WORLD.Barrier()
    print(f"rank {MPI.COMM_WORLD.rank}: mismatch {' '.join(sys.argv[1:])} ok", file=sys.stderr)


if __name__ == "__main__":
    main()
