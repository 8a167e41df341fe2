import hashlib
import io
import pickle
import tarfile
import warnings
from pathlib import Path

import numpy
import pytest

from dbr.datasets import _loader_utils, cifar, download
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


# -- the python version placed by the user -----------------------------------------------


def short_string(text):
    data = text.encode("latin-1")
    return b"U" + bytes([len(data)]) + data


def py2_array(array):
    """Opcodes of a uint8 NumPy array as Python 2's cPickle (protocol 2) wrote CIFAR's."""
    shape = b"".join(b"M" + int(n).to_bytes(2, "little") for n in array.shape)
    minus_one = b"J" + (-1).to_bytes(4, "little", signed=True)
    data = array.tobytes()
    return (
        b"cnumpy.core.multiarray\n_reconstruct\ncnumpy\nndarray\nK\x00\x85"
        + short_string("b")
        + b"\x87R(K\x01"
        + shape
        + b"\x86cnumpy\ndtype\n"
        + short_string("u1")
        + b"K\x00K\x01\x87R(K\x03"
        + short_string("|")
        + b"NNN"
        + minus_one * 2
        + b"K\x00tb\x89T"
        + len(data).to_bytes(4, "little")
        + data
        + b"tb"
    )


def py2_batch(entries):
    """A CIFAR "python version" batch: a dict pickled by Python 2 with str keys."""
    body = []
    for key, value in entries.items():
        body.append(short_string(key))
        if isinstance(value, numpy.ndarray):
            body.append(py2_array(value))
        elif isinstance(value, str):
            body.append(short_string(value))
        else:
            items = [short_string(v) if isinstance(v, str) else b"K" + bytes([v]) for v in value]
            body.append(b"](" + b"".join(items) + b"e")
    return b"\x80\x02}(" + b"".join(body) + b"u."


def python_batch(rng, count, label_keys, n_classes):
    images = rng.integers(0, 256, size=(count, 3072), dtype=numpy.uint8)
    labels = {key: [int(v) for v in rng.integers(0, n, size=count)] for key, n in label_keys}
    entries = {"batch_label": "training batch", **labels, "data": images}
    entries["filenames"] = [f"img_{i}.png" for i in range(count)]
    data = py2_batch(entries)
    # The hand-made opcodes are a pickle that Python reads as CIFAR's documentation says.
    loaded = pickle.loads(data, encoding="latin-1")
    numpy.testing.assert_array_equal(loaded["data"], images)
    assert {key: loaded[key] for key in labels} == labels
    return data, images.reshape(count, 3, 32, 32), labels


def place(root, relative, data):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def use_md5_of(monkeypatch, spec_name, name, data):
    remote = _loader_utils.RemoteFile(name, md5=hashlib.md5(data).hexdigest())
    monkeypatch.setitem(getattr(cifar, spec_name)["python"], "file", remote)


def test_cifar10_reads_a_placed_python_tarball_without_the_network(dataset_server, monkeypatch):
    rng = numpy.random.default_rng(3)
    members, train = {}, []
    for i in range(1, 6):
        data, images, labels = python_batch(rng, i, [("labels", 10)], 10)
        members[f"cifar-10-batches-py/data_batch_{i}"] = data
        train.append((images, numpy.array(labels["labels"])))
    data, test_images, test_labels = python_batch(rng, 3, [("labels", 10)], 10)
    members["cifar-10-batches-py/test_batch"] = data
    members["cifar-10-batches-py/batches.meta"] = py2_batch({"label_names": ["airplane"]})
    archive = tarball(members)
    root = Path(download.get_dataset_root())
    place(root, "cifar/cifar-10-python.tar.gz", archive)
    use_md5_of(monkeypatch, "_CIFAR10", "cifar-10-python.tar.gz", archive)
    expected_train = (
        numpy.concatenate([images for images, _ in train]),
        numpy.concatenate([labels for _, labels in train]),
    )
    check(get_cifar10(), (expected_train, (test_images, numpy.array(test_labels["labels"]))))
    assert dataset_server.requests == []
    assert (root / "cifar" / "cifar-10.npz").is_file()
    # The parsed file records the tarball it came from: loaded again, it is not rebuilt.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(get_cifar10(), (expected_train, (test_images, numpy.array(test_labels["labels"]))))
    assert dataset_server.requests == []


