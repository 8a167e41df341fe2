"""Snapshot writers: how and where the snapshot extension saves a serialized target.

The snapshot extension serializes its target into a dictionary of NumPy
arrays (a copy, taken in the training thread) and hands it to a writer as
``writer(filename, outdir, target)``. Writers differ in where the saving
runs: in the training thread (:class:`SimpleWriter`), in a new thread or
process per snapshot (:class:`ThreadWriter`, :class:`ProcessWriter`), or in
one long-lived consumer thread or process fed through a queue
(:class:`ThreadQueueWriter`, :class:`ProcessQueueWriter`).

Every built-in writer saves atomically: the file is written into a
temporary directory inside the destination directory and then renamed onto
its final name, so the file appears complete or not at all; a process dying
mid-write leaves only the temporary directory behind, and the previous
snapshot intact. The next save into that directory removes it: the name of a
temporary directory names the host and process that made it, and only those
of dead processes of the same host are removed. Processes receive only the
dictionary of arrays and the save function, never the trainer.
"""

import contextlib
import hashlib
import multiprocessing
import multiprocessing.util
import os
import queue
import re
import shutil
import socket
import tempfile
import threading
import time
import traceback
import weakref

from dbr.core.serializers import save_npz

# How often a ProcessQueueWriter's consumer checks that its parent is alive.
_PARENT_CHECK_S = 0.5


def _fsync_file(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# A temporary directory is named tmp<file name>.<host>-<pid>-<random>, so that a
# later writer can tell one left by a process that died mid-write.
_TMPDIR_PATTERN = re.compile(r"tmp.*\.([0-9a-f]{8})-([1-9][0-9]*)-[a-z0-9_]{8}", re.DOTALL)


def _host_token():
    return hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]


def _process_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_stale_tmpdirs(directory):
    """Remove the temporary directories that dead writer processes of this host left here.

    Another host's directories (a shared file system) and those of live
    processes are kept. Only on POSIX, where ``os.kill(pid, 0)`` only probes.
    """
    if os.name != "posix":
        return
    host = _host_token()
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for entry in entries:
            match = _TMPDIR_PATTERN.fullmatch(entry.name)
            if match is None or match.group(1) != host:
                continue
            pid = int(match.group(2))
            if pid == os.getpid() or _process_alive(pid):
                continue
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)


def _save_atomically(filename, outdir, target, savefun, append, kwds):
    """Write ``target`` with ``savefun`` to ``outdir/filename`` through a temporary directory."""
    destination = os.path.join(outdir, filename)
    directory = os.path.dirname(os.path.abspath(destination))
    os.makedirs(directory, exist_ok=True)
    _remove_stale_tmpdirs(directory)
    prefix = f"tmp{os.path.basename(filename)}.{_host_token()}-{os.getpid()}-"
    tmpdir = tempfile.mkdtemp(prefix=prefix, dir=directory)
    try:
        tmppath = os.path.join(tmpdir, os.path.basename(filename))
        if append and os.path.exists(destination):
            shutil.copy2(destination, tmppath)
        savefun(tmppath, target, **kwds)
        _fsync_file(tmppath)
        os.replace(tmppath, destination)
    finally:
        shutil.rmtree(tmpdir, ignore_errors=True)


def _check_savefun(who, savefun):
    if not callable(savefun):
        raise TypeError(
            f"{who}: savefun must be callable, got {savefun!r} ({type(savefun).__name__})"
        )


