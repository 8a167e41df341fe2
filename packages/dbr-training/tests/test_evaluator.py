import numpy as np
import pytest

from dbr.core import Chain, Parameter, config, ops, report
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.extensions.evaluator import Evaluator
from dbr.training.extensions.log_report import LogReport
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater

RNG = np.random.RandomState(1)
X = RNG.randn(10, 3).astype(np.float32)
T = RNG.randn(10, 1).astype(np.float32)


class Regression(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.array([[0.5], [-1.0], [2.0]], np.float32))
        self.modes = []

    def forward(self, x, t):
        self.modes.append((config.train, config.enable_backprop))
        loss = ops.sum((ops.matmul(x, self.W) - t) ** 2) / x.shape[0]
        report({"loss": loss, "batch": x.shape[0]}, self)
        return loss


def batch_losses(W, batch_size):
    losses = []
    for i in range(0, len(X), batch_size):
        x, t = X[i : i + batch_size].astype(np.float64), T[i : i + batch_size]
        losses.append(np.sum((x @ W.astype(np.float64) - t) ** 2) / len(x))
    return losses


def test_evaluate_directly():
    model = Regression()
    iterator = SerialIterator(TupleDataset(X, T), 4, repeat=False, shuffle=False)
    evaluator = Evaluator(iterator, model)
    result = evaluator.evaluate()
    expected = np.mean(batch_losses(model.W.array, 4))  # batches of 4, 4 and 2
    assert set(result) == {"main/loss", "main/batch"}
    assert result["main/loss"] == pytest.approx(expected, rel=1e-5)
    assert result["main/batch"] == pytest.approx(10 / 3)
    assert model.modes == [(False, False)] * 3
    # The iterator is reset, so a second evaluation sees the same batches.
    assert evaluator.evaluate()["main/loss"] == pytest.approx(expected, rel=1e-5)
    assert config.train is True and config.enable_backprop is True


def test_call_prefixes_with_the_name_and_reports():
    model = Regression()
    evaluator = Evaluator(
        SerialIterator(TupleDataset(X, T), 5, repeat=False, shuffle=False), model
    )
    evaluator.name = "validation"
    observation = {}
    from dbr.core import Reporter

    with Reporter().scope(observation):
        result = evaluator()
    expected = np.mean(batch_losses(model.W.array, 5))
    assert set(result) == {"validation/main/loss", "validation/main/batch"}
    assert result["validation/main/loss"] == pytest.approx(expected, rel=1e-5)
    assert observation == result


def test_eval_hook_and_eval_func():
    model = Regression()
    hooked = []
    seen = []

    def eval_func(x, t):
        seen.append(len(x))
        report({"first": float(x[0, 0])}, model)

    evaluator = Evaluator(
        SerialIterator(TupleDataset(X, T), 3, repeat=False, shuffle=False),
        {"main": model},
        eval_hook=hooked.append,
        eval_func=eval_func,
    )
    result = evaluator.evaluate()
    assert hooked == [evaluator]
    assert seen == [3, 3, 3, 1]
    assert result == {"main/first": pytest.approx(np.mean(X[::3, 0]))}
    assert model.modes == []


def test_evaluate_reports_to_the_callers_reporter():
    # As in Chainer, evaluate() (unlike __call__) reports through the current
    # reporter, so the caller's observer names are used.
    from dbr.core import Reporter

    model = Regression()
    evaluator = Evaluator(
        SerialIterator(TupleDataset(X, T), 5, repeat=False, shuffle=False), {}, eval_func=model
    )
    reporter = Reporter()
    reporter.add_observer("target", model)
    with reporter:
        result = evaluator.evaluate()
    assert set(result) == {"target/loss", "target/batch"}
    assert result["target/loss"] == pytest.approx(np.mean(batch_losses(model.W.array, 5)))
    assert reporter.observation == {}


