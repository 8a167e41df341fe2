import hashlib
import io
import tarfile

import numpy
import pytest

from dbr.datasets import _loader_utils, cifar
from dbr.datasets.cifar import get_cifar10, get_cifar100
from dbr.datasets.tuple_dataset import TupleDataset


def tarball(members):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def records(rng, count, label_columns):
    """Random records in the CIFAR binary layout: label bytes, then R, G and B planes."""
    labels = [rng.integers(0, high, size=count, dtype=numpy.uint8) for high in label_columns]
    images = rng.integers(0, 256, size=(count, 3, 32, 32), dtype=numpy.uint8)
    images[0, 0, 0, :2] = (0, 255)
    data = numpy.concatenate([*(l[:, None] for l in labels), images.reshape(count, -1)], axis=1)
    return data.tobytes(), images, labels[-1]


def serve_tarball(dataset_server, monkeypatch, spec_name, name, members):
    data = tarball(members)
    dataset_server.write(f"cifar/{name}", data)
    remote = _loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest())
    monkeypatch.setitem(getattr(cifar, spec_name), "file", remote)


@pytest.fixture
def cifar10(dataset_server, monkeypatch):
    rng = numpy.random.default_rng(1)
    members, train = {}, []
    for i in range(1, 6):
        data, images, labels = records(rng, i + 1, [10])
        members[f"cifar-10-batches-bin/data_batch_{i}.bin"] = data
        train.append((images, labels))
    data, test_images, test_labels = records(rng, 4, [10])
    members["cifar-10-batches-bin/test_batch.bin"] = data
    members["cifar-10-batches-bin/batches.meta.txt"] = b"airplane\n"
    serve_tarball(dataset_server, monkeypatch, "_CIFAR10", "cifar-10-binary.tar.gz", members)
    train_images = numpy.concatenate([images for images, _ in train])
    train_labels = numpy.concatenate([labels for _, labels in train])
    return (train_images, train_labels), (test_images, test_labels)


@pytest.fixture
def cifar100(dataset_server, monkeypatch):
    rng = numpy.random.default_rng(2)
    train_data, train_images, train_labels = records(rng, 7, [20, 100])
    test_data, test_images, test_labels = records(rng, 3, [20, 100])
    members = {"cifar-100-binary/train.bin": train_data, "cifar-100-binary/test.bin": test_data}
    serve_tarball(dataset_server, monkeypatch, "_CIFAR100", "cifar-100-binary.tar.gz", members)
    return (train_images, train_labels), (test_images, test_labels)


def check(datasets, expected):
    for dataset, (images, labels) in zip(datasets, expected):
        assert isinstance(dataset, TupleDataset)
        assert len(dataset) == len(images)
        x = numpy.stack([example[0] for example in dataset[:]])
        t = numpy.array([example[1] for example in dataset[:]])
        assert x.shape == images.shape and x.dtype == numpy.float32
        assert t.dtype == numpy.int32
        numpy.testing.assert_allclose(x, images / 255.0, rtol=1e-6)
        numpy.testing.assert_array_equal(t, labels)


def test_cifar10(cifar10, dataset_server):
    check(get_cifar10(), cifar10)
    assert dataset_server.requests == ["/cifar/cifar-10-binary.tar.gz"]
    train, test = get_cifar10(withlabel=False, ndim=1, scale=2.0, dtype=numpy.float64)
    assert train.shape == (20, 3072) and train.dtype == numpy.float64
    numpy.testing.assert_allclose(test, cifar10[1][0].reshape(4, 3072) * (2.0 / 255.0))
    assert test.max() == 2.0 or cifar10[1][0].max() < 255
    assert dataset_server.requests == ["/cifar/cifar-10-binary.tar.gz"]


def test_cifar100_uses_the_fine_labels(cifar100, dataset_server):
    check(get_cifar100(), cifar100)
    assert dataset_server.requests == ["/cifar/cifar-100-binary.tar.gz"]


def test_bad_ndim_fails_before_any_download(dataset_server):
    with pytest.raises(ValueError, match="get_cifar10: ndim must be 1 or 3, got 2"):
        get_cifar10(ndim=2)
    with pytest.raises(ValueError, match="get_cifar100: ndim must be 1 or 3, got 2"):
        get_cifar100(ndim=2)
    assert dataset_server.requests == []


def test_missing_member_is_an_error(dataset_server, monkeypatch):
    members = {"cifar-100-binary/train.bin": bytes(3074)}
    serve_tarball(dataset_server, monkeypatch, "_CIFAR100", "cifar-100-binary.tar.gz", members)
    with pytest.raises(ValueError, match="binary.tar.gz: no member cifar-100-binary/test.bin"):
        get_cifar100()


def test_truncated_records_are_an_error(dataset_server, monkeypatch):
    members = {
        "cifar-100-binary/train.bin": bytes(3074 + 5),
        "cifar-100-binary/test.bin": bytes(3074),
    }
    serve_tarball(dataset_server, monkeypatch, "_CIFAR100", "cifar-100-binary.tar.gz", members)
    with pytest.raises(ValueError, match="holds 3079 bytes, not a positive multiple of the 3074"):
        get_cifar100()


def test_out_of_range_label_is_an_error(dataset_server, monkeypatch):
    record = bytes([10]) + bytes(3072)
    members = {f"cifar-10-batches-bin/data_batch_{i}.bin": record for i in range(1, 6)}
    members["cifar-10-batches-bin/test_batch.bin"] = record
    serve_tarball(dataset_server, monkeypatch, "_CIFAR10", "cifar-10-binary.tar.gz", members)
    with pytest.raises(ValueError, match="has label 10, expected labels below 10"):
        get_cifar10()
