"""DaliIterator over a stand-in for a DALI pipeline (the iterator needs only its four members)."""

import pytest

from dbr.datasets import DaliIterator


class FakePipeline:
    """Yields batch numbers; 10 examples an epoch in batches of 4."""

    batch_size = 4

    def __init__(self):
        self.built = 0
        self.runs = 0

    def build(self):
        self.built += 1

    def epoch_size(self):
        return {"reader": 10}

    def run(self):
        self.runs += 1
        return self.runs


def test_batches_and_epochs_as_a_serial_iterator_counts_them():
    pipeline = FakePipeline()
    it = DaliIterator(pipeline)
    assert pipeline.built == 0 and it.previous_epoch_detail is None
    seen = [(next(it), it.epoch, it.is_new_epoch, it.epoch_detail) for _ in range(4)]
    assert pipeline.built == 1
    assert seen == [(1, 0, False, 0.4), (2, 0, False, 0.8), (3, 1, True, 1.2), (4, 1, False, 1.6)]
    assert it.previous_epoch_detail == pytest.approx(1.2)


def test_without_repeat_it_stops_after_the_first_epoch():
    it = DaliIterator(FakePipeline(), repeat=False)
    assert list(it) == [1, 2, 3]
    assert it.epoch == 1 and it.current_position == 0


def test_serialize_round_trip_and_an_older_layout():
    it = DaliIterator(FakePipeline())
    next(it), next(it)
    saved = {}
    it.serialize(lambda key, value: saved.setdefault(key, value))
    other = DaliIterator(FakePipeline())
    next(other)  # build: epoch_size is known
    other.serialize(lambda key, value: saved[key])
    assert (other.current_position, other.epoch, other.previous_epoch_detail) == (8, 0, 0.4)

    def without_previous(key, value):
        if key == "previous_epoch_detail":
            raise KeyError(key)
        return saved[key]

    other.serialize(without_previous)
    assert other.previous_epoch_detail == pytest.approx(0.4)


def test_something_that_is_no_pipeline_is_refused_by_name():
    with pytest.raises(TypeError, match="DaliIterator: expected pipeline to be a DALI pipeline"):
        DaliIterator([1, 2, 3])
