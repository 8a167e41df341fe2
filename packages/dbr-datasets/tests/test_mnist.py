import gzip
import inspect
import os
import struct

import numpy
import pytest

from dbr.core import mixed16, using_config
from dbr.datasets import download
from dbr.datasets.mnist import get_mnist
from dbr.datasets.tuple_dataset import TupleDataset

FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}


def parse_idx_pair(directory, images_name, labels_name):
    """An independent reading of an IDX pair: headers unpacked with struct."""
    with gzip.open(directory / images_name) as file:
        data = file.read()
    magic, count, rows, cols = struct.unpack(">4I", data[:16])
    assert magic == 2051
    images = numpy.frombuffer(data[16:], dtype=numpy.uint8).reshape(count, rows * cols)
    with gzip.open(directory / labels_name) as file:
        data = file.read()
    magic, label_count = struct.unpack(">2I", data[:8])
    assert (magic, label_count) == (2049, count)
    return images, numpy.frombuffer(data[8:], dtype=numpy.uint8)


@pytest.fixture(scope="module")
def mnist(shared_dataset_server):
    return get_mnist()


@pytest.fixture(scope="module")
def reference(shared_dataset_server):
    directory = shared_dataset_server.directory / "mnist"
    return {split: parse_idx_pair(directory, *names) for split, names in FILES.items()}


def test_sizes_shapes_and_dtypes(mnist):
    train, test = mnist
    assert isinstance(train, TupleDataset)
    assert (len(train), len(test)) == (60000, 10000)
    x, t = train[0]
    assert x.shape == (784,) and x.dtype == numpy.float32
    assert isinstance(t, numpy.int32)


def test_equal_to_an_independent_parse(mnist, reference):
    for dataset, split in zip(mnist, ("train", "test")):
        images, labels = reference[split]
        x = numpy.stack([example[0] for example in dataset[:]])
        t = numpy.array([example[1] for example in dataset[:]])
        assert x.min() == 0.0 and x.max() == 1.0
        numpy.testing.assert_array_equal(numpy.rint(x * 255).astype(numpy.uint8), images)
        numpy.testing.assert_array_equal(t, labels)
        numpy.testing.assert_array_equal(numpy.bincount(t, minlength=10), numpy.bincount(labels))


def test_label_counts(mnist):
    train, test = mnist
    train_counts = numpy.bincount([t for _, t in train[:]], minlength=10)
    test_counts = numpy.bincount([t for _, t in test[:]], minlength=10)
    assert train_counts.sum() == 60000 and test_counts.sum() == 10000
    assert train_counts.tolist() == [5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949]
    assert test_counts.tolist() == [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]


def test_files_are_cached_next_to_the_originals(mnist, shared_dataset_server):
    directory = os.path.join(download.get_dataset_root(), "mnist")
    names = set(os.listdir(directory))
    assert {"train.npz", "test.npz", *FILES["train"], *FILES["test"]} <= names
    requested = sorted(shared_dataset_server.requests)
    assert requested == sorted(f"/mnist/{name}" for names in FILES.values() for name in names)
    get_mnist()
    assert sorted(shared_dataset_server.requests) == requested
    with numpy.load(os.path.join(directory, "train.npz"), allow_pickle=False) as npz:
        assert npz["x"].dtype == numpy.uint8 and npz["x"].shape == (60000, 784)


@pytest.mark.parametrize(
    ("ndim", "rgb_format", "shape"),
    [(1, False, (784,)), (2, False, (28, 28)), (3, False, (1, 28, 28)), (3, True, (3, 28, 28))],
)
def test_ndim_and_rgb_format(mnist, ndim, rgb_format, shape):
    train, test = get_mnist(ndim=ndim, rgb_format=rgb_format)
    x, _ = test[0]
    assert x.shape == shape
    numpy.testing.assert_array_equal(x.reshape(-1, 784)[0], mnist[1][0][0])
    if rgb_format:
        numpy.testing.assert_array_equal(x[0], x[2])


def test_without_labels_scale_and_dtypes(mnist):
    train, test = get_mnist(withlabel=False, scale=255.0, dtype=numpy.float64)
    assert isinstance(train, numpy.ndarray)
    assert train.shape == (60000, 784) and train.dtype == numpy.float64
    assert train.max() == 255.0
    numpy.testing.assert_allclose(test[0], mnist[1][0][0] * 255.0, rtol=1e-6)
    _, test = get_mnist(label_dtype=numpy.int64)
    assert test[0][1].dtype == numpy.int64


def test_default_dtype_follows_config(mnist):
    with using_config("dtype", numpy.float16):
        _, test = get_mnist()
    assert test[0][0].dtype == numpy.float16


def test_mixed16_config_gives_float16_images(mnist):
    with using_config("dtype", mixed16):
        _, test = get_mnist()
    assert test[0][0].dtype == numpy.float16


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"ndim": 4}, "get_mnist: ndim must be 1, 2 or 3, got 4"),
        ({"dtype": numpy.int32}, "get_mnist: dtype must be a floating dtype, got int32"),
    ],
)
def test_bad_options_fail_before_any_download(dataset_server, kwargs, match):
    with pytest.raises(ValueError, match=match):
        get_mnist(**kwargs)
    assert dataset_server.requests == []


def test_docstring_ends_with_the_shared_sections():
    doc = inspect.getdoc(get_mnist)
    assert doc.startswith("Get the MNIST dataset of handwritten digits.\n\n")
    assert "beside them.\n\nArgs:\n    withlabel (bool):" in doc
    assert doc.endswith("OSError: If a file cannot be downloaded or fails its checksum.")
