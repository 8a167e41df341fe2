"""What the dataset loaders share: checksummed original files, the npz cache, IDX parsing
and the conversion of uint8 images into a dataset."""

import gzip
import hashlib
import os
from typing import NamedTuple

import numpy

from dbr.core import config
from dbr.datasets import download
from dbr.datasets.tuple_dataset import TupleDataset


class RemoteFile(NamedTuple):
    """A file of an original distribution: its name under the base URL and its checksums."""

    name: str
    sha256: str | None = None
    md5: str | None = None


def fetch(dataset_name, base_url, remote):
    """Return the path of ``remote`` in the cache, downloading and verifying it when absent.

    The file is kept as ``<root>/<dataset_name>/<name>``, which is also its path on a
    mirror.
    """
    return download.cached_download(
        base_url + remote.name,
        sha256=remote.sha256,
        md5=remote.md5,
        path=f"{dataset_name}/{remote.name}",
    )


def check_md5(path, remote):
    """Raise OSError unless the file at ``path`` has the MD5 of ``remote`` (a RemoteFile)."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    actual = digest.hexdigest()
    if actual != remote.md5:
        raise OSError(
            f"{path} should be {remote.name}, but its md5 is {actual}, expected {remote.md5}; "
            "replace it with the original file or remove it"
        )


def load_npz(path):
    """Read every array of an npz file into a dict, refusing pickled objects."""
    with numpy.load(path, allow_pickle=False) as npz:
        return {key: npz[key] for key in npz.files}


def cached_arrays(dataset_name, npz_name, make_arrays):
    """Return the arrays cached as ``<root>/<dataset_name>/<npz_name>``.

    When the npz file is absent, ``make_arrays()`` builds the dict of arrays (from the
    original files), which is then saved atomically.
    """

    def create(temp_path):
        arrays = make_arrays()
        numpy.savez_compressed(temp_path, **arrays)
        return arrays

    path = os.path.join(download.get_dataset_directory(dataset_name), npz_name)
    return download.cache_or_load_file(path, create, load_npz)


def check_image_options(ndim, allowed_ndims, dtype, function_name):
    """Validate ``ndim`` and resolve ``dtype`` (``None``: ``dbr.core.config.dtype``) before
    anything is downloaded; return the floating image dtype."""
    if ndim not in allowed_ndims:
        allowed = ", ".join(map(str, allowed_ndims[:-1])) + f" or {allowed_ndims[-1]}"
        raise ValueError(f"{function_name}: ndim must be {allowed}, got {ndim!r}")
    resolved = config.dtype if dtype is None else numpy.dtype(dtype)
    if resolved.kind != "f":
        raise ValueError(f"{function_name}: dtype must be a floating dtype, got {resolved}")
    return resolved


def read_idx(path, ndim):
    """Read a gzip-compressed IDX file of unsigned bytes with ``ndim`` dimensions."""
    name = os.path.basename(path)
    try:
        with gzip.open(path, "rb") as file:
            data = file.read()
    except (OSError, EOFError) as error:
        raise ValueError(f"{name}: not a readable gzip file ({error}); path: {path}") from error
    header_size = 4 + 4 * ndim
    if len(data) < header_size or data[:4] != bytes((0, 0, 0x08, ndim)):
        raise ValueError(
            f"{name}: not an IDX file of unsigned bytes with {ndim} dimensions "
            f"(magic number {data[:4].hex()}, expected 000008{ndim:02x}); path: {path}"
        )
    shape = tuple(int(n) for n in numpy.frombuffer(data, ">u4", ndim, 4))
    size = int(numpy.prod(shape))
    if len(data) - header_size != size:
        raise ValueError(
            f"{name}: the header gives shape {shape} ({size} bytes) but the file holds "
            f"{len(data) - header_size} bytes of data; path: {path}"
        )
    return numpy.frombuffer(data, numpy.uint8, offset=header_size).reshape(shape)


def read_mnist_like(dataset_name, base_url, images_file, labels_file):
    """Parse an MNIST-format pair of IDX files into ``x`` (N, rows*cols) and ``y`` (N,)."""
    images = read_idx(fetch(dataset_name, base_url, images_file), 3)
    labels = read_idx(fetch(dataset_name, base_url, labels_file), 1)
    if len(images) != len(labels):
        raise ValueError(
            f"{dataset_name}: {images_file.name} holds {len(images)} images but "
            f"{labels_file.name} holds {len(labels)} labels"
        )
    return {"x": images.reshape(len(images), -1), "y": labels}


def mnist_like_split(dataset_name, base_url, files, split):
    """Return the uint8 images (N, rows*cols) and labels (N,) of one split of an MNIST-format
    set, parsing its ``(images, labels)`` IDX ``files`` into ``<split>.npz`` on first use."""
    raw = cached_arrays(
        dataset_name,
        f"{split}.npz",
        lambda: read_mnist_like(dataset_name, base_url, *files),
    )
    return raw["x"], raw["y"]


def image_dataset(
    images, labels, *, withlabel, ndim, scale, dtype, label_dtype, rgb_format, side, max_value
):
    """Turn flat uint8 single-channel images into a dataset, as the MNIST-style loaders do.

    ``images`` is (N, side*side) with values in ``[0, max_value]``; they are reshaped for
    ``ndim`` (1: flat, 2: (side, side), 3: (1 or 3, side, side)), cast to the floating
    ``dtype`` and scaled to ``[0, scale]``. The options were checked by
    :func:`check_image_options`.
    """
    if ndim == 2:
        images = images.reshape(-1, side, side)
    elif ndim == 3:
        images = images.reshape(-1, 1, side, side)
        if rgb_format:
            images = numpy.broadcast_to(images, (len(images), 3, side, side))
    images = images.astype(dtype)
    images *= scale / max_value
    if not withlabel:
        return images
    return TupleDataset(images, labels.astype(label_dtype))


def load_mnist_like(
    who, dataset, base_url, files, withlabel, ndim, scale, dtype, label_dtype, rgb_format
):
    """The (train, test) pair of a loader whose files have MNIST's format and sizes.

    ``files`` maps ``'train'``/``'test'`` to the split's file table; the other
    arguments are the loader's own (see :func:`dbr.datasets.get_mnist`).
    """
    image_dtype = check_image_options(ndim, (1, 2, 3), dtype, who)
    return tuple(
        image_dataset(
            *mnist_like_split(dataset, base_url, files[split], split),
            withlabel=withlabel,
            ndim=ndim,
            scale=scale,
            dtype=image_dtype,
            label_dtype=label_dtype,
            rgb_format=rgb_format,
            side=28,
            max_value=255,
        )
        for split in ("train", "test")
    )
