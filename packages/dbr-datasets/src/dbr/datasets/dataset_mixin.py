"""DatasetMixin: integer, slice and fancy indexing on top of ``get_example``."""

import operator

import numpy


def _index_kind(index, owner):
    """Classify ``index`` as ``"slice"``, ``"many"`` (a list or 1-d integer array) or ``"one"``.

    ``owner`` names the dataset class in error messages.
    """
    if isinstance(index, slice):
        return "slice"
    if isinstance(index, list):
        return "many"
    if isinstance(index, numpy.ndarray):
        if index.ndim != 1 or not numpy.issubdtype(index.dtype, numpy.integer):
            raise TypeError(
                f"{owner}: an index array must be 1-d and of an integer dtype, "
                f"got shape {index.shape} and dtype {index.dtype}"
            )
        return "many"
    return "one"


def _normalize_index(index, length, owner):
    """Return ``index`` as a non-negative Python int below ``length``, resolving negatives."""
    try:
        i = operator.index(index)
    except TypeError:
        raise TypeError(
            f"{owner}: an index must be an int, a slice, a list or a 1-d integer array, "
            f"got {type(index).__name__}"
        ) from None
    j = i + length if i < 0 else i
    if not 0 <= j < length:
        raise IndexError(f"{owner}: index {i} is out of range for a dataset of length {length}")
    return j


def _take(dataset, index):
    """Index ``dataset`` with a slice or a list/array of ints, returning a sequence.

    Arrays and DatasetMixin subclasses understand a list of indices themselves; plain
    sequences such as Python lists are indexed one element at a time.
    """
    if isinstance(index, slice) or hasattr(dataset, "ndim") or isinstance(dataset, DatasetMixin):
        return dataset[index]
    return [dataset[i] for i in index]


class DatasetMixin:
    """Default ``__getitem__`` for datasets that can fetch one example at a time.

    A subclass implements :meth:`__len__` and :meth:`get_example`; indexing then
    accepts an int (negative ints count from the end), a slice (returning a list of
    examples) or a list or 1-d integer array of indices (returning a list of examples).
    ``get_example`` always receives a non-negative int below ``len(self)``; an index
    outside ``[-len(self), len(self))`` raises :class:`IndexError`.
    """

    def __getitem__(self, index):
        """Return the example at ``index``, or a list of examples for a slice or index list."""
        owner = type(self).__name__
        kind = _index_kind(index, owner)
        if kind == "slice":
            return [self.get_example(i) for i in range(*index.indices(len(self)))]
        length = len(self)
        if kind == "many":
            return [self.get_example(_normalize_index(i, length, owner)) for i in index]
        return self.get_example(_normalize_index(index, length, owner))

    def __len__(self):
        """Return the number of examples; subclasses must implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")

    def get_example(self, i):
        """Return the ``i``-th example; subclasses must implement it.

        Args:
            i (int): Index of the example, ``0 <= i < len(self)`` when called through
                indexing.

        Returns:
            The ``i``-th example.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_example")
