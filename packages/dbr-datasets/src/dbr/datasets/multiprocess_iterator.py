"""MultiprocessIterator: an iterator that loads examples in worker processes.

The batch sequence is SerialIterator's: the same state machine chooses the
indices of every batch, and the workers only compute ``dataset[i]``. NumPy
arrays in the examples come back through shared memory rather than pipes.
"""

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import time
import traceback
import warnings
import weakref
from collections import deque

import numpy

from dbr.datasets._statemachine import SweepIterator, iterate

_ALIGN = 16
# Examples in one message to a worker, at most (about 1.3 kB pickled).
_MAX_CHUNK = 256
# Bytes of tasks a worker is sent ahead of its answers, at most: the main
# process then never blocks sending (a pipe holds at least one page), even to
# a worker that blocks sending its answer while the main process is busy.
_TASK_BYTES_IN_HAND = 4096
# How often an idle worker checks that its parent is alive, and the main
# process that its workers are (their pipes and sentinels tell it sooner).
_PARENT_CHECK_S = 1.0
_WATCH_S = 0.5
# How long a stopped worker has to exit after SIGTERM, then after SIGKILL.
_STOP_GRACE_S = 1.0
_KILL_WAIT_S = 10.0


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


def _check_int(name, arg, value, minimum):
    if not isinstance(value, (int, numpy.integer)) or isinstance(value, bool) or value < minimum:
        raise ValueError(f"{name}: {arg} must be an integer >= {minimum}, got {value!r}")


def _describe_error(error, index):
    """What the main process needs to raise ``error`` again, or to report it if it cannot."""
    blob = None
    try:
        blob = pickle.dumps(error, pickle.HIGHEST_PROTOCOL)
        pickle.loads(blob)
    except Exception:
        # An exception class whose __init__ does not take its args back cannot be
        # rebuilt by the main process: send its name and text instead.
        blob = None
    name = f"{type(error).__module__}.{type(error).__qualname__}"
    return blob, name, str(error), traceback.format_exc(), index


def _worker_loop(number, dataset, shared, status, tasks, results, parent_pid):
    """A worker's life: load the chunks it is sent until it is sent None or its parent dies.

    A chunk is ``(chunk_id, indices, offset, example_bytes)``; the answer is
    ``(chunk_id, True, [(example, bytes needed if it did not fit), ...])`` or
    ``(chunk_id, False, _describe_error(...))``. ``status[number]`` holds the
    index of the example being loaded (-1 between examples), for the main
    process to name if this worker dies.
    """
    # Ctrl-C is the main process's to handle; it stops the workers.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Forked workers would otherwise share one NumPy random state, so random
    # augmentation would repeat across workers.
    numpy.random.seed()
    mem = None if shared is None else numpy.frombuffer(shared, dtype=numpy.uint8)
    while True:
        # The worker holds a copy of its own task pipe's writing end (fork), so
        # a dead parent shows as a new parent process id, not as end of file.
        if not tasks.poll(_PARENT_CHECK_S):
            if os.getppid() != parent_pid:
                return
            continue
        try:
            task = tasks.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        chunk_id, indices, offset, example_bytes = task
        index = None
        try:
            loaded = []
            for index in indices:
                status[number] = index
                example = dataset[index]
                missing = 0
                if mem is not None:
                    packed, _, short = _pack(example, mem, offset, offset + example_bytes)
                    if short:
                        missing = _shared_size(example)
                    example = packed
                loaded.append((example, missing))
                offset += example_bytes
            index = None
            status[number] = -1
            message = pickle.dumps((chunk_id, True, loaded), pickle.HIGHEST_PROTOCOL)
        except Exception as error:
            status[number] = -1
            message = pickle.dumps(
                (chunk_id, False, _describe_error(error, index)), pickle.HIGHEST_PROTOCOL
            )
        try:
            results.send_bytes(message)
        except OSError:
            return


