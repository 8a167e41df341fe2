"""The snapshot extensions: file names, condition, n_retains, autoload, damaged files."""

import os
import struct
import types
import zipfile

import numpy as np
import pytest

from dbr.core import Link, Parameter
from dbr.core.serializers import DeserializationError, load_npz
from dbr.training.extensions import snapshot_writers
from dbr.training.extensions._snapshot import (
    _find_latest_snapshot,
    _find_snapshot_files,
    _find_stale_snapshots,
    snapshot,
    snapshot_object,
)
from dbr.training.triggers import MaxValueTrigger


class Model(Link):
    def __init__(self, value=0.0):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(np.full((2, 3), value, dtype=np.float32))


class FakeTrainer:
    """What a snapshot reads from a trainer: out, updater.iteration, serialize."""

    def __init__(self, out, value=0.0):
        self.out = str(out)
        self.updater = types.SimpleNamespace(iteration=0)
        self.model = Model(value)

    def serialize(self, serializer):
        self.model.serialize(serializer["model"])
        self.updater.iteration = serializer("iteration", self.updater.iteration)


def take(ext, trainer, iteration, value):
    trainer.updater.iteration = iteration
    trainer.model.W.array[...] = value
    ext(trainer)


def loaded_value(path):
    fresh = FakeTrainer("unused")
    load_npz(path, fresh)
    return fresh.updater.iteration, float(fresh.model.W.array[0, 0])


def test_defaults_follow_chainer():
    ext = snapshot()
    assert ext.trigger == (1, "epoch")
    assert ext.priority == -100
    assert ext.filename == "snapshot_iter_{.updater.iteration}"
    assert isinstance(ext.writer, snapshot_writers.SimpleWriter)


def test_file_name_from_template_and_contents(tmp_path):
    trainer = FakeTrainer(tmp_path)
    ext = snapshot()
    ext.initialize(trainer)
    take(ext, trainer, 7, 2.5)
    assert sorted(os.listdir(tmp_path)) == ["snapshot_iter_7"]
    assert loaded_value(tmp_path / "snapshot_iter_7") == (7, 2.5)


def test_callable_filename_and_snapshot_object(tmp_path):
    trainer = FakeTrainer(tmp_path)
    ext = snapshot_object(trainer.model, lambda t: f"model-{t.updater.iteration * 10}.npz")
    take(ext, trainer, 3, -1.0)
    assert os.listdir(tmp_path) == ["model-30.npz"]
    model = Model()
    load_npz(tmp_path / "model-30.npz", model)
    np.testing.assert_array_equal(model.W.array, np.full((2, 3), -1.0, np.float32))


def test_snapshot_copies_state_when_taken(tmp_path):
    saved = []
    trainer = FakeTrainer(tmp_path)
    ext = snapshot(savefun=lambda path, target: saved.append(target) or open(path, "w").close())
    take(ext, trainer, 1, 4.0)
    trainer.model.W.array[...] = 9.0
    assert saved[0]["model/W"][0, 0] == 4.0
    assert saved[0]["iteration"] == 1


@pytest.mark.parametrize("savefun", ["save_npz", "save_hdf5"])
def test_a_trigger_before_its_first_value_is_snapshotted_and_restored(tmp_path, savefun):
    # A MaxValueTrigger holds None until its first value; a snapshot taken
    # then holds that None (as Chainer's does) and restores it.
    if savefun == "save_hdf5":
        pytest.importorskip("h5py")
    from dbr.core import serializers

    trigger = MaxValueTrigger("validation/main/accuracy")
    ext = snapshot_object(trigger, "trigger", savefun=getattr(serializers, savefun))
    take(ext, FakeTrainer(tmp_path), 1, 0.0)
    restored = MaxValueTrigger("validation/main/accuracy")
    load = serializers.load_npz if savefun == "save_npz" else serializers.load_hdf5
    load(tmp_path / "trigger", restored)
    assert restored._best_value is None


def test_condition_is_called_without_arguments(tmp_path):
    answers = iter([False, True, False])
    trainer = FakeTrainer(tmp_path)
    ext = snapshot(condition=lambda: next(answers))
    for it in (1, 2, 3):
        take(ext, trainer, it, float(it))
    assert os.listdir(tmp_path) == ["snapshot_iter_2"]


