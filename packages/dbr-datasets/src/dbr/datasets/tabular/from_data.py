"""from_data: a TabularDataset made of lists, arrays and functions of the row number."""

import itertools

from dbr.datasets.tabular._columns import _Column, _Index
from dbr.datasets.tabular.tabular_dataset import _is_array

_unnamed = itertools.count()  # numbers the keys of the columns given without one


def from_data(data, *, size=None):
    """Return a TabularDataset whose columns are the lists, arrays or functions in ``data``.

    A column is a list or an array (its rows), or a function called with a
    row number that returns the row's value, or a tuple or dict of values when
    it makes several columns. A column given without a key gets a new one,
    ``'_<n>'``, unique in the process.

    >>> from dbr.datasets import tabular
    >>> tabular.from_data([0, 1, 2])[1]
    1
    >>> tabular.from_data(([0, 1, 2], [3, 4, 5]))[1]
    (1, 4)
    >>> dataset = tabular.from_data((('a', [0, 1, 2]), (('b', 'c'), lambda i: (i, -i))))
    >>> dataset.keys, dataset[2]
    (('a', 'b', 'c'), (2, 2, -2))
    >>> tabular.from_data({'a': [0, 1, 2], 'b': lambda i: i * i})[2] == {'a': 2, 'b': 4}
    True
    >>> tabular.from_data(('a', lambda i: i * i), size=10)[5]
    25

    Args:
        data: One of

            - a list or an array: one column, examples are bare values;
            - ``(key, list/array/function)`` or ``((key, ...), function)``:
              the same, named;
            - a tuple of the above: a dataset in tuple mode;
            - a dict ``{key: list/array/function, (key, ...): function}``:
              a dataset in dict mode.
        size (int): The number of rows; needed only when no column is a list
            or an array.

    Returns:
        A TabularDataset.
    """
    if isinstance(data, tuple):
        if len(data) == 2 and _is_key(data[0]):
            return _make_column(data[0], data[1], size)
        named = [item if isinstance(item, tuple) else (None, item) for item in data]
        size = _size_of([column for _, column in named], size)
        columns = [_make_column(key, column, size) for key, column in named]
        return columns[0].join(*columns[1:]).astuple()
    if isinstance(data, dict):
        size = _size_of(list(data.values()), size)
        columns = [_make_column(key, column, size) for key, column in data.items()]
        return columns[0].join(*columns[1:]).asdict()
    return _make_column(None, data, size)


def _is_key(key):
    """Whether ``key`` names a column (a str) or the columns of a function (a tuple of str)."""
    return isinstance(key, str) or (
        isinstance(key, tuple) and all(isinstance(k, str) for k in key)
    )


def _size_of(columns, size):
    """Return ``size``, or when None the length of the first column that has one."""
    if size is None:
        for column in columns:
            if _is_array(column) or isinstance(column, list):
                return len(column)
    return size


def _make_column(key, data, size):
    """Return the dataset of one list, array or function ``data``, named ``key``."""
    if _is_array(data) or isinstance(data, list):
        return _Column(f"_{next(_unnamed)}" if key is None else key, data)
    if callable(data):
        if key is None:
            raise ValueError("from_data: a function needs its key(s): give (key, function)")
        if size is None:
            raise ValueError("from_data: size must be given when no column is a list or an array")
        return _Index(size).transform(key, data)
    raise TypeError(
        f"from_data: a column must be a list, an array or a function, got {type(data).__name__}"
    )
