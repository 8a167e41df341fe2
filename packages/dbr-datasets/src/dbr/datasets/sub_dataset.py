"""SubDataset and the helpers that split a dataset for validation and cross validation."""

import operator
import warnings

import numpy

from dbr.datasets.dataset_mixin import DatasetMixin


def _as_int(value, function, name):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{function}: {name} must be an int, got {type(value).__name__}") from None


class SubDataset(DatasetMixin):
    """An interval of a base dataset, optionally taken through a permutation.

    Without ``order``, the ``i``-th example is ``dataset[start + i]``; with it, it is
    ``dataset[order[start + i]]``. A negative ``i`` is counted from ``finish``, so the
    subset indexes like a sequence of length ``finish - start``.

    Args:
        dataset: Base dataset.
        start (int): First index of the interval, ``0 <= start``.
        finish (int): Index one past the interval's end, ``start <= finish <= len(dataset)``.
        order (sequence of ints): Permutation of the base dataset's indices, of length
            ``len(dataset)``; ``None`` means the identity.

    Raises:
        ValueError: If the interval overruns the base dataset or ``order`` has the wrong
            length.
    """

    def __init__(self, dataset, start, finish, order=None):
        start = _as_int(start, "SubDataset", "start")
        finish = _as_int(finish, "SubDataset", "finish")
        n = len(dataset)
        if not 0 <= start <= finish <= n:
            raise ValueError(
                f"SubDataset: expected 0 <= start <= finish <= len(dataset) = {n}, "
                f"got start={start}, finish={finish}"
            )
        if order is not None and len(order) != n:
            raise ValueError(
                f"SubDataset: order must have the length of the base dataset ({n}), "
                f"got len(order) = {len(order)}"
            )
        self._dataset = dataset
        self._start = start
        self._finish = finish
        self._size = finish - start
        self._order = order

    def __len__(self):
        """Return ``finish - start``."""
        return self._size

    def get_example(self, i):
        """Return the ``i``-th example of the subset (negative ``i`` counts from the end)."""
        if not -self._size <= i < self._size:
            raise IndexError(
                f"SubDataset: index {i} is out of range for a dataset of length {self._size}"
            )
        index = self._start + i if i >= 0 else self._finish + i
        if self._order is not None:
            index = self._order[index]
        return self._dataset[index]


def split_dataset(dataset, split_at, order=None):
    """Split a dataset into two disjoint subsets that together cover it.

    Args:
        dataset: Dataset to split.
        split_at (int): Position of the split, ``0 <= split_at <= len(dataset)``.
        order (sequence of ints): Permutation of the base dataset's indices (see
            :class:`SubDataset`); ``None`` keeps the original order.

    Returns:
        tuple: Two :class:`SubDataset`: the examples ``order[:split_at]`` and
        ``order[split_at:]``.
    """
    split_at = _as_int(split_at, "split_dataset", "split_at")
    n = len(dataset)
    if split_at < 0:
        raise ValueError(f"split_dataset: split_at must be non-negative, got {split_at}")
    if split_at > n:
        raise ValueError(f"split_dataset: split_at ({split_at}) exceeds the dataset size ({n})")
    return SubDataset(dataset, 0, split_at, order), SubDataset(dataset, split_at, n, order)


def split_dataset_random(dataset, first_size, seed=None):
    """Split a dataset into two disjoint subsets at random.

    Args:
        dataset: Dataset to split.
        first_size (int): Number of examples in the first subset.
        seed (int): Seed of the permutation; the same seed always gives the same split.
            ``None`` draws a fresh permutation.

    Returns:
        tuple: Two :class:`SubDataset`: ``first_size`` examples drawn without replacement,
        and the rest.
    """
    order = numpy.random.RandomState(seed).permutation(len(dataset))
    return split_dataset(dataset, first_size, order)


def _split_n(dataset, n, order, function):
    n = _as_int(n, function, "n")
    if n <= 0:
        raise ValueError(f"{function}: n must be positive, got {n}")
    size = len(dataset) // n
    return [SubDataset(dataset, size * i, size * (i + 1), order) for i in range(n)]