def test_n_retains_keeps_the_newest(tmp_path):
    (tmp_path / "other_1").write_text("not a snapshot")
    trainer = FakeTrainer(tmp_path)
    ext = snapshot(n_retains=2)
    ext.initialize(trainer)
    for it in (1, 2, 9, 10, 11):
        take(ext, trainer, it, float(it))
    assert sorted(os.listdir(tmp_path)) == ["other_1", "snapshot_iter_10", "snapshot_iter_11"]


def test_n_retains_off_by_default(tmp_path):
    trainer = FakeTrainer(tmp_path)
    ext = snapshot()
    ext.initialize(trainer)
    for it in (1, 2, 3):
        take(ext, trainer, it, float(it))
    assert len(os.listdir(tmp_path)) == 3


def write_snapshots(tmp_path, iterations):
    trainer = FakeTrainer(tmp_path)
    ext = snapshot()
    for it in iterations:
        take(ext, trainer, it, float(it))


def test_autoload_picks_the_newest_by_mtime(tmp_path):
    write_snapshots(tmp_path, [2, 10, 9])
    for age, name in [
        (300, "snapshot_iter_2"),
        (100, "snapshot_iter_10"),
        (200, "snapshot_iter_9"),
    ]:
        t = 1_700_000_000 - age
        os.utime(tmp_path / name, (t, t))
    trainer = FakeTrainer(tmp_path)
    snapshot(autoload=True).initialize(trainer)
    assert trainer.updater.iteration == 10
    assert trainer.model.W.array[0, 0] == 10.0


def test_autoload_breaks_mtime_ties_by_number(tmp_path):
    write_snapshots(tmp_path, [10, 9, 100])
    for name in os.listdir(tmp_path):
        os.utime(tmp_path / name, (1_700_000_000, 1_700_000_000))
    trainer = FakeTrainer(tmp_path)
    snapshot(autoload=True).initialize(trainer)
    assert trainer.updater.iteration == 100


def test_autoload_ignores_partial_writes_and_other_files(tmp_path):
    write_snapshots(tmp_path, [4])
    partial = tmp_path / "tmpsnapshot_iter_8abc123"
    partial.mkdir()
    (partial / "snapshot_iter_8").write_bytes(b"PK\x03\x04 half a file")
    (tmp_path / "log").write_text("[]")
    trainer = FakeTrainer(tmp_path)
    snapshot(autoload=True).initialize(trainer)
    assert trainer.updater.iteration == 4


def make_files(directory, names):
    """Create empty files with mtimes one second apart, in the order given."""
    for i, name in enumerate(names):
        path = directory / name
        path.write_bytes(b"")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))


def test_find_snapshot_files_gives_mtime_and_name_oldest_first(tmp_path):
    make_files(tmp_path, ["snap_3_x.npz", "snap_1_y.npz", "tmpsnap_2_z.npz", "snap_2.npy"])
    (tmp_path / "snap_9_d.npz").mkdir()  # a directory never matches
    found = _find_snapshot_files("snap_{}_{}.npz", str(tmp_path))
    assert found == [(1_000_000.0, "snap_3_x.npz"), (1_000_001.0, "snap_1_y.npz")]
    assert _find_snapshot_files("snap_{}", str(tmp_path / "missing")) == []


def test_find_latest_and_stale_snapshots(tmp_path):
    names = [f"snapshot_iter_{i}" for i in (5, 20, 3, 11)]
    make_files(tmp_path, names)
    assert _find_latest_snapshot("snapshot_iter_{}", str(tmp_path)) == "snapshot_iter_11"
    assert _find_latest_snapshot("model_{}", str(tmp_path)) is None
    stale = _find_stale_snapshots("snapshot_iter_{}", str(tmp_path), 3)
    assert list(stale) == ["snapshot_iter_5"]
    assert list(_find_stale_snapshots("snapshot_iter_{}", str(tmp_path), 1)) == names[:3]
    assert list(_find_stale_snapshots("snapshot_iter_{}", str(tmp_path), 10)) == []
    assert list(_find_stale_snapshots("snapshot_iter_{}", str(tmp_path), 0)) == []
    assert list(_find_stale_snapshots("snapshot_iter_{}", str(tmp_path), -1)) == []


