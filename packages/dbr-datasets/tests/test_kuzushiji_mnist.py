import gzip
import hashlib
import os

import numpy
import pytest

from dbr.datasets import _loader_utils, kuzushiji_mnist
from dbr.datasets.kuzushiji_mnist import get_kuzushiji_mnist, get_kuzushiji_mnist_labels


@pytest.fixture
def synthetic(dataset_server, monkeypatch, mnist_idx):
    """Small Kuzushiji-MNIST files in the original format, with their checksums."""
    rng = numpy.random.default_rng(0)
    arrays = {}
    files = {}
    for split, count in (("train", 12), ("test", 5)):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=numpy.uint8)
        images[0, 0, 0], images[0, 0, 1] = 0, 255
        labels = rng.integers(0, 10, size=count, dtype=numpy.uint8)
        arrays[split] = images, labels
        remotes = []
        for name, data in mnist_idx.files(split, images, labels).items():
            dataset_server.write(f"kuzushiji-mnist/{name}", data)
            remotes.append(_loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest()))
        files[split] = tuple(remotes)
    monkeypatch.setattr(kuzushiji_mnist, "_FILES", files)
    return arrays


def test_labels():
    labels = get_kuzushiji_mnist_labels()
    assert len(labels) == 10
    assert labels[0] == ("o", "\u304a") and labels[9] == ("wo", "\u3092")


def test_loads_the_synthetic_files(synthetic, dataset_server):
    train, test = get_kuzushiji_mnist()
    for dataset, split in ((train, "train"), (test, "test")):
        images, labels = synthetic[split]
        assert len(dataset) == len(images)
        x = numpy.stack([example[0] for example in dataset[:]])
        t = numpy.array([example[1] for example in dataset[:]])
        assert x.shape == (len(images), 784) and x.dtype == numpy.float32
        assert t.dtype == numpy.int32
        numpy.testing.assert_allclose(x, images.reshape(len(images), 784) / 255.0, rtol=1e-6)
        numpy.testing.assert_array_equal(t, labels)
    assert len(dataset_server.requests) == 4
    npz = os.path.join(os.environ["DBR_DATASET_ROOT"], "kuzushiji-mnist", "train.npz")
    assert os.path.isfile(npz)

    train, _ = get_kuzushiji_mnist(ndim=3, rgb_format=True, scale=2.0, withlabel=False)
    assert train.shape == (12, 3, 28, 28)
    assert train.max() == 2.0
    assert len(dataset_server.requests) == 4


def test_checksum_mismatch_is_an_error(synthetic, dataset_server, monkeypatch):
    images_file, labels_file = kuzushiji_mnist._FILES["train"]
    wrong = _loader_utils.RemoteFile(images_file.name, md5="0" * 32)
    monkeypatch.setitem(kuzushiji_mnist._FILES, "train", (wrong, labels_file))
    with pytest.raises(OSError, match="its md5 is .*, expected 0{32}"):
        get_kuzushiji_mnist()


def test_malformed_idx_file_is_an_error(dataset_server, monkeypatch, mnist_idx):
    files = {}
    for split in ("train", "test"):
        remotes = []
        for name in mnist_idx.names[split]:
            data = gzip.compress(b"\x00\x00\x08\x05" + b"\x00" * 40)
            dataset_server.write(f"kuzushiji-mnist/{name}", data)
            remotes.append(_loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest()))
        files[split] = tuple(remotes)
    monkeypatch.setattr(kuzushiji_mnist, "_FILES", files)
    with pytest.raises(ValueError, match="train-images-idx3-ubyte.gz: not an IDX file"):
        get_kuzushiji_mnist()


def test_mismatched_counts_are_an_error(dataset_server, monkeypatch, mnist_idx):
    images = numpy.zeros((3, 28, 28), numpy.uint8)
    labels = numpy.zeros(2, numpy.uint8)
    remotes = []
    for name, data in mnist_idx.files("train", images, labels).items():
        dataset_server.write(f"kuzushiji-mnist/{name}", data)
        remotes.append(_loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest()))
    monkeypatch.setitem(kuzushiji_mnist._FILES, "train", tuple(remotes))
    with pytest.raises(ValueError, match="holds 3 images but train-labels-idx1-ubyte.gz holds 2"):
        get_kuzushiji_mnist()
