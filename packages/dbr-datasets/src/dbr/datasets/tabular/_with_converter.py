"""``TabularDataset.with_converter``: the same dataset with another ``convert``."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class _WithConverter(TabularDataset):
    """The rows and columns of ``dataset``, converted by ``converter``."""

    def __init__(self, dataset, converter):
        if not callable(converter):
            raise TypeError(
                f"TabularDataset.with_converter: converter must be callable, "
                f"got {type(converter).__name__}"
            )
        self._dataset = dataset
        self._converter = converter

    def __len__(self):
        return len(self._dataset)

    @property
    def keys(self):
        return self._dataset.keys

    @property
    def mode(self):
        return self._dataset.mode

    def get_examples(self, indices, key_indices):
        return self._dataset.get_examples(indices, key_indices)

    def convert(self, data):
        if isinstance(data, tuple):
            return self._converter(*data)
        if isinstance(data, dict):
            return self._converter(**data)
        return self._converter(data)
