"""MNIST: 70,000 handwritten digits, 28x28 grey levels, from the original IDX files."""

import numpy

from dbr.core.utils import docstring_tail
from dbr.datasets import _loader_utils

_DATASET = "mnist"
# yann.lecun.com no longer serves the files without authentication; this is the copy
# that PyTorch's torchvision downloads, byte-identical to the original distribution.
_BASE_URL = "https://ossci-datasets.s3.amazonaws.com/mnist/"
_FILES = {
    "train": (
        _loader_utils.RemoteFile(
            "train-images-idx3-ubyte.gz",
            sha256="440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
        ),
        _loader_utils.RemoteFile(
            "train-labels-idx1-ubyte.gz",
            sha256="3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
        ),
    ),
    "test": (
        _loader_utils.RemoteFile(
            "t10k-images-idx3-ubyte.gz",
            sha256="8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
        ),
        _loader_utils.RemoteFile(
            "t10k-labels-idx1-ubyte.gz",
            sha256="f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
        ),
    ),
}


@docstring_tail(_loader_utils.MNIST_LIKE_DOC)
def get_mnist(
    withlabel=True, ndim=1, scale=1.0, dtype=None, label_dtype=numpy.int32, rgb_format=False
):
    """Get the MNIST dataset of handwritten digits.

    `MNIST <http://yann.lecun.com/exdb/mnist/>`_ holds 60,000 training and 10,000 test
    images of the digits 0 to 9, each 28x28 pixels of one byte. The four gzip IDX files
    of the original distribution are downloaded into ``<dataset root>/mnist`` on first
    use (or fetched from ``DBR_DATASET_MIRROR``), checked against their published SHA-256
    and parsed once into ``train.npz`` and ``test.npz`` beside them.
    """
    options = (withlabel, ndim, scale, dtype, label_dtype, rgb_format)
    return _loader_utils.load_mnist_like("get_mnist", _DATASET, _BASE_URL, _FILES, options)
