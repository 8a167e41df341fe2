"""Differentiable communication and MultiNodeChainList, values and gradients (run under mpiexec).

Every expected value and gradient is computed here with NumPy from the
formula; the model-parallel training is compared with the same stages
trained in this one process.
"""

import sys

import numpy as np
from mpi4py import MPI

import dbr.distributed as dist
import dbr.distributed.functions as DF
import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, Variable
from dbr.training import optimizers


def arr(rank, shape, salt=0, dtype=np.float64):
    rng = np.random.RandomState(1000 * salt + rank)
    return rng.randn(*shape).astype(dtype)


def weight(rank, shape, salt):
    return arr(rank, shape, salt=100 + salt)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6)


def check_send_recv_ring(comm):
    """Rank r sends 3*x_r to r+1; r+1 multiplies what it got by w and sends it on."""
    r, n = comm.rank, comm.size
    right, left = (r + 1) % n, (r - 1) % n
    x = Variable(arr(r, (2, 3)))
    w = weight(r, (2, 3), 0)
    if r == 0:
        delegate = DF.send(x * 3.0, comm, right)
        assert delegate.shape == (0,) and delegate.dtype == np.float32
        got = DF.recv(comm, left, delegate_variable=delegate)
        # back round the ring: 3 x0 * w1 * ... * w_{n-1}
        chain = np.prod([weight(k, (2, 3), 0) for k in range(1, n)], axis=0)
        value = 3.0 * arr(0, (2, 3)) * chain
        close(got.array, value)
        F.sum(got * got).backward()
        close(x.grad, 2 * value * 3.0 * chain)
    else:
        got = DF.recv(comm, left)
        if r == 1:
            close(got.array, 3.0 * arr(0, (2, 3)))
        delegate = DF.send(got * w, comm, right)
        delegate.backward()


def check_send_tuple_and_force_tuple(comm):
    r = comm.rank
    if r == 0:
        a, b = Variable(arr(0, (3,), 1)), Variable(arr(0, (2, 2), 2))
        DF.send((a, b), comm, 1, tag=5).backward()
        close(a.grad, 2 * arr(0, (3,), 1) * weight(1, (3,), 1))
        close(b.grad, np.ones((2, 2)))
        c = Variable(arr(0, (4,), 3))
        DF.send(c, comm, 1, tag=6).backward()
        close(c.grad, np.full(4, 5.0))
    elif r == 1:
        ya, yb = DF.recv(comm, 0, tag=5)
        close(ya.array, arr(0, (3,), 1))
        (F.sum(ya * ya * weight(1, (3,), 1)) + F.sum(yb)).backward()
        (yc,) = DF.recv(comm, 0, tag=6, force_tuple=True)
        F.sum(yc * 5.0).backward()


def check_pseudo_connect(comm):
    r = comm.rank
    x = Variable(arr(r, (3,), 4))
    if r == 0:
        delegate = DF.send(x * 2.0, comm, 1)
        z = Variable(arr(0, (3,), 5))
        (y,) = DF.pseudo_connect(delegate, z * 1.0)
        close(y.array, z.array)
        F.sum(y * y).backward()
        # z's gradient through the pass-through; x's arrives from rank 1 afterwards.
        close(z.grad, 2 * z.array)
        close(x.grad, 2.0 * weight(1, (3,), 4))
        (plain,) = DF.pseudo_connect(None, z)
        assert plain.array is not None and plain.shape == (3,)
    elif r == 1:
        got = DF.recv(comm, 0)
        F.sum(got * weight(1, (3,), 4)).backward()


def check_bcast(comm, root):
    r, n = comm.rank, comm.size
    x = Variable(arr(root, (2, 2), 6)) if r == root else None
    y = DF.bcast(comm, x, root=root)
    close(y.array, arr(root, (2, 2), 6))
    F.sum(y * weight(r, (2, 2), 6)).backward()
    if r == root:
        close(x.grad, sum(weight(k, (2, 2), 6) for k in range(n)))


