import pathlib
import runpy

import numpy as np
import pytest

from dbr.core import Chain, Link, Parameter, ops, report
from dbr.core.serializers import load_npz, save_npz
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.trainer import Trainer
from dbr.training.updaters.parallel_updater import ParallelUpdater
from dbr.training.updaters.standard_updater import StandardUpdater

W0 = np.array([[0.5], [-1.0], [2.0]])
LR = 0.05

# The tests' minimal optimizer, run by path: no test folder is on sys.path (importlib mode).
_FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PlainSGD = runpy.run_path(str(_FIXTURES / "plain_sgd.py"))["PlainSGD"]


class Linear(Link):
    """Squared error of x @ W against t, divided by ``denominator`` (len(x) when None)."""

    def __init__(self, denominator=None):
        super().__init__()
        self.denominator = denominator
        with self.init_scope():
            self.W = Parameter(W0.astype(np.float64))

    def forward(self, x, t):
        n = len(x) if self.denominator is None else self.denominator
        loss = ops.sum((ops.matmul(x, self.W) - t) ** 2) / n
        report({"loss": loss}, self)
        return loss


class Net(Chain):
    def __init__(self, denominator=None):
        super().__init__()
        with self.init_scope():
            self.inner = Linear(denominator)

    def forward(self, x, t):
        return self.inner(x, t)


def data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 3)), rng.standard_normal((n, 1))


def grad(W, x, t, n):
    """Gradient of sum((x @ W - t) ** 2) / n with respect to W."""
    return 2 * x.T @ (x @ W - t) / n


def run_parallel(model, batch_size, n_devices, iterations, x, t):
    devices = {"main": "@numpy", **{f"d{i}": "@numpy" for i in range(1, n_devices)}}
    it = SerialIterator(TupleDataset(x, t), batch_size, shuffle=False)
    updater = ParallelUpdater(it, PlainSGD(LR).setup(model), devices=devices)
    for _ in range(iterations):
        updater.update()
    return updater


def test_same_as_standard_updater_for_sum_over_batch():
    x, t = data()
    parallel = Net(denominator=6)
    run_parallel(parallel, 6, 2, 4, x, t)
    standard = Net(denominator=6)
    it = SerialIterator(TupleDataset(x, t), 6, shuffle=False)
    updater = StandardUpdater(it, PlainSGD(LR).setup(standard))
    for _ in range(4):
        updater.update()
    W = W0.copy()
    for i in range(4):
        rows = slice((6 * i) % 12, (6 * i) % 12 + 6)
        W -= LR * grad(W, x[rows], t[rows], 6)
    np.testing.assert_allclose(standard.inner.W.array, W, rtol=1e-12)
    np.testing.assert_allclose(parallel.inner.W.array, W, rtol=1e-12)


@pytest.mark.parametrize("batch_size, n_devices", [(6, 2), (7, 3), (4, 3)])
def test_mean_losses_are_summed_over_strided_sub_batches(batch_size, n_devices):
    x, t = data(n=14)
    model = Net()
    updater = run_parallel(model, batch_size, n_devices, 3, x, t)
    W = W0.copy()
    order = np.arange(14)
    for i in range(3):
        idx = np.take(order, range(batch_size * i, batch_size * (i + 1)), mode="wrap")
        g = 0
        for d in range(n_devices):
            sub = idx[d::n_devices]
            if len(sub):
                g = g + grad(W, x[sub], t[sub], len(sub))
        W -= LR * g
    np.testing.assert_allclose(model.inner.W.array, W, rtol=1e-12)
    for name, copy in updater._models.items():
        if name != "main":
            assert copy is not model
            assert copy.inner.W is not model.inner.W
            np.testing.assert_array_equal(copy.inner.W.array, model.inner.W.array)