class Writer:
    """Base class of snapshot writers.

    The snapshot extension calls ``writer(filename, outdir, target)`` at each
    snapshot and ``writer.finalize()`` at the end of training. A subclass
    implements :meth:`__call__`, usually through :meth:`save`.
    """

    def __init__(self):
        self._post_save_hooks = []

    def __call__(self, filename, outdir, target):
        """Save ``target`` as ``outdir/filename``.

        Args:
            filename (str): the file name (already formatted, not a template).
            outdir (str): the output directory (the trainer's ``out``).
            target (dict): the serialized object, ``{key: numpy array}``.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement __call__")

    def finalize(self):
        """Wait for pending saves and release workers; called at the end of training."""

    def save(self, filename, outdir, target, savefun, append, **kwds):
        """Save ``target`` atomically with ``savefun(path, target, **kwds)``, then run hooks.

        ``savefun`` writes to a temporary path inside ``outdir``; the result is
        renamed onto ``outdir/filename`` only once ``savefun`` returned. With
        ``append``, an existing ``outdir/filename`` is first copied to the
        temporary path, for save functions that add to a file.
        """
        _save_atomically(filename, outdir, target, savefun, append, kwds)
        self._post_save()

    def _keep_save_arguments(self, savefun, append, kwds):
        # The writers that own a save function check it and keep its arguments alike.
        _check_savefun(type(self).__name__, savefun)
        self._savefun = savefun
        self._append = append
        self._kwds = kwds

    def _add_cleanup_hook(self, hook):
        """Register ``hook()`` to run after each completed save (used for ``n_retains``)."""
        self._post_save_hooks.append(hook)

    def _post_save(self):
        for hook in self._post_save_hooks:
            hook()


class SimpleWriter(Writer):
    """Snapshot writer that saves in the calling (training) thread.

    Args:
        savefun (callable): ``savefun(path, target, **kwds)``; default
            :func:`dbr.core.serializers.save_npz`.
        append (bool): copy an existing file to the temporary path before
            calling ``savefun`` (for save functions that append).
        kwds: keyword arguments passed to ``savefun``.
    """

    def __init__(self, savefun=save_npz, append=False, **kwds):
        super().__init__()
        self._keep_save_arguments(savefun, append, kwds)

    def __call__(self, filename, outdir, target):
        """Save ``target`` now; returns when the file is in place.

        Raises:
            OSError: the file could not be written (a full disk, a missing
                permission): of the type and errno raised, naming the writer
                and the snapshot's path as the other writers' errors do; the
                previous file of that name is left as it was.
        """
        try:
            self.save(filename, outdir, target, self._savefun, self._append, **self._kwds)
        except OSError as e:
            path = os.path.join(outdir, filename)
            message = f"{type(self).__name__}: saving the snapshot {path!r} failed: "
            if e.errno is None:
                raise OSError(message + str(e)) from e
            raise OSError(e.errno, message + (e.strerror or str(e))) from e

    def __getstate__(self):
        # A task sent to a ProcessQueueWriter consumer: hooks stay in the parent.
        state = self.__dict__.copy()
        state["_post_save_hooks"] = []
        return state


class _SaveThread(threading.Thread):
    """A thread running one save, keeping the exception it raised for the joiner."""

    def __init__(self, function, args, kwargs):
        super().__init__()
        self._function = function
        self._args = args
        self._kwargs = kwargs
        self.error = None

    def run(self):
        try:
            self._function(*self._args, **self._kwargs)
        except BaseException as e:  # reported by the thread that joins
            self.error = e


def _process_save(filename, outdir, target, savefun, append, kwds):
    _save_atomically(filename, outdir, target, savefun, append, kwds)


class StandardWriter(Writer):
    """Base of writers that save in a worker (thread or process) per snapshot.

    Each call starts a worker from :meth:`create_worker` after joining the
    previous one, so at most one save runs at a time and training goes on
    while it does. A failed save is reported (RuntimeError naming the file)
    when the worker is joined: at the next snapshot or in :meth:`finalize`.

    Args:
        savefun (callable): ``savefun(path, target, **kwds)``; default
            :func:`dbr.core.serializers.save_npz`.
        append (bool): see :class:`SimpleWriter`.
        kwds: keyword arguments passed to ``savefun``.
    """

    def __init__(self, savefun=save_npz, append=False, **kwds):
        super().__init__()
        self._keep_save_arguments(savefun, append, kwds)
        self._worker = None
        self._worker_file = None
        self._started = False
        self._finalized = False

    def __call__(self, filename, outdir, target):
        """Wait for the previous save, then start saving ``target`` in a new worker."""
        if self._finalized:
            raise RuntimeError(f"{type(self).__name__}: the writer was finalized")
        self._join()
        self._worker = self.create_worker(filename, outdir, target, **self._kwds)
        self._worker_file = os.path.join(outdir, filename)
        self._worker.start()
        self._started = True

    def create_worker(self, filename, outdir, target, **kwds):
        """Return an unstarted worker (with ``start()`` and ``join()``) saving ``target``."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_worker")

    def _join(self):
        if not self._started:
            return
        self._started = False
        self._worker.join()
        self._check_worker(self._worker, self._worker_file)

    def _check_worker(self, worker, path):
        # Only a _SaveThread records an error; other workers (user-made) are not asked.
        error = getattr(worker, "error", None) if isinstance(worker, _SaveThread) else None
        if error is not None:
            raise RuntimeError(
                f"{type(self).__name__}: saving the snapshot {path!r} failed: "
                f"{type(error).__name__}: {error}"
            ) from error

    def finalize(self):
        """Wait for the running save (if any); later calls are refused."""
        try:
            self._join()
        finally:
            self._finalized = True


