import json
import os

import numpy as np
import pytest

from dbr.core import Chain, Parameter, ops, report
from dbr.core.serializers import DictionarySerializer, NpzDeserializer
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training.extensions.log_report import LogReport
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater


class Regression(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.full((3, 1), 0.5, np.float32))

    def forward(self, x, t):
        loss = ops.sum((ops.matmul(x, self.W) - t) ** 2) / x.shape[0]
        report({"loss": loss, "count": x.shape[0]}, self)
        return loss


def make_trainer(tmp_path, stop=(3, "epoch"), n=12, batch=4):
    rng = np.random.RandomState(0)
    dataset = TupleDataset(rng.randn(n, 3).astype(np.float32), rng.randn(n, 1).astype(np.float32))
    model = Regression()
    optimizer = SGD(lr=0.05).setup(model)
    updater = StandardUpdater(SerialIterator(dataset, batch, shuffle=False), optimizer)
    return Trainer(updater, stop, out=str(tmp_path))


def record_observations(trainer):
    records = []

    def recorder(t):
        records.append(
            {
                "loss": float(t.observation["main/loss"].array),
                "epoch": t.updater.epoch,
                "iteration": t.updater.iteration,
            }
        )

    trainer.extend(recorder, name="recorder", priority=1000)
    return records


def test_log_means_and_json_file(tmp_path):
    trainer = make_trainer(tmp_path)
    records = record_observations(trainer)
    log_report = LogReport()
    trainer.extend(log_report)
    trainer.run()

    assert len(records) == 9
    log = log_report.log
    assert [entry["epoch"] for entry in log] == [1, 2, 3]
    assert [entry["iteration"] for entry in log] == [3, 6, 9]
    for k, entry in enumerate(log):
        expected = np.mean([r["loss"] for r in records[3 * k : 3 * k + 3]])
        assert entry["main/loss"] == pytest.approx(expected, rel=1e-6)
        assert entry["main/count"] == 4.0
        assert set(entry) == {"main/loss", "main/count", "epoch", "iteration", "elapsed_time"}

    with open(os.path.join(tmp_path, "log")) as f:
        text = f.read()
    on_disk = json.loads(text)
    assert on_disk == log
    assert text.startswith('[\n    {\n        "main/loss": ')
    for entry in on_disk:
        assert type(entry["epoch"]) is int
        assert type(entry["iteration"]) is int
        assert type(entry["elapsed_time"]) is float
        assert type(entry["main/loss"]) is float
    times = [entry["elapsed_time"] for entry in on_disk]
    assert times == sorted(times) and times[0] > 0
    assert os.listdir(tmp_path) == ["log"]


def test_keys_trigger_postprocess_and_filename_template(tmp_path):
    trainer = make_trainer(tmp_path, stop=(6, "iteration"))
    records = record_observations(trainer)

    def postprocess(entry):
        entry["twice"] = entry["main/loss"] * 2

    log_report = LogReport(
        keys=["main/loss", "absent"],
        trigger=(2, "iteration"),
        postprocess=postprocess,
        filename="log_{iteration}",
    )
    trainer.extend(log_report)
    trainer.run()

    log = log_report.log
    assert [entry["iteration"] for entry in log] == [2, 4, 6]
    for k, entry in enumerate(log):
        expected = np.mean([r["loss"] for r in records[2 * k : 2 * k + 2]])
        assert set(entry) == {"main/loss", "epoch", "iteration", "elapsed_time", "twice"}
        assert entry["main/loss"] == pytest.approx(expected, rel=1e-6)
        assert entry["twice"] == entry["main/loss"] * 2
    assert sorted(os.listdir(tmp_path)) == ["log_2", "log_4", "log_6"]
    with open(os.path.join(tmp_path, "log_4")) as f:
        assert json.load(f) == log[:2]


def test_log_name_none_writes_no_file(tmp_path):
    trainer = make_trainer(tmp_path, stop=(1, "epoch"))
    log_report = LogReport(log_name=None)
    trainer.extend(log_report)
    trainer.run()
    assert len(log_report.log) == 1
    assert os.listdir(tmp_path) == []


