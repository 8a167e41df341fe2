"""An NCCL communicator for the GPUs of one machine, over ``cupy.cuda.nccl``.

One process drives one GPU (one rank). Rank 0 makes an id with
:func:`get_unique_id` and hands it to the others (through a pipe, say);
each then builds ``NcclCommunicator(n_ranks, comm_id, rank)`` with its own
GPU current. The collectives work in place on C-contiguous CuPy arrays of
float16, float32, float64, int32 or int64, on the current CUDA stream, and
must be called by every rank in the same order. This is the interface
``dbr.training``'s MultiprocessParallelUpdater uses.
"""

import warnings

import numpy

from dbr.gpu import _cupy

__all__ = ["NcclCommunicator", "available", "get_unique_id", "nccl_type_name"]

_NCCL_TYPE_NAMES = {
    numpy.dtype(numpy.float16): "NCCL_FLOAT16",
    numpy.dtype(numpy.float32): "NCCL_FLOAT32",
    numpy.dtype(numpy.float64): "NCCL_FLOAT64",
    numpy.dtype(numpy.int32): "NCCL_INT32",
    numpy.dtype(numpy.int64): "NCCL_INT64",
}
_NCCL_HINT = "install NCCL for your CUDA version: pip install nvidia-nccl-cu12 (or -cu13)"
_probed = None


def _load():
    # CuPy warns instead of raising when libnccl cannot be loaded.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            from cupy.cuda import nccl
        except Exception as e:  # a broken install must not break available()
            return None, f"{type(e).__name__}: {e}"
    if nccl.available:
        return nccl, None
    said = " ".join(" ".join(str(w.message).split()) for w in caught)
    return None, said or "cupy.cuda.nccl says NCCL is unavailable"


def _probe():
    """Return ``(cupy.cuda.nccl or None, why not or None)``, loading NCCL once."""
    global _probed
    if _probed is None:
        if not _cupy.available:
            _probed = None, _cupy.unavailable_reason
        else:
            nccl, why = _load()
            _probed = nccl, None if why is None else f"CuPy cannot load NCCL ({why}); {_NCCL_HINT}"
    return _probed


def available():
    """Whether NCCL can be used: CuPy, a GPU and the NCCL library are there. Never raises."""
    try:
        return _probe()[0] is not None
    except Exception:
        return False


def _require(who):
    _cupy.require(who)
    nccl, reason = _probe()
    if nccl is None:
        raise RuntimeError(f"{who} needs NCCL: {reason}")
    return nccl


def nccl_type_name(dtype):
    """Return the name of NCCL's data type for ``dtype`` (e.g. ``'NCCL_FLOAT32'``).

    Raises:
        TypeError: NCCL collectives here support float16, float32, float64,
            int32 and int64 only.
    """
    name = _NCCL_TYPE_NAMES.get(numpy.dtype(dtype))
    if name is None:
        supported = ", ".join(str(d) for d in _NCCL_TYPE_NAMES)
        raise TypeError(
            f"NCCL collectives do not support dtype {numpy.dtype(dtype)}; use one of {supported}"
        )
    return name


def get_unique_id():
    """Return a new NCCL unique id (a tuple of ints) for :class:`NcclCommunicator`.

    Raises:
        RuntimeError: CuPy, a GPU or NCCL is missing.
    """
    return _require("get_unique_id()").get_unique_id()


class NcclCommunicator:
    """This process's rank in a group of ``n_ranks`` GPUs that sum and broadcast arrays.

    The current GPU when it is built is the rank's GPU; every array given to
    it must live there. Building blocks until all ``n_ranks`` ranks have
    joined with the same ``comm_id``.

    Args:
        n_ranks (int): the number of ranks (processes, one GPU each), ``>= 1``.
        comm_id (tuple): the id from :func:`get_unique_id`, the same in every rank.
        rank (int): this process's rank, ``0 <= rank < n_ranks``.

    Raises:
        ValueError: ``n_ranks`` or ``rank`` is out of range.
        RuntimeError: CuPy, a GPU or NCCL is missing.
    """

    def __init__(self, n_ranks, comm_id, rank):
        if n_ranks < 1 or not 0 <= rank < n_ranks:
            raise ValueError(
                f"NcclCommunicator: need n_ranks >= 1 and 0 <= rank < n_ranks, "
                f"got n_ranks={n_ranks!r}, rank={rank!r}"
            )
        self._nccl = _require("NcclCommunicator")
        self._cupy = _cupy.cupy
        self.n_ranks = n_ranks
        self.rank = rank
        self._comm = self._nccl.NcclCommunicator(n_ranks, comm_id, rank)
        self.device_id = self._comm.device_id()

    def _check_root(self, root, who):
        if not 0 <= root < self.n_ranks:
            raise ValueError(
                f"NcclCommunicator.{who}: root must be in [0, {self.n_ranks}), got {root!r}"
            )

    def _buffer(self, array, who):
        if self._comm is None:
            raise RuntimeError(f"NcclCommunicator.{who}: the communicator was destroyed")
        if not isinstance(array, self._cupy.ndarray):
            raise TypeError(
                f"NcclCommunicator.{who}: expected a CuPy array, got {type(array).__name__}"
            )
        if array.device.id != self.device_id:
            raise ValueError(
                f"NcclCommunicator.{who}: the array is on GPU {array.device.id}, "
                f"but this rank's GPU is {self.device_id}"
            )
        if not array.flags.c_contiguous:
            raise ValueError(
                f"NcclCommunicator.{who}: the array must be C-contiguous to work in place"
            )
        datatype = getattr(self._nccl, nccl_type_name(array.dtype))
        stream = self._cupy.cuda.get_current_stream().ptr
        return array.data.ptr, array.size, datatype, stream

    def all_reduce(self, array):
        """Replace ``array`` in every rank by its sum over all ranks (same shape and dtype)."""
        ptr, count, datatype, stream = self._buffer(array, "all_reduce")
        self._comm.allReduce(ptr, ptr, count, datatype, self._nccl.NCCL_SUM, stream)

    def reduce(self, array, root=0):
        """Replace ``array`` in rank ``root`` by its sum over all ranks; others keep theirs."""
        self._check_root(root, "reduce")
        ptr, count, datatype, stream = self._buffer(array, "reduce")
        self._comm.reduce(ptr, ptr, count, datatype, self._nccl.NCCL_SUM, root, stream)

    def bcast(self, array, root=0):
        """Replace ``array`` in every rank by rank ``root``'s (same shape and dtype everywhere)."""
        self._check_root(root, "bcast")
        ptr, count, datatype, stream = self._buffer(array, "bcast")
        self._comm.bcast(ptr, count, datatype, root, stream)

    def destroy(self):
        """Free the communicator; later collectives raise RuntimeError. Idempotent."""
        if self._comm is not None:
            self._comm.destroy()
            self._comm = None