def test_autoload_without_snapshots_does_nothing(tmp_path):
    trainer = FakeTrainer(tmp_path / "missing", value=3.0)
    snapshot(autoload=True).initialize(trainer)
    assert trainer.updater.iteration == 0
    assert trainer.model.W.array[0, 0] == 3.0


def test_autoload_into_target(tmp_path):
    trainer = FakeTrainer(tmp_path)
    ext = snapshot_object(trainer.model, "model_{.updater.iteration}")
    take(ext, trainer, 5, 6.0)
    other = FakeTrainer(tmp_path)
    snapshot_object(other.model, "model_{.updater.iteration}", autoload=True).initialize(other)
    assert other.model.W.array[0, 0] == 6.0
    assert other.updater.iteration == 0


@pytest.mark.parametrize("keep", [0.5, 0.0])
def test_truncated_only_snapshot_gives_clear_error(tmp_path, keep):
    write_snapshots(tmp_path, [2])
    path = tmp_path / "snapshot_iter_2"
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    trainer = FakeTrainer(tmp_path, value=7.0)
    with pytest.raises(ValueError) as info:
        snapshot(autoload=True).initialize(trainer)
    message = str(info.value)
    assert str(path) in message
    assert "truncated or corrupt" in message
    assert trainer.model.W.array[0, 0] == 7.0


class BigTrainer:
    """A trainer-like target whose counter lies between two multi-block arrays."""

    N = 4000

    def __init__(self, out, seed=0):
        rng = np.random.default_rng(seed)
        self.out = str(out)
        self.updater = types.SimpleNamespace(iteration=seed)
        self.first = rng.standard_normal(self.N)
        self.last = rng.standard_normal(self.N)

    def serialize(self, serializer):
        self.first = serializer("first", self.first)
        self.updater.iteration = serializer("iteration", self.updater.iteration)
        self.last = serializer("last", self.last)


def corrupt_member(path, member):
    """Flip bytes in the middle of ``member``'s data in the zip file at ``path``."""
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(member)
    data = bytearray(path.read_bytes())
    name_len, extra_len = struct.unpack(
        "<HH", data[info.header_offset + 26 : info.header_offset + 30]
    )
    start = info.header_offset + 30 + name_len + extra_len + info.compress_size // 2
    data[start : start + 8] = bytes(b ^ 0xFF for b in data[start : start + 8])
    path.write_bytes(bytes(data))


def write_big_snapshots(tmp_path, iterations):
    for i, it in enumerate(iterations):
        trainer = BigTrainer(tmp_path, seed=it)
        snapshot()(trainer)
        t = 1_700_000_000 + i
        os.utime(tmp_path / f"snapshot_iter_{it}", (t, t))


def test_autoload_of_a_corrupt_only_snapshot_changes_nothing(tmp_path):
    write_big_snapshots(tmp_path, [3])
    corrupt_member(tmp_path / "snapshot_iter_3", "last.npy")
    trainer = BigTrainer(tmp_path, seed=100)
    first, last = trainer.first.copy(), trainer.last.copy()
    with pytest.raises(ValueError) as info:
        snapshot(autoload=True).initialize(trainer)
    message = str(info.value)
    assert str(tmp_path / "snapshot_iter_3") in message and "'last'" in message
    assert trainer.updater.iteration == 100
    np.testing.assert_array_equal(trainer.first, first)
    np.testing.assert_array_equal(trainer.last, last)


def test_autoload_falls_back_to_the_previous_complete_snapshot(tmp_path):
    write_big_snapshots(tmp_path, [3, 6, 9])
    corrupt_member(tmp_path / "snapshot_iter_9", "last.npy")
    trainer = BigTrainer(tmp_path, seed=100)
    with pytest.warns(RuntimeWarning) as record:
        snapshot(autoload=True).initialize(trainer)
    (warning,) = record
    message = str(warning.message)
    assert str(tmp_path / "snapshot_iter_9") in message
    assert str(tmp_path / "snapshot_iter_6") in message
    expected = BigTrainer(tmp_path, seed=6)
    assert trainer.updater.iteration == 6
    np.testing.assert_array_equal(trainer.first, expected.first)
    np.testing.assert_array_equal(trainer.last, expected.last)


