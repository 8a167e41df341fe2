"""Snapshot writers: each writes a loadable file atomically; workers run one at a time."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from dbr.core import Link, Parameter
from dbr.core.serializers import DictionarySerializer, load_npz, save_npz
from dbr.training.extensions.snapshot_writers import (
    ProcessQueueWriter,
    ProcessWriter,
    SimpleWriter,
    ThreadQueueWriter,
    ThreadWriter,
    Writer,
)

WRITERS = [SimpleWriter, ThreadWriter, ProcessWriter, ThreadQueueWriter, ProcessQueueWriter]


class Model(Link):
    def __init__(self, value=0.0):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.full((3, 2), value, dtype=np.float32))
            self.b = Parameter(np.arange(4, dtype=np.float64) * value)


def serialized(value):
    serializer = DictionarySerializer()
    serializer.save(Model(value))
    return serializer.target


def failing_savefun(path, target):
    raise OSError("simulated disk failure")


@pytest.mark.parametrize("writer_class", WRITERS)
def test_each_writer_produces_loadable_files(tmp_path, writer_class):
    writer = writer_class()
    cleanups = []
    writer._add_cleanup_hook(lambda: cleanups.append(1))
    for i in range(3):
        writer(f"snap_{i}", str(tmp_path), serialized(float(i + 1)))
    writer.finalize()
    assert sorted(os.listdir(tmp_path)) == ["snap_0", "snap_1", "snap_2"]
    for i in range(3):
        model = Model()
        load_npz(tmp_path / f"snap_{i}", model)
        np.testing.assert_array_equal(model.W.array, np.full((3, 2), i + 1.0, np.float32))
        np.testing.assert_array_equal(model.b.array, np.arange(4.0) * (i + 1))
    assert len(cleanups) == 3


def test_writer_base_is_abstract(tmp_path):
    with pytest.raises(NotImplementedError):
        Writer()("x", str(tmp_path), {})


def test_simple_writer_passes_keyword_arguments(tmp_path):
    SimpleWriter(compression=False)("plain", str(tmp_path), serialized(2.0))
    import zipfile

    with zipfile.ZipFile(tmp_path / "plain") as archive:
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_STORED}


def test_standard_writer_joins_the_previous_worker(tmp_path):
    events = []
    release = threading.Event()

    def slow_savefun(path, target):
        events.append(("start", os.path.basename(path)))
        release.wait(5)
        save_npz(path, target)
        events.append(("end", os.path.basename(path)))

    writer = ThreadWriter(savefun=slow_savefun)
    writer("a", str(tmp_path), serialized(1.0))
    threading.Timer(0.2, release.set).start()
    writer("b", str(tmp_path), serialized(2.0))
    writer.finalize()
    assert events == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]


def test_file_appears_only_when_complete(tmp_path):
    writing = threading.Event()
    release = threading.Event()

    def slow_savefun(path, target):
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04 first half")
            f.flush()
            writing.set()
            release.wait(5)
        save_npz(path, target)

    writer = ThreadWriter(savefun=slow_savefun)
    writer("snap", str(tmp_path), serialized(3.0))
    assert writing.wait(5)
    assert not (tmp_path / "snap").exists()
    (tmpdir,) = os.listdir(tmp_path)
    assert tmpdir.startswith("tmpsnap") and (tmp_path / tmpdir).is_dir()
    release.set()
    writer.finalize()
    assert os.listdir(tmp_path) == ["snap"]
    model = Model()
    load_npz(tmp_path / "snap", model)
    assert model.W.array[0, 0] == 3.0


def test_append_starts_from_the_existing_file(tmp_path):
    def append_line(path, target, line):
        with open(path, "a") as f:
            f.write(line + "\n")

    SimpleWriter(append_line, append=True, line="one")("log.txt", str(tmp_path), {})
    SimpleWriter(append_line, append=True, line="two")("log.txt", str(tmp_path), {})
    SimpleWriter(append_line, line="three")("log.txt", str(tmp_path), {})
    assert (tmp_path / "log.txt").read_text() == "three\n"
    SimpleWriter(append_line, append=True, line="four")("log.txt", str(tmp_path), {})
    assert (tmp_path / "log.txt").read_text() == "three\nfour\n"


@pytest.mark.parametrize(
    ("writer_class", "words"),
    [
        (ThreadWriter, ["ThreadWriter", "simulated disk failure"]),
        (ProcessWriter, ["ProcessWriter", "exited with code 1"]),
        (ThreadQueueWriter, ["ThreadQueueWriter", "simulated disk failure"]),
        (ProcessQueueWriter, ["ProcessQueueWriter", "simulated disk failure"]),
    ],
)
def test_failed_background_save_is_reported(tmp_path, writer_class, words, capfd):
    (tmp_path / "snap").write_bytes(b"previous")
    writer = writer_class(savefun=failing_savefun)
    writer("snap", str(tmp_path), serialized(1.0))
    with pytest.raises(RuntimeError) as info:
        writer.finalize()
    for word in words + [str(tmp_path / "snap")]:
        assert word in str(info.value)
    assert os.listdir(tmp_path) == ["snap"]
    assert (tmp_path / "snap").read_bytes() == b"previous"
    capfd.readouterr()


@pytest.mark.parametrize("writer_class", [ThreadWriter, ProcessWriter, ThreadQueueWriter])
def test_finalized_writer_refuses_more(tmp_path, writer_class):
    writer = writer_class()
    writer.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        writer("x", str(tmp_path), {})


def test_bad_savefun():
    for cls in WRITERS:
        with pytest.raises(TypeError) as info:
            cls(savefun="save_npz")
        assert cls.__name__ in str(info.value) and "savefun" in str(info.value)


KILLED_WRITER = """
import os, signal, socket, sys, time
if sys.argv[3] != "-":
    socket.gethostname = lambda: sys.argv[3]
