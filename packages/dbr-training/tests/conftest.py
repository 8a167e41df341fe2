"""Shared fixtures.

``shift`` gives the tests of the learning-rate shift extensions a stand-in
trainer (an updater holding one optimizer under ``'main'``) and the drivers
that run an extension on it, with and without a snapshot in the middle. It is
a fixture rather than a helper module because the tests run with
``--import-mode=importlib``, which puts no test folder on ``sys.path``.

``make_trainer`` builds, for the tests of the trainer extensions, a
:class:`~dbr.training.trainer.Trainer` that fits a three-input linear
regression with SGD on eight fixed samples.

``output_trainer`` gives the tests of the writing extensions a stand-in
trainer with only ``out``, ``updater.iteration`` and ``observation``.
"""

import types

import numpy as np
import pytest

from dbr.core import Chain, Parameter, ops, report
from dbr.core.serializers import DictionarySerializer, NpzDeserializer, load_npz, save_npz
from dbr.core.testing.seeding import numpy_seeded_per_test  # noqa: F401
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.extension import PRIORITY_READER
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater


class FakeOptimizer:
    """An object with an ``lr`` attribute, as far as the shift extensions look."""

    def __init__(self, lr=0.5):
        self.lr = lr


class FakeUpdater:
    """Holds ``optimizer`` under the name ``'main'`` and counts ``iteration``."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.iteration = 0

    def get_optimizer(self, name):
        """Return the optimizer; only ``'main'`` exists."""
        assert name == "main"
        return self.optimizer


class FakeTrainer:
    """A trainer with only an ``updater`` (a :class:`FakeUpdater` of ``optimizer``)."""

    def __init__(self, optimizer):
        self.updater = FakeUpdater(optimizer)


class OutputTrainer:
    """A trainer with only ``out``, ``updater.iteration`` (a counter) and ``observation``."""

    def __init__(self, out):
        self.updater = types.SimpleNamespace(iteration=0)
        self.out = str(out)
        self.observation = {}


class ShiftDriver:
    """Runs a shift extension on a :class:`FakeTrainer` and reads back the attribute."""

    Optimizer = FakeOptimizer
    Trainer = FakeTrainer

    @staticmethod
    def run(extension, trainer, calls, attr="lr"):
        """Call ``extension`` ``calls`` times; return the attribute after each call."""
        optimizer = trainer.updater.optimizer
        values = []
        for _ in range(calls):
            trainer.updater.iteration += 1
            extension(trainer)
            values.append(getattr(optimizer, attr))
        return values

    @staticmethod
    def check_defaults(extension):
        """Assert the defaults every shift extension shares: each iteration, reader priority."""
        assert extension.trigger == (1, "iteration")
        assert extension.priority == PRIORITY_READER

    @classmethod
    def sequence(cls, extension, init, calls, lr=0.5):
        """Start ``extension`` (it must set ``init``); return its values over ``calls`` calls."""
        trainer, initial = cls.start(extension, lr)
        assert initial == init
        return cls.run(extension, trainer, calls)

    @staticmethod
    def start(extension, lr=0.5):
        """Initialize ``extension`` on a fresh trainer; return it and the ``lr`` it set."""
        trainer = FakeTrainer(FakeOptimizer(lr))
        extension.initialize(trainer)
        return trainer, trainer.updater.optimizer.lr

    @classmethod
    def resumed(cls, make, total, split, lr=0.5, tmp_path=None):
        """Run ``split`` calls, snapshot, load into a fresh extension and optimizer, run the rest.

        The snapshot goes through a dict, or through an npz file in ``tmp_path``
        when given. Returns ``[initial value] + the values of the first calls``,
        the value the resumed extension restored, and the values of the rest.
        """
        first = make()
        trainer, initial = cls.start(first, lr)
        head = cls.run(first, trainer, split)
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
        trainer2 = FakeTrainer(FakeOptimizer(lr))
        trainer2.updater.iteration = split
        second.initialize(trainer2)
        restored = trainer2.updater.optimizer.lr
        tail = cls.run(second, trainer2, total - split)
        return [initial] + head, restored, tail

    @classmethod
    def check_sequence(cls, extension, formula, init, calls, **tolerance):
        """Assert that ``extension`` starts at ``init`` and its t-th call gives ``formula(t)``.

        ``tolerance`` goes to :func:`pytest.approx` (``rel=1e-12`` unless given).
        Returns the values.
        """
        got = cls.sequence(extension, init, calls)
        expected = [formula(t) for t in range(1, calls + 1)]
        assert got == pytest.approx(expected, **{"rel": 1e-12, **tolerance})
        return got

    @classmethod
    def check_resumed(cls, make, formula, total, split, tmp_path=None, **tolerance):
        """Assert that ``make()``, snapshotted after ``split`` calls, resumed, follows ``formula``.

        The optimizer starts at ``lr=0.5``; ``tolerance`` goes to :func:`pytest.approx`
        (``rel=1e-12`` unless given) for the values after the snapshot. Returns them.
        """
        head, restored, tail = cls.resumed(make, total, split, tmp_path=tmp_path)
        expected = [formula(t) for t in range(total + 1)]
        assert head == pytest.approx(expected[: split + 1], rel=1e-12)
        assert restored == pytest.approx(expected[split], rel=1e-12)
        assert tail == pytest.approx(expected[split + 1 :], **{"rel": 1e-12, **tolerance})
        return tail


@pytest.fixture
def output_trainer():
    """:class:`OutputTrainer`: ``output_trainer(out)`` is a stand-in trainer writing to ``out``."""
    return OutputTrainer


@pytest.fixture
def shift():
    """The :class:`ShiftDriver` that the shift-extension tests run their extension with."""
    return ShiftDriver


class Regression(Chain):
    """``y = x W + b`` with a mean squared loss; reports ``loss``, ``correct`` and ``total``."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.array([[0.5], [-1.0], [0.0]], np.float32))
            self.b = Parameter(np.zeros((1,), np.float32))

    def forward(self, x, t):
        """Return the mean squared error of ``x W + b`` against ``t``."""
        y = ops.matmul(x, self.W) + ops.broadcast_to(self.b, (x.shape[0], 1))
        loss = ops.sum((y - t) ** 2) / x.shape[0]
        report({"loss": loss, "correct": int(x.shape[0]) - 1, "total": int(x.shape[0])}, self)
        return loss


class RegressionTrainer:
    """Builds a trainer of a fresh :class:`Regression` on eight fixed samples."""

    Model = Regression
    _rng = np.random.RandomState(2)
    X = _rng.randn(8, 3).astype(np.float32)
    T = _rng.randn(8, 1).astype(np.float32)

    def __call__(self, tmp_path, stop=(2, "epoch"), lr=0.01, batch=4):
        """Return a trainer writing to ``tmp_path`` that stops at ``stop``, and its model."""
        model = Regression()
        optimizer = SGD(lr=lr).setup(model)
        iterator = SerialIterator(TupleDataset(self.X, self.T), batch, shuffle=False)
        updater = StandardUpdater(iterator, optimizer)
        return Trainer(updater, stop, out=str(tmp_path)), model


@pytest.fixture
def make_trainer():
    """A :class:`RegressionTrainer`: ``make_trainer(tmp_path, stop)`` gives a trainer and model."""
    return RegressionTrainer()