class ThreadWriter(StandardWriter):
    """Snapshot writer that saves each snapshot in a new thread.

    Args: as :class:`StandardWriter`.
    """

    def create_worker(self, filename, outdir, target, **kwds):
        """Return a thread running :meth:`save` (including the post-save hooks)."""
        return _SaveThread(
            self.save, (filename, outdir, target, self._savefun, self._append), kwds
        )


class ProcessWriter(StandardWriter):
    """Snapshot writer that saves each snapshot in a new process.

    The process receives the serialized dictionary of arrays, ``savefun``
    and its keyword arguments (which must be picklable where the start method
    is not 'fork'), never the trainer. The post-save hooks (``n_retains``
    cleanup) run in the training process once the worker has been joined.

    Args: as :class:`StandardWriter`.
    """

    def create_worker(self, filename, outdir, target, **kwds):
        """Return a process running the atomic save."""
        return multiprocessing.Process(
            target=_process_save,
            args=(filename, outdir, target, self._savefun, self._append, kwds),
        )

    def _check_worker(self, worker, path):
        if worker.exitcode != 0:
            raise RuntimeError(
                f"{type(self).__name__}: saving the snapshot {path!r} failed: the worker "
                f"process exited with code {worker.exitcode}"
            )
        self._post_save()


def _stop_consumer(q, consumer):
    """Let ``consumer`` run the tasks queued on ``q``, wait until ``q`` is drained, stop it."""
    if consumer.is_alive():
        q.put(None)
        q.join()
        consumer.join()


def _stop_consumer_process(q, consumer):
    """:func:`_stop_consumer` for a process, without ``q.join()``.

    A consumer process killed in the middle of a task never marks it done, so
    waiting for the queue could block for ever; joining the process cannot.
    """
    if consumer.is_alive():
        q.put(None)
        consumer.join()