def test_autoload_skips_every_damaged_newer_snapshot(tmp_path):
    write_big_snapshots(tmp_path, [3, 6, 9])
    corrupt_member(tmp_path / "snapshot_iter_9", "last.npy")
    path = tmp_path / "snapshot_iter_6"
    path.write_bytes(path.read_bytes()[:100])
    trainer = BigTrainer(tmp_path, seed=100)
    with pytest.warns(RuntimeWarning) as record:
        snapshot(autoload=True).initialize(trainer)
    message = str(record[0].message)
    for it in (9, 6, 3):
        assert str(tmp_path / f"snapshot_iter_{it}") in message
    assert trainer.updater.iteration == 3


def test_autoload_with_every_snapshot_damaged_names_them_all(tmp_path):
    write_big_snapshots(tmp_path, [3, 6])
    corrupt_member(tmp_path / "snapshot_iter_6", "first.npy")
    corrupt_member(tmp_path / "snapshot_iter_3", "last.npy")
    trainer = BigTrainer(tmp_path, seed=100)
    first = trainer.first.copy()
    with pytest.raises(DeserializationError) as info:
        snapshot(autoload=True).initialize(trainer)
    message = str(info.value)
    assert str(tmp_path / "snapshot_iter_6") in message
    assert str(tmp_path / "snapshot_iter_3") in message
    assert trainer.updater.iteration == 100
    np.testing.assert_array_equal(trainer.first, first)


def test_autoload_does_not_fall_back_past_a_mismatch(tmp_path):
    # A snapshot that does not fit the target is not damaged: older ones would not fit either.
    write_snapshots(tmp_path, [1, 2])
    trainer = FakeTrainer(tmp_path)
    trainer.model.W = Parameter(np.zeros((4, 4), np.float32))
    with pytest.raises(DeserializationError, match="snapshot_iter_2"):
        snapshot(autoload=True).initialize(trainer)
    assert trainer.updater.iteration == 0


def test_failed_save_leaves_previous_snapshot(tmp_path):
    trainer = FakeTrainer(tmp_path)
    snapshot()(trainer)  # snapshot_iter_0

    def crashing_savefun(path, target):
        with open(path, "wb") as f:
            f.write(b"PK\x03\x04partial")
        raise OSError("disk full")

    trainer.updater.iteration = 0
    with pytest.raises(OSError, match="disk full"):
        snapshot(savefun=crashing_savefun)(trainer)
    assert os.listdir(tmp_path) == ["snapshot_iter_0"]
    assert loaded_value(tmp_path / "snapshot_iter_0") == (0, 0.0)


def test_snapshot_on_error(tmp_path):
    trainer = FakeTrainer(tmp_path)
    snapshot().on_error(trainer, RuntimeError("x"), None)
    assert os.listdir(tmp_path) == []
    snapshot(snapshot_on_error=True).on_error(trainer, RuntimeError("x"), None)
    assert os.listdir(tmp_path) == ["snapshot_iter_0"]


def test_finalize_finalizes_the_writer():
    calls = []

    class Writer(snapshot_writers.Writer):
        def __call__(self, filename, outdir, target):
            pass

        def finalize(self):
            calls.append("finalize")

    snapshot(writer=Writer()).finalize()
    assert calls == ["finalize"]


@pytest.mark.parametrize(
    ("make", "error", "words"),
    [
        (
            lambda: snapshot(savefun=lambda p, t: None, writer=snapshot_writers.SimpleWriter()),
            TypeError,
            ["snapshot", "savefun", "writer"],
        ),
        (lambda: snapshot(condition=True), TypeError, ["snapshot", "condition", "True"]),
        (lambda: snapshot(n_retains=2.0), TypeError, ["snapshot", "n_retains", "float"]),
        (lambda: snapshot(filename=3), TypeError, ["snapshot", "filename", "int"]),
        (
            lambda: snapshot(filename=lambda t: "x", autoload=True),
            ValueError,
            ["snapshot", "autoload", "filename"],
        ),
        (lambda: snapshot_object(None, "x"), TypeError, ["snapshot_object", "target", "None"]),
        (lambda: snapshot_object(Model(), "x", bogus=1), TypeError, ["bogus"]),
        (lambda: snapshot(target=object()), TypeError, ["snapshot", "target", "serialize"]),
    ],
)
def test_bad_arguments(make, error, words):
    with pytest.raises(error) as info:
        make()
    for word in words:
        assert word in str(info.value)
