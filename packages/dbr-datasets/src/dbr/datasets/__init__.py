"""dbr.datasets: datasets, iterators, batch converters and dataset loaders.

Chainer v7's ``chainer.dataset``, ``chainer.datasets`` and
``chainer.iterators`` under one namespace.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.datasets import tabular
from dbr.datasets.cifar import get_cifar10, get_cifar100
from dbr.datasets.concatenated_dataset import ConcatenatedDataset
from dbr.datasets.convert import (
    ConcatWithAsyncTransfer,
    Converter,
    call_converter,
    concat_examples,
    converter,
    to_device,
)
from dbr.datasets.dali_iterator import DaliIterator
from dbr.datasets.dataset_mixin import DatasetMixin
from dbr.datasets.dict_dataset import DictDataset
from dbr.datasets.digits import get_digits
from dbr.datasets.download import (
    cache_or_load_file,
    cached_download,
    get_dataset_directory,
    get_dataset_root,
    set_dataset_root,
)
from dbr.datasets.fashion_mnist import get_fashion_mnist, get_fashion_mnist_labels
from dbr.datasets.image_dataset import (
    ImageDataset,
    LabeledImageDataset,
    LabeledZippedImageDataset,
    MultiZippedImageDataset,
    ZippedImageDataset,
)
from dbr.datasets.iterator import Iterator
from dbr.datasets.kuzushiji_mnist import get_kuzushiji_mnist, get_kuzushiji_mnist_labels
from dbr.datasets.mnist import get_mnist
from dbr.datasets.multiprocess_iterator import MultiprocessIterator
from dbr.datasets.multithread_iterator import MultithreadIterator
from dbr.datasets.order_samplers import OrderSampler, ShuffleOrderSampler
from dbr.datasets.pickle_dataset import (
    PickleDataset,
    PickleDatasetWriter,
    open_pickle_dataset,
    open_pickle_dataset_writer,
)
from dbr.datasets.ptb import get_ptb_words, get_ptb_words_vocabulary
from dbr.datasets.serial_iterator import SerialIterator
from dbr.datasets.sub_dataset import (
    SubDataset,
    get_cross_validation_datasets,
    get_cross_validation_datasets_random,
    split_dataset,
    split_dataset_n,
    split_dataset_n_random,
    split_dataset_random,
)
from dbr.datasets.svhn import get_svhn
from dbr.datasets.tabular import TabularDataset
from dbr.datasets.text_dataset import TextDataset
from dbr.datasets.transform_dataset import TransformDataset
from dbr.datasets.tuple_dataset import TupleDataset

try:
    __version__ = _version("dbr-datasets")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

__all__ = [
    # abstractions
    "ConcatenatedDataset", "DatasetMixin", "DictDataset", "ImageDataset",
    "LabeledImageDataset", "LabeledZippedImageDataset", "MultiZippedImageDataset",
    "PickleDataset", "PickleDatasetWriter", "SubDataset", "TabularDataset", "TextDataset",
    "TransformDataset", "TupleDataset", "ZippedImageDataset", "get_cross_validation_datasets",
    "get_cross_validation_datasets_random", "open_pickle_dataset", "open_pickle_dataset_writer",
    "split_dataset", "split_dataset_n", "split_dataset_n_random", "split_dataset_random",
    "tabular",
    # iterators
    "DaliIterator", "Iterator", "MultiprocessIterator", "MultithreadIterator", "OrderSampler",
    "SerialIterator", "ShuffleOrderSampler",
    # converters
    "ConcatWithAsyncTransfer", "Converter", "call_converter", "concat_examples", "converter",
    "to_device",
    # download and cache
    "cache_or_load_file", "cached_download", "get_dataset_directory", "get_dataset_root",
    "set_dataset_root",
    # loaders
    "get_cifar10", "get_cifar100", "get_digits", "get_fashion_mnist",
    "get_fashion_mnist_labels", "get_kuzushiji_mnist", "get_kuzushiji_mnist_labels",
    "get_mnist", "get_ptb_words", "get_ptb_words_vocabulary", "get_svhn",
]  # fmt: skip


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
