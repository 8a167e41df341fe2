"""Shared fixtures: a local HTTP server standing in for the dataset hosts.

``dataset_server`` serves a fresh temporary directory on 127.0.0.1 (an ephemeral port,
in a thread), points ``DBR_DATASET_MIRROR`` at it and ``DBR_DATASET_ROOT`` at another
temporary directory, and records every request it answers. ``shared_dataset_server``
does the same, once per test module, for the real files in the ``shared/datasets``
folder beside the repository checkout, whose layout is the mirror layout the loaders
expect (``mnist/``, ``fashion-mnist/``, ``ptb/``).

``mnist_idx`` writes MNIST-format splits as the original gzipped IDX files, under their
names.

``forked_readers`` checks that a dataset read by forked children (each reading it
backwards, over and over) and by the parent at the same time gives everyone the same
examples: the file-backed datasets must reopen their file after a fork.
"""

import contextlib
import functools
import gzip
import http.server
import multiprocessing
import struct
import sys
import threading
import time
from pathlib import Path

import numpy
import pytest

from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
from dbr.datasets import download

SHARED_DATASETS = (Path(__file__).resolve().parents[3] / ".." / "shared" / "datasets").resolve()


class DatasetServer:
    """A running HTTP server: its base ``url``, served ``directory`` and answered requests."""

    def __init__(self, directory, url):
        self.directory = Path(directory)
        self.url = url
        self.delay_s = 0.0
        self._requests = []
        self._lock = threading.Lock()

    def record(self, path):
        with self._lock:
            self._requests.append(path)

    @property
    def requests(self):
        """The paths requested so far, in order."""
        with self._lock:
            return list(self._requests)

    def count(self, path):
        """How many times ``path`` (such as ``"/mnist/x.gz"``) was requested."""
        return self.requests.count(path)

    def write(self, relative, data):
        """Serve ``data`` (bytes) at ``relative`` and return its path on disk."""
        path = self.directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path


class _Handler(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *args, state, **kwargs):
        self._state = state
        super().__init__(*args, directory=str(state.directory), **kwargs)

    def do_GET(self):
        self._state.record(self.path)
        if self._state.delay_s:
            time.sleep(self._state.delay_s)
        super().do_GET()

    def log_message(self, format, *args):
        pass


@contextlib.contextmanager
def serve(directory):
    """Serve ``directory`` over HTTP on 127.0.0.1 while the block runs."""
    state = DatasetServer(directory, url="")
    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Handler, state=state)
    )
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@contextlib.contextmanager
def _mirrored(monkeypatch, directory, root):
    with serve(directory) as server:
        monkeypatch.setattr(download, "_dataset_root", None)
        monkeypatch.setenv("DBR_DATASET_MIRROR", server.url)
        monkeypatch.setenv("DBR_DATASET_ROOT", str(root))
        yield server


@pytest.fixture
def dataset_server(tmp_path, monkeypatch):
    """A local mirror serving an empty temporary directory, with a fresh dataset root."""
    served = tmp_path / "served"
    served.mkdir()
    with _mirrored(monkeypatch, served, tmp_path / "root") as server:
        yield server


@pytest.fixture(scope="module")
def shared_dataset_server(tmp_path_factory):
    """A local mirror serving the real files of ``shared/datasets``, one per test module."""
    if not SHARED_DATASETS.is_dir():
        pytest.skip(f"the real datasets are not available at {SHARED_DATASETS}")
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        _mirrored(monkeypatch, SHARED_DATASETS, tmp_path_factory.mktemp("root")) as server,
    ):
        yield server


class MnistIdx:
    """MNIST's original file layout: the IDX files of each split, gzipped."""

    #: The images' and the labels' file names of each split.
    names = {
        "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
        "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
    }

    @staticmethod
    def encode(array, magic):
        """``array`` (of uint8 values) as a gzipped IDX file with the ``magic`` number."""
        header = struct.pack(">I", magic) + b"".join(struct.pack(">I", n) for n in array.shape)
        return gzip.compress(header + array.astype(numpy.uint8).tobytes())

    @classmethod
    def files(cls, split, images, labels):
        """The split's two files, ``{name: bytes}``: ``images`` and ``labels`` encoded."""
        data = (cls.encode(images, 2051), cls.encode(labels, 2049))
        return dict(zip(cls.names[split], data))


@pytest.fixture
def mnist_idx():
    """:class:`MnistIdx`: MNIST's file names and an encoder of its IDX files."""
    return MnistIdx


def _read_reversed(dataset, rounds, queue):
    out = None
    for _ in range(rounds):
        out = [dataset[i] for i in reversed(range(len(dataset)))]
    queue.put(out)


def check_forked_readers(dataset, expected, children=3, rounds=20):
    """Read ``dataset`` in ``children`` forked children and the parent: all see ``expected``."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    processes = [
        context.Process(target=_read_reversed, args=(dataset, rounds, queue))
        for _ in range(children)
    ]
    for process in processes:
        process.start()
    for _ in range(rounds):
        assert dataset[:] == expected
    results = [queue.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert all(result == expected[::-1] for result in results)


@pytest.fixture
def forked_readers():
    """``forked_readers(dataset, expected)``: forked children and the parent read it alike."""
    if sys.platform == "win32":
        pytest.skip("fork is POSIX only")
    return check_forked_readers