class _RemoteTraceback(Exception):
    """The traceback of an exception raised in a worker, as the worker formatted it."""

    def __init__(self, text):
        super().__init__(text)
        self.text = text

    def __str__(self):
        return self.text


def _raise_worker_error(where, payload):
    """Raise again, in the main process, what a worker sent from _describe_error."""
    blob, name, text, worker_traceback, index = payload
    doing = "sending its examples" if index is None else f"loading example {index}"
    cause = _RemoteTraceback(f"\n{where}, while {doing}:\n{worker_traceback}")
    error = None
    if blob is not None:
        try:
            error = pickle.loads(blob)
        except Exception:
            error = None
    if error is None:
        error = RuntimeError(
            f"MultiprocessIterator: {where} raised {name}: {text} while {doing}; that "
            "exception cannot be sent to the main process (it does not pickle and unpickle), "
            "so it is reported as this RuntimeError"
        )
    raise error from cause


class _Batch:
    """A submitted batch: its shared-memory slot, the state after it, its examples as they come."""

    __slots__ = ("slot", "state", "examples", "remaining", "error")

    def __init__(self, slot, state, size):
        self.slot = slot
        self.state = state
        self.examples = [None] * size
        self.remaining = size
        self.error = None


class _Worker:
    """One worker process, its two pipes and the chunks it was sent and has not answered."""

    __slots__ = (
        "number",
        "process",
        "tasks",
        "results",
        "outstanding",
        "in_hand",
        "sent",
        "retiring",
        "broken",
    )

    def __init__(self, number, process, tasks, results):
        self.number = number
        self.process = process
        self.tasks = tasks
        self.results = results
        self.outstanding = deque()
        self.in_hand = 0
        self.sent = 0
        self.retiring = False
        self.broken = False

    def describe(self):
        return f"worker {self.number} (pid {self.process.pid})"


def _stop_processes(workers):
    """Stop every worker whatever it is doing: SIGTERM, then SIGKILL; joins are bounded."""
    processes = [worker.process for worker in workers]
    for process in processes:
        if process.exitcode is None:
            process.terminate()
    deadline = time.monotonic() + _STOP_GRACE_S
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
    for process in processes:
        if process.exitcode is None:
            process.kill()
            process.join(_KILL_WAIT_S)
    for worker in workers:
        worker.tasks.close()
        worker.results.close()
    workers.clear()


def _exit_description(exitcode):
    if exitcode is None:
        return "closed its pipe to the main process"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            return f"is killed by signal: {-exitcode}"
        if name == "SIGKILL":
            # What the kernel's out-of-memory killer sends.
            return "is killed by signal: SIGKILL (out of memory?)"
        return f"is killed by signal: {name}"
    return f"exited with code {exitcode}"


