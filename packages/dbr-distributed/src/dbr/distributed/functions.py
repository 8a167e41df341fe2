"""Differentiable communication for model parallelism: forward and backward both communicate.

Every rank taking part must run the forward and, later, the backward of
each of these functions in the same order as its peers; a rank that skips
one leaves its peers waiting. Point-to-point functions return a
*delegate variable* (an empty float32 Variable) where there is no data to
return, so that the backward still reaches them: call ``backward()`` on it,
or pass it to the next :func:`recv` or to :func:`pseudo_connect`.
"""

import numpy

from dbr.core import FunctionNode, Variable, get_array_module

__all__ = [
    "allgather",
    "allreduce",
    "alltoall",
    "bcast",
    "gather",
    "pseudo_connect",
    "recv",
    "scatter",
    "send",
]


def _array(x):
    return x.array if isinstance(x, Variable) else x


def _empty(xp, dtype=numpy.float32):
    return xp.empty((0,), dtype=dtype)


def _delegate(variable):
    """Make ``variable`` a delegate whose ``backward()`` runs its creator's backward.

    Its gradient is preset to an empty array because ``backward`` seeds
    only one-element Variables with 1.
    """
    variable.grad = get_array_module(variable.array).empty((0,), dtype=variable.dtype)
    return variable


def _dummy(xp):
    """An empty Variable that requires a gradient, so that the backward of its consumer runs."""
    return Variable(_empty(xp), requires_grad=True)


class _Outputs:
    """Shapes and dtypes of a node's outputs, to stand zeros in for missing gradients."""

    __slots__ = ("metas", "xp")

    def __init__(self, arrays):
        self.metas = [(a.shape, a.dtype) for a in arrays]
        self.xp = get_array_module(*arrays) if arrays else numpy

    def fill(self, grad_outputs):
        return tuple(
            self.xp.zeros(shape, dtype) if g is None else _array(g)
            for g, (shape, dtype) in zip(grad_outputs, self.metas, strict=True)
        )

    def fill_variables(self, grad_outputs):
        return tuple(
            Variable(self.xp.zeros(shape, dtype), requires_grad=False) if g is None else g
            for g, (shape, dtype) in zip(grad_outputs, self.metas, strict=True)
        )


def _sum(variables):
    total = variables[0]
    for v in variables[1:]:
        total = total + v
    return total


def _check_peer(who, comm, rank):
    if not isinstance(rank, (int, numpy.integer)) or not 0 <= rank < comm.size:
        raise ValueError(f"{who}: rank must be an int in [0, {comm.size}), got {rank!r}")
    if rank == comm.rank:
        raise ValueError(
            f"{who}: rank must differ from this process's rank ({comm.rank}); "
            "sending to oneself would deadlock"
        )


def _check_root(who, comm, root):
    if not isinstance(root, (int, numpy.integer)) or not 0 <= root < comm.size:
        raise ValueError(f"{who}: root must be an int in [0, {comm.size}), got {root!r}")


# -- point to point ------------------------------------------------------------


class _PointToPoint(FunctionNode):
    """Base of :class:`Send` and :class:`Recv`: the communicator, the peer and the tag."""

    def __init__(self, comm, peer_rank, peer_tag):
        self.comm = comm
        self.peer_rank = peer_rank
        self.peer_tag = peer_tag

    @property
    def label(self):
        """``Send (peer_rank: r)`` or ``Recv (peer_rank: r)``."""
        return f"{type(self).__name__} (peer_rank: {self.peer_rank})"


class Send(_PointToPoint):
    """Sends its inputs (all but the last, an empty dummy) to ``peer_rank``.

    Its output is an empty delegate array; its backward receives the
    gradients of the inputs from the peer's :class:`Recv`.
    """

    def forward(self, inputs):
        xs = inputs[:-1]
        self._n = len(xs)
        self.comm.send(xs[0] if self._n == 1 else xs, self.peer_rank, self.peer_tag)
        return (_empty(get_array_module(*inputs)),)

    def backward(self, indexes, grad_outputs):
        gxs = self.comm.recv(self.peer_rank, self.peer_tag)
        if not isinstance(gxs, tuple):
            gxs = (gxs,)
        if len(gxs) != self._n:
            raise RuntimeError(
                f"send: received {len(gxs)} gradients from rank {self.peer_rank}, "
                f"expected {self._n} (one per sent array)"
            )
        return (*gxs, None)


