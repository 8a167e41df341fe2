"""Tests of linear_shift: the value sequence against its formula, resume, bad input."""

import pytest

from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.training.extension import PRIORITY_READER
from dbr.training.extensions.linear_shift import LinearShift


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


def _expected(v1, v2, t1, t2, t):
    if t <= t1:
        return v1
    if t >= t2:
        return v2
    return v1 + (v2 - v1) * (t - t1) / (t2 - t1)


def test_defaults_of_the_extension():
    ext = LinearShift("lr", (0.0, 1.0), (0, 10))
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER


@pytest.mark.parametrize(
    "values, times", [((0.0, 1.0), (2, 8)), ((0.9, 0.1), (0, 5)), ((1.0, 3.0), (3, 3))]
)
def test_sequence_follows_the_formula(values, times):
    ext = LinearShift("lr", values, times)
    trainer, initial = _start(ext, lr=123.0)
    assert initial == values[0]
    got = _run(ext, trainer, 12)
    expected = [_expected(*values, *times, t) for t in range(1, 13)]
    assert got == pytest.approx(expected, rel=1e-12)
    assert got[-1] == values[1]


def test_momentum_warm_up_on_an_explicit_optimizer():
    opt = _Optimizer()
    opt.momentum = 0.0
    ext = LinearShift("momentum", (0.5, 0.9), (0, 4), optimizer=opt)
    trainer = _Trainer(_Optimizer())
    ext.initialize(trainer)
    assert opt.momentum == 0.5
    assert _run(ext, trainer, 5, attr="lr") == [0.5] * 5
    assert opt.momentum == pytest.approx(0.9)


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path):
    def make():
        return LinearShift("lr", (0.1, 0.7), (2, 10))

    head, restored, tail = _resumed(make, 14, 5, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.1, 0.7, 2, 10, t) for t in range(15)]
    assert head == pytest.approx(expected[:6], rel=1e-12)
    assert restored == pytest.approx(expected[5], rel=1e-12)
    assert tail == pytest.approx(expected[6:], rel=1e-12)


def test_bad_arguments():
    with pytest.raises(TypeError, match="LinearShift: expected value_range to be a pair"):
        LinearShift("lr", (1.0,), (0, 1))
    with pytest.raises(TypeError, match="LinearShift: expected time_range to be a pair"):
        LinearShift("lr", (1.0, 2.0), 5)
    with pytest.raises(
        ValueError, match=r"LinearShift: expected time_range .* t1 <= t2, got \(5, 2\)"
    ):
        LinearShift("lr", (1.0, 2.0), (5, 2))
