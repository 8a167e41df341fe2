"""What the dataset loaders share: checksummed original files, the npz cache, IDX parsing
and the conversion of uint8 images into a dataset."""

import gzip
import hashlib
import os
import warnings
import zipfile
import zlib
from typing import NamedTuple

import numpy

from dbr.core import get_dtype
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
    # The file is opened here so that it is closed even when numpy.load fails on it.
    with open(path, "rb") as file:
        npz = numpy.load(file, allow_pickle=False)
        if not isinstance(npz, numpy.lib.npyio.NpzFile):
            raise ValueError(f"{path} is a .npy array, not an npz file")
        with npz:
            return {key: npz[key] for key in npz.files}


# Members that a parsed npz file holds besides its arrays: the name and SHA-256 of each
# original file it was parsed from, and the SHA-256 of everything else in it.
_ORIGINALS = "__originals__"
_DIGEST = "__sha256__"


def _file_sha256(path):
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def _arrays_sha256(arrays):
    hasher = hashlib.sha256()
    for key in sorted(arrays):
        array = numpy.ascontiguousarray(arrays[key])
        hasher.update(f"{key}\0{array.dtype.str}\0{array.shape}\0".encode())
        hasher.update(array.reshape(-1).view(numpy.uint8))
    return hasher.hexdigest()


def _read_parsed(path, directory):
    """Return ``(arrays, None)`` when the parsed file ``path`` is intact and matches the
    original files it records that are present (relative to ``directory``), else
    ``(None, what is wrong)``."""
    try:
        arrays = load_npz(path)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as error:
        return None, f"cannot be read ({type(error).__name__}: {error})"
    originals = arrays.pop(_ORIGINALS, None)
    digest = arrays.pop(_DIGEST, None)
    if originals is None or digest is None:
        return None, "records no checksums of its original files"
    if digest.shape != () or str(digest) != _arrays_sha256({**arrays, _ORIGINALS: originals}):
        return None, "does not match the SHA-256 recorded in it (it was modified or damaged)"
    if originals.ndim != 2 or originals.shape[1] != 2:
        return None, f"records its original files in an unknown layout {originals.shape}"
    for name, recorded in originals.tolist():
        original = os.path.join(directory, name)
        if os.path.isfile(original) and _file_sha256(original) != recorded:
            return None, f"was parsed from another {name} than the one beside it"
    return arrays, None


def cached_arrays(dataset_name, npz_name, remotes, make_arrays):
    """Return the arrays parsed from the original files ``remotes`` and cached as
    ``<root>/<dataset_name>/<npz_name>``.

    When the npz file is absent, ``make_arrays()`` builds the dict of arrays (fetching the
    originals ``remotes``), which is saved atomically together with the SHA-256 of each
    original and of the arrays; a ``make_arrays`` that parsed other files (a tarball the
    user placed elsewhere) returns ``(arrays, paths of those files)`` instead. Loading
    checks both: a parsed file that is unreadable, was modified, or was parsed from other
    originals than those it records (where present) is rebuilt with a warning.

    Raises:
        OSError: If the parsed file must be rebuilt and an original can be neither found
            nor downloaded; the message names the parsed file.
    """
    directory = download.get_dataset_directory(dataset_name)
    path = os.path.join(directory, npz_name)
    problem = None
    if os.path.exists(path):
        arrays, problem = _read_parsed(path, directory)
        if problem is None:
            return arrays
        warnings.warn(
            f"{path}: the parsed dataset file {problem}; rebuilding it from the original files",
            RuntimeWarning,
            stacklevel=2,
        )

    def reload(path):
        nonlocal problem
        arrays, problem = _read_parsed(path, directory)
        return download._REBUILD if problem else arrays

    def create(temp_path):
        try:
            made = make_arrays()
        except OSError as error:
            if problem is None:
                raise
            raise OSError(
                f"{path}: the parsed dataset file {problem}, and it cannot be rebuilt from "
                f"the original files: {error}"
            ) from error
        if isinstance(made, tuple):
            arrays, sources = made
        else:
            arrays, sources = made, [os.path.join(directory, remote.name) for remote in remotes]
        originals = [[os.path.relpath(p, directory), _file_sha256(p)] for p in sources]
        originals = numpy.array(originals, dtype=str).reshape(len(sources), 2)
        saved = {**arrays, _ORIGINALS: originals}
        saved[_DIGEST] = numpy.array(_arrays_sha256(saved))
        numpy.savez_compressed(temp_path, **saved)
        return arrays

    return download._create_or_load(path, create, reload, "cached_arrays")


def check_image_options(ndim, allowed_ndims, dtype, function_name):
    """Validate ``ndim`` and resolve ``dtype`` (``None``: ``dbr.core.config.dtype``) before
    anything is downloaded; return the floating image dtype."""
    if ndim not in allowed_ndims:
        allowed = ", ".join(map(str, allowed_ndims[:-1])) + f" or {allowed_ndims[-1]}"
        raise ValueError(f"{function_name}: ndim must be {allowed}, got {ndim!r}")
    resolved = get_dtype() if dtype is None else numpy.dtype(dtype)
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
        files,
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


MNIST_LIKE_DOC = """
    Args:
        withlabel (bool): Return datasets of (image, label) pairs; otherwise return the
            image arrays alone.
        ndim (int): Shape of each image: 1 gives (784,), 2 gives (28, 28) and 3 gives
            (1, 28, 28) or, with ``rgb_format``, (3, 28, 28).
        scale (float): Pixels are scaled to the interval ``[0, scale]``.
        dtype: Floating dtype of the images; ``None`` means ``dbr.core.config.dtype``.
        label_dtype: Dtype of the labels.
        rgb_format (bool): With ``ndim=3``, repeat the grey channel into three.

    Returns:
        tuple: ``(train, test)``, each a :class:`~dbr.datasets.TupleDataset` of
        ``(image, label)`` when ``withlabel`` is true, else an array of images.

    Raises:
        ValueError: If ``ndim`` is not 1, 2 or 3, or ``dtype`` is not floating.
        OSError: If a file cannot be downloaded or fails its checksum.
"""


def load_mnist_like(who, dataset, base_url, files, options):
    """The (train, test) pair of a loader whose files have MNIST's format and sizes.

    ``files`` maps ``'train'``/``'test'`` to the split's file table; ``options`` is
    the loader's own ``(withlabel, ndim, scale, dtype, label_dtype, rgb_format)`` (see
    :func:`dbr.datasets.get_mnist`).
    """
    withlabel, ndim, scale, dtype, label_dtype, rgb_format = options
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
