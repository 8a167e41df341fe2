"""Tests of step_shift: the value sequence against its formula, resume, bad input."""

import math

import pytest

from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.training.extension import PRIORITY_READER
from dbr.training.extensions.step_shift import StepShift


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


def _expected(init, gamma, step, t, target=None):
    value = init * gamma ** math.floor(t / step)
    if target is not None:
        value = min(value, target) if gamma > 1 else max(value, target)
    return value


def test_defaults_of_the_extension():
    ext = StepShift("lr", 0.1, 3)
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER


@pytest.mark.parametrize(
    "init, gamma, step, target",
    [(1.0, 0.1, 3, None), (1.0, 0.5, 2, 0.2), (0.01, 2.0, 4, None), (0.01, 3.0, 1, 0.5)],
)
def test_sequence_follows_the_formula(init, gamma, step, target):
    ext = StepShift("lr", gamma, step, init=init, target=target)
    trainer, initial = _start(ext)
    assert initial == init
    got = _run(ext, trainer, 13)
    expected = [_expected(init, gamma, step, t, target) for t in range(1, 14)]
    assert got == pytest.approx(expected, rel=1e-12)


def test_init_none_reads_the_optimizer_attribute():
    ext = StepShift("lr", 0.5, 2)
    trainer, initial = _start(ext, lr=0.4)
    assert initial == 0.4
    assert _run(ext, trainer, 4) == pytest.approx([0.4, 0.2, 0.2, 0.1])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path):
    def make():
        return StepShift("lr", 0.5, 3, target=0.05)

    head, restored, tail = _resumed(make, 20, 7, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.5, 0.5, 3, t, 0.05) for t in range(21)]
    assert head == pytest.approx(expected[:8], rel=1e-12)
    assert restored == pytest.approx(expected[7], rel=1e-12)
    assert tail == pytest.approx(expected[8:], rel=1e-12)


def test_bad_arguments():
    with pytest.raises(ValueError, match="StepShift: expected step >= 1, got 0"):
        StepShift("lr", 0.1, 0)
    with pytest.raises(TypeError, match="StepShift: expected step to be an int, got 2.5"):
        StepShift("lr", 0.1, 2.5)
    with pytest.raises(TypeError, match="StepShift: expected gamma to be a real number"):
        StepShift("lr", None, 2)
