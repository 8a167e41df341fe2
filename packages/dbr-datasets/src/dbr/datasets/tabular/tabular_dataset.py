"""TabularDataset: a dataset of named columns, read a block of rows and columns at a time."""

import importlib

import numpy

from dbr.core import backend
from dbr.datasets.dataset_mixin import DatasetMixin


def _view(module, name):
    """Return the view class ``name`` of ``dbr.datasets.tabular.<module>``.

    The views subclass TabularDataset, so their modules import this one; looking
    them up when a view is asked for keeps the import graph acyclic.
    """
    return getattr(importlib.import_module(f"dbr.datasets.tabular.{module}"), name)


class TabularDataset(DatasetMixin):
    """A dataset whose examples all have the same named columns.

    Each example holds one value per column, named by :attr:`keys`. An example
    is given as a tuple ``(a[i], b[i], c[i])`` or a dict ``{'a': a[i], ...}``,
    as :attr:`mode` says (:class:`tuple` or :class:`dict`); a dataset of one
    column may give the bare value ``a[i]`` (``mode`` is None).

    A subclass implements :meth:`__len__`, :attr:`keys`, :attr:`mode` and
    :meth:`get_examples`, which reads a block of rows and columns at once; the
    other methods build lazy views on top of it: :attr:`slice` (a subset of
    rows and columns), :meth:`astuple`/:meth:`asdict` (another mode),
    :meth:`concat` (rows of several datasets), :meth:`join` (columns of several
    datasets), :meth:`transform`/:meth:`transform_batch` (computed columns) and
    :meth:`with_converter` (another :meth:`convert`).

    >>> from dbr.datasets import tabular
    >>> dataset = tabular.from_data((('a', [0, 1, 2, 3]), ('b', [4, 5, 6, 7])))
    >>> dataset.keys, len(dataset), dataset[1]
    (('a', 'b'), 4, (1, 5))
    >>> view = dataset.slice[[3, 0], ('b', 'a')]
    >>> view.fetch()
    ([7, 4], [3, 0])
    >>> view.asdict()[0] == {'b': 7, 'a': 3}
    True
    """

    def __len__(self):
        """Return the number of rows; subclasses must implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement __len__")

    @property
    def keys(self):
        """The names of the columns, a tuple; subclasses must implement it."""
        raise NotImplementedError(f"{type(self).__name__} must implement keys")

    @property
    def mode(self):
        """How an example is given: :class:`tuple`, :class:`dict` or None (one bare value)."""
        raise NotImplementedError(f"{type(self).__name__} must implement mode")

    def get_examples(self, indices, key_indices):
        """Return a block of the table, column by column; subclasses must implement it.

        Args:
            indices (list of ints or slice): The rows, non-negative ints below
                ``len(self)``, or a slice; None means every row.
            key_indices (tuple of ints): The columns, positions in :attr:`keys`;
                None means every column.

        Returns:
            A tuple with one list or array per requested column, each holding
            the requested rows in order.
        """
        raise NotImplementedError(f"{type(self).__name__} must implement get_examples")

    @property
    def slice(self):
        """A view of some rows and columns: ``dataset.slice[rows]`` or ``.slice[rows, keys]``.

        ``rows`` is a slice, a list or 1-d array of ints (negative ones count
        from the end), or a list or array of bools with one per row. ``keys``
        is a tuple of column names or positions, or a single name or position,
        which makes the view's :attr:`mode` None (examples are bare values).
        """
        return _view("_slice", "_SliceHelper")(self)

    def fetch(self):
        """Return the whole dataset, column by column, in this dataset's :attr:`mode`.

        Returns:
            A tuple of columns (``mode`` tuple), a dict of columns keyed by
            :attr:`keys` (``mode`` dict), or the only column (``mode`` None);
            each column is a list or an array, as :meth:`get_examples` gives it.
        """
        return self._as_mode(self.get_examples(None, None), "fetch")

    def convert(self, data):
        """Turn what :meth:`fetch` returned into arrays ready for a model.

        By default each column that is not already an array becomes one, on
        the device of its first element; :meth:`with_converter` replaces this.
        A concatenation or a join converts as its first dataset does.

        Args:
            data (tuple, dict or column): What :meth:`fetch` returned.

        Returns:
            ``data`` with each column an array, in the same structure.
        """
        if isinstance(data, tuple):
            return tuple(_as_array(column) for column in data)
        if isinstance(data, dict):
            return {key: _as_array(column) for key, column in data.items()}
        return _as_array(data)

    def astuple(self):
        """Return a view of this dataset whose :attr:`mode` is :class:`tuple`."""
        return _view("_asmode", "_Astuple")(self)

    def asdict(self):
        """Return a view of this dataset whose :attr:`mode` is :class:`dict`."""
        return _view("_asmode", "_Asdict")(self)

    def concat(self, *datasets):
        """Return a view stacking the rows of this dataset and then of ``datasets``.

        Args:
            *datasets (TabularDataset): Datasets with the same :attr:`keys`, in
                the same order, as this one.

        Returns:
            A TabularDataset with this dataset's keys, mode and converter.
        """
        return _view("_concat", "_Concat")(self, *datasets)

    def join(self, *datasets):
        """Return a view putting the columns of ``datasets`` beside this dataset's.

        Args:
            *datasets (TabularDataset): Datasets of the same length as this one,
                whose keys are not used by this one or each other.

        Returns:
            A TabularDataset whose keys are all the datasets' keys, in order; its
            mode is the first of the datasets' modes that is not None
            (:class:`tuple` if all are None), and it converts as this one does.
        """
        return _view("_join", "_Join")(self, *datasets)

    def transform(self, keys, transform):
        """Return a view whose examples are ``transform`` applied to each example.

        Args:
            keys (tuple of str or str): The names of the columns ``transform`` returns.
            transform (callable): Called with one example, as positional
                arguments (``mode`` tuple or None) or keyword arguments named
                by :attr:`keys` (``mode`` dict); it returns a tuple, a dict with
                the ``keys``, or one value, and the view's mode follows.

        Returns:
            A TabularDataset that calls ``transform`` each time rows are read.
        """
        return _view("_transform", "_Transform")(self, keys, transform)

    def transform_batch(self, keys, transform_batch):
        """Return a view whose columns are ``transform_batch`` applied to blocks of rows.

        Args:
            keys (tuple of str or str): The names of the columns returned.
            transform_batch (callable): Called with the requested rows, column
                by column, as :meth:`transform` calls its function with one
                example; it returns columns of the same length.

        Returns:
            A TabularDataset that calls ``transform_batch`` each time rows are read.
        """
        return _view("_transform", "_TransformBatch")(self, keys, transform_batch)

    def with_converter(self, converter):
        """Return a view whose :meth:`convert` is ``converter``.

        Args:
            converter (callable): Called with the fetched columns, as positional
                arguments (``mode`` tuple or None) or keyword arguments (``mode`` dict).

        Returns:
            A TabularDataset with this dataset's rows and the new converter.
        """
        return _view("_with_converter", "_WithConverter")(self, converter)

    def get_example(self, i):
        """Return the ``i``-th example in this dataset's :attr:`mode`."""
        row = tuple(column[0] for column in self.get_examples([i], None))
        return self._as_mode(row, "get_example")

    def __iter__(self):
        """Iterate over the examples, in order."""
        return (self.get_example(i) for i in range(len(self)))

    def _as_mode(self, values, caller):
        """Give ``values`` (one per column) as a tuple, a dict or a bare value, per mode."""
        mode = self.mode
        if mode is tuple:
            return tuple(values)
        if mode is dict:
            return dict(zip(self.keys, values))
        if mode is None:
            return values[0]
        raise ValueError(
            f"{type(self).__name__}.{caller}: mode must be tuple, dict or None, got {mode!r}"
        )


def _is_array(data):
    """Whether ``data`` is an array of NumPy's or of a registered backend's (CuPy)."""
    return isinstance(data, numpy.ndarray) or backend.get_device_from_array(data) != backend.cpu


def _as_array(column):
    """Return ``column`` as an array on the device of its first element (itself if an array)."""
    if _is_array(column):
        return column
    if len(column) == 0:
        return numpy.asarray(column)
    device = backend.get_device_from_array(column[0])
    with device:
        return device.xp.asarray(column)
