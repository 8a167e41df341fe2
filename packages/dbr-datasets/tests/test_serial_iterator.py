import pickle

import numpy
import pytest

from dbr.core.serializers import (
    DeserializationError,
    DictionarySerializer,
    NpzDeserializer,
    load_npz,
    save_npz,
)
from dbr.datasets.iterator import Iterator
from dbr.datasets.order_samplers import OrderSampler, ShuffleOrderSampler
from dbr.datasets.serial_iterator import SerialIterator


def take(iterator, n):
    return [next(iterator) for _ in range(n)]


def test_is_an_iterator():
    it = SerialIterator([1, 2], 1)
    assert isinstance(it, Iterator)
    assert iter(it) is it
    assert it.next() in ([1], [2])


def test_in_order_wraps_across_epochs():
    it = SerialIterator(list(range(5)), 2, shuffle=False)
    assert it.previous_epoch_detail is None
    assert it.epoch_detail == 0.0
    expected = [
        ([0, 1], 0, False, 0.4, 0.0),
        ([2, 3], 0, False, 0.8, 0.4),
        ([4, 0], 1, True, 1.2, 0.8),
        ([1, 2], 1, False, 1.6, 1.2),
        ([3, 4], 2, True, 2.0, 1.6),
        ([0, 1], 2, False, 2.4, 2.0),
    ]
    for batch, epoch, is_new_epoch, detail, previous in expected:
        assert next(it) == batch
        assert it.epoch == epoch
        assert it.is_new_epoch is is_new_epoch
        assert it.epoch_detail == pytest.approx(detail)
        assert it.previous_epoch_detail == pytest.approx(previous)
    assert it.current_position == 2
    assert it.repeat is True


def test_no_repeat_ends_with_short_batch_then_stops():
    it = SerialIterator(list(range(7)), 3, repeat=False, shuffle=False)
    assert next(it) == [0, 1, 2]
    assert next(it) == [3, 4, 5]
    assert not it.is_new_epoch
    assert next(it) == [6]
    assert it.epoch == 1 and it.is_new_epoch and it.epoch_detail == 1.0
    for _ in range(2):
        with pytest.raises(StopIteration):
            next(it)
    assert it.repeat is False


def test_no_repeat_exact_multiple():
    assert list(SerialIterator(list(range(6)), 3, repeat=False, shuffle=False)) == [
        [0, 1, 2],
        [3, 4, 5],
    ]


def test_no_repeat_shuffled_visits_every_example_once():
    batches = list(SerialIterator(list(range(10)), 4, repeat=False))
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(sum(batches, [])) == list(range(10))


def test_batch_larger_than_dataset_repeat():
    it = SerialIterator(list(range(3)), 7, shuffle=False)
    assert next(it) == [0, 1, 2, 0, 1, 2, 0]
    assert it.epoch == 2 and it.is_new_epoch and it.current_position == 1
    assert next(it) == [1, 2, 0, 1, 2, 0, 1]
    assert it.epoch == 4 and it.current_position == 2


def test_batch_larger_than_dataset_shuffled_repeat():
    it = SerialIterator(list(range(3)), 7)
    batch = next(it)
    assert len(batch) == 7
    assert sorted(batch[:3]) == sorted(batch[3:6]) == [0, 1, 2]


def test_batch_larger_than_dataset_no_repeat():
    it = SerialIterator(list(range(3)), 7, repeat=False)
    assert sorted(next(it)) == [0, 1, 2]
    with pytest.raises(StopIteration):
        next(it)


def test_empty_dataset():
    it = SerialIterator([], 4, repeat=False)
    assert list(it) == []
    assert it.epoch == 1 and it.epoch_detail == 1.0
    with pytest.raises(ValueError, match="SerialIterator: the dataset is empty"):
        SerialIterator([], 4)