class _Workers:
    """The worker processes, their shared memory (``n_slots`` one-batch slots) and the work.

    Each worker has its own task pipe and result pipe, so no lock is shared
    with a worker and stopping one can never wait on another. A batch is cut
    into chunks, sent to the workers with the fewest unanswered chunks, up to
    ``_TASK_BYTES_IN_HAND`` bytes of them each: enough for the prefetched
    batches in most cases, and never enough to fill a task pipe.
    """

    def __init__(self, dataset, n_processes, maxtasksperchild, n_slots, slot_bytes):
        self.dataset = dataset
        self.n_processes = n_processes
        self.maxtasksperchild = maxtasksperchild
        self.slot_bytes = slot_bytes
        self.shared = None
        self.mem = None
        if slot_bytes:
            self.shared = multiprocessing.RawArray("b", n_slots * slot_bytes)
            self.mem = numpy.frombuffer(self.shared, dtype=numpy.uint8)
        self.status = multiprocessing.RawArray("q", n_processes)
        self.free = deque(range(n_slots))
        self.queued = deque()
        self.chunks = {}
        self.next_chunk = 0
        self.live = []
        self.retired = []
        # Its own list, not self: the finalizer must not keep the workers alive.
        self.all = []
        self.finalizer = weakref.finalize(self, _stop_processes, self.all)
        for number in range(n_processes):
            self._start_worker(number)

    def _start_worker(self, number):
        task_reader, task_writer = multiprocessing.Pipe(duplex=False)
        result_reader, result_writer = multiprocessing.Pipe(duplex=False)
        self.status[number] = -1
        process = multiprocessing.Process(
            target=_worker_loop,
            args=(
                number,
                self.dataset,
                self.shared,
                self.status,
                task_reader,
                result_writer,
                os.getpid(),
            ),
            name=f"MultiprocessIterator worker {number}",
            daemon=True,
        )
        try:
            process.start()
        finally:
            # Only the worker keeps these ends, so its death closes its result pipe.
            task_reader.close()
            result_writer.close()
        worker = _Worker(number, process, task_writer, result_reader)
        self.all.append(worker)
        self.live.append(worker)

    def submit(self, indices, example_bytes, state):
        """Queue the loading of ``dataset[i]`` for each i in ``indices``; returns the batch."""
        slot = self.free.popleft()
        batch = _Batch(slot, state, len(indices))
        offset = slot * self.slot_bytes
        # A few chunks per worker balance the load without a message per example.
        size = min(_MAX_CHUNK, -(-len(indices) // (4 * self.n_processes)))
        indices = indices.tolist()
        for start in range(0, len(indices), size):
            chunk = indices[start : start + size]
            self.chunks[self.next_chunk] = (batch, start, len(chunk))
            self.queued.append(
                (self.next_chunk, chunk, offset + start * example_bytes, example_bytes)
            )
            self.next_chunk += 1
        self._dispatch()
        return batch

    def _dispatch(self):
        while self.queued:
            task = self.queued[0]
            message = pickle.dumps(task, pickle.HIGHEST_PROTOCOL)
            room = _TASK_BYTES_IN_HAND - len(message)
            ready = [
                w
                for w in self.live
                if not (w.retiring or w.broken) and (w.in_hand <= room or not w.outstanding)
            ]
            if not ready:
                return
            worker = min(ready, key=lambda w: len(w.outstanding))
            try:
                worker.tasks.send_bytes(message)
            except OSError:
                # The worker is gone; wait() reports it, so that submitting never raises.
                worker.broken = True
                continue
            self.queued.popleft()
            worker.outstanding.append((task[0], len(message)))
            worker.in_hand += len(message)
            worker.sent += 1
            if self.maxtasksperchild is not None and worker.sent >= self.maxtasksperchild:
                worker.retiring = True
                try:
                    worker.tasks.send(None)
                except OSError:
                    worker.broken = True

    def release(self, batch):
        """Give the batch's shared-memory slot back."""
        self.free.append(batch.slot)

    def drop(self, batches):
        """Forget every submitted batch: unsent chunks are not sent, sent ones are waited for.

        The wait is what makes the batches' shared memory free again: a worker
        may be writing into it until it answers.
        """
        self.queued.clear()
        self.wait(lambda: not any(w.outstanding for w in self.live), None, None)
        self.chunks.clear()
        for batch in batches:
            self.release(batch)

    def wait(self, done, timeout, on_timeout):
        """Receive answers until ``done()``; ``on_timeout()`` after each ``timeout`` seconds.

        Raises RuntimeError as soon as a worker dies or closes its pipe.
        """
        warn_at = None if timeout is None else time.monotonic() + timeout
        while not done():
            self._check_alive()
            period = _WATCH_S
            if warn_at is not None:
                period = max(0.0, min(period, warn_at - time.monotonic()))
            by_pipe = {worker.results: worker for worker in self.live}
            ready = multiprocessing.connection.wait(
                [*by_pipe, *(worker.process.sentinel for worker in self.live)], period
            )
            for item in ready:
                worker = by_pipe.get(item)
                if worker is not None and worker in self.live:
                    self._receive(worker)
            if warn_at is not None and time.monotonic() >= warn_at:
                on_timeout()
                warn_at += timeout
        self._reap_retired()

    def _check_alive(self):
        for worker in self.live:
            if worker.broken or (
                worker.process.exitcode is not None and not worker.results.poll()
            ):
                worker.process.join(_STOP_GRACE_S)
                self._died(worker)

    def _receive(self, worker):
        try:
            message = worker.results.recv_bytes()
        except (EOFError, OSError):
            worker.process.join(_STOP_GRACE_S)
            self._died(worker)
            return
        chunk_id, ok, payload = pickle.loads(message)
        # A worker answers its chunks in the order it was sent them.
        _, nbytes = worker.outstanding.popleft()
        worker.in_hand -= nbytes
        batch, start, size = self.chunks.pop(chunk_id)
        if ok:
            batch.examples[start : start + size] = payload
        elif batch.error is None:
            batch.error = (worker.describe(), payload)
        batch.remaining -= size
        if worker.retiring and not worker.outstanding:
            self.live.remove(worker)
            self.retired.append(worker)
            self._start_worker(worker.number)
        self._dispatch()

    def _died(self, worker):
        if worker.retiring and not worker.outstanding:
            return
        index = self.status[worker.number]
        doing = f"loading example {index}" if index >= 0 else "between examples"
        how = _exit_description(worker.process.exitcode)
        raise RuntimeError(
            f"MultiprocessIterator: {worker.describe()} {how} while {doing}; the iterator "
            "stopped its workers (the next call starts new ones)"
        )

    def _reap_retired(self):
        for worker in list(self.retired):
            if worker.process.exitcode is not None:
                worker.process.join()
                worker.tasks.close()
                worker.results.close()
                self.retired.remove(worker)
                self.all.remove(worker)


def _load_watched(load, timeout, on_timeout):
    """Return ``load()``, run in a thread so that ``on_timeout()`` is called after each
    ``timeout`` seconds it takes (as Chainer loads the measured first batch); what
    ``load`` raises is raised here. With ``timeout`` None, ``load()`` runs here."""
    if timeout is None:
        return load()
    outcome = {}

    def run():
        try:
            outcome["value"] = load()
        except BaseException as error:  # raised again by the caller's thread
            outcome["error"] = error

    thread = threading.Thread(target=run, name="MultiprocessIterator first batch", daemon=True)
    thread.start()
    thread.join(timeout)
    while thread.is_alive():
        on_timeout()
        thread.join(timeout)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class MultiprocessIterator(SweepIterator):
    """Dataset iterator that loads examples in parallel worker processes.

    Batches come in exactly the order SerialIterator gives for the same
    arguments (the same indices, epochs and order-sampler calls); only the
    loading of ``dataset[i]`` is spread over ``n_processes`` worker processes,
    which work ahead of the batch being returned (see ``n_prefetch``).
    Because of that, the order sampler is called as soon as a prefetched
    batch crosses an epoch boundary, earlier than SerialIterator would call
    it. NumPy arrays in the examples (alone, or in tuples, lists and dicts)
    are written by the workers into shared memory and copied out by the main
    process; everything else travels pickled through pipes.

    The workers start at the first ``next()``, with the default
    multiprocessing start method: under 'fork' they inherit the dataset, under
    'spawn' or 'forkserver' the dataset must be picklable. Each worker reseeds
    NumPy's global random state from the OS, so random augmentation differs
    between workers. An exception raised by ``dataset[i]`` in a worker is
    raised again by ``next()`` in the main process, its ``__cause__`` holding
    the worker's traceback; one that cannot be unpickled is reported as a
    RuntimeError with its type and text. A worker that dies (a signal, exit,
    out of memory) makes ``next()`` raise RuntimeError at once, naming the
    worker, its pid, the signal or exit code and the example it was loading.
    After either, the workers are stopped and a later ``next()`` starts new
    ones at the failed batch. :meth:`finalize` (or leaving a ``with`` block,
    garbage collection, or interpreter exit) stops the workers with SIGTERM,
    then SIGKILL, whatever they are doing; a later ``next()`` starts new
    ones, but :meth:`reset` of a finalized iterator raises
    NotImplementedError, as in Chainer. Workers whose parent process dies
    exit by themselves.

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
            first batch (loaded by a thread of the main process, watched by
            ``dataset_timeout`` as the workers are) and uses the largest
            example's size; 0 sends everything through pipes. An array that
            does not fit goes through a pipe, with a warning.
        order_sampler: callable ``(current_order, current_position) ->
            new_order`` choosing each epoch's order; exclusive with
            ``shuffle``. Default: ShuffleOrderSampler when shuffling.
        dataset_timeout: seconds a batch may take to load before a
            :class:`MultiprocessIterator.TimeoutWarning` is issued (the
            iterator keeps waiting); None disables the warning.
        maxtasksperchild: tasks (chunks of a batch, as in
            :class:`multiprocessing.Pool`) after which a worker is replaced by
            a fresh one; None keeps workers alive.
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
        # Submitted batches (_Batch), oldest first.
        self._pending = deque()
        self._warned_small_mem = False
        self._finalized = False
        super().__init__(dataset, batch_size, repeat, shuffle, order_sampler)

    def reset(self):
        """Rewind to the start of epoch 0, drawing a new first order; drop prefetched batches.

        Raises:
            NotImplementedError: :meth:`finalize` was called, as in Chainer
                (``next()`` still goes on from the position it had).
        """
        if self._finalized:
            raise NotImplementedError(
                "MultiprocessIterator.reset: the iterator was finalized, and a finalized "
                "MultiprocessIterator cannot be reset (as in Chainer); create a new one"
            )
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
        if self._serialize_state(serializer, "order", legacy_order_key="_order"):
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
        pending = self._pending[0]
        try:
            self._workers.wait(
                lambda: pending.remaining == 0 or pending.error is not None,
                self.dataset_timeout,
                self._warn_timeout,
            )
            if pending.error is not None:
                _raise_worker_error(*pending.error)
        except BaseException:
            # Other chunks of the failed batch may still be writing into its
            # shared memory: new workers and memory are the safe way on.
            self._stop_workers()
            raise
        self._pending.popleft()
        mem = self._workers.mem
        batch = []
        missing = 0
        for example, short in pending.examples:
            batch.append(example if mem is None else _unpack(example, mem))
            missing = max(missing, short)
        self._workers.release(pending)
        self._top_up()
        self._state = pending.state
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
            first = _load_watched(
                lambda: [self.dataset[index] for index in indices.tolist()],
                self.dataset_timeout,
                self._warn_timeout,
            )
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
            pending.append(self._workers.submit(indices, self._example_bytes, state))
            self._prefetch_state = state

    def _warn_timeout(self):
        warnings.warn(
            f"MultiprocessIterator: a batch has taken more than "
            f"dataset_timeout={self.dataset_timeout} seconds to load; still waiting",
            MultiprocessIterator.TimeoutWarning,
            stacklevel=4,
        )

    def _abandon_pending(self):
        pending = self._pending
        self._prefetch_state = self._state
        if not pending:
            return
        batches = list(pending)
        pending.clear()
        try:
            self._workers.drop(batches)
        except BaseException as error:
            # A worker died: the next call starts new ones.
            self._stop_workers()
            if not isinstance(error, Exception):
                raise

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
        state["_finalized"] = False
        return state

    def finalize(self):
        """Stop the worker processes and free the shared memory; the state is kept.

        A later ``next()`` starts new workers at the same position; :meth:`reset`
        is refused, as in Chainer.
        """
        self._finalized = True
        self._stop_workers()

    def _stop_workers(self):
        workers = self._workers
        if workers is None:
            return
        self._pending.clear()
        self._prefetch_state = self._state
        self._workers = None
        workers.finalizer()
