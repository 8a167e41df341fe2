"""MultiprocessIterator: an iterator that loads examples in worker processes.

The batch sequence is SerialIterator's: the same state machine chooses the
indices of every batch, and the workers only compute ``dataset[i]``. NumPy
arrays in the examples come back through shared memory rather than pipes.
"""

import multiprocessing
import signal
import warnings
import weakref
from collections import deque

import numpy

from dbr.datasets._statemachine import SweepIterator, iterate

_ALIGN = 16

# Set in each worker process by _init_worker.
_worker_dataset = None
_worker_mem = None


class _SharedArray:
    """Where a worker left an array in shared memory: byte offset and size, shape, dtype."""

    __slots__ = ("offset", "nbytes", "shape", "dtype")

    def __init__(self, offset, nbytes, shape, dtype):
        self.offset = offset
        self.nbytes = nbytes
        self.shape = shape
        self.dtype = dtype

    def __reduce__(self):
        return _SharedArray, (self.offset, self.nbytes, self.shape, self.dtype)


def _aligned(n):
    return -(-n // _ALIGN) * _ALIGN


def _shareable(array):
    # Object arrays hold pointers, not data; empty arrays are cheaper to pickle.
    return array.nbytes > 0 and not array.dtype.hasobject


def _shared_size(example):
    """Bytes of shared memory the arrays in ``example`` take, alignment included."""
    kind = type(example)
    if kind is numpy.ndarray:
        return _aligned(example.nbytes) if _shareable(example) else 0
    if kind is tuple or kind is list:
        return sum(_shared_size(item) for item in example)
    if kind is dict:
        return sum(_shared_size(item) for item in example.values())
    return 0


def _pack(example, mem, offset, end):
    """Copy the arrays of ``example`` into ``mem[offset:end]``.

    Returns the example with each copied array replaced by a _SharedArray, the
    next free offset, and the bytes an array that did not fit needed (0 if all
    fit; such an array stays in the example and travels through the pipe).
    """
    kind = type(example)
    if kind is numpy.ndarray:
        nbytes = example.nbytes
        if not _shareable(example):
            return example, offset, 0
        if offset + nbytes > end:
            return example, offset, _aligned(nbytes)
        view = mem[offset : offset + nbytes].view(example.dtype).reshape(example.shape)
        numpy.copyto(view, example)
        shared = _SharedArray(offset, nbytes, example.shape, example.dtype)
        return shared, offset + _aligned(nbytes), 0
    if kind is tuple or kind is list or kind is dict:
        items = example.values() if kind is dict else example
        packed = []
        missing = 0
        for item in items:
            item, offset, short = _pack(item, mem, offset, end)
            packed.append(item)
            missing += short
        if kind is dict:
            packed = dict(zip(example.keys(), packed))
        elif kind is tuple:
            packed = tuple(packed)
        return packed, offset, missing
    return example, offset, 0


def _unpack(example, mem):
    """Inverse of _pack: each _SharedArray becomes a fresh copy of its array."""
    kind = type(example)
    if kind is _SharedArray:
        flat = mem[example.offset : example.offset + example.nbytes]
        return flat.view(example.dtype).reshape(example.shape).copy()
    if kind is tuple:
        return tuple(_unpack(item, mem) for item in example)
    if kind is list:
        return [_unpack(item, mem) for item in example]
    if kind is dict:
        return {key: _unpack(item, mem) for key, item in example.items()}
    return example


def _init_worker(dataset, shared):
    global _worker_dataset, _worker_mem
    # Ctrl-C is the main process's to handle; it terminates the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Forked workers would otherwise share one NumPy random state, so random
    # augmentation would repeat across workers.
    numpy.random.seed()
    _worker_dataset = dataset
    _worker_mem = None if shared is None else numpy.frombuffer(shared, dtype=numpy.uint8)


def _fetch(task):
    index, offset, end = task
    example = _worker_dataset[index]
    if _worker_mem is None:
        return example, 0
    packed, _, missing = _pack(example, _worker_mem, offset, end)
    return packed, _shared_size(example) if missing else 0


def _check_int(name, arg, value, minimum):
    if not isinstance(value, (int, numpy.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name}: {arg} must be an integer >= {minimum}, got {value!r}")


def _shutdown(pool):
    pool.terminate()
    pool.join()


class _Workers:
    """The worker pool, its shared memory (``n_slots`` one-batch slots) and the free slots."""

    def __init__(self, dataset, n_processes, maxtasksperchild, n_slots, slot_bytes):
        self.n_processes = n_processes
        self.slot_bytes = slot_bytes
        self.shared = None
        self.mem = None
        if slot_bytes:
            self.shared = multiprocessing.RawArray("b", n_slots * slot_bytes)
            self.mem = numpy.frombuffer(self.shared, dtype=numpy.uint8)
        self.free = deque(range(n_slots))
        self.pool = multiprocessing.Pool(
            n_processes,
            initializer=_init_worker,
            initargs=(dataset, self.shared),
            maxtasksperchild=maxtasksperchild,
        )
        self.finalizer = weakref.finalize(self, _shutdown, self.pool)

    def submit(self, indices, example_bytes):
        slot = self.free.popleft()
        base = slot * self.slot_bytes
        tasks = [
            (int(index), base + i * example_bytes, base + (i + 1) * example_bytes)
            for i, index in enumerate(indices)
        ]
        # A few chunks per worker balance the load without a message per example.
        chunksize = -(-len(tasks) // (4 * self.n_processes))
        return slot, self.pool.map_async(_fetch, tasks, chunksize)

    def release(self, slot):
        self.free.append(slot)


class MultiprocessIterator(SweepIterator):
    """Dataset iterator that loads examples in parallel worker processes.

    Batches come in exactly the order SerialIterator gives for the same
    arguments (the same indices, epochs and order-sampler calls); only the
    loading of ``dataset[i]`` is spread over ``n_processes`` processes of a
    :class:`multiprocessing.Pool`, which work ahead of the batch being returned
    (see ``n_prefetch``). Because of that, the order sampler is called as soon
    as a prefetched batch crosses an epoch boundary, earlier than
    SerialIterator would call it. NumPy arrays in the examples (alone, or in tuples,
    lists and dicts) are written by the workers into shared memory and copied
    out by the main process; everything else travels pickled through pipes.

    The workers start at the first ``next()``, with the default
    multiprocessing start method: under 'fork' they inherit the dataset, under
    'spawn' or 'forkserver' the dataset must be picklable. Each worker reseeds
    NumPy's global random state from the OS, so random augmentation differs
    between workers. An exception raised by ``dataset[i]`` in a worker is
    raised again by ``next()`` in the main process. :meth:`finalize` (or
    leaving a ``with`` block, garbage collection, or interpreter exit) stops
    the workers; a later ``next()`` starts new ones.

    Args:
        dataset: the dataset to iterate (supports ``len`` and ``[int]``).
        batch_size: number of examples in a batch.
        repeat: if True, iterate over the dataset endlessly; if False, stop
            after one epoch.
        shuffle: if True, a new random order every epoch; if False, the
            dataset's order. None means True unless ``order_sampler`` is given.
        n_processes: number of worker processes; None means the number of CPUs.
        n_prefetch: number of batches to prefetch: the workers have up to
            ``n_prefetch + 1`` batches in hand beyond the one returned (as
            Chainer's ``n_prefetch`` queued batches plus the one loading).
        shared_mem: bytes of shared memory per example. None measures the
            first batch (loaded in the main process) and uses the largest
            example's size; 0 sends everything through pipes. An array that
            does not fit goes through a pipe, with a warning.
        order_sampler: callable ``(current_order, current_position) ->
            new_order`` choosing each epoch's order; exclusive with
            ``shuffle``. Default: ShuffleOrderSampler when shuffling.
        dataset_timeout: seconds a batch may take to load before a
            :class:`MultiprocessIterator.TimeoutWarning` is issued (the
            iterator keeps waiting); None disables the warning.
        maxtasksperchild: tasks after which a worker is replaced by a fresh
            one (see :class:`multiprocessing.Pool`); None keeps workers alive.
    """

    class TimeoutWarning(RuntimeWarning):
        """A batch has taken longer than ``dataset_timeout`` to load."""

    def __init__(
        self,
        dataset,
        batch_size,
        repeat=True,
        shuffle=None,
        n_processes=None,
        n_prefetch=1,
        shared_mem=None,
        order_sampler=None,
        dataset_timeout=30.0,
        maxtasksperchild=None,
    ):
        name = "MultiprocessIterator"
        if n_processes is None:
            n_processes = multiprocessing.cpu_count()
        _check_int(name, "n_processes", n_processes, 1)
        _check_int(name, "n_prefetch", n_prefetch, 1)
        if shared_mem is not None:
            _check_int(name, "shared_mem", shared_mem, 0)
        if maxtasksperchild is not None:
            _check_int(name, "maxtasksperchild", maxtasksperchild, 1)
        if dataset_timeout is not None and not (
            isinstance(dataset_timeout, (int, float))
            and not isinstance(dataset_timeout, bool)
            and dataset_timeout > 0
        ):
            raise ValueError(
                f"{name}: dataset_timeout must be a positive number of seconds or None, "
                f"got {dataset_timeout!r}"
            )
        self.n_processes = int(n_processes)
        self.n_prefetch = int(n_prefetch)
        self.shared_mem = shared_mem
        self.dataset_timeout = dataset_timeout
        self.maxtasksperchild = maxtasksperchild
        self._example_bytes = None if shared_mem is None else _aligned(shared_mem)
        self._workers = None
        # Submitted batches, oldest first: (slot, AsyncResult, state after the batch).
        self._pending = deque()
        self._warned_small_mem = False
        super().__init__(dataset, batch_size, repeat, shuffle, order_sampler)

    def reset(self):
        """Rewind to the start of epoch 0, drawing a new first order; drop prefetched batches."""
        super().reset()
        self._prefetch_state = self._state
        self._abandon_pending()

    def serialize(self, serializer):
        """Save or load the position (keys ``current_position``, ``epoch``,
        ``is_new_epoch``, ``order`` when shuffling, ``previous_epoch_detail``,
        as Chainer's MultiprocessIterator writes them).

        Loading a different position drops the batches loaded ahead, so that
        the next batch is the one the saved run would have yielded.
        """
        if self._serialize_state(serializer, "order"):
            self._abandon_pending()

    # --- loading ---

    def __next__(self):
        """Return the next batch (a list of examples); StopIteration at the end."""
        previous_epoch_detail = self.epoch_detail
        if self._workers is None:
            try:
                batch = self._start()
            except StopIteration:
                self._previous_epoch_detail = previous_epoch_detail
                raise
            if batch is not None:
                self._previous_epoch_detail = previous_epoch_detail
                return batch
        self._top_up()
        if not self._pending:
            self._previous_epoch_detail = previous_epoch_detail
            raise StopIteration
        slot, result, state = self._pending[0]
        try:
            examples = self._wait(result)
        except BaseException:
            # Other tasks of the failed batch may still be writing into its
            # shared memory: new workers and memory are the safe way on.
            self.finalize()
            raise
        self._pending.popleft()
        mem = self._workers.mem
        batch = []
        missing = 0
        for example, short in examples:
            batch.append(example if mem is None else _unpack(example, mem))
            missing = max(missing, short)
        self._workers.release(slot)
        self._top_up()
        self._state = state
        self._previous_epoch_detail = previous_epoch_detail
        if missing:
            self._warn_small_mem(missing)
        return batch

    def _start(self):
        """Start the workers; in measuring mode, load and return the first batch here."""
        first = None
        example_bytes = self._example_bytes
        if example_bytes is None:
            state, indices = iterate(
                self._state, self.batch_size, self.repeat, self.order_sampler, len(self.dataset)
            )
            if indices is None:
                raise StopIteration
            first = [self.dataset[index] for index in indices.tolist()]
            example_bytes = max(_shared_size(example) for example in first)
        self._workers = _Workers(
            self.dataset,
            self.n_processes,
            self.maxtasksperchild,
            self.n_prefetch + 1,
            self.batch_size * example_bytes,
        )
        self._example_bytes = example_bytes
        if first is not None:
            self._state = self._prefetch_state = state
        self._top_up()
        return first

    def _top_up(self):
        pending = self._pending
        while len(pending) <= self.n_prefetch:
            state, indices = iterate(
                self._prefetch_state,
                self.batch_size,
                self.repeat,
                self.order_sampler,
                len(self.dataset),
            )
            if indices is None:
                return
            slot, result = self._workers.submit(indices, self._example_bytes)
            pending.append((slot, result, state))
            self._prefetch_state = state

    def _wait(self, result):
        while True:
            try:
                return result.get(self.dataset_timeout)
            except multiprocessing.TimeoutError:
                warnings.warn(
                    f"MultiprocessIterator: a batch has taken more than "
                    f"dataset_timeout={self.dataset_timeout} seconds to load; still waiting",
                    MultiprocessIterator.TimeoutWarning,
                    stacklevel=3,
                )

    def _abandon_pending(self):
        pending = self._pending
        self._prefetch_state = self._state
        clean = True
        while pending:
            slot, result, _ = pending.popleft()
            # The workers may still be writing into the slot, and a failed
            # batch's other tasks may go on writing after the failure.
            result.wait()
            clean = clean and result.successful()
            self._workers.release(slot)
        if not clean:
            self.finalize()

    def _warn_small_mem(self, needed):
        if self._warned_small_mem:
            return
        self._warned_small_mem = True
        warnings.warn(
            f"MultiprocessIterator: an example needs {needed} bytes of shared memory but "
            f"shared_mem gives {self._example_bytes}; its arrays go through a pipe, which is "
            "slower. Pass a larger shared_mem.",
            RuntimeWarning,
            stacklevel=3,
        )

    def __getstate__(self):
        # A copy (copy.copy, pickle) starts its own workers when first used.
        state = self.__dict__.copy()
        state["_workers"] = None
        state["_pending"] = deque()
        state["_prefetch_state"] = self._state
        return state

    def finalize(self):
        """Stop the worker processes and free the shared memory; the state is kept."""
        workers = self._workers
        if workers is None:
            return
        self._pending.clear()
        self._prefetch_state = self._state
        self._workers = None
        workers.finalizer()
