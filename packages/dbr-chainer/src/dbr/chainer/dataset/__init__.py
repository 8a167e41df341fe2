"""``chainer.dataset``: converters, DatasetMixin, TabularDataset, Iterator and downloads.

``chainer.dataset.convert``, ``.download``, ``.iterator``, ``.dataset_mixin``
and ``.tabular`` are modules here too.
"""

import dbr.datasets as _target
from dbr.chainer._forward import forward
from dbr.chainer.dataset import convert, dataset_mixin, download, iterator, tabular

__getattr__, __dir__ = forward(globals(), _target)
__all__ = [
    "ConcatWithAsyncTransfer", "Converter", "DatasetMixin", "Iterator", "TabularDataset",
    "cache_or_load_file", "cached_download", "concat_examples", "convert", "converter",
    "dataset_mixin", "download", "get_dataset_directory", "get_dataset_root", "iterator",
    "set_dataset_root", "tabular", "to_device",
]  # fmt: skip
