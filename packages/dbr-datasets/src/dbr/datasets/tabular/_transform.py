"""``TabularDataset.transform`` and ``transform_batch``: columns computed from a dataset's."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset

_UNKNOWN = object()  # the mode of a transform not called yet


class _TransformBase(TabularDataset):
    """Columns named ``keys`` computed by ``function`` from the examples of ``dataset``.

    The mode is that of what ``function`` returns (a tuple, a dict or one
    value), learnt at its first call; a later call returning another kind is
    an error.
    """

    _method = None  # the TabularDataset method building this view, for messages

    def __init__(self, dataset, keys, function):
        if not callable(function):
            raise TypeError(
                f"TabularDataset.{self._method}: the function must be callable, "
                f"got {type(function).__name__}"
            )
        self._dataset = dataset
        self._keys = keys if isinstance(keys, tuple) else (keys,)
        self._function = function
        self._mode = _UNKNOWN

    def __len__(self):
        return len(self._dataset)

    @property
    def keys(self):
        return self._keys

    @property
    def mode(self):
        if self._mode is _UNKNOWN:
            self.get_examples([0], None)
        return self._mode

    def convert(self, data):
        return self._dataset.convert(data)

    def _call(self, values):
        """Call the function on ``values`` (one per column of the dataset), as its mode says."""
        if self._dataset.mode is dict:
            return self._function(**dict(zip(self._dataset.keys, values)))
        return self._function(*values)

    def _as_row(self, result):
        """Return ``result`` as a tuple of one value per key, and learn or check the mode."""
        if isinstance(result, tuple):
            mode, row = tuple, result
        elif isinstance(result, dict):
            missing = [key for key in self._keys if key not in result]
            if missing:
                raise KeyError(
                    f"TabularDataset.{self._method}: the function returned a dict without "
                    f"the keys {missing}"
                )
            mode, row = dict, tuple(result[key] for key in self._keys)
        else:
            mode, row = None, (result,)
        if self._mode is not _UNKNOWN and mode is not self._mode:
            raise ValueError(
                f"TabularDataset.{self._method}: the function must not change its return "
                f"type; it gave {_mode_name(self._mode)} before, now {_mode_name(mode)}"
            )
        if len(row) != len(self._keys):
            raise ValueError(
                f"TabularDataset.{self._method}: the function must return "
                f"{len(self._keys)} columns, one per key of {self._keys}, got {len(row)}"
            )
        self._mode = mode
        return row


class _Transform(_TransformBase):
    """Columns computed by ``transform`` from each example of ``dataset``."""

    _method = "transform"

    def get_examples(self, indices, key_indices):
        if key_indices is None:
            key_indices = range(len(self._keys))
        columns = tuple([] for _ in key_indices)
        for values in zip(*self._dataset.get_examples(indices, None)):
            row = self._as_row(self._call(values))
            for column, key_index in zip(columns, key_indices):
                column.append(row[key_index])
        return columns


class _TransformBatch(_TransformBase):
    """Columns computed by ``transform_batch`` from blocks of rows of ``dataset``."""

    _method = "transform_batch"

    def get_examples(self, indices, key_indices):
        if indices is None:
            n_rows = len(self)
        elif isinstance(indices, slice):
            n_rows = len(range(len(self))[indices])
        else:
            n_rows = len(indices)
        row = self._as_row(self._call(self._dataset.get_examples(indices, None)))
        lengths = [len(column) for column in row]
        if any(length != n_rows for length in lengths):
            raise ValueError(
                f"TabularDataset.transform_batch: the function must not change the number "
                f"of rows, {n_rows}; it returned columns of lengths {lengths}"
            )
        if key_indices is None:
            return row
        return tuple(row[key_index] for key_index in key_indices)


def _mode_name(mode):
    """Name a mode for messages: ``'tuple'``, ``'dict'`` or ``'one value'``."""
    return "one value" if mode is None else mode.__name__
