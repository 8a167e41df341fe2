"""One small training run with every extension at once, as a user would assemble it."""

import importlib.util
import io
import json
import os

import numpy as np
import pytest

from dbr.core import Chain, Parameter, ops, report
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import StandardUpdater, Trainer, extensions, optimizers

# Checked without PlotReport.available(), which warns (as Chainer) when it is absent.
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

N_TRAIN, N_TEST, BATCH, EPOCHS, LR = 24, 8, 6, 3, 0.05


class Regression(Chain):
    """y = x W, trained on squared error; reports loss and a count of near hits."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.full((3, 1), 0.5, np.float32))

    def forward(self, x, t):
        err = ops.matmul(x, self.W) - t
        loss = ops.sum(err**2) / x.shape[0]
        hits = int((abs(err.array) < 1.0).sum())
        report({"loss": loss, "hits": hits, "total": x.shape[0]}, self)
        return loss


def _data(n, seed):
    rng = np.random.RandomState(seed)
    x = rng.randn(n, 3).astype(np.float32)
    t = (x @ np.array([[1.0], [-2.0], [0.5]], np.float32)).astype(np.float32)
    return TupleDataset(x, t)


def test_every_extension_in_one_run(tmp_path):
    model = Regression()
    optimizer = optimizers.SGD(lr=LR).setup(model)
    train_iter = SerialIterator(_data(N_TRAIN, 0), BATCH, shuffle=False)
    test_iter = SerialIterator(_data(N_TEST, 1), BATCH, repeat=False, shuffle=False)
    trainer = Trainer(StandardUpdater(train_iter, optimizer), (EPOCHS, "epoch"), out=str(tmp_path))

    printed, progress = io.StringIO(), io.StringIO()
    trainer.extend(extensions.Evaluator(test_iter, model))
    trainer.extend(extensions.LogReport())
    trainer.extend(extensions.observe_lr())
    trainer.extend(extensions.ExponentialShift("lr", 0.5), trigger=(1, "epoch"))
    trainer.extend(extensions.MicroAverage("main/hits", "main/total", "main/hit_rate"))
    trainer.extend(extensions.ParameterStatistics(model, prefix="model"))
    trainer.extend(extensions.FailOnNonNumber())
    trainer.extend(extensions.DumpGraph("main/loss"))
    trainer.extend(extensions.snapshot(n_retains=2), trigger=(1, "epoch"))
    trainer.extend(
        extensions.snapshot_object(model, "model_epoch_{.updater.epoch}"), trigger=(1, "epoch")
    )
    if HAS_MATPLOTLIB:
        trainer.extend(extensions.PlotReport(["main/loss", "validation/main/loss"], "epoch"))
    entries = ["epoch", "main/loss", "validation/main/loss", "lr", "main/hit_rate"]
    trainer.extend(extensions.PrintReport(entries, out=printed))
    trainer.extend(extensions.ProgressBar(update_interval=1, out=progress))
    trainer.run()

    log = json.loads((tmp_path / "log").read_text())
    assert [e["epoch"] for e in log] == [1, 2, 3]
    assert [e["iteration"] for e in log] == [4, 8, 12]
    for e in log:
        # observe_lr reports the rate used during the epoch; the shift halves it at its end.
        assert e["lr"] == pytest.approx(LR * 0.5 ** (e["epoch"] - 1))
        assert {"main/loss", "validation/main/loss", "main/hit_rate"} <= set(e)
        assert "model/None/W/data/mean" in e  # an unnamed root link is "None", as in Chainer
        assert 0.0 <= e["main/hit_rate"] <= 1.0
    assert optimizer.lr == pytest.approx(LR * 0.5**EPOCHS)
    assert log[-1]["main/loss"] < log[0]["main/loss"]

    # Evaluator averages the per-batch means (batches of 6 and 2), as Chainer's does.
    test_x = np.stack([x for x, _ in _data(N_TEST, 1)])
    test_t = np.stack([t for _, t in _data(N_TEST, 1)])
    sq = (((test_x @ model.W.array) - test_t) ** 2).sum(axis=1)
    expected = (sq[:BATCH].mean() + sq[BATCH:].mean()) / 2
    assert log[-1]["validation/main/loss"] == pytest.approx(expected, rel=1e-5)

    lines = printed.getvalue().splitlines()
    assert lines[0].split() == entries
    assert len([line for line in lines if line.strip()]) == 1 + EPOCHS
    assert "12 iter, 3 epoch / 3 epochs" in progress.getvalue()
    assert "iters/sec" in progress.getvalue()

    files = set(os.listdir(tmp_path))
    assert {"snapshot_iter_8", "snapshot_iter_12"} <= files
    assert "snapshot_iter_4" not in files
    assert {"model_epoch_1", "model_epoch_2", "model_epoch_3", "cg.dot"} <= files
    assert "digraph" in (tmp_path / "cg.dot").read_text()
    if HAS_MATPLOTLIB:
        assert (tmp_path / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    reloaded = Regression()
    load_npz(str(tmp_path / "model_epoch_3"), reloaded)
    np.testing.assert_array_equal(reloaded.W.array, model.W.array)
