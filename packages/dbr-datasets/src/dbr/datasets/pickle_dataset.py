"""PickleDataset: random access to objects pickled one after another in a file.

Reading unpickles, and unpickling can run arbitrary code: open only files that come
from a trusted source (ideally ones you wrote yourself with :class:`PickleDatasetWriter`).
"""

import io
import os
import pickle
import threading
import uuid
import weakref

from dbr.datasets.dataset_mixin import DatasetMixin

_O_BINARY = getattr(os, "O_BINARY", 0)

# The datasets whose reader has an ``after_fork()`` hook, called in every forked child.
_FORK_HOOKED = weakref.WeakSet()


def _after_fork_in_child():
    """Call the ``after_fork()`` hook of every living dataset's reader (in a new child)."""
    for dataset in list(_FORK_HOOKED):
        dataset._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class PickleDatasetWriter:
    """Writer of the files that :class:`PickleDataset` reads: one pickle per example.

    Args:
        writer: Binary file-like object supporting ``write`` and ``tell``.
        protocol (int): Pickle protocol.

    Used as a context manager, it closes ``writer`` on exit.
    """

    def __init__(self, writer, protocol=pickle.HIGHEST_PROTOCOL):
        self._writer = writer
        self._protocol = protocol

    def write(self, x):
        """Append the object ``x`` as the next example."""
        pickle.dump(x, self._writer, protocol=self._protocol)

    def flush(self):
        """Flush the underlying writer."""
        if hasattr(self._writer, "flush"):
            self._writer.flush()

    def close(self):
        """Close the underlying writer."""
        self._writer.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if exc_type is not None and isinstance(self._writer, _AtomicWriter):
            self._writer.discard()
        else:
            self.close()


class PickleDataset(DatasetMixin):
    """Dataset of the objects pickled one after another in a random-access file.

    The constructor unpickles the whole file once to record where each object starts;
    an example is unpickled again on every access. Only the file is held in memory,
    so the dataset can be larger than the RAM.

    .. warning:: Unpickling can run arbitrary code. Read only files that come from a
       trusted source.

    Processes must not share a file offset, so after a fork (as in a multiprocess
    iterator) the child gets a reader of its own: a reader with an ``after_fork()``
    method has it called in the child right after the fork (as the readers of
    :func:`open_pickle_dataset` do, reopening their file); otherwise a reader opened
    from a named file is reopened by name at the child's first read. Pickling the
    dataset stores the file name of such a named reader, and the reader itself
    otherwise (an :class:`io.BytesIO` is pickled with its contents).

    Args:
        reader: Binary file-like object supporting ``seek``, ``tell`` and ``read``.

    Used as a context manager, it closes ``reader`` on exit.
    """

    def __init__(self, reader):
        if not reader.seekable():
            raise ValueError("PickleDataset: reader must support random access (seekable)")
        self._reader = reader
        self._path = None
        if not callable(getattr(reader, "after_fork", None)):
            path = getattr(reader, "name", None)
            if isinstance(path, (str, bytes, os.PathLike)):
                self._path = path
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._hook_forks()
        positions = []
        reader.seek(0)
        while True:
            position = reader.tell()
            try:
                pickle.load(reader)
            except EOFError:
                break
            positions.append(position)
        self._positions = positions

    def _hook_forks(self):
        """Have the reader's ``after_fork()`` called in forked children, if it has one."""
        if callable(getattr(self._reader, "after_fork", None)):
            _FORK_HOOKED.add(self)

    def _after_fork(self):
        """In a forked child: a fresh lock (another thread may have held the parent's)."""
        self._lock = threading.RLock()
        self._pid = os.getpid()
        self._reader.after_fork()

    def __getstate__(self):
        state = self.__dict__.copy()
        names = ("_reader", "_lock", "_pid") if self._path is not None else ("_lock", "_pid")
        for name in names:
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        if self._path is not None:
            self._reader = open(self._path, "rb")  # noqa: SIM115
        self._pid = os.getpid()
        self._hook_forks()

    def close(self):
        """Close the reader; the dataset can no longer be read afterwards."""
        with self._lock:
            self._reader.close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()

    def __len__(self):
        """Return the number of pickled objects."""
        return len(self._positions)

    def get_example(self, i):
        """Unpickle and return the ``i``-th object."""
        with self._lock:
            if self._pid != os.getpid() and self._path is not None:
                # A forked child shares the parent's file offset; reopen to seek safely.
                self._reader.close()
                self._reader = open(self._path, "rb")  # noqa: SIM115
                self._pid = os.getpid()
            self._reader.seek(self._positions[i])
            return pickle.load(self._reader)


