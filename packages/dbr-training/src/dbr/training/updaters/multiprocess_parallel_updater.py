"""MultiprocessParallelUpdater: one process per GPU, gradients summed through NCCL.

The CUDA side (devices ``'@cupy:N'``, the NCCL communicator) lives in
``dbr-gpu`` (issue 8), which this module imports only when the updater is
constructed, never at import time. It uses this part of ``dbr.gpu.nccl``:
``available()``, ``get_unique_id()`` and ``NcclCommunicator(n_ranks,
comm_id, rank)`` with the in-place array collectives ``reduce(array,
root=0)`` (sum), ``bcast(array, root=0)`` and ``destroy()``.

Workers are started with the ``spawn`` method: CUDA cannot be used in a
child forked from a process that has initialised it, and importing dbr.gpu
does (it counts the GPUs). The model, iterators and converter given to the
updater must therefore be picklable, and the script that runs it must guard
its entry point with ``if __name__ == "__main__":``.
"""

import importlib
import importlib.util
import multiprocessing
import warnings

import numpy

from dbr.core import Reporter, backend
from dbr.core.utils import docstring_tail
from dbr.datasets import call_converter, concat_examples
from dbr.training.updaters.standard_updater import StandardUpdater

_NEEDS_GPUS = (
    "MultiprocessParallelUpdater needs CUDA GPUs with NCCL: it runs one process per GPU "
    "and sums gradients through the NCCL communicator of dbr-gpu (issue 8)"
)


def _nccl_module():
    """Return ``dbr.gpu.nccl`` if dbr-gpu is installed, else None (importing nothing)."""
    if importlib.util.find_spec("dbr.gpu") is None:
        return None
    return importlib.import_module("dbr.gpu.nccl")


def _calc_loss(model, in_arrays):
    if isinstance(in_arrays, tuple):
        return model(*in_arrays)
    if isinstance(in_arrays, dict):
        return model(**in_arrays)
    return model(in_arrays)


def _grouped_by_dtype(arrays):
    groups = {}
    for array in arrays:
        groups.setdefault(array.dtype, []).append(array)
    return list(groups.values())


def _all_reduce_to_root(comm, arrays, collective, unpack):
    """Pack arrays of each dtype into one buffer, run ``collective`` on it and, when
    ``unpack`` (the ranks whose buffer the collective changed), copy it back."""
    for group in _grouped_by_dtype(arrays):
        xp = backend.get_array_module(group[0])
        flat = xp.concatenate([a.ravel() for a in group])
        collective(flat, root=0)
        if not unpack:
            continue
        offset = 0
        for array in group:
            array[...] = flat[offset : offset + array.size].reshape(array.shape)
            offset += array.size


def _grads(model):
    grads = []
    for param in model.params(include_uninit=False):
        if param.grad is None:
            param.grad = param.xp.zeros_like(param.array)
        grads.append(param.grad)
    return grads


def _arrays(model):
    return [param.array for param in model.params(include_uninit=False)]


def _packed_params(who, link):
    """The initialized, non-empty parameters of ``link`` in the order of their sorted names."""
    if link.xp is numpy:
        raise RuntimeError(
            f"{who}: works only on a GPU, but the parameters of the "
            f"{type(link).__name__} are NumPy arrays; move it with link.to_device('@cupy:0')"
        )
    named = sorted(link.namedparams(), key=lambda pair: pair[0])
    return [param for _, param in named if param.array is not None and param.size]


def _gather(who, link, attribute):
    params = _packed_params(who, link)
    xp = link.xp
    parts = []
    for param in params:
        value = getattr(param, attribute)
        if value is None:
            parts.append(xp.zeros(param.size, numpy.float32))
        else:
            parts.append(value.ravel().astype(numpy.float32, copy=False))
    if not parts:
        return xp.zeros(0, numpy.float32)
    return xp.concatenate(parts)


def _scatter(who, link, array, attribute):
    params = _packed_params(who, link)
    total = sum(param.size for param in params)
    if array.ndim != 1 or array.size != total:
        raise ValueError(
            f"{who}: expected a 1-d array of the {total} values of the parameters of the "
            f"{type(link).__name__}, got shape {tuple(array.shape)}"
        )
    offset = 0
    for param in params:
        chunk = array[offset : offset + param.size].reshape(param.shape)
        offset += param.size
        if getattr(param, attribute) is None:
            setattr(param, attribute, chunk.astype(param.dtype))
        else:
            getattr(param, attribute)[...] = chunk


_GATHER_DOC = """
    Args:
        link (~dbr.core.Link): a link whose parameters are on a GPU.

    Returns:
        cupy.ndarray: a 1-d float32 array.

    Raises:
        RuntimeError: the parameters are on the CPU.
"""


