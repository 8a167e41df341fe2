"""Tests of TensorBoardReport: the scalar events read back from the event files, resume."""

import glob
import os
import struct
import sys

import numpy
import pytest

from dbr.core import Variable
from dbr.core.serializers import DictionarySerializer, NpzDeserializer
from dbr.training.extension import PRIORITY_READER

pytest.importorskip("tensorboardX", reason="TensorBoardReport needs tensorboardX (extra)")

from tensorboardX.proto.event_pb2 import Event  # noqa: E402

from dbr.training.extensions.tensorboard_report import TensorBoardReport  # noqa: E402


def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def _masked_crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    crc ^= 0xFFFFFFFF
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _read_events(path):
    """Parse a TFRecord file (checking both CRCs) into Event protos."""
    with open(path, "rb") as f:
        content = f.read()
    events, pos = [], 0
    while pos < len(content):
        header = content[pos : pos + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", content[pos + 8 : pos + 12])
        assert length_crc == _masked_crc32c(header)
        data = content[pos + 12 : pos + 12 + length]
        (data_crc,) = struct.unpack("<I", content[pos + 12 + length : pos + 16 + length])
        assert data_crc == _masked_crc32c(data)
        events.append(Event.FromString(data))
        pos += 16 + length
    return events


def _scalars(log_dir):
    """Every (tag, step, value) in the directory's event files, files in name order."""
    out = []
    for path in sorted(glob.glob(os.path.join(str(log_dir), "*tfevents*"))):
        for event in _read_events(path):
            for value in event.summary.value:
                out.append((value.tag, event.step, value.simple_value))
    return out


def _every(n):
    return lambda trainer: trainer.updater.iteration % n == 0


def _observations(n):
    return [
        {
            "main/loss": Variable(numpy.array(2.0**i, dtype=numpy.float32)),
            "lr": 0.1 * i,
            "note": "text",
            "weights": numpy.ones(3),
        }
        for i in range(1, n + 1)
    ]


def _drive(ext, trainer, observations):
    for obs in observations:
        trainer.updater.iteration += 1
        trainer.observation = obs
        ext(trainer)


def test_defaults_of_the_extension():
    ext = TensorBoardReport()
    assert ext.trigger == (1, "iteration")
    assert ext.priority == PRIORITY_READER
    assert ext.default_name == "TensorBoardReport"


def test_means_are_written_with_the_iteration_as_step(tmp_path, output_trainer):
    ext = TensorBoardReport(trigger=_every(2))
    trainer = output_trainer(tmp_path)
    ext.initialize(trainer)
    _drive(ext, trainer, _observations(5))
    ext.finalize()
    got = sorted(_scalars(tmp_path / "tensorboard"))
    expected = sorted(
        [("main/loss", 2, 3.0), ("main/loss", 4, 12.0), ("lr", 2, 0.15), ("lr", 4, 0.35)]
    )
    assert [(tag, step) for tag, step, _ in got] == [(tag, step) for tag, step, _ in expected]
    numpy.testing.assert_allclose([v for *_, v in got], [v for *_, v in expected], rtol=1e-6)


def test_entries_and_log_dir_select_what_and_where(tmp_path, output_trainer):
    ext = TensorBoardReport(entries=["lr", "missing"], trigger=_every(3), log_dir=tmp_path / "tb")
    trainer = output_trainer(tmp_path / "out")
    _drive(ext, trainer, _observations(3))
    ext.finalize()
    got = _scalars(tmp_path / "tb")
    assert [(tag, step) for tag, step, _ in got] == [("lr", 3)]
    assert got[0][2] == pytest.approx(0.2)
    assert not os.path.exists(tmp_path / "out")


def test_resume_continues_the_log_and_purges_later_steps(tmp_path, output_trainer):
    def run(ext, trainer, observations):
        _drive(ext, trainer, observations)

    observations = _observations(9)

    whole = TensorBoardReport(entries=["main/loss"], trigger=_every(3), log_dir=tmp_path / "a")
    trainer = output_trainer(tmp_path)
    whole.initialize(trainer)
    run(whole, trainer, observations)
    whole.finalize()

    first = TensorBoardReport(entries=["main/loss"], trigger=_every(3), log_dir=tmp_path / "b")
    trainer = output_trainer(tmp_path)
    first.initialize(trainer)
    run(first, trainer, observations[:4])  # snapshot with one value pending
    target = {}
    first.serialize(DictionarySerializer(target))
    run(first, trainer, observations[4:6])  # the interrupted run wrote step 6, then died
    first.finalize()

    second = TensorBoardReport(entries=["main/loss"], trigger=_every(3), log_dir=tmp_path / "b")
    NpzDeserializer(target).load(second)
    trainer = output_trainer(tmp_path)
    trainer.updater.iteration = 4
    second.initialize(trainer)
    run(second, trainer, observations[4:])
    second.finalize()

    expected = _scalars(tmp_path / "a")
    assert [(t, s) for t, s, _ in expected] == [
        ("main/loss", 3),
        ("main/loss", 6),
        ("main/loss", 9),
    ]
    numpy.testing.assert_allclose(
        [v for *_, v in expected], [(2 + 4 + 8) / 3, (16 + 32 + 64) / 3, (128 + 256 + 512) / 3]
    )
    files = sorted(glob.glob(str(tmp_path / "b" / "*tfevents*")))
    assert len(files) == 2
    events = {path: _read_events(path) for path in files}
    resumed = [p for p in files if any(e.HasField("session_log") for e in events[p])]
    assert len(resumed) == 1
    purge_steps = [e.step for e in events[resumed[0]] if e.HasField("session_log")]
    assert purge_steps == [5]
    resumed_scalars = [
        (v.tag, e.step, v.simple_value) for e in events[resumed[0]] for v in e.summary.value
    ]
    assert resumed_scalars == expected[1:]
    (interrupted,) = set(files) - set(resumed)
    assert [e.step for e in events[interrupted] if e.summary.value] == [3, 6]


def test_without_tensorboardx(monkeypatch):
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match=r'pip install "dbr-training\[tensorboard\]"'):
        TensorBoardReport()


def test_bad_arguments():
    with pytest.raises(TypeError, match="TensorBoardReport: expected entries to be str keys"):
        TensorBoardReport(entries=[1])
    with pytest.raises(TypeError, match="TensorBoardReport: expected log_dir to be a path"):
        TensorBoardReport(log_dir=3)


def test_with_the_real_trainer(tmp_path, make_trainer):
    trainer, _ = make_trainer(tmp_path, stop=(8, "iteration"), lr=0.05, batch=2)
    losses = []
    trainer.extend(lambda tr: losses.append(float(tr.observation["main/loss"].array)))
    trainer.extend(TensorBoardReport(trigger=(1, "epoch")))
    trainer.run()
    got = _scalars(tmp_path / "tensorboard")
    # With no entries every scalar the model reports is logged, at the end of each epoch.
    assert [(tag, step) for tag, step, _ in got] == [
        (tag, step) for step in (4, 8) for tag in ("main/loss", "main/correct", "main/total")
    ]
    loss = [v for tag, _, v in got if tag == "main/loss"]
    numpy.testing.assert_allclose(
        loss, [numpy.mean(losses[:4]), numpy.mean(losses[4:])], rtol=1e-6
    )
    assert [v for tag, _, v in got if tag != "main/loss"] == [1, 2, 1, 2]
