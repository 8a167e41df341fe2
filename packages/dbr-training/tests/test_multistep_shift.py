"""Tests of multistep_shift: the value sequence against its formula, resume, bad input."""

import pytest

from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.training.extension import PRIORITY_READER
from dbr.training.extensions.multistep_shift import MultistepShift


class _Optimizer:
    def __init__(self, lr=0.5):
        self.lr = lr


class _Updater:
    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.iteration = 0

    def get_optimizer(self, name):
        assert name == "main"
        return self.optimizer


class _Trainer:
    def __init__(self, optimizer):
        self.updater = _Updater(optimizer)


def _run(extension, trainer, calls, attr="lr"):
    """Call ``extension`` ``calls`` times; return the attribute after each call."""
    optimizer = trainer.updater.optimizer
    values = []
    for _ in range(calls):
        trainer.updater.iteration += 1
        extension(trainer)
        values.append(getattr(optimizer, attr))
    return values


def _start(extension, lr=0.5):
    trainer = _Trainer(_Optimizer(lr))
    extension.initialize(trainer)
    return trainer, trainer.updater.optimizer.lr


def _resumed(make, total, split, lr=0.5, tmp_path=None):
    """Run ``split`` calls, snapshot, load into a fresh extension and optimizer, run the rest."""
    first = make()
    trainer, initial = _start(first, lr)
    head = _run(first, trainer, split)
    if tmp_path is None:
        target = {}
        first.serialize(DictionarySerializer(target))
        second = make()
        NpzDeserializer(target).load(second)
    else:
        path = tmp_path / "ext.npz"
        save_npz(path, first)
        second = make()
        load_npz(path, second)
    trainer2 = _Trainer(_Optimizer(lr))
    trainer2.updater.iteration = split
    second.initialize(trainer2)
    restored = trainer2.updater.optimizer.lr
    tail = _run(second, trainer2, total - split)
    return [initial] + head, restored, tail


def _expected(init, gamma, steps, t):
    passed = len([s for s in steps if t >= s])
    return init * gamma**passed


def test_defaults_of_the_extension():
    ext = MultistepShift("lr", 0.1, (3, 6), 1.0)
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER


@pytest.mark.parametrize(
    "init, gamma, steps", [(1.0, 0.1, (3, 6, 9)), (0.2, 0.5, [1, 2]), (0.1, 2.0, ())]
)
def test_sequence_follows_the_formula(init, gamma, steps):
    ext = MultistepShift("lr", gamma, steps, init)
    trainer, initial = _start(ext)
    assert initial == init
    got = _run(ext, trainer, 12)
    expected = [_expected(init, gamma, steps, t) for t in range(1, 13)]
    assert got == pytest.approx(expected, rel=1e-12)


def test_chainer_documented_example():
    # iterations 0..s1-1: x; s1..s2-1: x*y; s2..s3-1: x*y*y; after s3: x*y*y*y.
    ext = MultistepShift("lr", 0.5, (2, 4, 5), 8.0)
    trainer, initial = _start(ext)
    assert [initial] + _run(ext, trainer, 6) == [8.0, 8.0, 4.0, 4.0, 2.0, 1.0, 1.0]


def test_init_none_reads_the_optimizer_attribute():
    ext = MultistepShift("lr", 0.1, (2,), None)
    trainer, initial = _start(ext, lr=0.3)
    assert initial == 0.3
    assert _run(ext, trainer, 3) == pytest.approx([0.3, 0.03, 0.03])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path):
    def make():
        return MultistepShift("lr", 0.1, (3, 8, 12), None)

    head, restored, tail = _resumed(make, 15, 5, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.5, 0.1, (3, 8, 12), t) for t in range(16)]
    assert head == pytest.approx(expected[:6], rel=1e-12)
    assert restored == pytest.approx(expected[5], rel=1e-12)
    assert tail == pytest.approx(expected[6:], rel=1e-12)


def test_serialize_keys_match_chainer():
    ext = MultistepShift("lr", 0.1, (1, 2), 1.0)
    trainer, _ = _start(ext)
    _run(ext, trainer, 3)
    target = {}
    ext.serialize(DictionarySerializer(target))
    assert set(target) == {"_t", "_current_step", "_last_value"}
    assert int(target["_current_step"]) == 2


def test_bad_arguments():
    with pytest.raises(
        ValueError, match=r"MultistepShift: expected step_value in increasing order, got \(5, 2\)"
    ):
        MultistepShift("lr", 0.1, (5, 2), 1.0)
    with pytest.raises(
        TypeError, match="MultistepShift: expected step_value to be a sequence of ints"
    ):
        MultistepShift("lr", 0.1, 5, 1.0)
    with pytest.raises(
        TypeError, match="MultistepShift: expected init to be a real number or None"
    ):
        MultistepShift("lr", 0.1, (5,), "x")