@docstring_tail(_GATHER_DOC)
def gather_grads(link):
    """Return the gradients of ``link``'s parameters packed into one float32 GPU array.

    The parameters are taken in the order of their sorted names (as
    ``link.namedparams()`` names them), skipping uninitialized and empty
    ones; a parameter without a gradient contributes zeros. The packed array
    is what :func:`scatter_grads` unpacks, e.g. into a copy of the model.
    """
    return _gather("gather_grads", link, "grad")


@docstring_tail(_GATHER_DOC)
def gather_params(link):
    """Return the values of ``link``'s parameters packed into one float32 GPU array.

    The order and the parameters taken are as in :func:`gather_grads`; the
    packed array is what :func:`scatter_params` unpacks.
    """
    return _gather("gather_params", link, "array")


def scatter_grads(link, array):
    """Unpack ``array`` (from :func:`gather_grads`) into the gradients of ``link``'s parameters.

    Each value is cast to its parameter's dtype; a parameter without a
    gradient gets a new one.

    Args:
        link (~dbr.core.Link): a link whose parameters are on a GPU, with the
            same parameter names and shapes as the gathered one.
        array (cupy.ndarray): the packed 1-d array.

    Raises:
        RuntimeError: the parameters are on the CPU.
        ValueError: ``array`` does not hold exactly the parameters' values.
    """
    _scatter("scatter_grads", link, array, "grad")


def scatter_params(link, array):
    """Unpack ``array`` (from :func:`gather_params`) into the values of ``link``'s parameters.

    The parameters' arrays are written in place, each value cast to its
    parameter's dtype.

    Args:
        link (~dbr.core.Link): as in :func:`scatter_grads`.
        array (cupy.ndarray): the packed 1-d array.

    Raises:
        RuntimeError: the parameters are on the CPU.
        ValueError: ``array`` does not hold exactly the parameters' values.
    """
    _scatter("scatter_params", link, array, "array")


_SPAWN = multiprocessing.get_context("spawn")


class _Worker(_SPAWN.Process):
    """A worker process: computes gradients on its own device for its own iterator."""

    def __init__(self, rank, pipe, master):
        super().__init__()
        self.rank = rank
        self.pipe = pipe
        self.converter = master.converter
        self.model = master._master
        # A name, not the Device: the child resolves it after importing dbr.gpu itself.
        self.device_name = master._devices[rank].name
        self.iterator = master._mpu_iterators[rank]
        self.n_devices = len(master._devices)

    def run(self):
        nccl = _nccl_module()
        device = backend.get_device(self.device_name)
        device.use()
        _, comm_id = self.pipe.recv()
        comm = nccl.NcclCommunicator(self.n_devices, comm_id, self.rank)
        model = self.model.to_device(device)
        reporter = Reporter()
        reporter.add_observer("main", model)
        reporter.add_observers("main", model.namedlinks(skipself=True))
        while True:
            job, _ = self.pipe.recv()
            if job == "finalize":
                comm.destroy()
                break
            model.cleargrads()
            batch = call_converter(self.converter, self.iterator.next(), device)
            with reporter.scope({}):
                loss = _calc_loss(model, batch)
            model.cleargrads()
            loss.backward()
            del loss
            _all_reduce_to_root(comm, _grads(model), comm.reduce, unpack=False)
            model.cleargrads()
            _all_reduce_to_root(comm, _arrays(model), comm.bcast, unpack=True)