def test_cifar100_reads_chainer_s_download_cache_layout(dataset_server, monkeypatch):
    rng = numpy.random.default_rng(4)
    label_keys = [("fine_labels", 100), ("coarse_labels", 20)]
    train_data, train_images, train_labels = python_batch(rng, 6, label_keys, 100)
    test_data, test_images, test_labels = python_batch(rng, 2, label_keys, 100)
    archive = tarball({"cifar-100-python/train": train_data, "cifar-100-python/test": test_data})
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    # Where Chainer 7.8.1's cached_download(url) keeps the file under its dataset root.
    relative = f"_dl_cache/{hashlib.md5(url.encode()).hexdigest()}"
    place(Path(download.get_dataset_root()), relative, archive)
    use_md5_of(monkeypatch, "_CIFAR100", "cifar-100-python.tar.gz", archive)
    expected = [
        (train_images, numpy.array(train_labels["fine_labels"])),
        (test_images, numpy.array(test_labels["fine_labels"])),
    ]
    check(get_cifar100(), expected)
    assert dataset_server.requests == []


@pytest.mark.parametrize("protocol", [2, 4])
def test_a_python_3_pickle_of_the_batch_is_read_too(dataset_server, monkeypatch, protocol):
    rng = numpy.random.default_rng(5)
    batches = {}
    for name in ("train", "test"):
        images = rng.integers(0, 256, size=(2, 3072), dtype=numpy.uint8)
        labels = [int(v) for v in rng.integers(0, 100, size=2)]
        data = pickle.dumps({"data": images, "fine_labels": labels}, protocol=protocol)
        batches[name] = (data, images.reshape(2, 3, 32, 32), numpy.array(labels))
    members = {f"cifar-100-python/{name}": data for name, (data, _, _) in batches.items()}
    archive = tarball(members)
    place(Path(download.get_dataset_root()), "cifar/cifar-100-python.tar.gz", archive)
    use_md5_of(monkeypatch, "_CIFAR100", "cifar-100-python.tar.gz", archive)
    check(get_cifar100(), [batches["train"][1:], batches["test"][1:]])


def test_a_pickle_calling_code_is_rejected_and_never_run(dataset_server, monkeypatch, tmp_path):
    target = tmp_path / "pwned"
    call = b"cbuiltins\nopen\n" + short_string(str(target)) + short_string("w") + b"\x86R."
    archive = tarball({"cifar-100-python/train": call, "cifar-100-python/test": call})
    place(Path(download.get_dataset_root()), "cifar/cifar-100-python.tar.gz", archive)
    use_md5_of(monkeypatch, "_CIFAR100", "cifar-100-python.tar.gz", archive)
    with pytest.raises(
        ValueError,
        match=r"cifar-100-python.tar.gz: cifar-100-python/train: the pickle refers to "
        r"builtins.open; only plain data and NumPy arrays are read",
    ):
        get_cifar100()
    assert not target.exists()
    assert dataset_server.requests == []


def test_a_placed_python_tarball_with_another_checksum_is_an_error(dataset_server):
    path = place(Path(download.get_dataset_root()), "cifar/cifar-10-python.tar.gz", b"junk")
    with pytest.raises(
        OSError,
        match=f"{path} should be cifar-10-python.tar.gz, but its md5 is "
        f"{hashlib.md5(b'junk').hexdigest()}, expected c58f30108f718f92721af3b95e74349a",
    ):
        get_cifar10()
    assert dataset_server.requests == []