from dbr.training.extensions.snapshot_writers import SimpleWriter

def hang(path, target):
    with open(path, "wb") as f:
        f.write(b"PK\\x03\\x04 half a snapshot")
    open(sys.argv[2], "w").close()
    time.sleep(60)

SimpleWriter(savefun=hang)("snapshot_iter_7", sys.argv[1], {})
"""


def kill_while_writing(tmp_path, out, hostname="-"):
    """Run a writer in a process, kill it mid-write; return the directory it left."""
    script = tmp_path / "killed_writer.py"
    script.write_text(KILLED_WRITER)
    flag = tmp_path / "writing"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    process = subprocess.Popen(
        [sys.executable, str(script), str(out), str(flag), hostname], env=env
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert process.poll() is None, "the writer process exited early"
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        process.kill()
        process.wait()
    flag.unlink()
    (left,) = [name for name in os.listdir(out) if name.startswith("tmpsnapshot_iter_7")]
    return left


@pytest.mark.skipif(os.name != "posix", reason="stale directories are found by POSIX pids")
def test_next_save_removes_a_killed_writers_temporary_directory(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    left = kill_while_writing(tmp_path, out)
    (out / "tmp_not_a_writers").mkdir()
    SimpleWriter()("snapshot_iter_8", str(out), serialized(8.0))
    assert sorted(os.listdir(out)) == ["snapshot_iter_8", "tmp_not_a_writers"]
    assert left not in os.listdir(out)


@pytest.mark.skipif(os.name != "posix", reason="stale directories are found by POSIX pids")
def test_another_hosts_temporary_directory_is_kept(tmp_path):
    # On a shared file system a pid says nothing about another host's processes.
    out = tmp_path / "out"
    out.mkdir()
    left = kill_while_writing(tmp_path, out, hostname="elsewhere.example")
    SimpleWriter()("snapshot_iter_8", str(out), serialized(8.0))
    assert sorted(os.listdir(out)) == sorted(["snapshot_iter_8", left])


def test_a_live_writers_temporary_directory_is_kept(tmp_path):
    writing = threading.Event()
    release = threading.Event()

    def slow_savefun(path, target):
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04 first half")
        writing.set()
        release.wait(5)
        save_npz(path, target)

    slow = ThreadWriter(savefun=slow_savefun)
    slow("snap_a", str(tmp_path), serialized(1.0))
    assert writing.wait(5)
    SimpleWriter()("snap_b", str(tmp_path), serialized(2.0))
    release.set()
    slow.finalize()
    assert sorted(os.listdir(tmp_path)) == ["snap_a", "snap_b"]
    model = Model()
    load_npz(tmp_path / "snap_a", model)
    assert model.W.array[0, 0] == 1.0
