"""Tests of exponential_shift: the value sequence against its formula, resume, bad input."""

import numpy
import pytest

from dbr.core import Chain, Parameter, ops
from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.datasets import SerialIterator
from dbr.training.extension import PRIORITY_READER
from dbr.training.extensions.exponential_shift import ExponentialShift
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater


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


def _expected(init, rate, t, target=None):
    value = init * rate**t
    if target is not None:
        value = min(value, target) if rate > 1 else max(value, target)
    return value


def test_defaults_of_the_extension():
    ext = ExponentialShift("lr", 0.5)
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER
    assert ext.default_name == "ExponentialShift"


@pytest.mark.parametrize(
    "init, rate, target",
    [(2.0, 0.5, None), (2.0, 0.5, 0.3), (0.1, 1.5, None), (0.1, 1.5, 0.5), (1.0, 0.9, None)],
)
def test_sequence_follows_the_formula(init, rate, target):
    ext = ExponentialShift("lr", rate, init=init, target=target)
    trainer, initial = _start(ext)
    assert initial == init
    values = _run(ext, trainer, 12)
    expected = [_expected(init, rate, t, target) for t in range(1, 13)]
    assert values == pytest.approx(expected, rel=1e-12)
    if target is not None:
        assert values[-1] == target


def test_init_none_reads_the_optimizer_attribute():
    ext = ExponentialShift("lr", 0.5)
    trainer, initial = _start(ext, lr=0.8)
    assert initial == 0.8
    assert _run(ext, trainer, 3) == pytest.approx([0.4, 0.2, 0.1])


def test_negative_values_clamp_in_magnitude():
    ext = ExponentialShift("lr", 0.5, init=-1.0, target=-0.2)
    trainer, _ = _start(ext)
    assert _run(ext, trainer, 4) == pytest.approx([-0.5, -0.25, -0.2, -0.2])


def test_other_attribute_and_explicit_optimizer():
    other = _Optimizer()
    other.alpha = 3.0
    ext = ExponentialShift("alpha", 0.1, optimizer=other)
    trainer = _Trainer(_Optimizer(0.5))
    ext.initialize(trainer)
    ext(trainer)
    assert other.alpha == pytest.approx(0.3)
    assert trainer.updater.optimizer.lr == 0.5


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path):
    def make():
        return ExponentialShift("lr", 0.7, target=0.05)

    head, restored, tail = _resumed(make, 15, 6, lr=0.5, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.5, 0.7, t, 0.05) for t in range(16)]
    assert head == pytest.approx(expected[:7], rel=1e-12)
    assert restored == pytest.approx(expected[6], rel=1e-12)
    assert tail == pytest.approx(expected[7:], rel=1e-12)


def test_serialize_keys_match_chainer():
    ext = ExponentialShift("lr", 0.5, init=1.0)
    trainer, _ = _start(ext)
    _run(ext, trainer, 2)
    target = {}
    ext.serialize(DictionarySerializer(target))
    assert set(target) == {"_t", "_last_value"}
    assert int(target["_t"]) == 2
    assert float(target["_last_value"]) == 0.25


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"ExponentialShift: expected rate >= 0, got -0\.5"):
        ExponentialShift("lr", -0.5)
    with pytest.raises(TypeError, match="ExponentialShift: expected attr to be a str"):
        ExponentialShift(1, 0.5)
    with pytest.raises(TypeError, match="ExponentialShift: expected init to be a real number"):
        ExponentialShift("lr", 0.5, init="1")


# With the real Trainer, StandardUpdater and SGD: the schedule drives the updates.

_X = numpy.arange(12, dtype=numpy.float64).reshape(4, 3) / 10
_T = numpy.array([[1.0], [0.0], [2.0], [1.0]])


def _make_trainer(stop, out):
    class Regression(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.W = Parameter(numpy.full((3, 1), 0.5))

        def forward(self, x, t):
            return ops.sum((ops.matmul(x, self.W) - t) ** 2) / len(x)

    model = Regression()
    optimizer = SGD(lr=0.2).setup(model)
    iterator = SerialIterator(list(zip(_X, _T)), 4, shuffle=False)
    trainer = Trainer(StandardUpdater(iterator, optimizer), (stop, "iteration"), out=str(out))
    trainer.extend(ExponentialShift("lr", 0.8, target=0.1))
    return model, optimizer, trainer


def _reference_weights(iterations):
    W = numpy.full((3, 1), 0.5)
    for k in range(iterations):  # update k + 1 uses the value set after k calls
        lr = max(0.2 * 0.8**k, 0.1)
        W = W - lr * 2 / 4 * _X.T @ (_X @ W - _T)
    return W


def test_trainer_applies_the_schedule_to_sgd(tmp_path):
    model, optimizer, trainer = _make_trainer(6, tmp_path)
    trainer.run()
    numpy.testing.assert_allclose(model.W.array, _reference_weights(6), rtol=1e-12)
    assert optimizer.lr == pytest.approx(max(0.2 * 0.8**6, 0.1))


def test_trainer_resume_matches_an_uninterrupted_run(tmp_path):
    _, _, first = _make_trainer(4, tmp_path)
    first.run()
    snapshot = {}
    first.serialize(DictionarySerializer(snapshot))

    model, optimizer, second = _make_trainer(9, tmp_path)
    NpzDeserializer(snapshot).load(second)
    second.run()
    numpy.testing.assert_allclose(model.W.array, _reference_weights(9), rtol=1e-12)
    assert optimizer.lr == pytest.approx(max(0.2 * 0.8**9, 0.1))
