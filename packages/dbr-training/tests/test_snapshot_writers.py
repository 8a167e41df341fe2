"""Snapshot writers: each writes a loadable file atomically; workers run one at a time."""

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest

from dbr.core import Link, Parameter
from dbr.core.serializers import DictionarySerializer, load_npz, save_npz
from dbr.core.testing.processes import process_alive, wait_until
from dbr.training.extensions.snapshot_writers import (
    ProcessQueueWriter,
    ProcessWriter,
    QueueWriter,
    SimpleWriter,
    StandardWriter,
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


def _start_stalled_write(directory, filename, value):
    """Start a ThreadWriter writing ``filename`` whose savefun stops half-way through the file.

    Returns once the half file is on disk: the writer and the event that lets it finish.
    """
    writing = threading.Event()
    release = threading.Event()

    def savefun(path, target):
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04 first half")
            f.flush()
            writing.set()
            release.wait(5)
        save_npz(path, target)

    writer = ThreadWriter(savefun=savefun)
    writer(filename, str(directory), serialized(value))
    assert writing.wait(5)
    return writer, release


def test_file_appears_only_when_complete(tmp_path):
    writer, release = _start_stalled_write(tmp_path, "snap", 3.0)
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


class RecordingWorker:
    """A user-made worker: start/join only, with an unrelated ``error`` attribute."""

    def __init__(self, log, name):
        self.log, self.name, self.error = log, name, "not an exception"

    def start(self):
        self.log.append(("start", self.name))

    def join(self):
        self.log.append(("join", self.name))


def test_standard_writer_runs_any_worker_with_start_and_join(tmp_path):
    log = []

    class Writer(StandardWriter):
        def create_worker(self, filename, outdir, target, **kwds):
            return RecordingWorker(log, filename)

    writer = Writer()
    writer("a", str(tmp_path), {})
    writer("b", str(tmp_path), {})
    writer.finalize()
    assert log == [("start", "a"), ("join", "a"), ("start", "b"), ("join", "b")]


class RecordingQueue:
    """A queue holding given items that records the calls made on it."""

    def __init__(self, items=()):
        self.items, self.calls = list(items), []

    def put(self, item):
        self.calls.append("put")
        self.items.append(item)

    def get(self):
        self.calls.append("get")
        return self.items.pop(0)

    def task_done(self):
        self.calls.append("task_done")

    def join(self):
        self.calls.append("join")


def test_queue_writer_finalize_waits_for_the_queue_then_the_consumer(tmp_path):
    q, order = RecordingQueue(), []

    class Consumer:
        def start(self):
            order.append("start")

        def is_alive(self):
            return True

        def join(self):
            order.append("consumer.join after " + ",".join(q.calls))

    class Writer(QueueWriter):
        def create_queue(self):
            return q

        def create_consumer(self, queue):
            return Consumer()

    writer = Writer()
    writer("a", str(tmp_path), {})
    writer.finalize()
    assert q.calls == ["put", "put", "join"]
    assert q.items[-1] is None
    assert order == ["start", "consumer.join after put,put,join"]


def test_queue_writer_consume_marks_every_item_done_even_a_failing_one(tmp_path):
    calls = []

    def task(filename, outdir, target):
        calls.append(filename)
        if filename == "bad":
            raise OSError("simulated disk failure")

    q = RecordingQueue([[task, "a", str(tmp_path), {}], (task, "bad", str(tmp_path), {}), None])
    writer = ThreadQueueWriter()
    writer.finalize()
    writer.consume(q)
    assert calls == ["a", "bad"]
    assert q.calls.count("task_done") == 3
    with pytest.raises(RuntimeError, match="simulated disk failure"):
        writer._raise_errors()


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
    slow, release = _start_stalled_write(tmp_path, "snap_a", 1.0)
    SimpleWriter()("snap_b", str(tmp_path), serialized(2.0))
    release.set()
    slow.finalize()
    assert sorted(os.listdir(tmp_path)) == ["snap_a", "snap_b"]
    model = Model()
    load_npz(tmp_path / "snap_a", model)
    assert model.W.array[0, 0] == 1.0


SCRIPT_HEAD = """
import os, sys, threading, time
import multiprocessing
import numpy
from dbr.training.extensions.snapshot_writers import (
    ProcessQueueWriter, SimpleWriter, ThreadQueueWriter,
)

class SlowTask(SimpleWriter):
    # Marks that it started, then takes a second before saving.
    def __call__(self, filename, outdir, target):
        open(os.path.join(outdir, "started"), "w").close()
        time.sleep(1.0)
        super().__call__(filename, outdir, target)

def consumer_pids():
    return [p.pid for p in multiprocessing.active_children()]
"""


def _start_script(body, *args):
    """``python -c SCRIPT_HEAD + body *args``, importing dbr from where this process does."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    return subprocess.Popen(
        [sys.executable, "-c", SCRIPT_HEAD + textwrap.dedent(body), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _first_line(process, seconds):
    line = []
    reader = threading.Thread(target=lambda: line.append(process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    if not line:
        process.kill()
        pytest.fail(f"the script printed nothing in {seconds} s")
    return line[0]


def _kill_all(pids):
    for pid in pids:
        if process_alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("writer_class", ["ThreadQueueWriter", "ProcessQueueWriter"])
def test_unfinalized_queue_writer_lets_the_interpreter_exit_after_its_saves(
    tmp_path, writer_class
):
    script = _start_script(
        f"""
        writer = {writer_class}(task=SlowTask())
        writer("snapshot", sys.argv[1], {{"w": numpy.arange(3)}})
        print(*consumer_pids(), flush=True)
        """,
        tmp_path,
    )
    pids = [int(pid) for pid in _first_line(script, 60).split()]
    try:
        script.wait(timeout=30)
    except subprocess.TimeoutExpired:
        script.kill()
        pytest.fail(f"the script with an unfinalized {writer_class} did not exit in 30 s")
    finally:
        # The consumer process shares the script's pipes: once it is gone they end.
        _kill_all(pids)
        _, stderr = script.communicate()
    assert script.returncode == 0, stderr
    assert stderr == ""
    assert np.load(tmp_path / "snapshot")["w"].tolist() == [0, 1, 2]
    assert not any(process_alive(pid) for pid in pids)


@pytest.mark.parametrize("saving", [False, True], ids=["idle", "mid-save"])
def test_process_queue_writer_consumer_exits_when_the_trainer_is_killed(tmp_path, saving):
    script = _start_script(
        """
        writer = ProcessQueueWriter(task=SlowTask())
        if sys.argv[2] == "True":
            writer("snapshot", sys.argv[1], {"w": numpy.arange(3)})
        print(*consumer_pids(), flush=True)
        time.sleep(120)
        """,
        tmp_path,
        saving,
    )
    (consumer,) = [int(pid) for pid in _first_line(script, 60).split()]
    try:
        if saving:
            wait_until((tmp_path / "started").exists, 30, "the save's start")
        script.kill()
        script.wait()
        wait_until(lambda: not process_alive(consumer), 15, "the consumer's exit")
    finally:
        _kill_all([consumer])
        script.communicate()
    if saving:
        assert np.load(tmp_path / "snapshot")["w"].tolist() == [0, 1, 2]


def test_a_full_disk_under_the_default_writer_names_the_snapshot(tmp_path):
    import errno

    def full_disk(path, target):
        with open(path, "wb") as f:
            f.write(b"part")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))  # as a failed write raises it

    (tmp_path / "snap").write_bytes(b"previous")
    with pytest.raises(OSError) as info:
        SimpleWriter(savefun=full_disk)("snap", str(tmp_path), serialized(1.0))
    assert info.value.errno == errno.ENOSPC
    message = str(info.value)
    assert "SimpleWriter: saving the snapshot" in message
    assert repr(str(tmp_path / "snap")) in message and "No space left on device" in message
    assert os.listdir(tmp_path) == ["snap"]
    assert (tmp_path / "snap").read_bytes() == b"previous"