def split_dataset_n(dataset, n, order=None):
    """Split a dataset into ``n`` disjoint subsets of equal size.

    Each subset holds ``len(dataset) // n`` examples; the last ``len(dataset) % n``
    examples (in ``order``) belong to none of them.

    Args:
        dataset: Dataset to split.
        n (int): Number of subsets, positive.
        order (sequence of ints): Permutation of the base dataset's indices (see
            :class:`SubDataset`).

    Returns:
        list: ``n`` :class:`SubDataset`; the ``i``-th holds the examples
        ``order[i * (len(dataset) // n):(i + 1) * (len(dataset) // n)]``.
    """
    return _split_n(dataset, n, order, "split_dataset_n")


def split_dataset_n_random(dataset, n, seed=None):
    """Split a dataset into ``n`` disjoint subsets of equal size, at random.

    Args:
        dataset: Dataset to split.
        n (int): Number of subsets, positive.
        seed (int): Seed of the permutation; ``None`` draws a fresh one.

    Returns:
        list: ``n`` :class:`SubDataset` of ``len(dataset) // n`` examples each, drawn
        without replacement.
    """
    order = numpy.random.RandomState(seed).permutation(len(dataset))
    return _split_n(dataset, n, order, "split_dataset_n_random")


def _pop_n_fold(n_folds, kwargs, function):
    if "n_fold" in kwargs:
        if n_folds is not None:
            raise TypeError(f"{function}: give n_folds or n_fold (deprecated), not both")
        warnings.warn(
            f"{function}: the argument n_fold is deprecated; use n_folds",
            DeprecationWarning,
            stacklevel=3,
        )
        n_folds = kwargs.pop("n_fold")
    if kwargs:
        raise TypeError(f"{function}: unexpected keyword arguments {sorted(kwargs)}")
    if n_folds is None:
        raise TypeError(f"{function}: missing required argument n_folds")
    n_folds = _as_int(n_folds, function, "n_folds")
    if n_folds <= 0:
        raise ValueError(f"{function}: n_folds must be positive, got {n_folds}")
    return n_folds


def get_cross_validation_datasets(dataset, n_folds=None, order=None, **kwargs):
    """Create ``n_folds`` training/test splits for cross validation.

    The test parts of the splits are disjoint and together cover the dataset; their
    sizes differ by at most one. Each split's training part is the rest of the dataset.

    Args:
        dataset: Dataset to split.
        n_folds (int): Number of splits.
        order (sequence of ints): Order of the indices from which the folds are cut;
            ``None`` keeps the original order.
        **kwargs: ``n_fold``, the deprecated name of ``n_folds``.

    Returns:
        list of tuples: ``n_folds`` pairs ``(train, test)`` of :class:`SubDataset`.
    """
    n_folds = _pop_n_fold(n_folds, kwargs, "get_cross_validation_datasets")
    n = len(dataset)
    order = numpy.arange(n) if order is None else numpy.array(order)
    if len(order) != n:
        raise ValueError(
            f"get_cross_validation_datasets: order must have the length of the dataset "
            f"({n}), got len(order) = {len(order)}"
        )
    borders = [n * i // n_folds for i in range(n_folds + 1)]
    test_sizes = [borders[i + 1] - borders[i] for i in range(n_folds)]
    splits = []
    for test_size in reversed(test_sizes):
        splits.append(split_dataset(dataset, n - test_size, order))
        # Rotating the order moves the next fold to the end, where the test part is cut.
        order = numpy.roll(order, test_size)
    return splits


def get_cross_validation_datasets_random(dataset, n_folds, seed=None, **kwargs):
    """Create ``n_folds`` training/test splits for cross validation from a random order.

    Same as :func:`get_cross_validation_datasets` with a random permutation as ``order``.

    Args:
        dataset: Dataset to split.
        n_folds (int): Number of splits.
        seed (int): Seed of the permutation; ``None`` draws a fresh one.
        **kwargs: ``n_fold``, the deprecated name of ``n_folds``.

    Returns:
        list of tuples: ``n_folds`` pairs ``(train, test)`` of :class:`SubDataset`.
    """
    order = numpy.random.RandomState(seed).permutation(len(dataset))
    return get_cross_validation_datasets(dataset, n_folds, order, **kwargs)