def test_serialize_round_trip_continues_the_log(tmp_path):
    trainer = make_trainer(tmp_path, stop=(4, "iteration"))
    log_report = LogReport(trigger=(3, "iteration"))
    trainer.extend(log_report)
    trainer.run()
    assert len(log_report.log) == 1

    saver = DictionarySerializer()
    log_report.serialize(saver)
    npz = str(tmp_path / "state.npz")
    np.savez(npz, **saver.target)

    restored = LogReport(trigger=(3, "iteration"))
    with np.load(npz) as data:
        restored.serialize(NpzDeserializer(data))
    assert restored.log == json.loads(json.dumps(log_report.log))
    # The summary of iteration 4 was restored: the next line averages iterations 4..6.
    assert restored._summary.compute_mean() == log_report._summary.compute_mean()


def test_bad_arguments():
    with pytest.raises(TypeError, match="LogReport: expected keys to be an iterable of str"):
        LogReport(keys="main/loss")
    with pytest.raises(TypeError, match="LogReport: expected every key to be a str, got 3"):
        LogReport(keys=["a", 3])
    with pytest.raises(TypeError, match="LogReport: expected postprocess to be callable"):
        LogReport(postprocess=1)
    with pytest.raises(ValueError):
        LogReport(trigger=(1, "minute"))


def test_an_extension_called_before_training_gets_its_own_entry(tmp_path):
    # Chainer 7.8.1 (train_mnist's Evaluator and LogReport with
    # call_before_training=True) logs the pre-training values as a separate
    # entry with epoch 0 and iteration 0; epoch 1 averages only epoch 1.
    trainer = make_trainer(tmp_path, stop=(2, "epoch"))
    records = record_observations(trainer)
    validations = []

    def validate(t):
        value = 10.0 + t.updater.iteration
        validations.append(value)
        report({"validation/loss": value})

    trainer.extend(validate, trigger=(1, "epoch"), call_before_training=True, priority=2000)
    log_report = LogReport()
    trainer.extend(log_report, call_before_training=True)
    trainer.run()

    log = log_report.log
    assert [(e["epoch"], e["iteration"]) for e in log] == [(0, 0), (1, 3), (2, 6)]
    assert set(log[0]) == {"validation/loss", "epoch", "iteration", "elapsed_time"}
    assert [e["validation/loss"] for e in log] == [10.0, 13.0, 16.0]
    assert log[1]["main/loss"] == pytest.approx(np.mean([r["loss"] for r in records[:3]]))
    with open(os.path.join(tmp_path, "log")) as f:
        assert json.load(f) == log


def test_a_resumed_trainer_does_not_call_extensions_before_training_again(tmp_path):
    # Chainer calls the call_before_training extensions only when
    # trainer.is_before_training (no update done yet); a resumed run skips them.
    trainer = make_trainer(tmp_path, stop=(3, "epoch"))
    for _ in range(3):
        trainer.updater.update()
    calls = []
    trainer.extend(lambda t: calls.append(t.updater.iteration), call_before_training=True)
    log_report = LogReport()
    trainer.extend(log_report, call_before_training=True)
    trainer.run()
    assert calls == [4, 5, 6, 7, 8, 9]
    # The LogReport's new trigger starts from the start of training, as Chainer's
    # does, so its first call (iteration 4) reports the epoch crossed at iteration 3.
    assert [(e["epoch"], e["iteration"]) for e in log_report.log] == [(1, 4), (2, 6), (3, 9)]


@pytest.mark.parametrize(
    "filename, stale, kept",
    [
        ("log", [".log.0123456789abcdef.tmp"], [".log.0123456789abcdef.tmp.keep"]),
        (
            "log_{iteration}",
            [".log_3.00112233aabbccdd.tmp", ".log_12.fedcba9876543210.tmp"],
            [".log.0123456789abcdef.tmp", ".log_3.0123.tmp"],
        ),
    ],
)
def test_a_new_run_removes_the_temporaries_a_killed_one_left(tmp_path, filename, stale, kept):
    # A SIGKILL between write_atomically's create and rename leaves .<name>.<16 hex>.tmp.
    others = [".other.0123456789abcdef.tmp", ".log.0123456789ABCDEF.tmp", "log.tmp", "notes"]
    for name in stale + kept + others:
        (tmp_path / name).write_text("[")
    trainer = make_trainer(tmp_path, stop=(1, "epoch"))
    trainer.extend(LogReport(filename=filename, trigger=(1, "iteration")))
    trainer.run()
    left = set(os.listdir(tmp_path))
    assert not left & set(stale)
    assert left >= set(kept + others)
    assert not {n for n in left if n.endswith(".tmp")} - set(kept + others)
