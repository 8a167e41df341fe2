"""Tests of exponential_shift: the value sequence against its formula, resume, bad input."""

import functools

import numpy
import pytest

from dbr.core import Chain, Parameter, ops
from dbr.core.serializers import DictionarySerializer, NpzDeserializer
from dbr.datasets import SerialIterator
from dbr.training.extensions.exponential_shift import ExponentialShift
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater


def _expected(init, rate, t, target=None):
    value = init * rate**t
    if target is not None:
        value = min(value, target) if rate > 1 else max(value, target)
    return value


def test_defaults_of_the_extension(shift):
    ext = ExponentialShift("lr", 0.5)
    shift.check_defaults(ext)
    assert ext.default_name == "ExponentialShift"


@pytest.mark.parametrize(
    "init, rate, target",
    [(2.0, 0.5, None), (2.0, 0.5, 0.3), (0.1, 1.5, None), (0.1, 1.5, 0.5), (1.0, 0.9, None)],
)
def test_sequence_follows_the_formula(init, rate, target, shift):
    ext = ExponentialShift("lr", rate, init=init, target=target)
    values = shift.check_sequence(
        ext, functools.partial(_expected, init, rate, target=target), init, 12
    )
    if target is not None:
        assert values[-1] == target


def test_init_none_reads_the_optimizer_attribute(shift):
    ext = ExponentialShift("lr", 0.5)
    trainer, initial = shift.start(ext, lr=0.8)
    assert initial == 0.8
    assert shift.run(ext, trainer, 3) == pytest.approx([0.4, 0.2, 0.1])


def test_negative_values_clamp_in_magnitude(shift):
    ext = ExponentialShift("lr", 0.5, init=-1.0, target=-0.2)
    trainer, _ = shift.start(ext)
    assert shift.run(ext, trainer, 4) == pytest.approx([-0.5, -0.25, -0.2, -0.2])


def test_other_attribute_and_explicit_optimizer(shift):
    other = shift.Optimizer()
    other.alpha = 3.0
    ext = ExponentialShift("alpha", 0.1, optimizer=other)
    trainer = shift.Trainer(shift.Optimizer(0.5))
    ext.initialize(trainer)
    ext(trainer)
    assert other.alpha == pytest.approx(0.3)
    assert trainer.updater.optimizer.lr == 0.5


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return ExponentialShift("lr", 0.7, target=0.05)

    formula = functools.partial(_expected, 0.5, 0.7, target=0.05)
    shift.check_resumed(make, formula, 15, 6, tmp_path if to_file else None)


def test_serialize_keys_match_chainer(shift):
    ext = ExponentialShift("lr", 0.5, init=1.0)
    trainer, _ = shift.start(ext)
    shift.run(ext, trainer, 2)
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
