import copy
import threading

import numpy
import pytest

from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.datasets.multithread_iterator import MultithreadIterator
from dbr.datasets.order_samplers import ShuffleOrderSampler
from dbr.datasets.serial_iterator import SerialIterator


def take(iterator, n):
    return [next(iterator) for _ in range(n)]


def worker_threads():
    return [t for t in threading.enumerate() if t.name.startswith("MultithreadIterator")]


@pytest.fixture
def finalized():
    iterators = []
    yield iterators.append
    for it in iterators:
        it.finalize()
    assert worker_threads() == []


class ThreadRecordingDataset:
    def __init__(self, n):
        self.n = n
        self.threads = set()

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        self.threads.add(threading.current_thread().name)
        return i


@pytest.mark.parametrize("n_threads", [1, 3])
@pytest.mark.parametrize("repeat", [True, False])
@pytest.mark.parametrize("batch_size", [1, 3, 7, 25])
def test_same_batches_as_serial_iterator(finalized, n_threads, repeat, batch_size):
    dataset = list(range(10))
    serial = SerialIterator(
        dataset, batch_size, repeat, order_sampler=ShuffleOrderSampler(numpy.random.RandomState(5))
    )
    threaded = MultithreadIterator(
        dataset,
        batch_size,
        repeat,
        n_threads=n_threads,
        order_sampler=ShuffleOrderSampler(numpy.random.RandomState(5)),
    )
    finalized(threaded)
    for _ in range(12):
        try:
            expected = next(serial)
        except StopIteration:
            with pytest.raises(StopIteration):
                next(threaded)
            break
        assert next(threaded) == expected
        assert threaded.epoch == serial.epoch
        assert threaded.is_new_epoch == serial.is_new_epoch
        assert threaded.current_position == serial.current_position
        assert threaded.epoch_detail == serial.epoch_detail
        assert threaded.previous_epoch_detail == serial.previous_epoch_detail


def test_examples_are_read_in_worker_threads(finalized):
    dataset = ThreadRecordingDataset(20)
    it = MultithreadIterator(dataset, 8, shuffle=False, n_threads=2)
    finalized(it)
    assert next(it) == list(range(8))
    assert dataset.threads
    assert all(name.startswith("MultithreadIterator") for name in dataset.threads)


def test_no_repeat_and_empty(finalized):
    it = MultithreadIterator(list(range(5)), 2, repeat=False, shuffle=False, n_threads=2)
    finalized(it)
    assert list(it) == [[0, 1], [2, 3], [4]]
    with pytest.raises(StopIteration):
        next(it)
    empty = MultithreadIterator([], 2, repeat=False)
    finalized(empty)
    assert list(empty) == []
    with pytest.raises(ValueError, match="MultithreadIterator: the dataset is empty"):
        MultithreadIterator([], 2)


def test_worker_exception_is_raised_by_next(finalized):
    class Failing:
        def __len__(self):
            return 6

        def __getitem__(self, i):
            if i == 4:
                raise KeyError(f"example {i} is broken")
            return i

    it = MultithreadIterator(Failing(), 3, shuffle=False, n_threads=2)
    finalized(it)
    assert next(it) == [0, 1, 2]
    with pytest.raises(KeyError, match="example 4 is broken"):
        next(it)


def test_finalize_stops_the_threads():
    with MultithreadIterator(list(range(10)), 2, n_threads=3) as it:
        take(it, 3)
        assert worker_threads()
    assert worker_threads() == []
    it.finalize()


def test_bad_arguments():
    for bad in (0, -2, 1.0, True):
        with pytest.raises(ValueError, match="n_threads must be a positive integer"):
            MultithreadIterator([1], 1, n_threads=bad)
    with pytest.raises(ValueError, match="batch_size must be a positive integer"):
        MultithreadIterator([1], 0)


def test_reset_drops_the_prefetch(finalized):
    it = MultithreadIterator(list(range(5)), 2, shuffle=False)
    finalized(it)
    take(it, 2)
    it.reset()
    assert next(it) == [0, 1]
    assert it.previous_epoch_detail == 0.0


def test_serialize_keys_as_chainer(finalized):
    it = MultithreadIterator(list(range(5)), 2, shuffle=False)
    finalized(it)
    target = {}
    it.serialize(DictionarySerializer(target))
    assert set(target) == {
        "current_position",
        "epoch",
        "is_new_epoch",
        "_order",
        "previous_epoch_detail",
    }


class RollingSampler:
    """A stateless sampler: each epoch's order follows from the last, so a resumed run
    continues exactly across epochs too (a random sampler's generator is not saved)."""

    def __call__(self, current_order, current_position):
        return numpy.roll(current_order, 3) if current_position else current_order[::-1].copy()


@pytest.mark.parametrize("sampler", [None, RollingSampler])
@pytest.mark.parametrize("stop", [0, 1, 3, 4, 6])
def test_resume_mid_epoch_yields_the_same_batches(finalized, tmp_path, sampler, stop):
    def make():
        it = MultithreadIterator(
            list(range(10)),
            3,
            shuffle=False if sampler is None else None,
            n_threads=2,
            order_sampler=None if sampler is None else sampler(),
        )
        finalized(it)
        return it

    original = make()
    take(original, stop)
    save_npz(tmp_path / "it.npz", original)
    expected = take(original, 12)
    if sampler is not None:
        assert expected[0] != [0, 1, 2]

    resumed = make()
    take(resumed, 2)
    load_npz(tmp_path / "it.npz", resumed)
    assert take(resumed, 12) == expected
    assert resumed.epoch_detail == original.epoch_detail


def test_resume_rest_of_epoch_with_random_order(finalized):
    original = MultithreadIterator(list(range(10)), 3)
    finalized(original)
    take(original, 1)
    target = {}
    original.serialize(DictionarySerializer(target))
    rest = take(original, 3)
    resumed = MultithreadIterator(list(range(10)), 3)
    finalized(resumed)
    NpzDeserializer(target).load(resumed)
    got = take(resumed, 3)
    assert got[:2] == rest[:2]
    assert got[2][0] == rest[2][0]


def test_loading_into_the_same_iterator_discards_its_prefetch(finalized):
    it = MultithreadIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    finalized(it)
    take(it, 1)
    target = {}
    it.serialize(DictionarySerializer(target))
    expected = take(it, 2)
    take(it, 1)
    NpzDeserializer(target).load(it)
    assert take(it, 2) == expected


def test_saving_keeps_the_prefetch(finalized):
    it = MultithreadIterator(list(range(10)), 3, shuffle=False)
    finalized(it)
    take(it, 1)
    pending = it._next
    it.serialize(DictionarySerializer())
    assert it._next is pending
    assert next(it) == [3, 4, 5]


def test_copy_continues_identically(finalized):
    it = MultithreadIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    finalized(it)
    take(it, 2)
    clone = copy.deepcopy(it)
    finalized(clone)
    assert take(clone, 6) == take(it, 6)