def check_gather(comm, root):
    r, n = comm.rank, comm.size
    x = Variable(arr(r, (r + 1, 2), 7))
    ys = DF.gather(comm, x, root=root)
    if r == root:
        assert isinstance(ys, tuple) and len(ys) == n
        for k, y in enumerate(ys):
            close(y.array, arr(k, (k + 1, 2), 7))
        # one output left unused: its gradient is zero
        loss = sum(F.sum(y * weight(k, (k + 1, 2), 7)) for k, y in enumerate(ys) if k != 1)
        loss.backward()
    else:
        assert ys.shape == (0,)
        ys.backward()
    expected = np.zeros((r + 1, 2)) if r == 1 else weight(r, (r + 1, 2), 7)
    close(x.grad, expected)


def check_scatter(comm, root):
    r, n = comm.rank, comm.size
    xs = [Variable(arr(k, (k + 2,), 8)) for k in range(n)] if r == root else None
    y = DF.scatter(comm, xs, root=root)
    close(y.array, arr(r, (r + 2,), 8))
    F.sum(y * y * weight(r, (r + 2,), 8)).backward()
    if r == root:
        for k, x in enumerate(xs):
            close(x.grad, 2 * arr(k, (k + 2,), 8) * weight(k, (k + 2,), 8))


def check_allgather(comm):
    r, n = comm.rank, comm.size
    x = Variable(arr(r, (r + 1, 3), 9))
    ys = DF.allgather(comm, x)
    assert len(ys) == n
    for k, y in enumerate(ys):
        close(y.array, arr(k, (k + 1, 3), 9))
    # rank r weighs the piece from rank k by weight(r * n + k)
    sum(F.sum(y * weight(r * n + k, (k + 1, 3), 9)) for k, y in enumerate(ys)).backward()
    close(x.grad, sum(weight(q * n + r, (r + 1, 3), 9) for q in range(n)))


def check_alltoall(comm):
    r, n = comm.rank, comm.size
    # rank r's j-th input has shape (j + 1, r + 1)
    xs = [Variable(arr(r * n + j, (j + 1, r + 1), 10)) for j in range(n)]
    ys = DF.alltoall(comm, xs)
    for j, y in enumerate(ys):
        close(y.array, arr(j * n + r, (r + 1, j + 1), 10))
    sum(F.sum(y * y * weight(r * n + j, y.shape, 10)) for j, y in enumerate(ys)).backward()
    for j, x in enumerate(xs):
        # x reached rank j as its output r, weighted there by weight(j * n + r)
        close(x.grad, 2 * x.array * weight(j * n + r, x.shape, 10))


def check_bad_input(comm):
    for call, pattern in [
        (lambda: DF.send(Variable(np.zeros(2)), comm, comm.rank), "sending to oneself"),
        (lambda: DF.recv(comm, comm.size), "rank must be an int"),
        (lambda: DF.alltoall(comm, [Variable(np.zeros(1))]), "one Variable per rank"),
        (lambda: DF.bcast(comm, Variable(np.zeros(1)), root=-1), "root must be"),
    ]:
        try:
            call()
        except ValueError as e:
            assert pattern in str(e), e
        else:
            raise AssertionError(f"no error for {pattern}")


# -- MultiNodeChainList -------------------------------------------------------

SIZES = [4, 6, 5, 6, 3]  # widths between stages


def stage(k, n):
    """Stage k of n + 1: a Linear with fixed weights (tanh after every stage but the last)."""
    width_in, width_out = SIZES[k % 4], SIZES[(k + 1) % 4] if k < n else 3
    rng = np.random.RandomState(50 + k)
    return L.Linear(
        width_in,
        width_out,
        initialW=rng.randn(width_out, width_in).astype(np.float32) * 0.5,
        initial_bias=rng.randn(width_out).astype(np.float32) * 0.1,
    )


class Stage(Chain):
    def __init__(self, k, n):
        super().__init__()
        self.last = k == n
        with self.init_scope():
            self.fc = stage(k, n)

    def forward(self, x):
        y = self.fc(x)
        return y if self.last else F.tanh(y)


