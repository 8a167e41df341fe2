"""Communicators: who the processes are and how arrays, objects and gradients travel between them.

:func:`create_communicator` wraps an mpi4py communicator (``COMM_WORLD`` by
default). ``'naive'`` and ``'flat'`` move NumPy (or CuPy, through the host)
arrays over MPI; ``'pure_nccl'`` reduces gradients of CuPy arrays with
``dbr.gpu``'s NCCL communicator and moves everything else over MPI.
"""

import contextlib
import hashlib
import pickle
import warnings
import weakref

import numpy

from dbr.core import config, get_array_module
from dbr.distributed.mpi_library import load_mpi as _mpi

__all__ = [
    "CommunicatorBase",
    "DummyCommunicator",
    "FlatCommunicator",
    "MpiCommunicatorBase",
    "NaiveCommunicator",
    "INT_MAX",
    "PureNcclCommunicator",
    "chunked_bcast_obj",
    "create_communicator",
    "init_ranks",
]

INT_MAX = 2**31 - 1
"""The largest count of one MPI message (a C ``int``); :func:`chunked_bcast_obj` stays below."""

_DEFAULT_MAX_BUF_LEN = 256 * 1024 * 1024
# multi_node_mean_grad sums the packed gradients this many bytes at a time:
# packing a chunk, summing it and copying it back while it is still in the
# cache beats three passes over the whole model's gradients in memory, and
# the buffer kept between calls stays this small. 4 MiB measured a little
# faster on 2 ranks of one machine, but at many ranks each rank's share of
# a chunk would become a short, latency-bound message.
_GRAD_CHUNK_BYTES = 8 * 1024 * 1024
# The dtypes the array collectives move; float16 travels as float32 because
# MPI has no half-precision sum.
_MPI_DTYPES = frozenset(
    numpy.dtype(t) for t in (numpy.int32, numpy.int64, numpy.float16, numpy.float32, numpy.float64)
)
_NAMES = ("naive", "flat", "pure_nccl", "non_cuda_aware", "dummy")


def _to_host(array):
    return numpy.ascontiguousarray(array) if isinstance(array, numpy.ndarray) else array.get()


def _like(host, xp):
    return host if xp is numpy else xp.asarray(host)


def _wire(array):
    """A contiguous host copy in the dtype MPI moves (float16 as float32)."""
    host = _to_host(array)
    if host.dtype == numpy.float16:
        host = host.astype(numpy.float32)
    return numpy.ascontiguousarray(host)


class _Meta:
    """Shape, dtype and array module of one array, as sent ahead of its data."""

    __slots__ = ("dtype", "gpu", "shape")

    def __init__(self, array):
        self.shape = tuple(array.shape)
        self.dtype = numpy.dtype(array.dtype)
        self.gpu = not isinstance(array, numpy.ndarray)

    def xp(self):
        if self.gpu:
            import cupy

            return cupy
        return numpy

    def empty_wire(self):
        dtype = numpy.float32 if self.dtype == numpy.float16 else self.dtype
        return numpy.empty(self.shape, dtype=dtype)

    def finish(self, wire):
        return _like(wire.astype(self.dtype, copy=False), self.xp())


def _check_array(who, array):
    if not hasattr(array, "dtype") or not hasattr(array, "shape"):
        raise TypeError(f"{who}: expected a NumPy or CuPy array, got {type(array).__name__}")
    if numpy.dtype(array.dtype) not in _MPI_DTYPES:
        raise TypeError(
            f"{who}: dtype {array.dtype} is not supported; expected one of "
            f"{sorted(str(d) for d in _MPI_DTYPES)}"
        )


def _check_same_dtype(who, metas):
    dtypes = {m.dtype for m in metas}
    if len(dtypes) > 1:
        raise TypeError(
            f"{who}: every array must have the same dtype, got {sorted(map(str, dtypes))}"
        )


def _offsets(counts):
    out, total = [], 0
    for c in counts:
        out.append(total)
        total += c
    return out


def _grad_params(model, zero_fill):
    """The ``(name, parameter)`` pairs that take part in a gradient mean, sorted by name.

    Parameters not yet initialised are skipped, and so is an initialised one
    without a gradient unless ``zero_fill`` (:func:`_fill_grads` then gives
    it zeros).
    """
    return [
        (name, param)
        for name, param in sorted(model.namedparams(), key=lambda item: item[0])
        if param.array is not None and (param.grad is not None or zero_fill)
    ]


def _grad_arrays(named):
    """``(name, array)`` of each gradient that :func:`_grad_params` chose (or its zeros' model)."""
    return [(name, p.array if p.grad is None else p.grad) for name, p in named]


def _fill_grads(named):
    """Give each chosen parameter without a gradient zeros; return the parameters."""
    params = []
    for _, param in named:
        if param.grad is None:
            param.grad = param.xp.zeros_like(param.array)
        params.append(param)
    return params


def _layout_of(named_arrays):
    """``(name, shape, dtype)`` of each array: compared every call, so kept cheap."""
    return tuple([(name, array.shape, array.dtype) for name, array in named_arrays])


