"""``TabularDataset.join``: the columns of several datasets, side by side."""

from dbr.datasets.tabular.tabular_dataset import TabularDataset


class _Join(TabularDataset):
    """The columns of ``datasets``, in order; they have the same length and distinct keys."""

    def __init__(self, *datasets):
        length = len(datasets[0])
        seen = set(datasets[0].keys)
        for dataset in datasets[1:]:
            if len(dataset) != length:
                raise ValueError(
                    f"TabularDataset.join: every dataset must have {length} rows, "
                    f"got {len(dataset)}"
                )
            shared = seen.intersection(dataset.keys)
            if shared:
                raise ValueError(
                    f"TabularDataset.join: keys must be unique among the datasets, "
                    f"got {sorted(map(str, shared))} more than once"
                )
            seen.update(dataset.keys)
        self._datasets = datasets

    def __len__(self):
        return len(self._datasets[0])

    @property
    def keys(self):
        return tuple(key for dataset in self._datasets for key in dataset.keys)

    @property
    def mode(self):
        for dataset in self._datasets:
            if dataset.mode is not None:
                return dataset.mode
        return tuple

    def get_examples(self, indices, key_indices):
        if key_indices is None:
            return tuple(
                column
                for dataset in self._datasets
                for column in dataset.get_examples(indices, None)
            )
        columns = {}
        offset = 0
        for dataset in self._datasets:
            width = len(dataset.keys)
            local = tuple(
                dict.fromkeys(k - offset for k in key_indices if offset <= k < offset + width)
            )
            if local:
                block = dataset.get_examples(indices, local)
                columns.update((offset + k, column) for k, column in zip(local, block))
            offset += width
        for key_index in key_indices:
            if key_index not in columns:
                raise IndexError(
                    f"TabularDataset.join: key position {key_index} is out of range for "
                    f"{offset} keys"
                )
        return tuple(columns[key_index] for key_index in key_indices)

    def convert(self, data):
        return self._datasets[0].convert(data)
