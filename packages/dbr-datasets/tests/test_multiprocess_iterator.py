import copy
import gc
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy
import pytest

from dbr.core.serializers import load_npz, save_npz
from dbr.core.testing.processes import process_alive, wait_until
from dbr.datasets.multiprocess_iterator import MultiprocessIterator
from dbr.datasets.order_samplers import ShuffleOrderSampler
from dbr.datasets.serial_iterator import SerialIterator

_baseline = set()


@pytest.fixture(autouse=True)
def _children_baseline():
    """Child processes that exist before a test (not its own) are not counted."""
    _baseline.clear()
    _baseline.update(multiprocessing.active_children())


def new_children():
    """The live child processes started since the test began."""
    return set(multiprocessing.active_children()) - _baseline


def make_dataset(n):
    return [(numpy.full((2, 3), i, dtype=numpy.float32), i) for i in range(n)]


def labels(batch):
    return [example[1] for example in batch]


def position(it):
    return (
        it.epoch,
        it.current_position,
        it.is_new_epoch,
        it.epoch_detail,
        it.previous_epoch_detail,
    )


def assert_batches_equal(actual, expected):
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert type(a) is type(e)
        if isinstance(e, tuple):
            for x, y in zip(a, e):
                numpy.testing.assert_array_equal(x, y)
        else:
            numpy.testing.assert_array_equal(a, e)


@pytest.fixture
def iterators():
    """Build MultiprocessIterators that are finalized, and checked to leave no workers."""
    made = []
    before = set(multiprocessing.active_children())

    def build(*args, **kwargs):
        kwargs.setdefault("n_processes", 2)
        it = MultiprocessIterator(*args, **kwargs)
        made.append(it)
        return it

    yield build
    for it in made:
        it.finalize()
    assert set(multiprocessing.active_children()) <= before


@pytest.mark.parametrize("shared_mem", [None, 256])
@pytest.mark.parametrize(
    ("n", "batch_size", "repeat"), [(10, 4, True), (10, 4, False), (5, 13, True), (8, 8, False)]
)
def test_same_batches_and_positions_as_serial_iterator(
    iterators, n, batch_size, repeat, shared_mem
):
    dataset = make_dataset(n)
    serial = SerialIterator(
        dataset, batch_size, repeat, order_sampler=ShuffleOrderSampler(numpy.random.RandomState(3))
    )
    parallel = iterators(
        dataset,
        batch_size,
        repeat,
        order_sampler=ShuffleOrderSampler(numpy.random.RandomState(3)),
        shared_mem=shared_mem,
    )
    assert position(parallel) == position(serial)
    for _ in range(7):
        try:
            expected = next(serial)
        except StopIteration:
            with pytest.raises(StopIteration):
                next(parallel)
            assert position(parallel) == position(serial)
            break
        assert_batches_equal(next(parallel), expected)
        assert position(parallel) == position(serial)
    else:
        assert repeat


def test_without_shuffle_visits_the_dataset_in_order(iterators):
    it = iterators(make_dataset(5), 2, shuffle=False)
    assert [labels(next(it)) for _ in range(4)] == [[0, 1], [2, 3], [4, 0], [1, 2]]
    assert it.epoch == 1
    assert it.epoch_detail == pytest.approx(1.6)
    assert it.previous_epoch_detail == pytest.approx(1.2)


def test_repeat_false_stops_after_a_short_last_batch(iterators):
    it = iterators(make_dataset(5), 2, repeat=False, shuffle=False)
    assert [labels(batch) for batch in it] == [[0, 1], [2, 3], [4]]
    assert it.epoch == 1
    assert it.is_new_epoch
    with pytest.raises(StopIteration):
        next(it)


def test_batch_larger_than_dataset(iterators):
    it = iterators(make_dataset(3), 7, shuffle=False)
    assert labels(next(it)) == [0, 1, 2, 0, 1, 2, 0]
    assert it.epoch == 2
    it = iterators(make_dataset(3), 7, repeat=False, shuffle=False)
    assert labels(next(it)) == [0, 1, 2]
    with pytest.raises(StopIteration):
        next(it)


def test_empty_dataset(iterators):
    it = iterators([], 2, repeat=False)
    with pytest.raises(StopIteration):
        next(it)
    assert new_children() == set()
    with pytest.raises(ValueError, match="empty"):
        iterators([], 2, repeat=True)