def test_old_style_converter_gets_device_none():
    calls = []

    def converter(batch, device):
        calls.append(device)
        return tuple(np.stack(field) for field in zip(*batch))

    evaluator = Evaluator(
        SerialIterator(TupleDataset(X, T), 5, repeat=False, shuffle=False),
        Regression(),
        converter=converter,
    )
    assert set(evaluator.evaluate()) == {"main/loss", "main/batch"}
    assert calls == [None, None]


def test_iterator_without_reset_is_copied():
    class OneSweep:
        def __init__(self, batches):
            self.batches = batches
            self.position = 0

        def __iter__(self):
            return self

        def __next__(self):
            if self.position == len(self.batches):
                raise StopIteration
            self.position += 1
            return self.batches[self.position - 1]

    dataset = list(zip(X, T))
    iterator = OneSweep([dataset[:6], dataset[6:]])
    model = Regression()
    evaluator = Evaluator(iterator, model)
    expected = np.mean(
        [
            np.sum((X[:6] @ model.W.array - T[:6]) ** 2) / 6,
            np.sum((X[6:] @ model.W.array - T[6:]) ** 2) / 4,
        ]
    )
    assert evaluator.evaluate()["main/loss"] == pytest.approx(expected, rel=1e-5)
    assert evaluator.evaluate()["main/loss"] == pytest.approx(expected, rel=1e-5)
    assert iterator.position == 0


def test_in_trainer_reports_validation_keys(tmp_path):
    model = Regression()
    optimizer = SGD(lr=0.01).setup(model)
    train_iter = SerialIterator(TupleDataset(X, T), 5, shuffle=False)
    trainer = Trainer(StandardUpdater(train_iter, optimizer), (2, "epoch"), out=str(tmp_path))
    weights = []
    trainer.extend(lambda t: weights.append(model.W.array.copy()), name="w", trigger=(1, "epoch"))
    trainer.extend(
        Evaluator(SerialIterator(TupleDataset(X, T), 4, repeat=False, shuffle=False), model)
    )
    log_report = LogReport()
    trainer.extend(log_report)
    trainer.run()
    assert trainer.get_extension("validation").name == "validation"
    for entry, W in zip(log_report.log, weights):
        assert entry["validation/main/loss"] == pytest.approx(
            np.mean(batch_losses(W, 4)), rel=1e-5
        )
        assert entry["validation/main/batch"] == pytest.approx(10 / 3)


def test_progress_bar_option(capsys):
    evaluator = Evaluator(
        SerialIterator(TupleDataset(X, T), 4, repeat=False, shuffle=False),
        Regression(),
        progress_bar=True,
    )
    evaluator.evaluate()
    assert "validation" in capsys.readouterr().out


def test_errors():
    iterator = SerialIterator(TupleDataset(X, T), 4, repeat=False)
    with pytest.raises(
        TypeError,
        match="Evaluator: expected target to be a Link or a dict of Links with a 'main' "
        "entry, got None",
    ):
        Evaluator(iterator, None)
    with pytest.raises(
        TypeError, match="Evaluator: expected target to be a Link or a dict of Links, got int"
    ):
        Evaluator(iterator, 3)
    with pytest.raises(TypeError, match="Evaluator: expected target 'main' to be a Link, got str"):
        Evaluator(iterator, {"main": "model"})
    # As in Chainer, a missing 'main' target is an error only when evaluate needs it.
    without_main = Evaluator(iterator, {"other": Regression()})
    with pytest.raises(
        KeyError,
        match="Evaluator.evaluate: without eval_func, the targets must have a 'main' entry, "
        "got the keys \\['other'\\]",
    ):
        without_main.evaluate()
    with pytest.raises(ValueError, match="a dict of iterators must have a 'main' entry"):
        Evaluator({"val": iterator}, Regression())
    with pytest.raises(TypeError, match="Evaluator: expected iterator to be an iterator"):
        Evaluator(None, Regression())
    with pytest.raises(TypeError, match="Evaluator: expected eval_hook to be callable, got int"):
        Evaluator(iterator, Regression(), eval_hook=1)
    with pytest.warns(UserWarning, match="iterator 'main' has repeat=True"):
        Evaluator(SerialIterator(TupleDataset(X, T), 4), Regression())
