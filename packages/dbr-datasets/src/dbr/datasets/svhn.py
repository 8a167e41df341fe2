"""SVHN: 32x32 colour crops of house-number digits, from the original MATLAB files."""

import os

import numpy

from dbr.datasets import _loader_utils
from dbr.datasets.tuple_dataset import TupleDataset

_DATASET = "svhn"
_BASE_URL = "http://ufldl.stanford.edu/housenumbers/"
_FILES = {
    "train": _loader_utils.RemoteFile("train_32x32.mat", md5="e26dedcc434d2e4c54c9b2d4a06d8373"),
    "test": _loader_utils.RemoteFile("test_32x32.mat", md5="eb5a983be6a315427106f1b164d9cef3"),
    "extra": _loader_utils.RemoteFile("extra_32x32.mat", md5="a93ce644f1a588dc4d68dda5feec44a7"),
}


def get_svhn(withlabel=True, scale=1.0, dtype=None, label_dtype=numpy.int32, add_extra=False):
    """Get the SVHN (Street View House Numbers) dataset of cropped digits.

    `SVHN <http://ufldl.stanford.edu/housenumbers/>`_ holds 73,257 training, 26,032 test
    and 531,131 extra RGB images of 32x32 pixels, each centred on one digit. Labels are
    the digits 0 to 9 (the files label the digit 0 as 10; it is mapped to 0). The
    original MATLAB files (``train_32x32.mat``, ...) are downloaded into
    ``<dataset root>/svhn`` on first use (or fetched from ``DBR_DATASET_MIRROR``),
    checked against their published MD5, read with SciPy and parsed once into
    ``train.npz``, ``test.npz`` and ``extra.npz`` beside them. Needs the ``scipy`` extra
    (``pip install "dbr-datasets[scipy]"``) until the npz files exist.

    Args:
        withlabel (bool): Return datasets of (image, label) pairs; otherwise return the
            image arrays alone.
        scale (float): Pixels are scaled to the interval ``[0, scale]``.
        dtype: Floating dtype of the images, each of shape (3, 32, 32); ``None`` means
            ``dbr.core.config.dtype``.
        label_dtype: Dtype of the labels.
        add_extra (bool): Also return the extra training set.

    Returns:
        tuple: ``(train, test)``, or ``(train, test, extra)`` with ``add_extra``; each a
        :class:`~dbr.datasets.TupleDataset` of ``(image, label)`` when ``withlabel`` is
        true, else an array of images.

    Raises:
        ImportError: If SciPy is needed and not installed.
        ValueError: If ``dtype`` is not floating.
        OSError: If a file cannot be downloaded or fails its checksum.
    """
    image_dtype = _loader_utils.check_image_options(3, (3,), dtype, "get_svhn")
    splits = ("train", "test", "extra") if add_extra else ("train", "test")
    datasets = []
    for split in splits:
        raw = _loader_utils.cached_arrays(
            _DATASET, f"{split}.npz", (_FILES[split],), lambda s=split: _parse(s)
        )
        images = raw["x"].astype(image_dtype)
        images *= scale / 255
        if withlabel:
            datasets.append(TupleDataset(images, raw["y"].astype(label_dtype)))
        else:
            datasets.append(images)
    return tuple(datasets)


def _parse(split):
    try:
        from scipy import io
    except ImportError as error:
        raise ImportError(
            'get_svhn needs SciPy to read the SVHN .mat files: pip install "dbr-datasets[scipy]"'
        ) from error
    path = _loader_utils.fetch(_DATASET, _BASE_URL, _FILES[split])
    name = os.path.basename(path)
    try:
        mat = io.loadmat(path, variable_names=("X", "y"))
    except (ValueError, TypeError, OSError) as error:
        raise ValueError(f"{name}: not a readable MATLAB file ({error}); path: {path}") from error
    images, labels = mat.get("X"), mat.get("y")
    if images is None or labels is None:
        raise ValueError(f"{name}: the variables X and y are missing; path: {path}")
    if images.ndim != 4 or images.shape[:3] != (32, 32, 3):
        raise ValueError(
            f"{name}: X has shape {images.shape}, expected (32, 32, 3, N); path: {path}"
        )
    labels = labels.reshape(-1)
    if len(labels) != images.shape[3]:
        raise ValueError(
            f"{name}: X holds {images.shape[3]} images but y holds {len(labels)} labels; "
            f"path: {path}"
        )
    if len(labels) and (
        labels.min() < 1 or labels.max() > 10 or numpy.any(labels != numpy.round(labels))
    ):
        raise ValueError(
            f"{name}: labels range over [{labels.min():g}, {labels.max():g}], expected "
            f"integers in [1, 10]; path: {path}"
        )
    # X is (rows, columns, channels, N); examples are (channels, rows, columns).
    x = numpy.ascontiguousarray(images.transpose(3, 2, 0, 1), dtype=numpy.uint8)
    y = (labels % 10).astype(numpy.uint8)
    return {"x": x, "y": y}
