"""Kuzushiji-MNIST: 70,000 28x28 grey images of cursive Japanese characters (IDX files)."""

import numpy

from dbr.core.utils import docstring_tail
from dbr.datasets import _loader_utils

_DATASET = "kuzushiji-mnist"
_BASE_URL = "http://codh.rois.ac.jp/kmnist/dataset/kmnist/"
# The distribution publishes no SHA-256; these are the MD5 sums its users verify.
_FILES = {
    "train": (
        _loader_utils.RemoteFile(
            "train-images-idx3-ubyte.gz", md5="bdb82020997e1d708af4cf47b453dcf7"
        ),
        _loader_utils.RemoteFile(
            "train-labels-idx1-ubyte.gz", md5="e144d726b3acfaa3e44228e80efcd344"
        ),
    ),
    "test": (
        _loader_utils.RemoteFile(
            "t10k-images-idx3-ubyte.gz", md5="5c965bf0a639b31b8f53240b1b52f4d7"
        ),
        _loader_utils.RemoteFile(
            "t10k-labels-idx1-ubyte.gz", md5="7320c461ea6c1c855c0b718fb2a4b134"
        ),
    ),
}
_LABELS = [
    ("o", "\u304a"),
    ("ki", "\u304d"),
    ("su", "\u3059"),
    ("tsu", "\u3064"),
    ("na", "\u306a"),
    ("ha", "\u306f"),
    ("ma", "\u307e"),
    ("ya", "\u3084"),
    ("re", "\u308c"),
    ("wo", "\u3092"),
]


def get_kuzushiji_mnist_labels():
    """Return the ten Kuzushiji-MNIST classes, indexed by label.

    Returns:
        list of tuple: ``(romaji, character)`` pairs, from ``("o", "お")`` to
        ``("wo", "を")``.
    """
    return list(_LABELS)


@docstring_tail(_loader_utils.MNIST_LIKE_DOC)
def get_kuzushiji_mnist(
    withlabel=True, ndim=1, scale=1.0, dtype=None, label_dtype=numpy.int32, rgb_format=False
):
    """Get the Kuzushiji-MNIST dataset of cursive Japanese (hiragana) characters.

    `Kuzushiji-MNIST <http://codh.rois.ac.jp/kmnist/>`_ (ROIS-DS Center for Open Data in
    the Humanities) has MNIST's format and sizes: 60,000 training and 10,000 test 28x28
    grey images in 10 classes (see :func:`get_kuzushiji_mnist_labels`). The original
    gzip IDX files are downloaded into ``<dataset root>/kuzushiji-mnist`` on first use
    (or fetched from ``DBR_DATASET_MIRROR``), checked against their MD5 and parsed once
    into ``train.npz`` and ``test.npz`` beside them.
    """
    options = (withlabel, ndim, scale, dtype, label_dtype, rgb_format)
    return _loader_utils.load_mnist_like(
        "get_kuzushiji_mnist", _DATASET, _BASE_URL, _FILES, options
    )
