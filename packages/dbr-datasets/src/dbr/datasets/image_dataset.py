"""Datasets of image files read with Pillow (the ``image`` extra), as CHW arrays."""

import bisect
import importlib.util
import io
import os
import threading
import zipfile

import numpy

from dbr.core import get_dtype
from dbr.datasets.dataset_mixin import DatasetMixin

available = importlib.util.find_spec("PIL") is not None
"""Whether Pillow is installed, so that these datasets can read images (Chainer's name)."""


def _require_pillow(owner):
    try:
        from PIL import Image
    except ImportError as error:
        raise ImportError(
            f'{owner} needs Pillow; install it with: pip install "dbr-datasets[image]"'
        ) from error
    return Image


def _resolve_dtype(dtype):
    return get_dtype() if dtype is None else numpy.dtype(dtype)


def _read_image(source, dtype, owner):
    """Read an image file (path or file object) into a CHW array of ``dtype``."""
    image_module = _require_pillow(owner)
    with image_module.open(source) as image:
        array = numpy.array(image, dtype=dtype)
    if array.ndim == 2:
        array = array[:, :, None]
    return array.transpose(2, 0, 1)


def _read_lines(path):
    with open(path) as f:
        return [(number, line.strip()) for number, line in enumerate(f, 1) if line.strip()]


def _read_pairs(path, owner):
    pairs = []
    for number, line in _read_lines(path):
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(
                f"{owner}: line {number} of {path} must hold a path and an integer label "
                f"separated by whitespace, got {line!r}"
            )
        try:
            label = int(fields[1])
        except ValueError:
            raise ValueError(
                f"{owner}: line {number} of {path} must end with an integer label, "
                f"got {fields[1]!r}"
            ) from None
        pairs.append((fields[0], label))
    return pairs


class ImageDataset(DatasetMixin):
    """Dataset of image files; each example is a ``(channels, height, width)`` array.

    Images are read on access with Pillow. A greyscale image gives one channel; colour
    images keep Pillow's channel count (3 for RGB, 4 for RGBA) in Pillow's order.

    Args:
        paths (str or list of str): Image paths, or the path of a text file listing one
            image path per line (blank lines are skipped).
        root (str): Directory the image paths are relative to.
        dtype: Data type of the arrays; ``dbr.core.config.dtype`` (float32 by default)
            when ``None``.
    """

    def __init__(self, paths, root=".", dtype=None):
        _require_pillow("ImageDataset")
        if isinstance(paths, (str, os.PathLike)):
            paths = [line for _, line in _read_lines(paths)]
        self._paths = paths
        self._root = root
        self._dtype = _resolve_dtype(dtype)

    def __len__(self):
        """Return the number of images."""
        return len(self._paths)

    def get_example(self, i):
        """Return the ``i``-th image as a CHW array."""
        path = os.path.join(self._root, self._paths[i])
        return _read_image(path, self._dtype, "ImageDataset")


class LabeledImageDataset(DatasetMixin):
    """Dataset of ``(image, label)`` pairs from image files and integer labels.

    Args:
        pairs (str or list of tuples): ``(path, label)`` pairs, or the path of a text
            file whose lines each hold an image path and an integer label separated by
            whitespace (blank lines are skipped).
        root (str): Directory the image paths are relative to.
        dtype: Data type of the image arrays; ``dbr.core.config.dtype`` when ``None``.
        label_dtype: Data type of the labels.

    Each example is ``(image, label)``: a CHW array and a 0-d array of ``label_dtype``.
    """

    def __init__(self, pairs, root=".", dtype=None, label_dtype=numpy.int32):
        _require_pillow("LabeledImageDataset")
        if isinstance(pairs, (str, os.PathLike)):
            pairs = _read_pairs(pairs, "LabeledImageDataset")
        self._pairs = pairs
        self._root = root
        self._dtype = _resolve_dtype(dtype)
        self._label_dtype = label_dtype

    def __len__(self):
        """Return the number of pairs."""
        return len(self._pairs)

    def get_example(self, i):
        """Return the ``i``-th ``(image, label)`` pair."""
        path, label = self._pairs[i]
        image = _read_image(os.path.join(self._root, path), self._dtype, "LabeledImageDataset")
        return image, numpy.array(label, dtype=self._label_dtype)