@pytest.mark.parametrize(
    "example",
    [
        numpy.arange(6, dtype=numpy.int64).reshape(2, 3),
        numpy.arange(12, dtype=numpy.float64).reshape(3, 4)[:, ::2],
        (numpy.array(2.5, dtype=numpy.float16), numpy.array([True, False]), 7),
        {"x": numpy.array([1 + 2j, 3j]), "y": numpy.zeros((0, 3), dtype=numpy.float32)},
        [numpy.array(["a", "bc"]), numpy.array([None, 1], dtype=object), "text"],
        (numpy.uint8(5), 1.5),
    ],
    ids=["array", "non-contiguous", "tuple", "dict", "list-with-objects", "no-arrays"],
)
@pytest.mark.parametrize("shared_mem", [None, 1024])
def test_examples_round_trip(iterators, example, shared_mem):
    it = iterators([example] * 5, 4, shared_mem=shared_mem)
    for _ in range(3):
        for got in next(it):
            assert type(got) is type(example)
            items = list(example.values()) if isinstance(example, dict) else example
            got_items = list(got.values()) if isinstance(got, dict) else got
            if isinstance(example, dict):
                assert list(got) == list(example)
            if isinstance(example, numpy.ndarray):
                items, got_items = [example], [got]
            for want, have in zip(items, got_items):
                if isinstance(want, numpy.ndarray):
                    assert have.dtype == want.dtype
                    assert have.shape == want.shape
                    assert have.flags.writeable
                numpy.testing.assert_array_equal(have, want)


def test_returned_arrays_do_not_share_memory(iterators):
    it = iterators(make_dataset(4), 2, shuffle=False, shared_mem=64)
    first = next(it)
    first[0][0][...] = -1
    second = next(it)
    third = next(it)
    numpy.testing.assert_array_equal(second[0][0], numpy.full((2, 3), 2))
    numpy.testing.assert_array_equal(third[0][0], numpy.zeros((2, 3)))
    assert not numpy.shares_memory(third[0][0], third[1][0])


def test_too_small_shared_mem_warns_once_and_still_delivers(iterators):
    dataset = [numpy.arange(100, dtype=numpy.float64) + i for i in range(6)]
    it = iterators(dataset, 3, shuffle=False, shared_mem=64)
    with pytest.warns(RuntimeWarning, match="needs 800 bytes of shared memory"):
        batch = next(it)
    assert_batches_equal(batch, dataset[:3])
    assert_batches_equal(next(it), dataset[3:])


def test_examples_larger_than_the_first_batch_warn(iterators):
    dataset = [numpy.zeros(4 if i < 2 else 40) for i in range(4)]
    it = iterators(dataset, 2, shuffle=False)
    assert_batches_equal(next(it), dataset[:2])
    with pytest.warns(RuntimeWarning, match="needs 320 bytes"):
        assert_batches_equal(next(it), dataset[2:])


class FailingDataset:
    def __init__(self, n, bad):
        self.n = n
        self.bad = bad

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise KeyError(f"example {i} is broken")
        return numpy.full(3, i)


def test_worker_exception_is_raised_in_the_main_process(iterators):
    it = iterators(FailingDataset(8, bad=5), 2, shuffle=False, shared_mem=64)
    assert next(it).__len__() == 2
    assert next(it).__len__() == 2
    with pytest.raises(KeyError, match="example 5 is broken") as info:
        next(it)
    assert "__getitem__" in str(info.value.__cause__)
    assert new_children() == set()
    assert it.current_position == 4
    it.dataset.bad = None
    assert_batches_equal(next(it), [numpy.full(3, 4), numpy.full(3, 5)])


def test_exception_while_measuring_is_raised(iterators):
    it = iterators(FailingDataset(4, bad=1), 2, shuffle=False)
    with pytest.raises(KeyError, match="example 1 is broken"):
        next(it)
    assert it.current_position == 0
    assert new_children() == set()


def test_finalize_leaves_no_child_process():
    before = set(multiprocessing.active_children())
    it = MultiprocessIterator(make_dataset(10), 3, n_processes=2)
    next(it)
    workers = set(multiprocessing.active_children()) - before
    assert len(workers) == 2
    it.finalize()
    assert set(multiprocessing.active_children()) == before
    assert all(not worker.is_alive() for worker in workers)
    it.finalize()


