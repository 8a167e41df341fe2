"""Parsed dataset files (``mnist/train.npz``, ...) record their originals' checksums and
are checked on load; a damaged or stale one is rebuilt from the originals."""

import hashlib
import os

import numpy
import pytest

from dbr.datasets import _loader_utils, mnist
from dbr.datasets.mnist import get_mnist


def mnist_files(mnist_idx, seed):
    """Small MNIST-format originals: {split: (images, labels, {name: file bytes})}."""
    rng = numpy.random.default_rng(seed)
    files = {}
    for split, count in (("train", 6), ("test", 3)):
        images = rng.integers(0, 256, size=(count, 28, 28), dtype=numpy.uint8)
        labels = rng.integers(0, 10, size=count, dtype=numpy.uint8)
        files[split] = images, labels, mnist_idx.files(split, images, labels)
    return files


def use_files(monkeypatch, files):
    remotes = {
        split: tuple(
            _loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest())
            for name, data in contents.items()
        )
        for split, (_, _, contents) in files.items()
    }
    monkeypatch.setattr(mnist, "_FILES", remotes)


@pytest.fixture
def synthetic(dataset_server, monkeypatch, mnist_idx):
    files = mnist_files(mnist_idx, 0)
    for _, _, contents in files.values():
        for name, data in contents.items():
            dataset_server.write(f"mnist/{name}", data)
    use_files(monkeypatch, files)
    return files


def cache_dir():
    return os.path.join(os.environ["DBR_DATASET_ROOT"], "mnist")


def train_labels():
    train, _ = get_mnist()
    return numpy.array([t for _, t in train[:]])


def rewrite(path, change):
    with numpy.load(path, allow_pickle=False) as npz:
        members = {key: npz[key] for key in npz.files}
    change(members)
    numpy.savez_compressed(path, **members)


def test_the_parsed_file_records_the_sha256_of_its_originals(synthetic):
    get_mnist()
    with numpy.load(os.path.join(cache_dir(), "train.npz"), allow_pickle=False) as npz:
        recorded = npz["__originals__"].tolist()
    assert recorded == [
        [name, hashlib.sha256(data).hexdigest()] for name, data in synthetic["train"][2].items()
    ]


def test_tampered_labels_are_rebuilt_from_the_originals(synthetic, dataset_server):
    images, labels, _ = synthetic["train"]
    numpy.testing.assert_array_equal(train_labels(), labels)
    path = os.path.join(cache_dir(), "train.npz")

    def shift_labels(members):
        members["y"] = (members["y"] + 1) % 10

    rewrite(path, shift_labels)
    requests = dataset_server.requests
    with pytest.warns(RuntimeWarning, match=f"{path}: the parsed dataset file does not match"):
        numpy.testing.assert_array_equal(train_labels(), labels)
    assert dataset_server.requests == requests
    with numpy.load(path, allow_pickle=False) as npz:
        numpy.testing.assert_array_equal(npz["y"], labels)
        numpy.testing.assert_array_equal(npz["x"], images.reshape(len(images), -1))
    numpy.testing.assert_array_equal(train_labels(), labels)


def test_a_truncated_parsed_file_is_rebuilt(synthetic):
    get_mnist()
    path = os.path.join(cache_dir(), "train.npz")
    with open(path, "rb") as file:
        data = file.read()
    with open(path, "wb") as file:
        file.write(data[: len(data) // 2])
    with pytest.warns(RuntimeWarning, match=f"{path}: the parsed dataset file cannot be read"):
        numpy.testing.assert_array_equal(train_labels(), synthetic["train"][1])


def test_a_parsed_file_without_checksums_is_rebuilt(synthetic):
    get_mnist()
    path = os.path.join(cache_dir(), "train.npz")

    def drop_checksums(members):
        del members["__originals__"], members["__sha256__"]

    rewrite(path, drop_checksums)
    with pytest.warns(RuntimeWarning, match="records no checksums of its original files"):
        numpy.testing.assert_array_equal(train_labels(), synthetic["train"][1])


def test_a_file_parsed_from_other_originals_is_rebuilt(
    synthetic, dataset_server, monkeypatch, mnist_idx
):
    get_mnist()
    # The originals beside the parsed file are replaced (and declared) by others.
    other = mnist_files(mnist_idx, 1)
    for name, data in other["train"][2].items():
        with open(os.path.join(cache_dir(), name), "wb") as file:
            file.write(data)
    use_files(monkeypatch, {"train": other["train"], "test": synthetic["test"]})
    requests = dataset_server.requests
    with pytest.warns(RuntimeWarning, match="was parsed from another train-images-idx3-ubyte.gz"):
        numpy.testing.assert_array_equal(train_labels(), other["train"][1])
    assert dataset_server.requests == requests


def test_an_intact_parsed_file_loads_without_its_originals(synthetic, dataset_server, mnist_idx):
    get_mnist()
    for names in mnist_idx.names.values():
        for name in names:
            os.remove(os.path.join(cache_dir(), name))
    requests = dataset_server.requests
    numpy.testing.assert_array_equal(train_labels(), synthetic["train"][1])
    assert dataset_server.requests == requests


def test_a_damaged_parsed_file_without_its_originals_is_an_error(
    synthetic, dataset_server, mnist_idx
):
    get_mnist()
    path = os.path.join(cache_dir(), "train.npz")
    rewrite(path, lambda members: members.update(y=members["y"][::-1].copy()))
    for name in mnist_idx.names["train"]:
        os.remove(os.path.join(cache_dir(), name))
        os.remove(dataset_server.directory / "mnist" / name)
    with (
        pytest.warns(RuntimeWarning, match="rebuilding it"),
        pytest.raises(
            OSError, match=f"{path}: the parsed dataset file does not match .* cannot be rebuilt"
        ),
    ):
        get_mnist()
