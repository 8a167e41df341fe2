"""The one-column datasets that :func:`from_data` builds on: an array, a list, row numbers."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset, _is_array


class _Column(TabularDataset):
    """The column ``key`` holding ``data``, a list or an array; its examples are bare values."""

    mode = None

    def __init__(self, key, data):
        self._key = key
        self._data = data
        self._is_array = _is_array(data)

    def __len__(self):
        return len(self._data)

    @property
    def keys(self):
        return (self._key,)

    def get_examples(self, indices, key_indices):
        if indices is None:
            column = self._data
        elif isinstance(indices, slice) or self._is_array:
            column = self._data[indices]
        else:
            column = [self._data[index] for index in indices]
        return (column,) * (1 if key_indices is None else len(key_indices))


class _Index(TabularDataset):
    """The row numbers ``0 .. size - 1``, as the column ``'index'``."""

    mode = None

    def __init__(self, size):
        self._size = size

    def __len__(self):
        return self._size

    @property
    def keys(self):
        return ("index",)

    def get_examples(self, indices, key_indices):
        if indices is None:
            column = list(range(self._size))
        elif isinstance(indices, slice):
            column = list(range(self._size)[indices])
        else:
            column = list(indices)
        return (column,) * (1 if key_indices is None else len(key_indices))
