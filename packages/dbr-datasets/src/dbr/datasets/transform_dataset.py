"""TransformDataset: a dataset whose examples pass through a function on access."""

from dbr.datasets.dataset_mixin import DatasetMixin


class TransformDataset(DatasetMixin):
    """Dataset that applies ``transform`` to each example of ``dataset`` when it is read.

    The transform runs lazily, on every access, so random augmentation gives a new
    result each time. ``len(self) == len(dataset)``.

    Args:
        dataset: Underlying dataset; ``dataset[i]`` is passed to ``transform``.
        transform (callable): Function taking one example and returning the
            transformed example.
    """

    def __init__(self, dataset, transform):
        if not callable(transform):
            raise TypeError(
                f"TransformDataset: transform must be callable, got {type(transform).__name__}"
            )
        self._dataset = dataset
        self._transform = transform

    def __len__(self):
        """Return the length of the underlying dataset."""
        return len(self._dataset)

    def get_example(self, i):
        """Return ``transform(dataset[i])``."""
        return self._transform(self._dataset[i])