class Whole(Chain):
    """All n + 1 stages in one process: the reference."""

    def __init__(self, n):
        super().__init__()
        self.n = n
        with self.init_scope():
            for k in range(n + 1):
                setattr(self, f"s{k}", Stage(k, n))

    def forward(self, x):
        for k in range(self.n + 1):
            x = getattr(self, f"s{k}")(x)
        return x


def split_model(comm):
    """Stage k on rank k (k < n), and the last stage n back on rank 0, which computes the loss."""
    r, n = comm.rank, comm.size
    model = dist.MultiNodeChainList(comm)
    if r == 0:
        model.add_link(Stage(0, n), rank_in=None, rank_out=1)
        model.add_link(Stage(n, n), rank_in=n - 1, rank_out=None)
    else:
        model.add_link(Stage(r, n), rank_in=r - 1, rank_out=(r + 1) % n)
    return model


def check_model_parallel_training(comm, optimizer_name):
    r, n = comm.rank, comm.size
    make = {
        "SGD": lambda: optimizers.SGD(lr=0.05),
        "MomentumSGD": lambda: optimizers.MomentumSGD(lr=0.05, momentum=0.9),
    }[optimizer_name]
    rng = np.random.RandomState(7)
    xs = rng.randn(5, 8, 4).astype(np.float32)
    ts = rng.randint(0, 3, size=(5, 8)).astype(np.int32)

    whole = Whole(n)
    whole_opt = make().setup(whole)
    model = split_model(comm)
    opt = make().setup(model)
    for x, t in zip(xs, ts):
        whole.cleargrads()
        F.softmax_cross_entropy(whole(x), t).backward()
        whole_opt.update()

        model.cleargrads()
        if r == 0:
            y = model(x)
            F.softmax_cross_entropy(y, t).backward()
        else:
            delegate = model()
            assert delegate.shape == (0,)
            delegate.backward()
        opt.update()
    mine = [0, n] if r == 0 else [r]
    for part, k in zip(model, mine):
        ref = getattr(whole, f"s{k}").fc
        np.testing.assert_allclose(part.fc.W.array, ref.W.array, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(part.fc.b.array, ref.b.array, rtol=1e-5, atol=1e-6)
        assert not np.allclose(part.fc.W.array, stage(k, n).W.array), "did not train"


def check_chain_list_rules(comm):
    model = dist.MultiNodeChainList(comm)
    model.add_link(L.Linear(2, 2), rank_in=None, rank_out=None)
    try:
        model.add_link(L.Linear(2, 2), rank_in=None, rank_out=None)
    except ValueError as e:
        assert "only one part" in str(e)
    else:
        raise AssertionError("two outputs accepted")
    # a part that sends to this very process, then a part that receives it
    own = dist.MultiNodeChainList(comm)
    own.add_link(L.Linear(3, 2, initialW=np.eye(2, 3, dtype=np.float32)), rank_out=comm.rank)
    own.add_link(L.Linear(2, 2, initialW=2 * np.eye(2, dtype=np.float32)), rank_in=comm.rank)
    x = Variable(np.arange(3, dtype=np.float32)[None])
    y = own(x)
    close(y.array, [[0.0, 2.0]])
    F.sum(y).backward()
    close(x.grad, [[2.0, 2.0, 0.0]])


def main():
    comm = dist.create_communicator("naive")
    check_send_recv_ring(comm)
    check_send_tuple_and_force_tuple(comm)
    check_pseudo_connect(comm)
    for root in range(comm.size):
        check_bcast(comm, root)
        check_gather(comm, root)
        check_scatter(comm, root)
    check_allgather(comm)
    check_alltoall(comm)
    check_bad_input(comm)
    check_chain_list_rules(comm)
    for name in ("SGD", "MomentumSGD"):
        check_model_parallel_training(comm, name)
    MPI.COMM_WORLD.Barrier()
    print(f"rank {comm.rank}: model parallel ok", file=sys.stderr)


if __name__ == "__main__":
    main()
