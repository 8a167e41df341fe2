"""ConcatenatedDataset: datasets joined end to end."""

import bisect
import itertools

from dbr.datasets.dataset_mixin import DatasetMixin


class ConcatenatedDataset(DatasetMixin):
    """Dataset that concatenates the given datasets.

    Examples ``0 .. len(datasets[0]) - 1`` come from the first dataset, the following
    ones from the second, and so on. The lengths are read once, at construction.

    Args:
        *datasets: Datasets to join, in order. With none, the result is empty.
    """

    def __init__(self, *datasets):
        self._datasets = datasets
        self._ends = list(itertools.accumulate(len(dataset) for dataset in datasets))

    def __len__(self):
        """Return the total number of examples."""
        return self._ends[-1] if self._ends else 0

    def get_example(self, i):
        """Return the ``i``-th example of the concatenation."""
        if not 0 <= i < len(self):
            raise IndexError(
                f"ConcatenatedDataset: index {i} is out of range for a dataset of length "
                f"{len(self)}"
            )
        k = bisect.bisect_right(self._ends, i)
        start = self._ends[k - 1] if k else 0
        return self._datasets[k][i - start]