def test_context_manager_and_garbage_collection_stop_the_workers():
    with MultiprocessIterator(make_dataset(10), 3, n_processes=2) as it:
        next(it)
        assert len(new_children()) == 2
    assert new_children() == set()

    it = MultiprocessIterator(make_dataset(10), 3, n_processes=2)
    next(it)
    assert len(new_children()) == 2
    del it
    gc.collect()
    assert new_children() == set()


def test_next_after_finalize_restarts_at_the_same_position(iterators):
    it = iterators(make_dataset(7), 3, shuffle=False)
    assert labels(next(it)) == [0, 1, 2]
    it.finalize()
    assert labels(next(it)) == [3, 4, 5]
    assert len(new_children()) == 2


def test_interpreter_exit_stops_the_workers(tmp_path):
    script = textwrap.dedent(
        """
        import multiprocessing
        import numpy
        from dbr.datasets.multiprocess_iterator import MultiprocessIterator

        it = MultiprocessIterator([numpy.zeros(3)] * 10, 2, n_processes=2)
        next(it)
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        """
    )
    # The child imports dbr.datasets from where this process does.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    pids = [int(pid) for pid in done.stdout.split()]
    assert len(pids) == 2
    deadline = time.monotonic() + 10
    while any(process_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(process_alive(pid) for pid in pids)


class StatelessSampler:
    """Each epoch's order is a fixed function of the previous one, so it can be resumed."""

    def __init__(self):
        self.permutation = numpy.random.RandomState(7).permutation(11)

    def __call__(self, current_order, current_position):
        return current_order[self.permutation]


def save_and_check_keys(path, it):
    save_npz(path, it)
    with numpy.load(path) as saved:
        assert sorted(saved.files) == [
            "current_position",
            "epoch",
            "is_new_epoch",
            "order",
            "previous_epoch_detail",
        ]


@pytest.mark.parametrize("resume_into", ["started", "fresh"])
@pytest.mark.parametrize("taken", [2, 5])
def test_resume_mid_epoch_yields_the_same_batches(iterators, tmp_path, resume_into, taken):
    dataset = make_dataset(11)
    serial = SerialIterator(dataset, 4, order_sampler=StatelessSampler())
    expected = [labels(next(serial)) for _ in range(taken + 6)]

    original = iterators(dataset, 4, order_sampler=StatelessSampler())
    assert [labels(next(original)) for _ in range(taken)] == expected[:taken]
    save_and_check_keys(tmp_path / "it.npz", original)
    assert [labels(next(original)) for _ in range(6)] == expected[taken:]

    resumed = iterators(dataset, 4, order_sampler=StatelessSampler())
    if resume_into == "started":
        next(resumed)
    load_npz(tmp_path / "it.npz", resumed)
    assert resumed.epoch_detail == pytest.approx(taken * 4 / 11)
    assert resumed.previous_epoch_detail == pytest.approx((taken - 1) * 4 / 11)
    assert [labels(next(resumed)) for _ in range(6)] == expected[taken:]


def test_resume_with_a_seeded_shuffle_finishes_the_epoch_identically(iterators, tmp_path):
    dataset = make_dataset(11)

    def sampler():
        return ShuffleOrderSampler(numpy.random.RandomState(5))

    serial = SerialIterator(dataset, 3, order_sampler=sampler())
    expected = [labels(next(serial)) for _ in range(8)]
    original = iterators(dataset, 3, order_sampler=sampler())
    assert [labels(next(original)) for _ in range(2)] == expected[:2]
    save_and_check_keys(tmp_path / "it.npz", original)
    # A fresh iterator whose sampler has drawn as often as the saved one's.
    resumed = iterators(dataset, 3, order_sampler=sampler())
    load_npz(tmp_path / "it.npz", resumed)
    assert [labels(next(resumed)) for _ in range(6)] == expected[2:]


def test_saving_does_not_disturb_the_prefetched_batches(iterators, tmp_path):
    dataset = make_dataset(9)
    serial = SerialIterator(
        dataset, 4, order_sampler=ShuffleOrderSampler(numpy.random.RandomState(1))
    )
    it = iterators(dataset, 4, order_sampler=ShuffleOrderSampler(numpy.random.RandomState(1)))
    for _ in range(6):
        save_npz(tmp_path / "it.npz", it)
        load_npz(tmp_path / "it.npz", it)
        assert labels(next(it)) == labels(next(serial))


def test_reset_starts_over(iterators):
    it = iterators(make_dataset(5), 2, repeat=False, shuffle=False)
    assert [labels(batch) for batch in it] == [[0, 1], [2, 3], [4]]
    it.reset()
    assert it.epoch == 0 and it.previous_epoch_detail is None
    assert [labels(batch) for batch in it] == [[0, 1], [2, 3], [4]]
    it = iterators(make_dataset(5), 2, shuffle=False)
    next(it)
    it.reset()
    assert labels(next(it)) == [0, 1]


def test_copy_is_an_independent_iterator(iterators):
    it = iterators(make_dataset(6), 2, shuffle=False)
    next(it)
    twin = copy.copy(it)
    it.finalize()
    try:
        assert labels(next(twin)) == [2, 3]
        assert labels(next(twin)) == [4, 5]
    finally:
        twin.finalize()
    assert labels(next(it)) == [2, 3]


class RandomDataset:
    def __len__(self):
        return 16

    def __getitem__(self, i):
        return numpy.random.random_sample()


def test_workers_have_different_random_states(iterators):
    it = iterators(RandomDataset(), 16, shared_mem=16)
    values = next(it) + next(it)
    assert len(set(values)) == len(values)


class SlowDataset:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        time.sleep(0.3)
        return i


def test_slow_dataset_warns_after_dataset_timeout(iterators):
    it = iterators(SlowDataset(), 2, shuffle=False, shared_mem=16, dataset_timeout=0.05)
    with pytest.warns(MultiprocessIterator.TimeoutWarning, match="dataset_timeout=0.05"):
        assert next(it) == [0, 1]


def test_slow_first_batch_warns_while_measuring(iterators):
    # shared_mem=None loads the first batch in the main process (to measure
    # it); dataset_timeout watches that load too, as in Chainer.
    it = iterators(SlowFirstExample(), 2, shuffle=False, dataset_timeout=0.05)
    with pytest.warns(MultiprocessIterator.TimeoutWarning, match="dataset_timeout=0.05"):
        assert next(it) == [0, 1]


class SlowFirstExample:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 0:
            time.sleep(0.3)
        return i


def test_exception_while_measuring_with_a_timeout_is_raised_in_the_caller(iterators):
    it = iterators(FailingDataset(4, bad=0), 2, shuffle=False, dataset_timeout=5.0)
    with pytest.raises(KeyError, match="example 0 is broken"):
        next(it)
    assert all(t.name != "MultiprocessIterator first batch" for t in threading.enumerate())


def test_reset_after_finalize_is_refused_but_next_goes_on(iterators):
    it = iterators(make_dataset(6), 2, shuffle=False)
    next(it)
    it.finalize()
    with pytest.raises(NotImplementedError, match="MultiprocessIterator.reset: the iterator was"):
        it.reset()
    assert labels(next(it)) == [2, 3]
    twin = copy.copy(it)
    twin.reset()  # a copy is a new iterator
    assert twin.current_position == 0
    with MultiprocessIterator(make_dataset(4), 2, n_processes=1) as scoped:
        next(scoped)
    with pytest.raises(NotImplementedError):
        scoped.reset()


def test_reset_after_a_worker_error_is_allowed(iterators):
    it = iterators(FailingDataset(6, bad=3), 2, shuffle=False, shared_mem=64)
    next(it)
    with pytest.raises(KeyError, match="example 3 is broken"):
        next(it)
    it.reset()
    assert it.current_position == 0 and it.epoch == 0


class PidDataset:
    """Each example is its index and the pid of the process that loaded it."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i, os.getpid()


def test_maxtasksperchild_replaces_workers(iterators):
    it = iterators(PidDataset(), 4, shuffle=False, maxtasksperchild=1, shared_mem=64)
    pids = set()
    for _ in range(6):
        batch = next(it)
        pids.update(pid for _, pid in batch)
    assert [i for i, _ in batch] == [0, 1, 2, 3]
    # Each worker loads one chunk (here one example) and is replaced.
    assert len(pids) == 24
    assert len(new_children()) <= 4


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"batch_size": 0}, "batch_size must be a positive integer, got 0"),
        ({"n_processes": 0}, "n_processes must be an integer >= 1, got 0"),
        ({"n_prefetch": 0}, "n_prefetch must be an integer >= 1, got 0"),
        ({"shared_mem": -1}, "shared_mem must be an integer >= 0, got -1"),
        ({"shared_mem": 1.5}, "shared_mem must be an integer >= 0, got 1.5"),
        ({"maxtasksperchild": 0}, "maxtasksperchild must be an integer >= 1, got 0"),
        ({"dataset_timeout": 0}, "dataset_timeout must be a positive number"),
        (
            {"shuffle": True, "order_sampler": ShuffleOrderSampler()},
            "shuffle=True and an order_sampler were both given",
        ),
    ],
)
def test_bad_arguments(kwargs, match):
    kwargs = {"batch_size": 2, **kwargs}
    with pytest.raises(ValueError, match=match) as info:
        MultiprocessIterator(make_dataset(3), **kwargs)
    assert "MultiprocessIterator" in str(info.value)
    assert new_children() == set()


def test_default_arguments():
    it = MultiprocessIterator(make_dataset(3), 2)
    assert it.n_processes == multiprocessing.cpu_count()
    assert it.n_prefetch == 1
    assert it.shared_mem is None
    assert it.dataset_timeout == 30.0
    assert it.maxtasksperchild is None
    assert it.repeat
    assert isinstance(it.order_sampler, ShuffleOrderSampler)
    assert new_children() == set()


def bounded(function, seconds):
    """Return ``function()``, run in a thread; fail the test if it still runs after ``seconds``.

    A hang then fails the test instead of stopping the run.
    """
    outcome = {}

    def run():
        try:
            outcome["value"] = function()
        except BaseException as error:
            outcome["error"] = error

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"{function} still runs after {seconds} s: it hangs")
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


class BlockingDataset:
    """Example ``bad`` writes its worker's pid to ``pid_file`` and sleeps for two minutes.

    With ``ignore_sigterm`` its worker also ignores SIGTERM while it sleeps.
    """

    def __init__(self, n, bad, pid_file, ignore_sigterm=False):
        self.n = n
        self.bad = bad
        self.pid_file = pid_file
        self.ignore_sigterm = ignore_sigterm

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            if self.ignore_sigterm:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
            self.pid_file.write_text(str(os.getpid()))
            time.sleep(120)
        return numpy.full(3, i)


def test_finalize_stops_a_worker_that_ignores_sigterm_mid_example(iterators, tmp_path):
    pid_file = tmp_path / "pid"
    it = iterators(
        BlockingDataset(8, 3, pid_file, ignore_sigterm=True),
        2,
        shuffle=False,
        shared_mem=64,
        dataset_timeout=None,
    )
    next(it)
    wait_until(pid_file.exists, 30, "example 3 being loaded")
    wait_until(lambda: pid_file.read_text(), 30, "the loading worker's pid")
    pid = int(pid_file.read_text())
    bounded(it.finalize, 30)
    assert not process_alive(pid)
    assert new_children() == set()


def test_worker_killed_mid_example_is_reported_at_once(iterators, tmp_path):
    pid_file = tmp_path / "pid"
    it = iterators(
        BlockingDataset(8, 5, pid_file), 2, shuffle=False, shared_mem=64, dataset_timeout=None
    )
    assert labels_of(next(it)) == [0, 1]
    wait_until(pid_file.exists, 30, "example 5 being loaded")
    wait_until(lambda: pid_file.read_text(), 30, "the loading worker's pid")
    pid = int(pid_file.read_text())
    os.kill(pid, signal.SIGKILL)
    got = []

    def take():
        for _ in range(3):
            got.append(labels_of(next(it)))

    with pytest.raises(
        RuntimeError,
        match=rf"worker \d \(pid {pid}\) is killed by signal: SIGKILL \(out of memory\?\) "
        r"while loading example 5",
    ):
        bounded(take, 60)
    assert got in ([], [[2, 3]])
    assert new_children() == set()
    it.dataset.bad = None
    assert labels_of(next(it)) == [4, 5] if got else [2, 3]


def labels_of(batch):
    return [int(example[0]) for example in batch]


class ExitingDataset:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            os._exit(3)
        return numpy.full(3, i)


def test_worker_that_exits_is_reported_with_its_exit_code(iterators):
    it = iterators(ExitingDataset(), 2, shuffle=False, shared_mem=64, dataset_timeout=None)
    next(it)  # starts the workers in the main thread

    def take():
        for _ in range(2):
            next(it)

    with pytest.raises(
        RuntimeError, match=r"worker \d \(pid \d+\) exited with code 3 while loading example 5"
    ):
        bounded(take, 60)
    assert new_children() == set()


class TwoArgumentError(Exception):
    """Unpickling calls TwoArgumentError(message), which fails: it takes two arguments."""

    def __init__(self, what, why):
        super().__init__(f"{what} failed: {why}")


class UnpicklableErrorDataset:
    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise TwoArgumentError(f"example {i}", "the disk is gone")
        return numpy.full(3, i)


def test_exception_that_cannot_be_unpickled_is_reported_by_name_and_text(iterators):
    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(TwoArgumentError("a", "b")))
    it = iterators(
        UnpicklableErrorDataset(), 2, shuffle=False, shared_mem=64, dataset_timeout=None
    )
    next(it)  # starts the workers in the main thread

    def take():
        for _ in range(2):
            next(it)

    with pytest.raises(RuntimeError) as info:
        bounded(take, 60)
    message = str(info.value)
    assert "TwoArgumentError: example 5 failed: the disk is gone" in message
    assert "while loading example 5" in message
    assert "__getitem__" in str(info.value.__cause__)
    assert new_children() == set()


def test_finalize_while_workers_are_being_replaced_never_hangs():
    for _ in range(20):
        it = MultiprocessIterator(
            make_dataset(10), 2, n_processes=2, maxtasksperchild=1, shared_mem=64
        )
        next(it)
        next(it)
        bounded(it.finalize, 30)
        assert new_children() == set()


def test_workers_exit_when_the_main_process_is_killed():
    script = textwrap.dedent(
        """
        import multiprocessing
        import time
        import numpy
        from dbr.datasets.multiprocess_iterator import MultiprocessIterator

        it = MultiprocessIterator([numpy.zeros(3)] * 10, 2, n_processes=2)
        next(it)
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        time.sleep(120)
        """
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path for path in sys.path if path))
    main = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        pids = [int(pid) for pid in bounded(main.stdout.readline, 60).split()]
    finally:
        main.kill()
        main.wait()
        main.stdout.close()
    assert len(pids) == 2
    try:
        wait_until(lambda: not any(process_alive(pid) for pid in pids), 15, "the workers' exit")
    finally:
        for pid in pids:
            if process_alive(pid):
                os.kill(pid, signal.SIGKILL)


class CountingDataset:
    """Counts the examples loaded, in every process, in a shared counter."""

    def __init__(self, n):
        self.n = n
        self.loaded = multiprocessing.Value("i", 0)

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        with self.loaded.get_lock():
            self.loaded.value += 1
        return numpy.full(3, i)


@pytest.mark.parametrize("shared_mem", [0, 64])
def test_prefetched_batches_load_while_the_caller_is_busy(iterators, shared_mem):
    dataset = CountingDataset(100)
    it = iterators(dataset, 8, shuffle=False, n_prefetch=2, shared_mem=shared_mem)
    assert labels_of(next(it)) == list(range(8))
    # Three batches beyond the returned one (n_prefetch + 1), with no call to wait in.
    wait_until(lambda: dataset.loaded.value == 32, 30, "32 examples loaded")
    time.sleep(0.2)
    assert dataset.loaded.value == 32
    assert labels_of(next(it)) == list(range(8, 16))


def test_examples_larger_than_a_pipe_buffer_through_pipes(iterators):
    # Workers block sending such answers while the main process is away; it
    # must still be able to hand them more work, and read everything later.
    dataset = [numpy.full(50_000, i, dtype=numpy.float32) for i in range(20)]
    it = iterators(dataset, 6, shuffle=False, n_prefetch=3, shared_mem=0)
    # The workers start here, in the main thread: forking from a second thread
    # is deprecated.
    batches = [next(it)]
    time.sleep(0.5)
    batches += bounded(lambda: [next(it) for _ in range(7)], 120)
    expected = [i % 20 for i in range(48)]
    assert [int(example[0]) for batch in batches for example in batch] == expected
    assert all(example.shape == (50_000,) for batch in batches for example in batch)