class MultiprocessParallelUpdater(StandardUpdater):
    """Data-parallel updater with one process per GPU.

    Each device has its own iterator (give them disjoint parts of the
    dataset, e.g. with ``dbr.datasets.split_dataset_n_random``). At each
    iteration every process computes the loss of its batch, the gradients are
    summed onto the main device through NCCL, the main optimizer updates the
    main model and the parameters are broadcast back. Because gradients are
    summed, the optimizer's ``lr`` (or ``eps`` for Adam, AdaGrad, RMSprop,
    RMSpropGraves and AdaDelta) is rescaled for the larger effective batch, with
    a warning, as Chainer does.

    Args:
        iterators (list): one iterator per device; the first is the main one.
        optimizer: the optimizer of the main model.
        converter: called as ``converter(batch, device)``; default
            :func:`~dbr.datasets.concat_examples`.
        devices: a list of GPU devices (``'@cupy:0'``, ...; the first is the
            main one) or a dict of them with a ``'main'`` entry.
        auto_new_epoch (bool): as in :class:`StandardUpdater`.

    Raises:
        RuntimeError: dbr-gpu with NCCL is not available (CUDA GPUs are needed).
        ValueError: the iterators and devices do not match.
    """

    def __init__(
        self,
        iterators,
        optimizer,
        converter=concat_examples,
        devices=None,
        auto_new_epoch=True,
    ):
        who = type(self).__name__
        if not isinstance(iterators, (list, tuple)) or not iterators:
            raise ValueError(f"{who}: iterators must be a non-empty list, got {iterators!r}")
        if isinstance(devices, dict):
            if "main" not in devices:
                raise ValueError(f"{who}: a dict of devices must have a 'main' entry")
            devices = [devices["main"]] + [d for k, d in devices.items() if k != "main"]
        elif isinstance(devices, (list, tuple)):
            devices = list(devices)
        else:
            raise ValueError(
                f"{who}: devices must be a list or a dict of GPU devices, got {devices!r}"
            )
        if any(device is None for device in devices):
            raise ValueError(f"{who}: GPU devices must be specified, got {devices!r}")
        if len(iterators) != len(devices):
            raise ValueError(
                f"{who}: one iterator per device is needed, got {len(iterators)} iterators "
                f"for {len(devices)} devices"
            )
        sizes = {len(it.dataset) for it in iterators if hasattr(it, "dataset")}
        if len(sizes) > 1:
            raise ValueError(
                f"{who}: the iterators' datasets must have the same length, got {sorted(sizes)}"
            )
        nccl = _nccl_module()
        if nccl is None:
            raise RuntimeError(f"{_NEEDS_GPUS}; dbr-gpu is not installed")
        if not nccl.available():
            raise RuntimeError(f"{_NEEDS_GPUS}; NCCL is not available on this machine")

        devices = [backend.get_device(device) for device in devices]
        n = len(devices)
        name = type(optimizer).__name__
        if name in ("Adam", "AdaGrad", "RMSprop"):
            optimizer.eps *= n
            warnings.warn(f"optimizer.eps is changed to {optimizer.eps} by {who}", stacklevel=2)
        elif name in ("RMSpropGraves", "AdaDelta"):
            optimizer.eps *= n**2
            warnings.warn(f"optimizer.eps is changed to {optimizer.eps} by {who}", stacklevel=2)
        elif hasattr(optimizer, "lr"):
            optimizer.lr /= n
            warnings.warn(f"optimizer.lr is changed to {optimizer.lr} by {who}", stacklevel=2)

        super().__init__(
            iterators[0], optimizer, converter=converter, auto_new_epoch=auto_new_epoch
        )
        self._master = optimizer.target
        self._devices = devices
        self._mpu_iterators = list(iterators)
        self._initialized = False
        self._pipes = []
        self._workers = []
        self.comm = None

    @staticmethod
    def available():
        """Whether dbr-gpu is installed and NCCL can be used (False without GPUs)."""
        nccl = _nccl_module()
        return bool(nccl is not None and nccl.available())

    def _send_message(self, message):
        for pipe in self._pipes:
            pipe.send(message)

    def setup_workers(self):
        """Start the worker processes and the NCCL communicator (once)."""
        if self._initialized:
            return
        self._initialized = True
        self._master.cleargrads()
        for rank in range(1, len(self._devices)):
            pipe, worker_end = _SPAWN.Pipe()
            worker = _Worker(rank, worker_end, self)
            worker.start()
            self._workers.append(worker)
            self._pipes.append(pipe)
        main_device = self._devices[0]
        main_device.use()
        self._master.to_device(main_device)
        if len(self._devices) > 1:
            nccl = _nccl_module()
            comm_id = nccl.get_unique_id()
            self._send_message(("set comm_id", comm_id))
            self.comm = nccl.NcclCommunicator(len(self._devices), comm_id, 0)

    def update_core(self):
        """One synchronous data-parallel step over all devices."""
        self.setup_workers()
        self._send_message(("update", None))
        main_device = self._devices[0]
        main_device.use()
        self._master.cleargrads()
        optimizer = self.get_optimizer("main")
        iterator = self.get_iterator("main")
        batch = call_converter(self.converter, iterator.next(), main_device)
        loss = _calc_loss(self._master, batch)
        self._master.cleargrads()
        loss.backward()
        del loss
        if self.comm is not None:
            _all_reduce_to_root(self.comm, _grads(self._master), self.comm.reduce, unpack=True)
        optimizer.update()
        if self.comm is not None:
            _all_reduce_to_root(self.comm, _arrays(self._master), self.comm.bcast, unpack=False)
        if self.auto_new_epoch and iterator.is_new_epoch:
            optimizer.new_epoch(auto=True)

    def finalize(self):
        """Stop the workers and finalize the iterators."""
        self._send_message(("finalize", None))
        for worker in self._workers:
            worker.join()
        if self.comm is not None:
            self.comm.destroy()
            self.comm = None
        super().finalize()