def test_shuffle_gives_a_new_permutation_each_epoch():
    numpy.random.seed(3)
    it = SerialIterator(list(range(20)), 5)
    epochs = [sum(take(it, 4), []) for _ in range(3)]
    for epoch in epochs:
        assert sorted(epoch) == list(range(20))
    assert epochs[0] != epochs[1] != epochs[2]
    assert epochs[0] != list(range(20))


def test_global_seed_makes_default_shuffle_reproducible():
    numpy.random.seed(7)
    first = take(SerialIterator(list(range(10)), 3), 8)
    numpy.random.seed(7)
    assert take(SerialIterator(list(range(10)), 3), 8) == first


def test_shuffle_order_sampler_random_state():
    def run():
        sampler = ShuffleOrderSampler(numpy.random.RandomState(0))
        return take(SerialIterator(list(range(10)), 3, order_sampler=sampler), 8)

    assert run() == run()
    assert isinstance(ShuffleOrderSampler(), OrderSampler)


def test_custom_order_sampler_receives_order_and_position():
    calls = []

    class Reversing(OrderSampler):
        def __call__(self, current_order, current_position):
            calls.append((list(current_order), current_position))
            return numpy.asarray(current_order)[::-1].copy()

    it = SerialIterator(list(range(4)), 3, order_sampler=Reversing())
    assert calls == [([0, 1, 2, 3], 0)]
    assert next(it) == [3, 2, 1]
    assert next(it) == [0, 0, 1]
    assert calls[1] == ([3, 2, 1, 0], 3)


def test_order_sampler_changing_the_size_is_an_error():
    def sampler(order, position):
        return numpy.arange(len(order) + 1 if position else len(order))

    it = SerialIterator(list(range(4)), 3, order_sampler=sampler)
    next(it)
    with pytest.raises(ValueError, match="new order has 5 indices, but the previous order had 4"):
        next(it)


def test_order_sampler_base_is_abstract():
    with pytest.raises(NotImplementedError):
        OrderSampler()(numpy.arange(3), 0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="shuffle=True and an order_sampler"):
        SerialIterator([1], 1, shuffle=True, order_sampler=ShuffleOrderSampler())
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=f"batch_size must be a positive integer, got {bad}"):
            SerialIterator([1], bad)
    with pytest.raises(TypeError, match="dataset must support len"):
        SerialIterator(iter([1, 2]), 1)
    with pytest.raises(TypeError, match="order_sampler must be callable"):
        SerialIterator([1], 1, order_sampler=3)


def test_reset_rewinds():
    it = SerialIterator(list(range(5)), 2, shuffle=False)
    take(it, 3)
    it.reset()
    assert (it.epoch, it.current_position, it.is_new_epoch) == (0, 0, False)
    assert it.previous_epoch_detail is None
    assert next(it) == [0, 1]


def test_finalize_and_context_manager():
    with SerialIterator([1, 2], 1) as it:
        next(it)
    it.finalize()


def test_serialize_keys():
    target = {}
    it = SerialIterator(list(range(5)), 2)
    next(it)
    it.serialize(DictionarySerializer(target))
    assert set(target) == {
        "current_position",
        "epoch",
        "is_new_epoch",
        "order",
        "previous_epoch_detail",
        "order_sampler/random_state/key",
        "order_sampler/random_state/pos",
        "order_sampler/random_state/has_gauss",
        "order_sampler/random_state/cached_gaussian",
    }
    assert target["order_sampler/random_state/key"].shape == (624,)
    target = {}
    SerialIterator(list(range(5)), 2, shuffle=False).serialize(DictionarySerializer(target))
    assert "order" not in target


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize("stop", range(9))
def test_resume_mid_epoch_yields_the_same_batches(shuffle, stop):
    dataset = list(range(10))

    def make(seed):
        if not shuffle:
            return SerialIterator(dataset, 3, shuffle=False)
        sampler = ShuffleOrderSampler(numpy.random.RandomState(seed))
        return SerialIterator(dataset, 3, order_sampler=sampler)

    original = make(0)
    take(original, stop)
    target = {}
    original.serialize(DictionarySerializer(target))
    rng_state = original.order_sampler._random.get_state() if shuffle else None
    expected = take(original, 12)
    expected_detail = original.epoch_detail

    resumed = make(1)
    take(resumed, 2)
    NpzDeserializer(target).load(resumed)
    if shuffle:
        # The snapshot carries the sampler's generator, so later epochs match too.
        assert_same_generator_state(resumed.order_sampler._random.get_state(), rng_state)
    assert take(resumed, 12) == expected
    assert resumed.epoch_detail == expected_detail