class Recv(_PointToPoint):
    """Receives arrays from ``peer_rank``; its backward sends their gradients back."""

    def forward(self, inputs):
        data = self.comm.recv(self.peer_rank, self.peer_tag)
        data = data if isinstance(data, tuple) else (data,)
        self._outputs = _Outputs(data)
        delegate = inputs[0]
        self._delegate_meta = (delegate.shape, delegate.dtype, get_array_module(delegate))
        return data

    def backward(self, indexes, grad_outputs):
        gys = self._outputs.fill(grad_outputs)
        self.comm.send(gys, self.peer_rank, self.peer_tag)
        shape, dtype, xp = self._delegate_meta
        return (xp.zeros(shape, dtype),)


def send(x, communicator, rank, tag=0):
    """Send ``x`` to process ``rank``; the backward receives its gradient from there.

    Args:
        x (Variable or tuple/list of Variables): what to send (arrays of
            one dtype; a tuple arrives as a tuple).
        communicator: a communicator.
        rank (int): the receiving process (not this one).
        tag (int): the MPI message tag.

    Returns:
        Variable: an empty float32 *delegate* Variable that only holds the
        graph: ``backward()`` on it (or passing it to :func:`recv` or
        :func:`pseudo_connect`) makes the backward receive the gradient of
        ``x`` from ``rank``.
    """
    _check_peer("send", communicator, rank)
    xs = tuple(x) if isinstance(x, (tuple, list)) else (x,)
    if not xs:
        raise ValueError("send: x must hold at least one Variable, got an empty sequence")
    # The dummy input requires a gradient, so that the backward (and with it the
    # matching receive of the gradients) runs even when no x requires one.
    dummy = _dummy(get_array_module(*[_array(v) for v in xs]))
    (delegate,) = Send(communicator, rank, tag).apply((*xs, dummy))
    delegate.name = "delegate_variable"
    return _delegate(delegate)


def recv(communicator, rank, delegate_variable=None, tag=0, force_tuple=False):
    """Receive what process ``rank`` sent with :func:`send`; the backward sends its gradient back.

    Args:
        communicator: a communicator.
        rank (int): the sending process (not this one).
        delegate_variable (Variable or None): the delegate of this process's
            previous graph component (from :func:`send`), so that its backward
            runs after this one's.
        tag (int): the MPI message tag.
        force_tuple (bool): return a tuple even for a single array.

    Returns:
        Variable or tuple of Variables: the received arrays (a tuple when
        the sender sent a tuple, or with ``force_tuple``).
    """
    _check_peer("recv", communicator, rank)
    if delegate_variable is None:
        delegate_variable = _dummy(numpy)
    else:
        delegate_variable.name = "delegate_variable"
    ys = Recv(communicator, rank, tag).apply((delegate_variable,))
    if len(ys) == 1 and not force_tuple:
        return ys[0]
    return ys


class PseudoConnect(FunctionNode):
    """Passes its inputs but the first through; the first (the delegate) gets a zero gradient."""

    def forward(self, inputs):
        delegate = inputs[0]
        self._delegate_meta = (delegate.shape, delegate.dtype, get_array_module(delegate))
        return tuple(inputs[1:])

    def backward(self, indexes, grad_outputs):
        shape, dtype, xp = self._delegate_meta
        return (Variable(xp.zeros(shape, dtype), requires_grad=False), *grad_outputs)