def test_given_models_are_used():
    x, t = data()
    main, other = Net(), Net()
    it = SerialIterator(TupleDataset(x, t), 4, shuffle=False)
    updater = ParallelUpdater(
        it,
        PlainSGD(LR).setup(main),
        models={"main": main, "second": other},
        devices={"main": "@numpy", "second": "@numpy"},
    )
    updater.update()
    W = W0 - LR * (grad(W0, x[[0, 2]], t[[0, 2]], 2) + grad(W0, x[[1, 3]], t[[1, 3]], 2))
    np.testing.assert_allclose(main.inner.W.array, W, rtol=1e-12)
    np.testing.assert_array_equal(other.inner.W.array, main.inner.W.array)


def test_reports_of_every_copy_reach_the_trainer(tmp_path):
    x, t = data()
    model = Net()
    it = SerialIterator(TupleDataset(x, t), 4, shuffle=False)
    updater = ParallelUpdater(
        it, PlainSGD(LR).setup(model), devices={"main": "@numpy", "second": "@numpy"}
    )
    trainer = Trainer(updater, (1, "iteration"), out=str(tmp_path))
    seen = []
    trainer.extend(lambda tr: seen.append(dict(tr.observation)), name="look")
    trainer.run()
    assert sorted(seen[0]) == ["main/inner/loss", "second/inner/loss"]
    expected_main = np.sum((x[[0, 2]] @ W0 - t[[0, 2]]) ** 2) / 2
    np.testing.assert_allclose(float(seen[0]["main/inner/loss"].array), expected_main)


def test_auto_new_epoch():
    x, t = data(n=8)
    opt = PlainSGD(LR)
    it = SerialIterator(TupleDataset(x, t), 4)
    updater = ParallelUpdater(it, opt.setup(Net()), devices={"main": "@numpy", "b": "@numpy"})
    assert opt.use_auto_new_epoch
    for _ in range(5):
        updater.update()
    assert opt.epoch == 2


def test_serialize_resynchronises_copies(tmp_path):
    x, t = data()
    trained = Net()
    updater = run_parallel(trained, 4, 2, 3, x, t)
    path = str(tmp_path / "u.npz")
    save_npz(path, updater)
    fresh = Net()
    fresh_updater = run_parallel(fresh, 4, 2, 0, x, t)
    load_npz(path, fresh_updater)
    assert fresh_updater.iteration == 3
    np.testing.assert_array_equal(fresh.inner.W.array, trained.inner.W.array)
    copy = fresh_updater._models["d1"]
    np.testing.assert_array_equal(copy.inner.W.array, trained.inner.W.array)
    updater.update()
    fresh_updater.update()
    np.testing.assert_array_equal(fresh.inner.W.array, trained.inner.W.array)


def test_copies_have_no_update_rules():
    class Rule:
        def update(self, param):
            raise AssertionError("never called")

    model = Net()
    model.inner.W.update_rule = Rule()
    x, t = data()
    updater = run_parallel(model, 4, 2, 0, x, t)
    assert updater._models["d1"].inner.W.update_rule is None
    assert isinstance(model.inner.W.update_rule, Rule)


def test_bad_arguments():
    x, t = data()
    it = SerialIterator(TupleDataset(x, t), 4)
    model = Net()
    opt = PlainSGD(LR).setup(model)
    with pytest.raises(ValueError, match="devices must be a dict from names to devices"):
        ParallelUpdater(it, opt)
    with pytest.raises(ValueError, match="devices must have a 'main' entry, got the keys"):
        ParallelUpdater(it, opt, devices={"a": "@numpy"})
    with pytest.raises(ValueError, match="models must be a dict with the keys of devices"):
        ParallelUpdater(it, opt, models={"main": model}, devices={"main": "@numpy", "b": "@numpy"})
    with pytest.raises(ValueError, match="models\\['main'\\] must be the main optimizer's target"):
        ParallelUpdater(
            it, opt, models={"main": Net(), "b": Net()}, devices={"main": "@numpy", "b": "@numpy"}
        )
    with pytest.raises(ValueError, match="unknown device specifier '@tpu'"):
        ParallelUpdater(it, opt, devices={"main": "@tpu"})
    assert opt.use_auto_new_epoch is False