def assert_same_generator_state(got, expected):
    assert got[0] == expected[0]
    numpy.testing.assert_array_equal(got[1], expected[1])
    assert got[2:] == expected[2:]


CHAINER_KEYS = ["current_position", "epoch", "is_new_epoch", "order", "previous_epoch_detail"]


@pytest.mark.parametrize("taken, previous", [(0, None), (1, 0.0), (2, 0.3), (4, 0.9)])
def test_chainer_older_layout_loads_with_a_guessed_previous_epoch_detail(taken, previous):
    # Older Chainer wrote the order under '_order' and no previous_epoch_detail;
    # it is guessed one batch back, as Chainer does.
    original = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    take(original, taken)
    target = {}
    original.serialize(DictionarySerializer(target))
    old = {key: target[key] for key in ["current_position", "epoch", "is_new_epoch"]}
    old["_order"] = target["order"]
    resumed = SerialIterator(list(range(10)), 3)
    NpzDeserializer(old).load(resumed)
    assert resumed.epoch_detail == original.epoch_detail
    numpy.testing.assert_array_equal(resumed._state.order, original._state.order)
    if previous is None:
        assert resumed.previous_epoch_detail is None
    else:
        assert resumed.previous_epoch_detail == pytest.approx(previous)
    assert take(resumed, 1) == take(original, 1)  # within the epoch the order is the file's


def test_failed_load_of_the_older_layout_changes_nothing():
    it = SerialIterator(list(range(10)), 3, shuffle=False)
    NpzDeserializer(
        {
            "current_position": numpy.array(3),
            "epoch": numpy.array(0),
            "is_new_epoch": numpy.array(False),
            "previous_epoch_detail": numpy.array(0.05),
        }
    ).load(it)
    broken = {
        "current_position": numpy.array(6),
        "epoch": numpy.zeros(2),  # mismatched: the load is refused before any change
        "is_new_epoch": numpy.array(False),
    }
    with pytest.raises(DeserializationError, match="'epoch'"):
        NpzDeserializer(broken).load(it)
    assert (it.current_position, it.previous_epoch_detail) == (3, 0.05)


def test_saving_with_a_serializer_that_returns_none_changes_nothing():
    from dbr.core.serializers import Serializer

    class NoneSerializer(Serializer):
        def __getitem__(self, key):
            return self

        def __call__(self, key, value):
            return None

    it = SerialIterator(list(range(5)), 2, shuffle=False)
    next(it)
    it.serialize(NoneSerializer())
    assert (it.epoch, it.current_position, it.previous_epoch_detail) == (0, 2, 0.0)
    assert take(it, 2) == [[2, 3], [4, 0]]


def test_chainer_snapshot_without_sampler_state_loads_and_keeps_the_generator(tmp_path):
    # Chainer 7.8.1's SerialIterator writes exactly these keys (no sampler state).
    original = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    take(original, 2)
    target = {}
    original.serialize(DictionarySerializer(target))
    numpy.savez(tmp_path / "chainer.npz", **{key: target[key] for key in CHAINER_KEYS})
    rng = numpy.random.RandomState(7)
    resumed = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler(rng))
    before = rng.get_state()
    load_npz(tmp_path / "chainer.npz", resumed)
    assert (resumed.epoch, resumed.current_position) == (0, 6)
    numpy.testing.assert_array_equal(resumed._state.order, original._state.order)
    assert_same_generator_state(rng.get_state(), before)