def pseudo_connect(delegate_variable, *actual_variables):
    """Return ``actual_variables`` unchanged, but hanging below ``delegate_variable`` in the graph.

    The backward passes the gradients of ``actual_variables`` through and
    then runs the backward of ``delegate_variable``'s graph component (a
    :func:`send` whose gradient must be received), which would otherwise be
    unreachable from the model's output.

    Args:
        delegate_variable (Variable or None): the delegate of the previous
            component; None is an empty array (nothing to connect).
        *actual_variables (Variable): the values to return.

    Returns:
        tuple of Variable: one per ``actual_variables``, equal in value.
    """
    if not actual_variables:
        raise ValueError("pseudo_connect: give at least one actual variable")
    if delegate_variable is None:
        delegate_variable = _empty(get_array_module(*[_array(v) for v in actual_variables]))
    return PseudoConnect().apply((delegate_variable, *actual_variables))


# -- collectives ---------------------------------------------------------------


class AllreduceSum(FunctionNode):
    """``y = sum over ranks of x``; every rank's gradient is the sum of every rank's ``gy``."""

    def __init__(self, comm):
        self.comm = comm

    def forward(self, inputs):
        (x,) = inputs
        return (self.comm.allreduce(x),)

    def backward(self, indexes, grad_outputs):
        (gy,) = grad_outputs
        return (AllreduceSum(self.comm).apply((gy,))[0],)


def allreduce(comm, x):
    """The elementwise sum over the ranks of every rank's ``x`` (same shape everywhere).

    Differentiable: its backward sums the output gradients over the ranks,
    so every rank must run the backward too, in the same order.

    Args:
        comm: a communicator.
        x (Variable or array): this rank's term.

    Returns:
        Variable: the sum, of ``x``'s shape and dtype.
    """
    return AllreduceSum(comm).apply((x,))[0]


class AllGather(FunctionNode):
    """Outputs every rank's ``x``; the gradient of ``x`` sums what every rank's outputs got."""

    def __init__(self, comm):
        self.comm = comm

    def forward(self, inputs):
        (x,) = inputs
        ys = self.comm.allgather(x)
        self._outputs = _Outputs(ys)
        return ys

    def backward(self, indexes, grad_outputs):
        gys = self._outputs.fill_variables(grad_outputs)
        return (_sum(AllToAll(self.comm).apply(gys)),)


class AllToAll(FunctionNode):
    """Input i goes to rank i; output j came from rank j. Its backward is an all-to-all too."""

    def __init__(self, comm):
        self.comm = comm

    def forward(self, inputs):
        ys = self.comm.alltoall(inputs)
        self._outputs = _Outputs(ys)
        return ys

    def backward(self, indexes, grad_outputs):
        gys = self._outputs.fill_variables(grad_outputs)
        return AllToAll(self.comm).apply(gys)


class _RootedCollective(FunctionNode):
    """A collective with a ``root`` rank (Bcast, Gather, Scatter)."""

    def __init__(self, comm, root):
        self.comm = comm
        self.root = root

    def _gradients_on_root(self, grad_outputs):
        """Every rank's output gradients, gathered on ``root``; None on the other ranks.

        Every rank must call it: the gather is itself a collective.
        """
        gys = self._outputs.fill_variables(grad_outputs)
        gathered = Gather(self.comm, self.root).apply(gys)
        return gathered if self.comm.rank == self.root else None


class Bcast(_RootedCollective):
    """Outputs ``root``'s input on every rank; root's gradient is the sum over the ranks.

    Ranks other than ``root`` take an empty dummy input instead.
    """

    def forward(self, inputs):
        x = inputs[0] if self.comm.rank == self.root else None
        y = self.comm.bcast(x, self.root)
        self._outputs = _Outputs((y,))
        return (y,)

    def backward(self, indexes, grad_outputs):
        gathered = self._gradients_on_root(grad_outputs)
        return (None,) if gathered is None else (_sum(gathered),)