def _layout_digest(layout):
    """16 bytes that tell layouts apart, the same in every process (unlike ``hash``)."""
    text = repr([(name, shape, dtype.str) for name, shape, dtype in layout])
    return numpy.frombuffer(hashlib.blake2b(text.encode(), digest_size=16).digest(), numpy.uint8)


def _layout_mismatch(who, layouts):
    """The message naming the first parameter (by name) in which the ranks' layouts differ."""
    tables = [{name: (shape, dtype) for name, shape, dtype in layout} for layout in layouts]
    for name in sorted(set().union(*tables)):
        entries = [table.get(name) for table in tables]
        if any(entry != entries[0] for entry in entries):
            break
    else:
        return f"{who}: the ranks' parameter lists differ (in their order)"
    shown = ", ".join(
        f"rank {rank}: " + ("absent" if e is None else f"{tuple(e[0])} {numpy.dtype(e[1]).name}")
        for rank, e in enumerate(entries)
    )
    return (
        f"{who}: the ranks' parameters differ, first at {name!r} ({shown}); every rank "
        f"must pass a model whose parameters have the same names, shapes and dtypes"
    )


def _pack(params, attr, xp, dtype=None):
    """One flat buffer per gradient dtype: ``{dtype: (buffer, [params])}``.

    With ``dtype``, every array is cast into a single buffer of that dtype.
    """
    groups = {}
    for param in params:
        key = numpy.dtype(dtype or getattr(param, attr).dtype)
        groups.setdefault(key, []).append(param)
    packed = {}
    for key, members in groups.items():
        total = sum(getattr(p, attr).size for p in members)
        buffer = xp.empty(total, dtype=key)
        offset = 0
        for p in members:
            array = getattr(p, attr)
            buffer[offset : offset + array.size] = array.ravel()
            offset += array.size
        packed[key] = (buffer, members)
    return packed


def _unpack(packed, attr, scale=None):
    """Copy each buffer back into its parameters' ``attr`` arrays, times ``scale`` if given.

    Scaling while copying saves a pass over the buffer.
    """
    for buffer, members in packed.values():
        xp = get_array_module(buffer)
        offset = 0
        for p in members:
            array = getattr(p, attr)
            piece = buffer[offset : offset + array.size].reshape(array.shape)
            if scale is None:
                array[...] = piece
            else:
                xp.multiply(piece, scale, out=array)
            offset += array.size


def _pickled(obj):
    """``(pickle, None)``: ``obj``'s pickle as bytes, or ``(None, error)`` where it fails."""
    try:
        return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL), None
    except Exception as error:  # whatever a __reduce__ raises; reported on every rank
        return None, error


def _loads_all(received, sizes):
    """Unpickle the pickles of ``sizes`` bytes lying back to back in ``received``."""
    view = memoryview(received)
    return [pickle.loads(view[o : o + n]) for o, n in zip(_offsets(sizes), sizes, strict=True)]


def _reason(error):
    return f"{type(error).__name__}: {error}"


def _unpicklable(who, failures, error=None):
    """PicklingError naming each ``(rank, reason)`` of ``failures``, chained to ``error``."""
    named = "; ".join(f"rank {rank} ({reason})" for rank, reason in failures)
    exc = pickle.PicklingError(
        f"{who}: could not pickle the object of {named}; no rank received anything"
    )
    exc.__cause__ = error
    return exc


def _exchange_status(mpi_comm, who, payload, error):
    """Every rank's pickle size; raise the same PicklingError on every rank if one failed."""
    statuses = mpi_comm.allgather((len(payload), None) if error is None else (-1, _reason(error)))
    failures = [(rank, reason) for rank, (_, reason) in enumerate(statuses) if reason is not None]
    if failures:
        raise _unpicklable(who, failures, error)
    return [size for size, _ in statuses]


def init_ranks(mpi_comm):
    """This process's place in ``mpi_comm`` and on its machine (every rank calls it together).

    Machines are told apart by MPI's processor name; they are numbered in the
    order of their lowest rank.

    Returns:
        list: ``[rank, intra_rank, intra_size, inter_rank, inter_size]``:
        the rank in ``mpi_comm``, the index and count of the processes on this
        machine, the index of this machine and the number of machines.
    """
    names = mpi_comm.allgather(_mpi().Get_processor_name())
    hosts = list(dict.fromkeys(names))
    mine = names[mpi_comm.rank]
    same = [r for r, n in enumerate(names) if n == mine]
    return [mpi_comm.rank, same.index(mpi_comm.rank), len(same), hosts.index(mine), len(hosts)]


class _BufferLengthError(ValueError, AssertionError):
    """A bad ``max_buf_len``: a ValueError, and the AssertionError ChainerMN raises."""


