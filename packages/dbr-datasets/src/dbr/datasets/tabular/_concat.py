"""``TabularDataset.concat``: the rows of several datasets, one after another."""

import bisect
import itertools

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class _Concat(TabularDataset):
    """The rows of ``datasets``, in order; they share their keys."""

    def __init__(self, *datasets):
        keys = datasets[0].keys
        for dataset in datasets[1:]:
            if dataset.keys != keys:
                raise ValueError(
                    f"TabularDataset.concat: every dataset must have the keys {keys}, "
                    f"got {dataset.keys}"
                )
        self._datasets = datasets

    def __len__(self):
        return sum(len(dataset) for dataset in self._datasets)

    @property
    def keys(self):
        return self._datasets[0].keys

    @property
    def mode(self):
        return self._datasets[0].mode

    def get_examples(self, indices, key_indices):
        n_columns = len(self.keys) if key_indices is None else len(key_indices)
        if indices is None:
            parts = [dataset.get_examples(None, key_indices) for dataset in self._datasets]
            return _chain(parts, n_columns)
        if isinstance(indices, slice):
            return self._get_slice(indices, key_indices, n_columns)
        return self._get_rows(indices, key_indices, n_columns)

    def _get_slice(self, indices, key_indices, n_columns):
        """Read the rows ``indices`` (a slice), asking each dataset for a slice of its own."""
        start, stop, step = indices.indices(len(self))
        parts = []
        offset = 0
        for dataset in self._datasets:
            local = _local_slice(start - offset, stop - offset, step, len(dataset))
            if local is not None:
                parts.append(dataset.get_examples(local, key_indices))
            offset += len(dataset)
        if step < 0:
            parts.reverse()
        if len(parts) == 1:
            return parts[0]
        return _chain(parts, n_columns)

    def _get_rows(self, indices, key_indices, n_columns):
        """Read the rows ``indices`` (a list), asking each dataset for the rows it holds."""
        ends = list(itertools.accumulate(len(dataset) for dataset in self._datasets))
        local_rows = [[] for _ in self._datasets]
        origin = []  # for each requested row: (its dataset, its place in that dataset's list)
        for index in indices:
            if not 0 <= index < ends[-1]:
                raise IndexError(
                    f"TabularDataset.concat: row {index} is out of range for a dataset of "
                    f"length {ends[-1]}"
                )
            k = bisect.bisect_right(ends, index)
            local_rows[k].append(index - (ends[k - 1] if k else 0))
            origin.append((k, len(local_rows[k]) - 1))
        parts = {
            k: dataset.get_examples(rows, key_indices)
            for k, (dataset, rows) in enumerate(zip(self._datasets, local_rows))
            if rows
        }
        if len(parts) == 1:
            return next(iter(parts.values()))
        return tuple([parts[k][column][p] for k, p in origin] for column in range(n_columns))

    def convert(self, data):
        return self._datasets[0].convert(data)


def _local_slice(start, stop, step, length):
    """Return the slice of a dataset of ``length`` rows that ``range(start, stop, step)`` meets.

    ``start`` and ``stop`` are positions relative to the dataset's first row and
    may lie outside it; None when the range has no row in the dataset.
    """
    if step > 0:
        if start < 0:
            start %= step
        stop = min(stop, length)
    else:
        if start >= length:
            start += -((start - length + 1) // step) * step  # the first row below length
        stop = max(stop, -1)
    if not range(start, stop, step):
        return None
    return slice(start, stop if stop >= 0 else None, step)


def _chain(parts, n_columns):
    """Join the blocks ``parts`` row-wise: one list per column, the parts' rows in order."""
    return tuple(
        [value for part in parts for value in part[column]] for column in range(n_columns)
    )
