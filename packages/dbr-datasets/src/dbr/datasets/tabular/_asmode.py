"""``TabularDataset.astuple`` and ``asdict``: the same dataset in another mode."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class _Asmode(TabularDataset):
    """The rows and columns of ``dataset``, with the mode of the subclass."""

    def __init__(self, dataset):
        self._dataset = dataset

    def __len__(self):
        return len(self._dataset)

    @property
    def keys(self):
        return self._dataset.keys

    def get_examples(self, indices, key_indices):
        return self._dataset.get_examples(indices, key_indices)

    def convert(self, data):
        return self._dataset.convert(data)


class _Astuple(_Asmode):
    """``dataset`` with examples given as tuples."""

    mode = tuple


class _Asdict(_Asmode):
    """``dataset`` with examples given as dicts."""

    mode = dict