class ZippedImageDataset(DatasetMixin):
    """Dataset of the images inside one zip file; each example is a CHW array.

    Every file of the archive (directories excluded) is an example, in the archive's
    order. One archive read is cheaper than many small files on network file systems.
    The dataset can be pickled or forked to worker processes: each process reopens the
    archive for itself.

    Args:
        zipfilename (str): Path of the zip file, which must hold only images.
        dtype: Data type of the arrays; ``dbr.core.config.dtype`` when ``None``.
    """

    def __init__(self, zipfilename, dtype=None):
        _require_pillow("ZippedImageDataset")
        self._zipfilename = zipfilename
        self._dtype = _resolve_dtype(dtype)
        self._lock = threading.Lock()
        self._zf = zipfile.ZipFile(zipfilename)
        self._pid = os.getpid()
        self._paths = [name for name in self._zf.namelist() if not name.endswith("/")]

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_zf"] = None
        state["_lock"] = None
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __len__(self):
        """Return the number of files in the archive."""
        return len(self._paths)

    def __getitem__(self, index):
        """Index like :class:`DatasetMixin`; a str is taken as a member name of the archive."""
        if isinstance(index, str):
            return self.get_example(index)
        return super().__getitem__(index)

    def get_example(self, i_or_filename):
        """Return an image as a CHW array, by position or by member name in the archive."""
        name = i_or_filename if isinstance(i_or_filename, str) else self._paths[i_or_filename]
        with self._lock:
            if self._zf is None or self._pid != os.getpid():
                self._zf = zipfile.ZipFile(self._zipfilename)
                self._pid = os.getpid()
            data = self._zf.read(name)
        # Pillow seeks in the file, which a zip member stream does not allow: read it whole.
        return _read_image(io.BytesIO(data), self._dtype, "ZippedImageDataset")


class MultiZippedImageDataset(DatasetMixin):
    """Dataset of the images inside several zip files, concatenated in the given order.

    Args:
        zipfilenames (list of str): Paths of the zip files, each holding only images.
        dtype: Data type of the arrays; ``dbr.core.config.dtype`` when ``None``.
    """

    def __init__(self, zipfilenames, dtype=None):
        self._zfs = [ZippedImageDataset(name, dtype) for name in zipfilenames]
        self._starts = [0]
        for zf in self._zfs:
            self._starts.append(self._starts[-1] + len(zf))

    def __len__(self):
        """Return the total number of images."""
        return self._starts[-1]

    def get_example(self, i):
        """Return the ``i``-th image of the concatenation as a CHW array."""
        if not 0 <= i < len(self):
            raise IndexError(
                f"MultiZippedImageDataset: index {i} is out of range for a dataset of length "
                f"{len(self)}"
            )
        k = bisect.bisect_right(self._starts, i) - 1
        return self._zfs[k].get_example(i - self._starts[k])


class LabeledZippedImageDataset(DatasetMixin):
    """Dataset of ``(image, label)`` pairs from a zip file of images and a label file.

    Args:
        zipfilename (str): Path of the zip file of images.
        labelfilename (str): Path of a text file whose ``i``-th (non-blank) line holds
            the member name of the ``i``-th image in the archive and its integer label,
            separated by whitespace.
        dtype: Data type of the image arrays; ``dbr.core.config.dtype`` when ``None``.
        label_dtype: Data type of the labels.

    Each example is ``(image, label)``: a CHW array and a 0-d array of ``label_dtype``.
    """

    def __init__(self, zipfilename, labelfilename, dtype=None, label_dtype=numpy.int32):
        self._pairs = _read_pairs(labelfilename, "LabeledZippedImageDataset")
        self._label_dtype = label_dtype
        self._zf = ZippedImageDataset(zipfilename, dtype=dtype)

    def __len__(self):
        """Return the number of labelled images."""
        return len(self._pairs)

    def get_example(self, i):
        """Return the ``i``-th ``(image, label)`` pair."""
        name, label = self._pairs[i]
        return self._zf.get_example(name), numpy.array(label, dtype=self._label_dtype)
