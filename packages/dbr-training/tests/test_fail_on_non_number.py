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


from dbr.training.extensions.fail_on_non_number import FailOnNonNumber  # noqa: E402


def test_finite_run_passes(tmp_path):
    trainer, model = make_trainer(tmp_path, stop=(4, "iteration"))
    trainer.extend(FailOnNonNumber())
    trainer.run()
    assert trainer.updater.iteration == 4


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_raises_naming_the_parameter(tmp_path, bad):
    trainer, model = make_trainer(tmp_path, stop=(4, "iteration"))

    def poison(t):
        if t.updater.iteration == 2:
            model.b.array[...] = bad

    trainer.extend(poison, name="poison", priority=1000)
    trainer.extend(FailOnNonNumber())
    with pytest.raises(
        RuntimeError,
        match=r"parameter '/b' of the target of optimizer 'main' contains NaN or Inf "
        r"at iteration 2",
    ):
        trainer.run(show_loop_exception_msg=False)
    assert trainer.updater.iteration == 2
