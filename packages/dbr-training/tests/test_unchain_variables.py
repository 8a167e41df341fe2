import numpy as np

from dbr.core import Chain, Parameter, config, ops, report
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


from dbr.training.extensions.unchain_variables import unchain_variables  # noqa: E402


def test_unchains_observed_variables_while_graphs_are_kept(tmp_path):
    trainer, model = make_trainer(tmp_path, stop=(3, "iteration"))
    creators = []

    def recorder(t):
        creators.append(t.observation["main/loss"].creator is not None)

    kept = []

    def check_after(t):
        kept.append(t.observation["main/loss"].creator is not None)

    trainer.extend(recorder, name="rec", priority=100)
    trainer.extend(unchain_variables())
    trainer.extend(check_after, name="after", priority=-1)

    config.keep_graph_on_report = True
    try:
        trainer.run()
    finally:
        config.keep_graph_on_report = False
    assert creators == [True, True, True]
    assert kept == [False, False, False]


def test_does_nothing_without_kept_graphs(tmp_path):
    trainer, model = make_trainer(tmp_path, stop=(2, "iteration"))
    ext = unchain_variables()
    assert ext.priority == 0
    fired = []
    original = unchain_variables.__call__
    trainer.extend(ext)
    trainer.extend(lambda t: fired.append(ext.trigger(t)), name="probe", priority=-5)
    trainer.run()
    assert original is unchain_variables.__call__
    assert config.keep_graph_on_report is False
    assert fired == [False, False]
