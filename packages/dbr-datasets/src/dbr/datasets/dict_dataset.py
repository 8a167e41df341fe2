"""DictDataset: several equal-length datasets zipped into dicts."""

from dbr.datasets.dataset_mixin import _index_kind, _normalize_index, _take


class DictDataset:
    """Dataset whose ``i``-th example maps each key to the ``i``-th example of its dataset.

    Indexing with an int returns a dict; with a slice, a list or an integer array it
    returns a list of dicts. Negative ints count from the end.

    Args:
        **datasets: Underlying datasets, all of the same length; the keyword names are
            the keys of each example.

    Raises:
        ValueError: If no dataset is given or the lengths differ.
    """

    def __init__(self, **datasets):
        if not datasets:
            raise ValueError("DictDataset: no datasets are given")
        lengths = {key: len(dataset) for key, dataset in datasets.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError(f"DictDataset: all datasets must have the same length, got {lengths}")
        self._datasets = datasets
        self._length = next(iter(lengths.values()))

    def __getitem__(self, index):
        """Return the dict at ``index``, or a list of dicts for a slice or index list."""
        if _index_kind(index, "DictDataset") == "one":
            i = _normalize_index(index, self._length, "DictDataset")
            return {key: dataset[i] for key, dataset in self._datasets.items()}
        keys = list(self._datasets)
        columns = [_take(self._datasets[key], index) for key in keys]
        return [dict(zip(keys, row)) for row in zip(*columns)]

    def __len__(self):
        """Return the common length of the datasets."""
        return self._length
