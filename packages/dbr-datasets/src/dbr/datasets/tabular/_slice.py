"""``TabularDataset.slice``: a view of some rows and columns of a dataset."""

import numbers
import operator

import numpy

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class _SliceHelper:
    """What ``dataset.slice`` returns: indexing it builds the view."""

    __slots__ = ("_dataset",)

    def __init__(self, dataset):
        self._dataset = dataset

    def __getitem__(self, args):
        if not isinstance(args, tuple):
            return _Slice(self._dataset, args, None)
        if len(args) != 2:
            raise IndexError(
                f"TabularDataset.slice: expected slice[rows] or slice[rows, keys], "
                f"got {len(args)} indices"
            )
        return _Slice(self._dataset, *args)


class _Slice(TabularDataset):
    """The rows ``indices`` and the columns ``keys`` of ``dataset``."""

    def __init__(self, dataset, indices, keys):
        self._dataset = dataset
        self._indices = _as_indices(indices, len(dataset))
        if keys is None:
            self._unary = None
            self._key_indices = None
        else:
            self._unary = not isinstance(keys, tuple)
            self._key_indices = _as_key_indices((keys,) if self._unary else keys, dataset.keys)

    def __len__(self):
        if self._indices is None:
            return len(self._dataset)
        if isinstance(self._indices, slice):
            return len(range(len(self._dataset))[self._indices])
        return len(self._indices)

    @property
    def keys(self):
        keys = self._dataset.keys
        if self._key_indices is None:
            return keys
        return tuple(keys[key_index] for key_index in self._key_indices)

    @property
    def mode(self):
        if self._unary is None:
            return self._dataset.mode
        if self._unary:
            return None
        return self._dataset.mode or tuple

    def get_examples(self, indices, key_indices):
        indices = _merge_indices(self._indices, indices, len(self._dataset), len(self))
        key_indices = _merge_key_indices(self._key_indices, key_indices)
        return self._dataset.get_examples(indices, key_indices)

    def convert(self, data):
        return self._dataset.convert(data)


def _as_indices(indices, length):
    """Return the rows ``indices`` as a slice, or a list of non-negative ints below ``length``.

    A sequence made only of bools is a mask with one entry per row.
    """
    if indices is None or isinstance(indices, slice):
        return indices
    if isinstance(indices, numbers.Integral) or not hasattr(indices, "__len__"):
        raise TypeError(
            f"TabularDataset.slice: rows must be a slice, or a list or 1-d array of ints or "
            f"bools, got {type(indices).__name__}"
        )
    if len(indices) and all(isinstance(index, (bool, numpy.bool_)) for index in indices):
        if len(indices) != length:
            raise ValueError(
                f"TabularDataset.slice: a boolean mask must have one entry per row, "
                f"{length}, got {len(indices)}"
            )
        return [i for i, keep in enumerate(indices) if keep]
    rows = []
    for index in indices:
        try:
            row = operator.index(index)
        except TypeError:
            raise TypeError(
                f"TabularDataset.slice: rows must be ints or bools, got {index!r}"
            ) from None
        if not -length <= row < length:
            raise IndexError(
                f"TabularDataset.slice: row {row} is out of range for a dataset of length {length}"
            )
        rows.append(row + length if row < 0 else row)
    return rows


def _as_key_indices(keys, names):
    """Return the positions in ``names`` of ``keys``, each a name or a (negative) position."""
    key_indices = []
    for key in keys:
        if isinstance(key, numbers.Integral):
            if not -len(names) <= key < len(names):
                raise IndexError(
                    f"TabularDataset.slice: key position {key} is out of range for the "
                    f"{len(names)} keys {names}"
                )
            key_indices.append(int(key) % len(names))
        elif key in names:
            key_indices.append(names.index(key))
        else:
            raise KeyError(f"TabularDataset.slice: no key {key!r} among {names}")
    return tuple(key_indices)


def _merge_indices(outer, inner, outer_length, inner_length):
    """Return the rows of the dataset that rows ``inner`` of its view of rows ``outer`` are."""
    if outer is None:
        return inner
    if inner is None:
        return outer
    if isinstance(outer, slice):
        rows = range(outer_length)[outer]
        if isinstance(inner, slice):
            return _range_as_slice(rows[inner])
        return [rows[index] for index in inner]
    if isinstance(inner, slice):
        return outer[inner]
    return [outer[index] for index in inner]


def _range_as_slice(rows):
    """Return a slice selecting ``rows`` (a range of non-negative ints) from a sequence."""
    if len(rows) == 0:
        return slice(0, 0, 1)
    # A range stepping down past 0 ends below 0, which a slice would count from the end.
    return slice(rows.start, rows.stop if rows.stop >= 0 else None, rows.step)


def _merge_key_indices(outer, inner):
    """Return the columns of the dataset that columns ``inner`` of its view ``outer`` are."""
    if outer is None:
        return inner
    if inner is None:
        return outer
    return tuple(outer[key_index] for key_index in inner)
