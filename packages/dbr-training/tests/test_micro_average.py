import numpy as np
import pytest

from dbr.core import Chain, Parameter, Variable, ops, report
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


from dbr.training.extensions.micro_average import MicroAverage  # noqa: E402


def test_micro_average_over_epochs(tmp_path):
    trainer, model = make_trainer(tmp_path, stop=(2, "epoch"), batch=2)  # 4 iterations per epoch
    results = []

    def writer(t):
        i = t.updater.iteration
        if i != 3:  # an iteration without the keys is skipped
            t.observation["num"] = float(i)
            t.observation["den"] = Variable(np.array(i * i + 1.0))

    trainer.extend(writer, name="writer", priority=1000)
    trainer.extend(MicroAverage("num", "den", "ratio"))
    trainer.extend(lambda t: results.append(t.observation.get("ratio")), name="rec")
    trainer.run()
    assert results[:3] == [None, None, None] and results[4:7] == [None, None, None]
    epoch1, epoch2 = [1, 2, 4], [5, 6, 7, 8]
    assert results[3] == pytest.approx(sum(epoch1) / sum(i * i + 1 for i in epoch1))
    assert results[7] == pytest.approx(sum(epoch2) / sum(i * i + 1 for i in epoch2))
    assert results[3] != pytest.approx(np.mean([i / (i * i + 1) for i in epoch1]))


def test_missing_keys_skip_and_serialize():
    from dbr.core.serializers import DictionarySerializer

    ext = MicroAverage("n", "d", "r", trigger=(1, "iteration"))
    ext._numerator, ext._denominator = 3, 7
    saver = DictionarySerializer()
    ext.serialize(saver)
    assert int(saver.target["_numerator"]) == 3 and int(saver.target["_denominator"]) == 7
    with pytest.raises(TypeError, match="MicroAverage: expected result_key to be a str"):
        MicroAverage("n", "d", None)