class _FileReader:
    """A binary file opened for reading by path, reopened in forked children.

    :class:`PickleDataset` calls :meth:`after_fork` in a forked child, so that the
    child does not share the parent's file offset; pickling stores the path only,
    and unpickling opens the file again.
    """

    def __init__(self, path):
        self._path = path
        self._file = open(path, "rb")  # noqa: SIM115

    def after_fork(self):
        """Close the file inherited from the parent and open it again."""
        self._file.close()
        self._file = open(self._path, "rb")  # noqa: SIM115

    def __getstate__(self):
        return {"_path": self._path}

    def __setstate__(self, state):
        self.__init__(state["_path"])

    @property
    def closed(self):
        """Whether the file is closed."""
        return self._file.closed

    def close(self):
        """Close the file."""
        self._file.close()

    def seekable(self):
        """Whether the file supports random access."""
        return self._file.seekable()

    def seek(self, offset, whence=io.SEEK_SET):
        """Move to ``offset`` as :meth:`io.IOBase.seek` does."""
        return self._file.seek(offset, whence)

    def tell(self):
        """Return the current position."""
        return self._file.tell()

    def read(self, size=-1):
        """Read up to ``size`` bytes (all when negative)."""
        return self._file.read(size)

    def readinto(self, buffer):
        """Read bytes into ``buffer``; return how many."""
        return self._file.readinto(buffer)

    def readline(self, size=-1):
        """Read one line of bytes."""
        return self._file.readline(size)

    def peek(self, size=0):
        """Return buffered bytes without moving the position."""
        return self._file.peek(size)


class _AtomicWriter:
    """Binary file written under a temporary name and renamed to ``path`` on close."""

    def __init__(self, path):
        self._path = os.fspath(path)
        directory, name = os.path.split(os.path.abspath(self._path))
        self._temp = os.path.join(directory, f".{name}.{uuid.uuid4().hex}.tmp")
        # os.open with mode 0o666 lets the umask decide the permissions, as open() would.
        fd = os.open(self._temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_BINARY, 0o666)
        self._file = os.fdopen(fd, "wb")

    def write(self, data):
        return self._file.write(data)

    def tell(self):
        return self._file.tell()

    def flush(self):
        self._file.flush()

    def close(self):
        if self._file.closed:
            return
        self._file.close()
        os.replace(self._temp, self._path)

    def discard(self):
        if self._file.closed:
            return
        self._file.close()
        os.remove(self._temp)


def open_pickle_dataset(path):
    """Open the pickle dataset file at ``path`` as a :class:`PickleDataset`.

    The file stays open until the dataset is closed; use it as a context manager::

        with open_pickle_dataset("data.pkl") as dataset:
            example = dataset[0]

    .. warning:: Unpickling can run arbitrary code. Open only trusted files.

    Args:
        path (str): Path of the file.

    Returns:
        PickleDataset: The opened dataset.
    """
    reader = _FileReader(path)
    try:
        return PickleDataset(reader)
    except BaseException:
        reader.close()
        raise


def open_pickle_dataset_writer(path, protocol=pickle.HIGHEST_PROTOCOL):
    """Open a :class:`PickleDatasetWriter` that writes the file ``path``.

    The data go to a temporary file in the same directory, which replaces ``path``
    when the writer is closed; leaving its ``with`` block by an exception discards
    it and leaves ``path`` untouched::

        with open_pickle_dataset_writer("data.pkl") as writer:
            writer.write((x, t))

    Args:
        path (str): Path of the file to create or replace.
        protocol (int): Pickle protocol.

    Returns:
        PickleDatasetWriter: The writer.
    """
    return PickleDatasetWriter(_AtomicWriter(path), protocol=protocol)