class QueueWriter(Writer):
    """Base of writers that hand snapshots to one long-lived consumer through a queue.

    Each call enqueues ``(task, filename, outdir, target)`` and returns; the
    consumer runs ``task(filename, outdir, target)`` in order. A failed task
    is reported (RuntimeError naming the file) at the next call or in
    :meth:`finalize`, which waits until the queue is drained. A writer that
    is never finalized does not keep the interpreter from exiting: at exit
    (or when the writer is garbage collected) the consumer runs the tasks
    already queued and stops.

    Args:
        savefun (callable): the save function of the default task,
            ``SimpleWriter(savefun)``.
        task (callable): ``task(filename, outdir, target)``; replaces the
            default task (it is then responsible for writing atomically).
    """

    def __init__(self, savefun=save_npz, task=None):
        super().__init__()
        if task is None:
            _check_savefun(type(self).__name__, savefun)
            task = self.create_task(savefun)
        elif not callable(task):
            raise TypeError(
                f"{type(self).__name__}: task must be callable, got {task!r} "
                f"({type(task).__name__})"
            )
        self._task = task
        self._errors = []
        self._queue = self.create_queue()
        self._consumer = self.create_consumer(self._queue)
        self._consumer.start()
        self._stop = self._stop_at_exit(self._queue, self._consumer)
        self._started = True
        self._finalized = False

    def __call__(self, filename, outdir, target):
        """Enqueue the save of ``target`` as ``outdir/filename`` and return."""
        if self._finalized:
            raise RuntimeError(f"{type(self).__name__}: the writer was finalized")
        self._raise_errors()
        self._queue.put((self._task, filename, outdir, target))

    def create_task(self, savefun):
        """Return the default task: a :class:`SimpleWriter` with ``savefun``."""
        return SimpleWriter(savefun=savefun)

    def create_queue(self):
        """Return the queue the consumer reads."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_queue")

    def create_consumer(self, q):
        """Return the unstarted consumer (thread or process) reading ``q``."""
        raise NotImplementedError(f"{type(self).__name__} must implement create_consumer")

    def _stop_at_exit(self, q, consumer):
        """Arrange for the started ``consumer`` to be stopped at exit; returns the stopper.

        The stopper, called once, queues None and joins ``consumer``.
        """
        return weakref.finalize(self, _stop_consumer, q, consumer)

    def consume(self, q):
        """Run tasks from ``q`` until it yields None (the consumer thread's loop).

        Each item is ``(task, filename, outdir, target)``; every item got is
        marked done (``q.task_done()``), also when its task fails, so that
        waiting for the queue to drain cannot block.
        """
        while True:
            item = q.get()
            try:
                if item is None:
                    return
                task, filename, outdir, target = item[0], item[1], item[2], item[3]
                try:
                    task(filename, outdir, target)
                    self._post_save()
                except BaseException as e:  # reported by the training thread
                    self._errors.append((os.path.join(outdir, filename), e))
            finally:
                q.task_done()

    def _raise_errors(self):
        if self._errors:
            path, error = self._errors.pop(0)
            self._errors.clear()
            raise RuntimeError(
                f"{type(self).__name__}: saving the snapshot {path!r} failed: {error}"
            )

    def finalize(self):
        """Wait until every queued snapshot is saved and stop the consumer."""
        if self._started and not self._finalized:
            self._stop()
            self._started = False
        self._finalized = True
        self._raise_errors()


class ThreadQueueWriter(QueueWriter):
    """Snapshot writer whose saves run in one consumer thread fed through a queue.

    Args: as :class:`QueueWriter`.
    """

    def create_queue(self):
        """Return a :class:`queue.Queue`."""
        return queue.Queue()

    def create_consumer(self, q):
        """Return a daemon thread running :meth:`consume` (stopped at exit by the writer)."""
        return threading.Thread(target=self.consume, args=(q,), daemon=True)


def _exit_when_orphaned(parent_pid, busy):
    """End this process once its parent has died, but never in the middle of a task."""
    while os.getppid() == parent_pid:
        time.sleep(_PARENT_CHECK_S)
    with busy:
        os._exit(1)


def _consume_in_process(q, done, parent_pid):
    # A killed parent never sends None, and the queue cannot tell: this
    # process holds the queue's writing end too. A thread watches the parent.
    busy = threading.Lock()
    threading.Thread(target=_exit_when_orphaned, args=(parent_pid, busy), daemon=True).start()
    while True:
        item = q.get()
        with busy:
            try:
                if item is None:
                    return
                task, filename, outdir, target = item
                try:
                    task(filename, outdir, target)
                    done.put((filename, outdir, None))
                except Exception:
                    done.put((filename, outdir, traceback.format_exc(limit=3)))
            finally:
                q.task_done()


class ProcessQueueWriter(QueueWriter):
    """Snapshot writer whose saves run in one consumer process fed through a queue.

    Tasks and targets (dictionaries of arrays) are pickled onto the queue:
    the task (by default a :class:`SimpleWriter`) and its ``savefun`` must be
    picklable. The post-save hooks (``n_retains`` cleanup) run in the
    training process when it learns that a save completed: at the next call
    and in :meth:`finalize`. If the training process dies (even by SIGKILL),
    the consumer finishes the save it is running and exits.

    Args: as :class:`QueueWriter`.
    """

    def __init__(self, savefun=save_npz, task=None):
        self._done = multiprocessing.Queue()
        super().__init__(savefun=savefun, task=task)

    def create_queue(self):
        """Return a :class:`multiprocessing.JoinableQueue`."""
        return multiprocessing.JoinableQueue()

    def create_consumer(self, q):
        """Return a process consuming ``q`` that exits when this process dies."""
        return multiprocessing.Process(
            target=_consume_in_process, args=(q, self._done, os.getpid())
        )

    def _stop_at_exit(self, q, consumer):
        """Arrange for ``consumer`` to be stopped at exit; returns the stopper.

        It runs before multiprocessing joins the child processes at exit
        (which would otherwise wait for ever on a consumer never sent None).
        """
        return multiprocessing.util.Finalize(
            self, _stop_consumer_process, args=(q, consumer), exitpriority=20
        )

    def _collect(self):
        while True:
            try:
                filename, outdir, error = self._done.get_nowait()
            except queue.Empty:
                return
            if error is None:
                self._post_save()
            else:
                self._errors.append((os.path.join(outdir, filename), error))

    def __call__(self, filename, outdir, target):
        """Enqueue the save of ``target`` as ``outdir/filename`` and return."""
        self._collect()
        super().__call__(filename, outdir, target)

    def finalize(self):
        """Wait until every queued snapshot is saved and stop the consumer process."""
        if self._started and not self._finalized:
            self._stop()
            self._started = False
        self._finalized = True
        self._collect()
        self._raise_errors()