def chunked_bcast_obj(obj, mpi_comm, max_buf_len=_DEFAULT_MAX_BUF_LEN, root=0):
    """Broadcast the picklable ``obj`` of rank ``root`` over ``mpi_comm``; every rank returns it.

    The pickle travels in pieces of at most ``max_buf_len`` bytes, so that an
    object whose pickle exceeds MPI's message limit (:data:`INT_MAX`) still
    goes; the other ranks pass None for ``obj``.

    Args:
        obj: the object on ``root``; None elsewhere.
        mpi_comm: an mpi4py communicator.
        max_buf_len (int): the largest piece, in bytes: in ``[1, INT_MAX)``.
        root (int): the rank that has the object.

    Returns:
        ``root``'s object (on ``root``, ``obj`` itself).

    Raises:
        pickle.PicklingError: on every rank, when ``root`` cannot pickle ``obj``.
    """
    return _bcast_obj("chunked_bcast_obj", obj, mpi_comm, max_buf_len, root)


def _bcast_obj(who, obj, mpi_comm, max_buf_len, root):
    """:func:`chunked_bcast_obj`, its errors naming ``who``.

    The root pickles first and broadcasts the size, or the reason it could
    not pickle, so that every rank raises the same PicklingError then.
    """
    if not 0 < max_buf_len < INT_MAX:
        raise _BufferLengthError(
            f"{who}: max_buf_len must be in [1, {INT_MAX}), got {max_buf_len}"
        )
    error = None
    if mpi_comm.rank == root:
        pickled, error = _pickled(obj)
        status = (-1, _reason(error)) if error is not None else (len(pickled), None)
        length, reason = mpi_comm.bcast(status, root=root)
        payload = None if error is not None else numpy.frombuffer(pickled, numpy.uint8)
    else:
        length, reason = mpi_comm.bcast(None, root=root)
        payload = None if reason is not None else numpy.empty(length, numpy.uint8)
    if reason is not None:
        raise _unpicklable(who, [(root, reason)], error)
    for start in range(0, length, max_buf_len):
        mpi_comm.Bcast(payload[start : start + max_buf_len], root=root)
    return obj if mpi_comm.rank == root else pickle.loads(payload.tobytes())


def _check_finite(summed):
    """In debug mode, refuse a gradient sum holding NaN or infinity (the same on every rank)."""
    if config.debug and not bool(get_array_module(summed).isfinite(summed).all()):
        raise ValueError(
            "multi_node_mean_grad: the gradients diverged after the all-reduce: their sum "
            "over the ranks holds NaN or infinity (dbr.core.config.debug is on)"
        )


class CommunicatorBase:
    """The interface every communicator implements (ChainerMN's ``CommunicatorBase``).

    ``rank``/``size`` place this process among all of them; ``intra_*`` among
    those on the same machine, ``inter_*`` among the machines. Every
    collective must be called by every process of the communicator, in the
    same order.
    """

    def __init__(self):
        object.__setattr__(self, "_configs", {})
        object.__setattr__(self, "_within_config_scope", False)

    @property
    def within_config_scope(self):
        """Whether attributes set now are configuration entries (see :meth:`config_scope`)."""
        return getattr(self, "_within_config_scope", False)

    @contextlib.contextmanager
    def config_scope(self):
        """A scope in which every attribute set on the communicator is a configuration entry.

        A subclass declares its entries there (``self.batched_copy = True``);
        :meth:`set_config` and :meth:`get_config` then know them, and each
        stays readable as an attribute.
        """
        previous = self.within_config_scope
        object.__setattr__(self, "_within_config_scope", True)
        try:
            yield
        finally:
            object.__setattr__(self, "_within_config_scope", previous)

    def __setattr__(self, name, value):
        if self.within_config_scope:
            self._configs[name] = value
        super().__setattr__(name, value)

    def set_config(self, name, value=True, **kwargs):
        """Set the configuration entry ``name`` (only those a communicator knows)."""
        if name not in self._configs:
            raise ValueError(
                f"{type(self).__name__}.set_config: unknown name {name!r}; "
                f"expected one of {sorted(self._configs)}"
            )
        with self.config_scope():
            setattr(self, name, value)

    def get_config(self, name=None):
        """Return the configuration entry ``name``, or all of them as a dict."""
        if name is None:
            return dict(self._configs)
        if name not in self._configs:
            raise ValueError(
                f"{type(self).__name__}.get_config: unknown name {name!r}; "
                f"expected one of {sorted(self._configs)}"
            )
        return self._configs[name]

    def finalize(self):
        """Release what the communicator holds beyond MPI (NCCL communicators); idempotent."""

    def allreduce_grad(self, model, zero_fill=False):
        """Deprecated name of :meth:`multi_node_mean_grad`."""
        warnings.warn(
            "allreduce_grad is deprecated; use multi_node_mean_grad",
            DeprecationWarning,
            stacklevel=2,
        )
        self.multi_node_mean_grad(model, zero_fill)


