import numpy as np
import pytest

from dbr.core import Chain, Parameter, ops, report
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater

RNG = np.random.RandomState(2)
X = RNG.randn(8, 3).astype(np.float32)
T = RNG.randn(8, 1).astype(np.float32)


class Regression(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.array([[0.5], [-1.0], [0.0]], np.float32))
            self.b = Parameter(np.zeros((1,), np.float32))

    def forward(self, x, t):
        y = ops.matmul(x, self.W) + ops.broadcast_to(self.b, (x.shape[0], 1))
        loss = ops.sum((y - t) ** 2) / x.shape[0]
        report({"loss": loss, "correct": int(x.shape[0]) - 1, "total": int(x.shape[0])}, self)
        return loss


def make_trainer(tmp_path, stop=(2, "epoch"), lr=0.01, batch=4):
    model = Regression()
    optimizer = SGD(lr=lr).setup(model)
    updater = StandardUpdater(SerialIterator(TupleDataset(X, T), batch, shuffle=False), optimizer)
    return Trainer(updater, stop, out=str(tmp_path)), model


from dbr.training.extensions.value_observation import observe_lr, observe_value  # noqa: E402


def test_observe_value_and_lr(tmp_path):
    trainer, model = make_trainer(tmp_path, stop=(5, "iteration"))
    seen = []
    trainer.extend(
        observe_value("it", lambda t: t.updater.iteration * 10), trigger=(1, "iteration")
    )
    trainer.extend(observe_lr())
    trainer.extend(
        lambda t: seen.append((t.observation.get("it"), t.observation.get("lr"))), name="rec"
    )
    trainer.run()
    # observe_lr fires once per epoch (2 iterations of 4 examples each).
    assert seen == [(10, None), (20, 0.01), (30, None), (40, 0.01), (50, None)]


def test_defaults_and_errors():
    ext = observe_value("k", lambda t: 1)
    assert ext.trigger == (1, "epoch")
    assert ext.priority == 300
    with pytest.raises(TypeError, match="observe_value: expected observation_key to be a str"):
        observe_value(1, lambda t: 1)
    with pytest.raises(TypeError, match="observe_value: expected target_func to be callable"):
        observe_value("k", 1)
    with pytest.raises(TypeError, match="observe_lr: expected optimizer_name to be a str"):
        observe_lr(optimizer_name=None)
