"""Fashion-MNIST: 70,000 28x28 grey images of clothing, from the original IDX files."""

import numpy

from dbr.core.utils import docstring_tail
from dbr.datasets import _loader_utils

_DATASET = "fashion-mnist"
_BASE_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"
_FILES = {
    "train": (
        _loader_utils.RemoteFile(
            "train-images-idx3-ubyte.gz",
            sha256="3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
        ),
        _loader_utils.RemoteFile(
            "train-labels-idx1-ubyte.gz",
            sha256="a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
        ),
    ),
    "test": (
        _loader_utils.RemoteFile(
            "t10k-images-idx3-ubyte.gz",
            sha256="346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
        ),
        _loader_utils.RemoteFile(
            "t10k-labels-idx1-ubyte.gz",
            sha256="67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
        ),
    ),
}
_LABELS = (
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
)


def get_fashion_mnist_labels():
    """Return the names of the ten Fashion-MNIST classes, indexed by label.

    Returns:
        list of str: ``["T-shirt/top", "Trouser", ..., "Ankle boot"]``, a new list
        at each call.
    """
    return list(_LABELS)


@docstring_tail(_loader_utils.MNIST_LIKE_DOC)
def get_fashion_mnist(
    withlabel=True, ndim=1, scale=1.0, dtype=None, label_dtype=numpy.int32, rgb_format=False
):
    """Get the Fashion-MNIST dataset of clothing images.

    `Fashion-MNIST <https://github.com/zalandoresearch/fashion-mnist>`_ (Zalando
    Research) has MNIST's format and sizes: 60,000 training and 10,000 test 28x28 grey
    images in 10 classes (see :func:`get_fashion_mnist_labels`). The original gzip IDX
    files are downloaded into ``<dataset root>/fashion-mnist`` on first use (or fetched
    from ``DBR_DATASET_MIRROR``), checked against their SHA-256 and parsed once into
    ``train.npz`` and ``test.npz`` beside them.
    """
    options = (withlabel, ndim, scale, dtype, label_dtype, rgb_format)
    return _loader_utils.load_mnist_like("get_fashion_mnist", _DATASET, _BASE_URL, _FILES, options)
