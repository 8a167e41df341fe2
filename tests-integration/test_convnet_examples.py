"""The convnet examples: LeNet-5 on real MNIST, and the CIFAR networks on a synthetic tarball."""

import io
import json
import math
import tarfile
import time

import numpy
import pytest
from conftest import load_example


def _last_log_entry(out):
    entries = json.loads((out / "log").read_text())
    assert entries, f"{out / 'log'} holds no entry"
    return entries[-1]


def _write_synthetic_cifar10(path, records_per_file=30):
    """A ``cifar-10-binary.tar.gz`` with the real member names and record layout (a label
    byte, then 3x32x32 pixel bytes), holding random images and labels."""
    rng = numpy.random.default_rng(0)
    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    with tarfile.open(path, "w:gz") as archive:
        for name in names:
            labels = rng.integers(0, 10, (records_per_file, 1))
            pixels = rng.integers(0, 256, (records_per_file, 3 * 32 * 32))
            data = numpy.concatenate([labels, pixels], axis=1).astype(numpy.uint8).tobytes()
            member = tarfile.TarInfo(f"cifar-10-batches-bin/{name}.bin")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))


def test_lenet_smoke(mnist, tmp_path):
    accuracy = load_example("convnet/train_lenet.py").main(["--test", "--out", str(tmp_path)])
    assert 0.0 <= accuracy <= 1.0
    entry = _last_log_entry(tmp_path)
    assert math.isfinite(entry["main/loss"]) and math.isfinite(entry["validation/main/loss"])
    assert (tmp_path / "model_final").is_file()
    assert (tmp_path / f"snapshot_iter_{entry['iteration']}").is_file()


def test_lenet_reaches_98_5_percent_after_one_epoch(mnist, tmp_path, report_figure):
    example = load_example("convnet/train_lenet.py")
    start = time.perf_counter()
    accuracy = example.main(["--epoch", "1", "--out", str(tmp_path)])
    report_figure("LeNet-5 MNIST test accuracy after 1 epoch", accuracy)
    seconds = time.perf_counter() - start
    report_figure("LeNet-5 MNIST 1 epoch, seconds (training and evaluation)", seconds)
    assert accuracy >= 0.985


@pytest.mark.parametrize("arch", ["vgg", "resnet"])
def test_cifar_smoke_on_a_synthetic_binary_tarball(arch, tmp_path):
    data = tmp_path / "cifar-10-binary.tar.gz"
    _write_synthetic_cifar10(data)
    out = tmp_path / "out"
    argv = ["--test", "--arch", arch, "--data", str(data), "--batchsize", "32", "--out", str(out)]
    accuracy = load_example("convnet/train_cifar.py").main(argv)
    assert 0.0 <= accuracy <= 1.0
    entry = _last_log_entry(out)
    assert entry["iteration"] == 4
    assert math.isfinite(entry["main/loss"]) and math.isfinite(entry["validation/main/loss"])
    assert (out / "model_final").is_file()
