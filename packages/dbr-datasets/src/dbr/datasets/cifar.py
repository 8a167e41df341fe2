"""CIFAR-10 and CIFAR-100: 60,000 32x32 colour images, from the original tarballs.

The loaders download the "binary version" tarballs of the distribution
(``cifar-10-binary.tar.gz``, ``cifar-100-binary.tar.gz``): the images and labels as
fixed-size records, parsed with NumPy alone and read straight from the archive without
extracting it. A "python version" tarball (``cifar-10-python.tar.gz``,
``cifar-100-python.tar.gz``, the one Chainer downloads) that the user placed in the
dataset cache is used instead, without the network. Its batches are pickles, and
unpickling a file can run arbitrary code, so they are never unpickled: a reader that
only interprets plain data and NumPy arrays (:mod:`dbr.core.serializers.plain_pickle`) parses
them.
"""

import hashlib
import os
import tarfile

import numpy

from dbr.core.serializers.plain_pickle import read_plain_pickle
from dbr.core.utils import docstring_tail
from dbr.datasets import _loader_utils, download
from dbr.datasets.tuple_dataset import TupleDataset

_DATASET = "cifar"
_BASE_URL = "https://www.cs.toronto.edu/~kriz/"
_PIXELS = 3 * 32 * 32
# Each record is its label byte(s) then 1024 red, 1024 green and 1024 blue bytes, each
# plane a 32x32 image in row-major order.
_CIFAR10 = {
    "file": _loader_utils.RemoteFile(
        "cifar-10-binary.tar.gz", md5="c32a1d4ab5d03f1284b67883e8d87530"
    ),
    "train": [f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)],
    "test": ["cifar-10-batches-bin/test_batch.bin"],
    "label_bytes": 1,
    "n_classes": 10,
    "python": {
        "file": _loader_utils.RemoteFile(
            "cifar-10-python.tar.gz", md5="c58f30108f718f92721af3b95e74349a"
        ),
        "train": [f"cifar-10-batches-py/data_batch_{i}" for i in range(1, 6)],
        "test": ["cifar-10-batches-py/test_batch"],
        "label_key": "labels",
    },
}
# CIFAR-100 records hold a coarse label (of 20 superclasses) then the fine label (of 100).
_CIFAR100 = {
    "file": _loader_utils.RemoteFile(
        "cifar-100-binary.tar.gz", md5="03b5dce01913d631647c71ecec9e9cb8"
    ),
    "train": ["cifar-100-binary/train.bin"],
    "test": ["cifar-100-binary/test.bin"],
    "label_bytes": 2,
    "n_classes": 100,
    "python": {
        "file": _loader_utils.RemoteFile(
            "cifar-100-python.tar.gz", md5="eb9058c3a382ffc7106e4002c42a8d85"
        ),
        "train": ["cifar-100-python/train"],
        "test": ["cifar-100-python/test"],
        "label_key": "fine_labels",
    },
}


# The sections that both loaders' docstrings end with.
_DOC = """
    Args:
        withlabel (bool): Return datasets of (image, label) pairs with int32 labels;
            otherwise return the image arrays alone.
        ndim (int): Shape of each image: 3 gives (3, 32, 32) (channels, rows, columns);
            1 gives the flat (3072,) in the same order.
        scale (float): Pixels are scaled to the interval ``[0, scale]``.
        dtype: Floating dtype of the images; ``None`` means ``dbr.core.config.dtype``.

    Returns:
        tuple: ``(train, test)``, each a :class:`~dbr.datasets.TupleDataset` of
        ``(image, label)`` when ``withlabel`` is true, else an array of images.

    Raises:
        ValueError: If ``ndim`` is not 1 or 3, or ``dtype`` is not floating, or a
            tarball's content is not in CIFAR's format.
        OSError: If the file cannot be downloaded, or it or a placed python-version
            tarball fails its checksum.
"""


@docstring_tail(_DOC)
def get_cifar10(withlabel=True, ndim=3, scale=1.0, dtype=None):
    """Get the CIFAR-10 dataset of small natural images.

    `CIFAR-10 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ holds 50,000 training and
    10,000 test RGB images of 32x32 pixels in 10 classes (airplane, automobile, bird,
    cat, deer, dog, frog, horse, ship, truck). On first use the images are parsed once into
    ``<dataset root>/cifar/cifar-10.npz`` from the python version of the distribution,
    ``cifar-10-python.tar.gz``, when the user placed it in ``<dataset root>/cifar`` (or
    where Chainer's download cache keeps it, ``<dataset root>/_dl_cache/<MD5 of its
    URL>``), with no network access; otherwise from the binary version,
    ``cifar-10-binary.tar.gz``, downloaded into ``<dataset root>/cifar`` (or fetched from
    ``DBR_DATASET_MIRROR``). Either tarball is checked against its published MD5; the
    pickles of the python version are read without unpickling them.
    """
    image_dtype = _loader_utils.check_image_options(ndim, (1, 3), dtype, "get_cifar10")
    return _to_datasets(_retrieve("cifar-10.npz", _CIFAR10), withlabel, ndim, scale, image_dtype)


