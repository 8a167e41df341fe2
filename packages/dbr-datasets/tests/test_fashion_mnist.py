import gzip
import struct

import numpy
import pytest

from dbr.datasets.fashion_mnist import get_fashion_mnist, get_fashion_mnist_labels


def parse_idx(path, header_format):
    """An independent reading of one IDX file: header unpacked with struct."""
    with gzip.open(path) as file:
        data = file.read()
    header_size = struct.calcsize(header_format)
    header = struct.unpack(header_format, data[:header_size])
    return header, numpy.frombuffer(data[header_size:], dtype=numpy.uint8)


@pytest.fixture(scope="module")
def fashion(shared_dataset_server):
    return get_fashion_mnist(ndim=2)


def test_labels():
    labels = get_fashion_mnist_labels()
    assert isinstance(labels, list) and len(labels) == 10
    labels.append("changed")
    assert len(get_fashion_mnist_labels()) == 10  # a new list at each call
    assert labels[0] == "T-shirt/top" and labels[9] == "Ankle boot"


def test_equal_to_an_independent_parse(fashion, shared_dataset_server):
    directory = shared_dataset_server.directory / "fashion-mnist"
    splits = (("train", 60000), ("t10k", 10000))
    for dataset, (prefix, count) in zip(fashion, splits):
        header, images = parse_idx(directory / f"{prefix}-images-idx3-ubyte.gz", ">4I")
        assert header == (2051, count, 28, 28)
        _, labels = parse_idx(directory / f"{prefix}-labels-idx1-ubyte.gz", ">2I")
        x = numpy.stack([example[0] for example in dataset[:]])
        t = numpy.array([example[1] for example in dataset[:]])
        assert len(dataset) == count
        assert x.shape == (count, 28, 28) and x.dtype == numpy.float32 and t.dtype == numpy.int32
        assert x.min() == 0.0 and x.max() == 1.0
        numpy.testing.assert_array_equal(
            numpy.rint(x * 255).astype(numpy.uint8), images.reshape(count, 28, 28)
        )
        numpy.testing.assert_array_equal(t, labels)
        assert numpy.bincount(t).tolist() == [count // 10] * 10