class MpiCommunicatorBase(CommunicatorBase):
    """A communicator over an mpi4py communicator, with every collective of ChainerMN's.

    Array collectives take NumPy or CuPy arrays of int32, int64, float16,
    float32 or float64 (float16 travels as float32); the result is on the
    array module of the sender's input. Subclasses define how gradients are
    averaged (:meth:`multi_node_mean_grad`).
    """

    def __init__(self, mpi_comm):
        super().__init__()
        self.mpi_comm = mpi_comm
        with self.config_scope():
            self.batched_copy = True
        self._grad_chunk_bytes = _GRAD_CHUNK_BYTES
        self._grad_buffers = {}
        self._checked_layouts = weakref.WeakKeyDictionary()
        _, self._intra_rank, self._intra_size, self._inter_rank, self._inter_size = init_ranks(
            mpi_comm
        )

    @property
    def rank(self):
        """This process's index among all processes (0 .. size - 1)."""
        return self.mpi_comm.rank

    @property
    def size(self):
        """The number of processes."""
        return self.mpi_comm.size

    @property
    def intra_rank(self):
        """This process's index among the processes on its machine."""
        return self._intra_rank

    @property
    def intra_size(self):
        """The number of processes on this machine."""
        return self._intra_size

    @property
    def inter_rank(self):
        """The index of this process's machine."""
        return self._inter_rank

    @property
    def inter_size(self):
        """The number of machines."""
        return self._inter_size

    def split(self, color, key):
        """A communicator of the same kind over the processes that pass the same ``color``.

        ``key`` orders the ranks inside each new communicator.
        """
        return type(self)(mpi_comm=self.mpi_comm.Split(color, key))

    # -- arrays ---------------------------------------------------------------

    def send(self, data, dest, tag):
        """Send an array, or a tuple/list of arrays of one dtype, to rank ``dest``."""
        arrays = list(data) if isinstance(data, (tuple, list)) else [data]
        for array in arrays:
            _check_array("send", array)
        metas = [_Meta(a) for a in arrays]
        _check_same_dtype("send", metas)
        self.mpi_comm.send((isinstance(data, (tuple, list)), metas), dest=dest, tag=tag)
        for array in arrays:
            self.mpi_comm.Send(_wire(array), dest=dest, tag=tag)

    def recv(self, source, tag):
        """Receive what :meth:`send` sent from ``source``: an array or a tuple of them."""
        is_tuple, metas = self.mpi_comm.recv(source=source, tag=tag)
        out = []
        for meta in metas:
            wire = meta.empty_wire()
            self.mpi_comm.Recv(wire, source=source, tag=tag)
            out.append(meta.finish(wire))
        return tuple(out) if is_tuple else out[0]

    def bcast(self, x, root=0):
        """Broadcast the array ``x`` of rank ``root``; every rank returns it."""
        if self.rank == root:
            _check_array("bcast", x)
            meta = self.mpi_comm.bcast(_Meta(x), root=root)
            wire = _wire(x)
        else:
            meta = self.mpi_comm.bcast(None, root=root)
            wire = meta.empty_wire()
        self.mpi_comm.Bcast(wire, root=root)
        return x if self.rank == root else meta.finish(wire)

    def _gathered_layout(self, metas):
        counts = [int(numpy.prod(m.shape, dtype=numpy.int64)) for m in metas]
        return counts, _offsets(counts)

    def gather(self, x, root=0):
        """Gather every rank's array ``x`` (shapes may differ) to ``root``.

        Returns a tuple of ``size`` arrays on ``root``, None elsewhere.
        """
        _check_array("gather", x)
        metas = self.mpi_comm.gather(_Meta(x), root=root)
        wire = _wire(x).ravel()
        if self.rank != root:
            self.mpi_comm.Gatherv(wire, None, root=root)
            return None
        _check_same_dtype("gather", metas)
        counts, offsets = self._gathered_layout(metas)
        out = numpy.empty(sum(counts), dtype=wire.dtype)
        self.mpi_comm.Gatherv(wire, [out, counts, offsets, _mpi()._typedict[out.dtype.char]], root)
        return tuple(
            m.finish(out[o : o + c].reshape(m.shape))
            for m, c, o in zip(metas, counts, offsets, strict=True)
        )

    def allgather(self, x):
        """Every rank's array ``x`` (shapes may differ), as a tuple of ``size`` arrays."""
        _check_array("allgather", x)
        metas = self.mpi_comm.allgather(_Meta(x))
        _check_same_dtype("allgather", metas)
        counts, offsets = self._gathered_layout(metas)
        wire = _wire(x).ravel()
        out = numpy.empty(sum(counts), dtype=wire.dtype)
        self.mpi_comm.Allgatherv(wire, [out, counts, offsets, _mpi()._typedict[out.dtype.char]])
        mine = _Meta(x)
        return tuple(
            _like(out[o : o + c].reshape(m.shape).astype(m.dtype, copy=False), mine.xp())
            for m, c, o in zip(metas, counts, offsets, strict=True)
        )

    def alltoall(self, xs):
        """Send ``xs[i]`` to rank i; return the tuple of arrays received from every rank."""
        if len(xs) != self.size:
            raise ValueError(
                f"alltoall: xs must hold one array per rank ({self.size}), got {len(xs)}"
            )
        for x in xs:
            _check_array("alltoall", x)
        send_metas = [_Meta(x) for x in xs]
        _check_same_dtype("alltoall", send_metas)
        recv_metas = self.mpi_comm.alltoall(send_metas)
        _check_same_dtype("alltoall", recv_metas)
        wires = [_wire(x).ravel() for x in xs]
        scounts = [w.size for w in wires]
        sbuf = numpy.concatenate(wires) if wires else numpy.empty(0)
        rcounts, roffsets = self._gathered_layout(recv_metas)
        rbuf = numpy.empty(sum(rcounts), dtype=sbuf.dtype)
        mpi_type = _mpi()._typedict[sbuf.dtype.char]
        self.mpi_comm.Alltoallv(
            [sbuf, scounts, _offsets(scounts), mpi_type], [rbuf, rcounts, roffsets, mpi_type]
        )
        mine = send_metas[0]
        return tuple(
            _like(rbuf[o : o + c].reshape(m.shape).astype(m.dtype, copy=False), mine.xp())
            for m, c, o in zip(recv_metas, rcounts, roffsets, strict=True)
        )

    def scatter(self, xs, root=0):
        """Send ``xs[i]`` of rank ``root`` to rank i; every rank returns its own piece.

        ``xs`` is a tuple of ``size`` arrays (shapes may differ) or one array
        whose first axis has length ``size``; other ranks' ``xs`` is ignored.
        """
        if self.rank == root:
            pieces = list(xs) if isinstance(xs, (tuple, list)) else None
            if pieces is None:
                _check_array("scatter", xs)
                if xs.ndim == 0 or xs.shape[0] != self.size:
                    raise ValueError(
                        f"scatter: xs's first axis must have length {self.size} (the "
                        f"communicator size), got shape {tuple(xs.shape)}"
                    )
                pieces = [xs[i] for i in range(self.size)]
            elif len(pieces) != self.size:
                raise ValueError(
                    f"scatter: xs must hold one array per rank ({self.size}), got {len(pieces)}"
                )
            for p in pieces:
                _check_array("scatter", p)
            metas = [_Meta(p) for p in pieces]
            _check_same_dtype("scatter", metas)
            meta = self.mpi_comm.scatter(metas, root=root)
            wires = [_wire(p).ravel() for p in pieces]
            counts = [w.size for w in wires]
            sbuf = numpy.concatenate(wires)
            out = meta.empty_wire()
            self.mpi_comm.Scatterv(
                [sbuf, counts, _offsets(counts), _mpi()._typedict[sbuf.dtype.char]],
                out.reshape(-1),
                root=root,
            )
        else:
            meta = self.mpi_comm.scatter(None, root=root)
            out = meta.empty_wire()
            self.mpi_comm.Scatterv(None, out.reshape(-1), root=root)
        return meta.finish(out)

    def allreduce(self, x):
        """The elementwise sum of every rank's array ``x`` (same shape and dtype everywhere)."""
        _check_array("allreduce", x)
        wire = _wire(x)
        out = numpy.empty_like(wire)
        self.mpi_comm.Allreduce(wire, out)
        return _Meta(x).finish(out)

    # -- objects --------------------------------------------------------------

    # Each object collective pickles first and tells every rank whether that
    # worked before any object moves, so that an object that cannot be
    # pickled raises the same PicklingError on every rank that takes part,
    # instead of one rank raising while the others wait for ever.

    def send_obj(self, obj, dest, tag=0):
        """Send a picklable object to rank ``dest``.

        Raises:
            pickle.PicklingError: ``obj`` cannot be pickled; rank ``dest``'s
                :meth:`recv_obj` raises it too.
        """
        payload, error = _pickled(obj)
        if error is None:
            self.mpi_comm.send((payload, None), dest=dest, tag=tag)
            return
        message = str(_unpicklable(f"send_obj to rank {dest}", [(self.rank, _reason(error))]))
        self.mpi_comm.send((None, message), dest=dest, tag=tag)
        raise pickle.PicklingError(message) from error

    def recv_obj(self, source, status=None, tag=None):
        """Receive an object sent by :meth:`send_obj` from ``source`` (any tag by default).

        Raises:
            pickle.PicklingError: the sender could not pickle its object.
        """
        if tag is None:
            tag = _mpi().ANY_TAG
        payload, message = self.mpi_comm.recv(source=source, status=status, tag=tag)
        if message is not None:
            raise pickle.PicklingError(f"recv_obj: {message}")
        return pickle.loads(payload)

    def bcast_obj(self, obj, max_buf_len=_DEFAULT_MAX_BUF_LEN, root=0):
        """Broadcast a picklable object of ``root``, in pieces of at most ``max_buf_len`` bytes.

        Raises:
            pickle.PicklingError: on every rank, when ``root`` cannot pickle ``obj``.
        """
        return _bcast_obj(
            "bcast_obj", obj if self.rank == root else None, self.mpi_comm, max_buf_len, root
        )

    def gather_obj(self, obj, root=0):
        """A list of every rank's object on ``root``; None elsewhere.

        Raises:
            pickle.PicklingError: on every rank, naming each rank whose object
                cannot be pickled.
        """
        payload, error = _pickled(obj)
        sizes = _exchange_status(self.mpi_comm, "gather_obj", payload, error)
        mine = numpy.frombuffer(payload, numpy.uint8)
        if self.rank != root:
            self.mpi_comm.Gatherv(mine, None, root=root)
            return None
        received = numpy.empty(sum(sizes), numpy.uint8)
        self.mpi_comm.Gatherv(mine, [received, sizes, _offsets(sizes), _mpi().BYTE], root=root)
        return _loads_all(received, sizes)

    def allreduce_obj(self, obj):
        """The sum (``+``) of every rank's object, on every rank.

        Every rank adds the objects in rank order, so that every rank holds
        the same sum (or raises the same error).

        Raises:
            pickle.PicklingError: on every rank, naming each rank whose object
                cannot be pickled.
            TypeError: on every rank, when two ranks' objects cannot be added.
        """
        payload, error = _pickled(obj)
        sizes = _exchange_status(self.mpi_comm, "allreduce_obj", payload, error)
        received = numpy.empty(sum(sizes), numpy.uint8)
        self.mpi_comm.Allgatherv(
            numpy.frombuffer(payload, numpy.uint8), [received, sizes, _offsets(sizes), _mpi().BYTE]
        )
        values = _loads_all(received, sizes)
        total = values[0]
        for rank, value in enumerate(values[1:], start=1):
            try:
                total = total + value
            except TypeError as add_error:
                raise TypeError(
                    f"allreduce_obj: cannot add rank {rank}'s object ({type(value).__name__}) "
                    f"to the sum of the ranks before it ({type(total).__name__}): {add_error}"
                ) from add_error
        return total

    # -- models ---------------------------------------------------------------

    def _check_same_parameters(self, who, model, named_arrays):
        """Raise ValueError on every rank unless every rank passes the same parameters.

        ``named_arrays`` is this rank's ``(name, array)`` list, in name order;
        the ranks compare a digest of the names, shapes and dtypes, and only
        when the digests differ the lists themselves, to name the first
        parameter that differs and each rank's shape. A model is checked
        again only when its list changes (a lazy parameter initialised).
        """
        layout = _layout_of(named_arrays)
        try:
            checked = self._checked_layouts.setdefault(model, set())
        except TypeError:
            checked = set()
        if layout in checked:
            return
        mine = _layout_digest(layout)
        every = numpy.empty((self.size, mine.size), numpy.uint8)
        self.mpi_comm.Allgather(mine, every)
        if not (every == mine).all():
            raise ValueError(_layout_mismatch(who, self.mpi_comm.allgather(layout)))
        checked.add(layout)

    def bcast_data(self, model):
        """Overwrite every initialised parameter of ``model`` with rank 0's values.

        Raises:
            ValueError: on every rank, before anything moves, when the ranks'
                initialised parameters differ in name, shape or dtype (the
                first such parameter and each rank's shape are named).
        """
        named = [
            (name, p)
            for name, p in sorted(model.namedparams(), key=lambda item: item[0])
            if p.array is not None
        ]
        self._check_same_parameters("bcast_data", model, [(k, p.array) for k, p in named])
        params = [p for _, p in named]
        if not params:
            return
        xp = get_array_module(params[0].array)
        packed = _pack(params, "array", xp)
        for key in sorted(packed, key=str):
            buffer, members = packed[key]
            wire = _wire(buffer)
            self.mpi_comm.Bcast(wire, root=0)
            packed[key] = (_like(wire.astype(key, copy=False), xp), members)
        _unpack(packed, "array")

    def multi_node_mean_grad(self, model, zero_fill=False):
        """Replace every parameter's gradient by its mean over the ranks, in place.

        The mean is the sum over the ranks times ``1 / size``, in each
        gradient's dtype (float16 is summed and scaled in float32). The
        gradients are packed into one buffer per dtype (float16 in a
        float32 one), summed with one MPI all-reduce per 8 MiB chunk of it and
        copied back into the same gradient arrays, so that a reference to
        ``param.grad`` taken before the call sees the mean. Uninitialised
        parameters are skipped; an initialised one with no gradient gets
        zeros when ``zero_fill``, and is skipped otherwise (every rank must
        then skip the same ones).

        The packing buffer of NumPy gradients is kept between calls (at
        most 8 MiB per dtype); the gradients never alias it. In debug mode
        (``dbr.core.config.debug``), a sum holding NaN or infinity raises
        ValueError on every rank.

        Raises:
            ValueError: on every rank, before any gradient changes, when the
                ranks' exchanged gradients differ in parameter name, shape or
                dtype (the first such parameter and each rank's shape are
                named; "absent" is a parameter that rank does not exchange).
        """
        named = _grad_params(model, zero_fill)
        self._check_same_parameters("multi_node_mean_grad", model, _grad_arrays(named))
        params = _fill_grads(named)
        if params:
            self._sum_grads(params, 1.0 / self.size)

    def _sum_in_place(self, chunk):
        """Sum the contiguous 1-d buffer ``chunk`` over the ranks, in place."""
        host = _to_host(chunk)
        self.mpi_comm.Allreduce(_mpi().IN_PLACE, host)
        if host is not chunk:
            chunk[...] = _like(host, get_array_module(chunk))

    def _grad_buffer(self, xp, dtype, length):
        """A 1-d buffer of at least ``length`` values; NumPy's is kept for the next call."""
        if xp is not numpy:
            # CuPy's memory pool already makes a fresh device buffer cheap.
            return xp.empty(length, dtype=dtype)
        buffer = self._grad_buffers.get(dtype)
        if buffer is None or buffer.size < length:
            buffer = numpy.empty(length, dtype=dtype)
            self._grad_buffers[dtype] = buffer
        return buffer

    def _sum_grads(self, params, scale):
        """Sum ``params``' gradients over the ranks (times ``scale`` unless None), in place.

        One dtype at a time, in the same order on every rank: the gradients
        are packed back to back into chunks of ``_grad_chunk_bytes``, each
        chunk is summed with :meth:`_sum_in_place` and its pieces are
        written back (scaled) into the gradient arrays.
        """
        xp = get_array_module(params[0].grad)
        groups = {}
        for param in params:
            groups.setdefault(numpy.dtype(param.grad.dtype), []).append(param.grad)
        for dtype in sorted(groups, key=str):
            wire_dtype = numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype
            flats, write_back = [], []
            for grad in groups[dtype]:
                if grad.flags.c_contiguous:
                    flats.append(grad.reshape(-1))
                else:
                    flat = xp.ascontiguousarray(grad).reshape(-1)
                    flats.append(flat)
                    write_back.append((grad, flat))
            total = sum(flat.size for flat in flats)
            length = max(1, min(total, self._grad_chunk_bytes // wire_dtype.itemsize))
            buffer = self._grad_buffer(xp, wire_dtype, length)
            pieces, filled = [], 0
            for flat in flats:
                start = 0
                while start < flat.size:
                    n = min(flat.size - start, length - filled)
                    buffer[filled : filled + n] = flat[start : start + n]
                    pieces.append((flat[start : start + n], filled))
                    filled += n
                    start += n
                    if filled == length:
                        self._sum_chunk(xp, buffer[:filled], pieces, scale)
                        pieces, filled = [], 0
            if filled:
                self._sum_chunk(xp, buffer[:filled], pieces, scale)
            for grad, flat in write_back:
                grad[...] = flat.reshape(grad.shape)

    def _sum_chunk(self, xp, chunk, pieces, scale):
        """Sum ``chunk`` over the ranks; copy each ``(target, offset)`` piece back, scaled."""
        self._sum_in_place(chunk)
        _check_finite(chunk)
        for target, offset in pieces:
            piece = chunk[offset : offset + target.size]
            if scale is None:
                target[...] = piece
            else:
                xp.multiply(piece, scale, out=target)

    def _start_mean_grad(self, model, named):
        """Start a non-blocking sum of the gradients of ``named`` (``model``'s).

        ``named`` is :func:`_grad_params`'s choice; returns what
        :meth:`_finish_mean_grad` finishes, or None when there is nothing to sum.
        """
        self._check_same_parameters("multi_node_mean_grad", model, _grad_arrays(named))
        params = _fill_grads(named)
        if not params:
            return None
        xp = get_array_module(params[0].grad)
        packed = _pack(params, "grad", xp)
        pending = []
        for key in sorted(packed, key=str):
            buffer, members = packed[key]
            wire = _wire(buffer)
            pending.append((key, wire, members, self.mpi_comm.Iallreduce(_mpi().IN_PLACE, wire)))
        return xp, pending

    def _finish_mean_grad(self, started):
        """Wait for :meth:`_start_mean_grad`'s sums; return ``{dtype: (mean buffer, params)}``."""
        xp, pending = started
        packed = {}
        for key, wire, members, request in pending:
            request.Wait()
            wire *= 1.0 / self.size
            packed[key] = (_like(wire.astype(key, copy=False), xp), members)
        return packed


class NaiveCommunicator(MpiCommunicatorBase):
    """Gradients averaged over MPI, one packed buffer per dtype (CuPy arrays via the host)."""


class FlatCommunicator(MpiCommunicatorBase):
    """As :class:`NaiveCommunicator`; ChainerMN's name for its packed-buffer communicator."""


class DummyCommunicator(MpiCommunicatorBase):
    """Packs gradients but does not reduce them: for measuring everything but the exchange."""

    def _sum_in_place(self, chunk):
        """Leave ``chunk`` as it is: no exchange."""

    def multi_node_mean_grad(self, model, zero_fill=False):
        """Pack and unpack the gradients without communicating (they stay this rank's)."""
        params = _fill_grads(_grad_params(model, zero_fill))
        if params:
            self._sum_grads(params, None)


class PureNcclCommunicator(MpiCommunicatorBase):
    """Gradients of CuPy arrays averaged with NCCL; everything else over MPI.

    ``allreduce_grad_dtype`` (config entry, float16/float32 or None) is the
    dtype the gradients travel in; None keeps each gradient's own dtype.
    Each process must have selected its GPU (``intra_rank`` is the usual
    choice) before the first gradient exchange.
    """

    def __init__(self, mpi_comm):
        super().__init__(mpi_comm)
        with self.config_scope():
            self.allreduce_grad_dtype = None
        self._nccl = None

    def set_config(self, name, value=True, **kwargs):
        """As :meth:`CommunicatorBase.set_config`; ``allreduce_grad_dtype`` is checked."""
        if name == "allreduce_grad_dtype" and value is not None:
            value = numpy.dtype(value)
            if value not in (numpy.dtype(numpy.float16), numpy.dtype(numpy.float32)):
                raise ValueError(
                    f"PureNcclCommunicator: allreduce_grad_dtype must be float16, float32 "
                    f"or None, got {value}"
                )
        super().set_config(name, value, **kwargs)

    def _nccl_comm(self):
        if self._nccl is None:
            from dbr.gpu import nccl

            comm_id = nccl.get_unique_id() if self.rank == 0 else None
            comm_id = self.mpi_comm.bcast(comm_id, root=0)
            self._nccl = nccl.NcclCommunicator(self.size, comm_id, self.rank)
        return self._nccl

    def multi_node_mean_grad(self, model, zero_fill=False):
        """Average the gradients with one NCCL all-reduce per packed buffer."""
        named = _grad_params(model, zero_fill)
        if not named or get_array_module(named[0][1].array) is numpy:
            super().multi_node_mean_grad(model, zero_fill)
            return
        self._check_same_parameters("multi_node_mean_grad", model, _grad_arrays(named))
        params = _fill_grads(named)
        xp = get_array_module(params[0].grad)
        dtype = self.allreduce_grad_dtype
        packed = _pack(params, "grad", xp, dtype)
        comm = self._nccl_comm()
        for buffer, _ in packed.values():
            comm.all_reduce(buffer)
            _check_finite(buffer)
            buffer *= 1.0 / self.size
        _unpack(packed, "grad")

    def finalize(self):
        """Destroy the NCCL communicator (after a barrier)."""
        if self._nccl is not None:
            self.mpi_comm.Barrier()
            self._nccl.destroy()
            self._nccl = None


NonCudaAwareCommunicator = PureNcclCommunicator
"""ChainerMN's NCCL-within-machine communicator, served by :class:`PureNcclCommunicator`."""

_CLASSES = {
    "naive": NaiveCommunicator,
    "flat": FlatCommunicator,
    "pure_nccl": PureNcclCommunicator,
    "dummy": DummyCommunicator,
}


def create_communicator(communicator_name="pure_nccl", mpi_comm=None, **kwargs):
    """Create a communicator over ``mpi_comm`` (default ``MPI.COMM_WORLD``).

    Args:
        communicator_name (str): ``'naive'`` or ``'flat'`` (MPI; CPU, or GPU
            through the host), ``'pure_nccl'`` (NCCL for gradients of CuPy
            arrays; needs ``dbr-distributed[gpu]``) or ``'dummy'`` (no
            gradient exchange). ``'non_cuda_aware'`` is served by
            ``'pure_nccl'`` with a warning.
        mpi_comm: an mpi4py communicator.
        allreduce_grad_dtype: ``'pure_nccl'`` only: the dtype gradients
            travel in (float16 or float32; None keeps their own).
        batched_copy (bool): accepted for compatibility; packing is always batched.

    Returns:
        MpiCommunicatorBase: the communicator.
    """
    allowed = {"allreduce_grad_dtype", "batched_copy"}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        raise TypeError(
            f"create_communicator: unexpected keyword arguments {unknown}; "
            f"expected some of {sorted(allowed)}"
        )
    if communicator_name not in _NAMES:
        raise ValueError(
            f"create_communicator: unknown communicator_name {communicator_name!r}; "
            f"expected one of {list(_NAMES)}"
        )
    if communicator_name == "non_cuda_aware":
        warnings.warn(
            "create_communicator: 'non_cuda_aware' is not implemented in dbr.distributed; "
            "using 'pure_nccl', its nearest equivalent",
            UserWarning,
            stacklevel=2,
        )
        communicator_name = "pure_nccl"
    grad_dtype = kwargs.get("allreduce_grad_dtype")
    if grad_dtype is not None and communicator_name != "pure_nccl":
        raise ValueError(
            f"create_communicator: allreduce_grad_dtype is only for 'pure_nccl', "
            f"got communicator_name={communicator_name!r}"
        )
    if mpi_comm is None:
        mpi_comm = _mpi().COMM_WORLD
    comm = _CLASSES[communicator_name](mpi_comm)
    if communicator_name == "pure_nccl":
        comm.set_config("allreduce_grad_dtype", grad_dtype)
    comm.set_config("batched_copy", kwargs.get("batched_copy", True))
    return comm
