"""TupleDataset: several equal-length datasets zipped into tuples."""

from dbr.datasets.dataset_mixin import _index_kind, _normalize_index, _take


class TupleDataset:
    """Dataset whose ``i``-th example is the tuple of the ``i``-th examples of its datasets.

    Indexing with an int returns a tuple; with a slice, a list or an integer array it
    returns a list of tuples. Negative ints count from the end.

    Args:
        *datasets: Underlying datasets (arrays, lists or any dataset), all of the same
            length.

    Raises:
        ValueError: If no dataset is given or the lengths differ.
    """

    def __init__(self, *datasets):
        if not datasets:
            raise ValueError("TupleDataset: no datasets are given")
        lengths = [len(dataset) for dataset in datasets]
        if any(length != lengths[0] for length in lengths):
            raise ValueError(
                f"TupleDataset: all datasets must have the same length, got lengths {lengths}"
            )
        self._datasets = datasets
        self._length = lengths[0]

    def __getitem__(self, index):
        """Return the tuple at ``index``, or a list of tuples for a slice or index list."""
        if _index_kind(index, "TupleDataset") == "one":
            i = _normalize_index(index, self._length, "TupleDataset")
            return tuple(dataset[i] for dataset in self._datasets)
        return list(zip(*(_take(dataset, index) for dataset in self._datasets)))

    def __len__(self):
        """Return the common length of the datasets."""
        return self._length
