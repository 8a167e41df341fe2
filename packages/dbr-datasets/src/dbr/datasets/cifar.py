"""CIFAR-10 and CIFAR-100: 60,000 32x32 colour images, from the original binary tarballs.

The CIFAR "python version" tarballs hold pickles, and unpickling a downloaded file can
run arbitrary code. These loaders read the "binary version" tarballs of the same
distribution instead (``cifar-10-binary.tar.gz``, ``cifar-100-binary.tar.gz``): the same
images and labels as fixed-size records, parsed with NumPy alone and read straight from
the archive without extracting it.
"""

import os
import tarfile

import numpy

from dbr.datasets import _loader_utils
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
}


def get_cifar10(withlabel=True, ndim=3, scale=1.0, dtype=None):
    """Get the CIFAR-10 dataset of small natural images.

    `CIFAR-10 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ holds 50,000 training and
    10,000 test RGB images of 32x32 pixels in 10 classes (airplane, automobile, bird,
    cat, deer, dog, frog, horse, ship, truck). The binary version of the distribution,
    ``cifar-10-binary.tar.gz`` (not the pickled python version), is downloaded into
    ``<dataset root>/cifar`` on first use (or fetched from ``DBR_DATASET_MIRROR``),
    checked against its published MD5 and parsed once into ``cifar-10.npz`` beside it.

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
        ValueError: If ``ndim`` is not 1 or 3, or ``dtype`` is not floating.
        OSError: If the file cannot be downloaded or fails its checksum.
    """
    image_dtype = _loader_utils.check_image_options(ndim, (1, 3), dtype, "get_cifar10")
    return _to_datasets(_retrieve("cifar-10.npz", _CIFAR10), withlabel, ndim, scale, image_dtype)


def get_cifar100(withlabel=True, ndim=3, scale=1.0, dtype=None):
    """Get the CIFAR-100 dataset of small natural images, with its 100 fine labels.

    `CIFAR-100 <https://www.cs.toronto.edu/~kriz/cifar.html>`_ holds 50,000 training and
    10,000 test RGB images of 32x32 pixels in 100 classes; the label of each example is
    its fine label (0 to 99), as in Chainer (the 20 coarse labels are not returned). The
    binary version of the distribution, ``cifar-100-binary.tar.gz`` (not the pickled
    python version), is downloaded into ``<dataset root>/cifar`` on first use (or fetched
    from ``DBR_DATASET_MIRROR``), checked against its published MD5 and parsed once into
    ``cifar-100.npz`` beside it.

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
        ValueError: If ``ndim`` is not 1 or 3, or ``dtype`` is not floating.
        OSError: If the file cannot be downloaded or fails its checksum.
    """
    image_dtype = _loader_utils.check_image_options(ndim, (1, 3), dtype, "get_cifar100")
    return _to_datasets(_retrieve("cifar-100.npz", _CIFAR100), withlabel, ndim, scale, image_dtype)


def _retrieve(npz_name, spec):
    def make_arrays():
        path = _loader_utils.fetch(_DATASET, _BASE_URL, spec["file"])
        arrays = {}
        with tarfile.open(path, "r:gz") as archive:
            for split in ("train", "test"):
                parts = [_read_records(archive, path, member, spec) for member in spec[split]]
                arrays[f"{split}_x"] = numpy.concatenate([x for x, _ in parts])
                arrays[f"{split}_y"] = numpy.concatenate([y for _, y in parts])
        return arrays

    return _loader_utils.cached_arrays(_DATASET, npz_name, (spec["file"],), make_arrays)


def _read_records(archive, path, member_name, spec):
    archive_name = os.path.basename(path)
    try:
        member = archive.getmember(member_name)
    except KeyError:
        raise ValueError(f"{archive_name}: no member {member_name}; path: {path}") from None
    if not member.isfile():
        raise ValueError(f"{archive_name}: {member_name} is not a regular file; path: {path}")
    with archive.extractfile(member) as file:
        data = file.read()
    label_bytes = spec["label_bytes"]
    record_size = label_bytes + _PIXELS
    if not data or len(data) % record_size:
        raise ValueError(
            f"{archive_name}: {member_name} holds {len(data)} bytes, not a positive "
            f"multiple of the {record_size}-byte record; path: {path}"
        )
    records = numpy.frombuffer(data, numpy.uint8).reshape(-1, record_size)
    labels = records[:, label_bytes - 1]
    if labels.max() >= spec["n_classes"]:
        raise ValueError(
            f"{archive_name}: {member_name} has label {labels.max()}, expected labels "
            f"below {spec['n_classes']}; path: {path}"
        )
    return records[:, label_bytes:], labels


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
