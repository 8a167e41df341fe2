"""PickleDataset: random access to objects pickled one after another in a file.

Reading unpickles, and unpickling can run arbitrary code: open only files that come
from a trusted source (ideally ones you wrote yourself with :class:`PickleDatasetWriter`).
"""

import os
import pickle
import threading
import uuid

from dbr.datasets.dataset_mixin import DatasetMixin

_O_BINARY = getattr(os, "O_BINARY", 0)


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

    After a fork (as in a multiprocess iterator), a reader opened from a named file is
    reopened in the child, so that processes do not share a file offset; such a dataset
    can also be pickled, which stores the file name only.

    Args:
        reader: Binary file-like object supporting ``seek``, ``tell`` and ``read``.

    Used as a context manager, it closes ``reader`` on exit.
    """

    def __init__(self, reader):
        if not reader.seekable():
            raise ValueError("PickleDataset: reader must support random access (seekable)")
        self._reader = reader
        self._path = getattr(reader, "name", None)
        if not isinstance(self._path, (str, bytes, os.PathLike)):
            self._path = None
        self._lock = threading.RLock()
        self._pid = os.getpid()
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

    def __getstate__(self):
        if self._path is None:
            raise TypeError("PickleDataset: cannot pickle a dataset whose reader has no file name")
        state = self.__dict__.copy()
        for name in ("_reader", "_lock", "_pid"):
            del state[name]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.RLock()
        self._reader = open(self._path, "rb")  # noqa: SIM115
        self._pid = os.getpid()

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
    reader = open(path, "rb")  # noqa: SIM115
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
