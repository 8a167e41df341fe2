import hashlib
import io
import sys

import numpy
import pytest

from dbr.datasets import _loader_utils, svhn
from dbr.datasets.svhn import get_svhn


def mat_bytes(images, labels):
    from scipy import io as scipy_io

    buffer = io.BytesIO()
    scipy_io.savemat(buffer, {"X": images, "y": labels})
    return buffer.getvalue()


@pytest.fixture
def synthetic(dataset_server, monkeypatch):
    """Small SVHN files in the original MATLAB layout: X (32, 32, 3, N), y (N, 1) in 1..10."""
    pytest.importorskip("scipy.io", reason="get_svhn reads .mat files with SciPy (extra 'scipy')")
    rng = numpy.random.default_rng(3)
    expected = {}
    for split, count in (("train", 6), ("test", 4), ("extra", 3)):
        images = rng.integers(0, 256, size=(count, 3, 32, 32), dtype=numpy.uint8)
        images[0, 0, 0, :2] = (0, 255)
        digits = numpy.arange(count) % 10
        mat_labels = numpy.where(digits == 0, 10, digits).astype(numpy.float64)[:, None]
        data = mat_bytes(images.transpose(2, 3, 1, 0), mat_labels)
        name = f"{split}_32x32.mat"
        dataset_server.write(f"svhn/{name}", data)
        remote = _loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest())
        monkeypatch.setitem(svhn._FILES, split, remote)
        expected[split] = images, digits
    return expected


def test_loads_the_synthetic_files(synthetic, dataset_server):
    datasets = get_svhn()
    assert len(datasets) == 2
    for dataset, split in zip(datasets, ("train", "test")):
        images, digits = synthetic[split]
        x = numpy.stack([example[0] for example in dataset[:]])
        t = numpy.array([example[1] for example in dataset[:]])
        assert x.shape == images.shape == (len(images), 3, 32, 32)
        assert x.dtype == numpy.float32 and t.dtype == numpy.int32
        numpy.testing.assert_allclose(x, images / 255.0, rtol=1e-6)
        numpy.testing.assert_array_equal(t, digits)
        assert x.min() == 0.0 and x.max() == 1.0
    assert sorted(dataset_server.requests) == ["/svhn/test_32x32.mat", "/svhn/train_32x32.mat"]


def test_extra_and_options(synthetic, dataset_server):
    train, test, extra = get_svhn(withlabel=False, scale=3.0, dtype=numpy.float64, add_extra=True)
    assert extra.shape == (3, 3, 32, 32) and extra.dtype == numpy.float64
    numpy.testing.assert_allclose(extra, synthetic["extra"][0] * (3.0 / 255.0))
    _, test = get_svhn(label_dtype=numpy.int64)
    assert test[0][1].dtype == numpy.int64
    assert dataset_server.count("/svhn/extra_32x32.mat") == 1


def test_bad_labels_are_an_error(dataset_server, monkeypatch):
    pytest.importorskip("scipy.io", reason="get_svhn reads .mat files with SciPy (extra 'scipy')")
    data = mat_bytes(numpy.zeros((32, 32, 3, 2), numpy.uint8), numpy.array([[1.0], [11.0]]))
    dataset_server.write("svhn/train_32x32.mat", data)
    remote = _loader_utils.RemoteFile("train_32x32.mat", md5=hashlib.md5(data).hexdigest())
    monkeypatch.setitem(svhn._FILES, "train", remote)
    with pytest.raises(ValueError, match=r"train_32x32.mat: labels range over \[1, 11\]"):
        get_svhn()


def test_without_scipy_the_error_names_the_extra(dataset_server, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r'pip install "dbr-datasets\[scipy\]"'):
        get_svhn()
    assert dataset_server.requests == []
