"""DelegateDataset: a base for TabularDataset classes built around another one."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class DelegateDataset(TabularDataset):
    """A TabularDataset that reads its rows and columns from ``dataset``.

    Subclass it to give a dataset built with :func:`from_data`, or with the
    views of :class:`~dbr.datasets.TabularDataset`, a class of its own:

    >>> from dbr.datasets import tabular
    >>> class Squares(tabular.DelegateDataset):
    ...     def __init__(self, n):
    ...         super().__init__(tabular.from_data((('x', list(range(n))), ('y', self.square))))
    ...     def square(self, i):
    ...         return i * i
    >>> dataset = Squares(4)
    >>> dataset.keys, dataset[3]
    (('x', 'y'), (3, 9))

    Length, :attr:`keys`, :attr:`mode` and :meth:`get_examples` are those of
    ``dataset`` (kept as the attribute ``dataset``); ``convert`` is
    TabularDataset's default.

    Args:
        dataset (TabularDataset): The dataset read.
    """

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        """Return the number of rows of ``dataset``."""
        return len(self.dataset)

    @property
    def keys(self):
        """The keys of ``dataset``."""
        return self.dataset.keys

    @property
    def mode(self):
        """The mode of ``dataset``."""
        return self.dataset.mode

    def get_examples(self, indices, key_indices):
        """Return ``dataset.get_examples(indices, key_indices)``."""
        return self.dataset.get_examples(indices, key_indices)