@docstring_tail(_DOC)
def get_cifar100(withlabel=True, ndim=3, scale=1.0, dtype=None):
    """Get the CIFAR-100 dataset of small natural images, with its 100 fine labels.

    `CIFAR-100 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ holds 50,000 training and
    10,000 test RGB images of 32x32 pixels in 100 classes; the label of each example is
    its fine label (0 to 99), as in Chainer (the 20 coarse labels are not returned). On
    first use the images are parsed once into ``<dataset root>/cifar/cifar-100.npz`` from
    ``cifar-100-python.tar.gz`` when the user placed it in ``<dataset root>/cifar`` (or in
    Chainer's download cache layout, ``<dataset root>/_dl_cache/<MD5 of its URL>``), with
    no network access; otherwise from ``cifar-100-binary.tar.gz``, downloaded into
    ``<dataset root>/cifar`` (or fetched from ``DBR_DATASET_MIRROR``). Either tarball is
    checked against its published MD5; the pickles are read without unpickling them.
    """
    image_dtype = _loader_utils.check_image_options(ndim, (1, 3), dtype, "get_cifar100")
    return _to_datasets(_retrieve("cifar-100.npz", _CIFAR100), withlabel, ndim, scale, image_dtype)


def _retrieve(npz_name, spec):
    def make_arrays():
        python_path = _placed_python_tarball(spec["python"]["file"])
        if python_path is not None:
            path, members, read = python_path, spec["python"], _read_pickled_batch
        else:
            path = _loader_utils.fetch(_DATASET, _BASE_URL, spec["file"])
            members, read = spec, _read_records
        arrays = {}
        with tarfile.open(path, "r:gz") as archive:
            for split in ("train", "test"):
                parts = [read(archive, path, member, spec) for member in members[split]]
                arrays[f"{split}_x"] = numpy.concatenate([x for x, _ in parts])
                arrays[f"{split}_y"] = numpy.concatenate([y for _, y in parts])
        return arrays, [path]

    return _loader_utils.cached_arrays(_DATASET, npz_name, (spec["file"],), make_arrays)


def _placed_python_tarball(remote):
    """The path of the python-version tarball if the user placed it in the cache, else None.

    It is looked for as ``<root>/cifar/<name>``, then where Chainer's ``cached_download``
    keeps a download, ``<root>/_dl_cache/<MD5 of its URL>``; one that is present must
    match its published MD5.
    """
    url = _BASE_URL + remote.name
    url_digest = hashlib.md5(url.encode("utf-8"), usedforsecurity=False).hexdigest()
    root = download.get_dataset_root()
    for path in (
        os.path.join(root, _DATASET, remote.name),
        os.path.join(root, "_dl_cache", url_digest),
    ):
        if os.path.isfile(path):
            _loader_utils.check_md5(path, remote)
            return path
    return None


def _member_bytes(archive, path, member_name):
    archive_name = os.path.basename(path)
    try:
        member = archive.getmember(member_name)
    except KeyError:
        raise ValueError(f"{archive_name}: no member {member_name}; path: {path}") from None
    if not member.isfile():
        raise ValueError(f"{archive_name}: {member_name} is not a regular file; path: {path}")
    with archive.extractfile(member) as file:
        return file.read()


def _check_labels(labels, spec, where, path):
    if len(labels) and labels.max() >= spec["n_classes"]:
        raise ValueError(
            f"{where} has label {labels.max()}, expected labels below {spec['n_classes']}; "
            f"path: {path}"
        )


def _read_records(archive, path, member_name, spec):
    archive_name = os.path.basename(path)
    data = _member_bytes(archive, path, member_name)
    label_bytes = spec["label_bytes"]
    record_size = label_bytes + _PIXELS
    if not data or len(data) % record_size:
        raise ValueError(
            f"{archive_name}: {member_name} holds {len(data)} bytes, not a positive "
            f"multiple of the {record_size}-byte record; path: {path}"
        )
    records = numpy.frombuffer(data, numpy.uint8).reshape(-1, record_size)
    labels = records[:, label_bytes - 1]
    _check_labels(labels, spec, f"{archive_name}: {member_name}", path)
    return records[:, label_bytes:], labels


def _read_pickled_batch(archive, path, member_name, spec):
    """Images (N, 3072) and labels (N,) of one python-version batch, as uint8."""
    where = f"{os.path.basename(path)}: {member_name}"
    batch = read_plain_pickle(_member_bytes(archive, path, member_name), where)
    if not isinstance(batch, dict):
        raise ValueError(f"{where}: expected a dict, got {type(batch).__name__}")
    batch = {k.decode("latin-1") if isinstance(k, bytes) else k: v for k, v in batch.items()}
    label_key = spec["python"]["label_key"]
    for key in ("data", label_key):
        if key not in batch:
            raise ValueError(f"{where}: no {key!r} entry (it has {sorted(map(str, batch))})")
    images = batch["data"]
    if not (
        isinstance(images, numpy.ndarray)
        and images.dtype == numpy.uint8
        and images.ndim == 2
        and images.shape[1] == _PIXELS
    ):
        raise ValueError(
            f"{where}: expected 'data' to be a uint8 array of shape (N, {_PIXELS}), got "
            f"{getattr(images, 'dtype', type(images).__name__)} {getattr(images, 'shape', '')}"
        )
    raw_labels = batch[label_key]
    if not (
        isinstance(raw_labels, list)
        and len(raw_labels) == len(images)
        and all(type(label) is int and label >= 0 for label in raw_labels)
    ):
        raise ValueError(
            f"{where}: expected {label_key!r} to be a list of {len(images)} non-negative ints"
        )
    labels = numpy.array(raw_labels, dtype=numpy.int64)
    _check_labels(labels, spec, where, path)
    return images, labels.astype(numpy.uint8)


def _to_datasets(raw, withlabel, ndim, scale, image_dtype):
    datasets = []
    for split in ("train", "test"):
        images = raw[f"{split}_x"]
        if ndim == 3:
            images = images.reshape(-1, 3, 32, 32)
        images = images.astype(image_dtype)
        images *= scale / 255
        if withlabel:
            datasets.append(TupleDataset(images, raw[f"{split}_y"].astype(numpy.int32)))
        else:
            datasets.append(images)
    return tuple(datasets)