def test_resume_of_the_default_shuffle_restores_numpy_global_generator(tmp_path):
    numpy.random.seed(3)
    original = SerialIterator(list(range(10)), 3)
    take(original, 2)
    save_npz(tmp_path / "it.npz", original)
    expected = take(original, 12)
    numpy.random.seed(99)
    resumed = SerialIterator(list(range(10)), 3)
    load_npz(tmp_path / "it.npz", resumed)
    assert take(resumed, 12) == expected


def test_sampler_state_with_a_bad_position_is_refused_before_anything_changes(tmp_path):
    original = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    target = {}
    original.serialize(DictionarySerializer(target))
    target["order_sampler/random_state/pos"] = numpy.array(625)
    rng = numpy.random.RandomState(7)
    resumed = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler(rng))
    take(resumed, 1)
    before, position = rng.get_state(), resumed.current_position
    with pytest.raises(ValueError, match="random_state/pos=625"):
        NpzDeserializer(target).load(resumed)
    assert resumed.current_position == position
    assert_same_generator_state(rng.get_state(), before)


def test_resume_rest_of_epoch(tmp_path):
    original = SerialIterator(list(range(10)), 3)
    take(original, 2)
    save_npz(tmp_path / "it.npz", original)
    rest = take(original, 2)
    resumed = SerialIterator(list(range(10)), 3)
    load_npz(tmp_path / "it.npz", resumed)
    assert (resumed.epoch, resumed.current_position) == (0, 6)
    assert resumed.previous_epoch_detail == pytest.approx(0.3)
    resumed_rest = take(resumed, 2)
    # The rest of the epoch is fixed by the saved order.
    assert resumed_rest[0] == rest[0]
    assert resumed_rest[1][0] == rest[1][0]
    assert resumed.epoch == 1 and resumed.is_new_epoch


def test_load_into_a_different_dataset_size_is_refused(tmp_path):
    save_npz(tmp_path / "it.npz", SerialIterator(list(range(10)), 3))
    with pytest.raises(DeserializationError, match="order"):
        load_npz(tmp_path / "it.npz", SerialIterator(list(range(11)), 3))


def test_pickle_round_trip_continues_identically():
    it = SerialIterator(list(range(10)), 3, order_sampler=ShuffleOrderSampler())
    take(it, 2)
    clone = pickle.loads(pickle.dumps(it))
    assert take(clone, 6) == take(it, 6)


def test_resume_across_epochs_with_a_stateless_sampler(tmp_path):
    def sampler(order, position):
        return numpy.roll(order, 1)

    original = SerialIterator(list(range(5)), 3, order_sampler=sampler)
    take(original, 4)
    save_npz(tmp_path / "it.npz", original)
    expected = take(original, 10)
    resumed = SerialIterator(list(range(5)), 3, order_sampler=sampler)
    load_npz(tmp_path / "it.npz", resumed)
    assert take(resumed, 10) == expected


def test_a_flat_serializer_round_trips_without_sampler_state():
    # Chainer's Serializer and Deserializer without __getitem__ (the base raises
    # NotImplementedError) hold flat keys only; Chainer's iterators never ask for a child.
    from dbr.core.serializers import Deserializer, Serializer

    class FlatSerializer(Serializer):
        def __init__(self, target):
            self.target = target

        def __call__(self, key, value):
            self.target[key] = value
            return value

    class FlatDeserializer(Deserializer):
        def __init__(self, target):
            self.target = target

        def __call__(self, key, value):
            stored = self.target[key]
            if isinstance(value, numpy.ndarray):
                numpy.copyto(value, stored)
                return value
            return stored

    original = SerialIterator(list(range(6)), 2, order_sampler=ShuffleOrderSampler())
    take(original, 2)
    target = {}
    original.serialize(FlatSerializer(target))
    assert not any(key.startswith("order_sampler") for key in target)
    resumed = SerialIterator(list(range(6)), 2, order_sampler=ShuffleOrderSampler())
    resumed.serialize(FlatDeserializer(target))
    assert (resumed.epoch, resumed.current_position) == (0, 4)
    assert next(resumed) == next(original)