class Gather(_RootedCollective):
    """Outputs every rank's ``x`` on ``root`` (an empty delegate elsewhere); backward scatters."""

    def forward(self, inputs):
        (x,) = inputs
        ys = self.comm.gather(x, self.root)
        if ys is None:
            ys = (_empty(get_array_module(x), x.dtype),)
        self._outputs = _Outputs(ys)
        return ys

    def backward(self, indexes, grad_outputs):
        if self.comm.rank == self.root:
            gys = self._outputs.fill_variables(grad_outputs)
        else:
            gys = (_empty(self._outputs.xp),)
        return Scatter(self.comm, self.root).apply(gys)


class Scatter(_RootedCollective):
    """Outputs ``root``'s input i on rank i; root's input gradients are gathered back.

    Ranks other than ``root`` take an empty dummy input instead.
    """

    def forward(self, inputs):
        xs = inputs if self.comm.rank == self.root else None
        y = self.comm.scatter(xs, self.root)
        self._outputs = _Outputs((y,))
        return (y,)

    def backward(self, indexes, grad_outputs):
        gathered = self._gradients_on_root(grad_outputs)
        return (None,) if gathered is None else gathered


def allgather(comm, x):
    """Every rank's ``x``, on every rank (shapes may differ between ranks; one dtype).

    The gradient of ``x`` is the sum over the ranks of the gradient that
    each rank's copy of it received.

    Args:
        comm: a communicator.
        x (Variable): this rank's array.

    Returns:
        tuple of Variable: ``size`` Variables, the i-th from rank i.
    """
    return AllGather(comm).apply((x,))


def alltoall(comm, xs):
    """Send ``xs[i]`` to rank i; return what every rank sent to this one.

    The backward sends each output's gradient back to where it came from.

    Args:
        comm: a communicator.
        xs (tuple/list of Variable): ``size`` Variables of one dtype.

    Returns:
        tuple of Variable: ``size`` Variables, the j-th from rank j.
    """
    xs = tuple(xs)
    if len(xs) != comm.size:
        raise ValueError(
            f"alltoall: xs must hold one Variable per rank ({comm.size}), got {len(xs)}"
        )
    return AllToAll(comm).apply(xs)


def bcast(comm, x, root=0):
    """``root``'s ``x``, on every rank; ``root`` gets the sum of every rank's gradient.

    Args:
        comm: a communicator.
        x (Variable or None): the array to broadcast on ``root``; ignored elsewhere.
        root (int): the broadcasting rank.

    Returns:
        Variable: ``root``'s ``x``.
    """
    _check_root("bcast", comm, root)
    if comm.rank == root:
        if x is None:
            raise ValueError(f"bcast: x must be a Variable on the root (rank {root}), got None")
        return Bcast(comm, root).apply((x,))[0]
    return Bcast(comm, root).apply((_dummy(numpy),))[0]


def gather(comm, x, root=0):
    """Every rank's ``x`` on ``root`` (shapes may differ; one dtype); the backward scatters.

    Args:
        comm: a communicator.
        x (Variable): this rank's array.
        root (int): the gathering rank.

    Returns:
        tuple of Variable on ``root`` (``size`` of them, the i-th from rank
        i); elsewhere an empty delegate Variable, to call ``backward()`` on.
    """
    _check_root("gather", comm, root)
    ys = Gather(comm, root).apply((x,))
    if comm.rank == root:
        return ys
    return _delegate(ys[0])


def scatter(comm, xs, root=0):
    """``root``'s ``xs[i]`` on rank i; the backward gathers the gradients to ``root``.

    Args:
        comm: a communicator.
        xs (tuple/list of Variable or None): ``size`` Variables of one dtype
            (shapes may differ) on ``root``; ignored elsewhere.
        root (int): the scattering rank.

    Returns:
        Variable: this rank's piece.
    """
    _check_root("scatter", comm, root)
    if comm.rank == root:
        if xs is None or len(xs) != comm.size:
            got = None if xs is None else len(xs)
            raise ValueError(
                f"scatter: xs must hold one Variable per rank ({comm.size}) on the root, got {got}"
            )
        return Scatter(comm, root).apply(tuple(xs))[0]
    return Scatter(comm, root).apply((_dummy(numpy),))[0]
