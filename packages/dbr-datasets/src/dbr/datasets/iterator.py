"""The Iterator interface: how a training loop draws mini-batches from a dataset."""


class Iterator:
    """Base class of dataset iterators (Chainer's ``chainer.dataset.Iterator``).

    An iterator yields mini-batches (lists of examples) from a dataset. Those
    that sweep a dataset also expose ``epoch``, ``epoch_detail``,
    ``previous_epoch_detail``, ``is_new_epoch`` and ``repeat``. An iterator
    that holds resources (threads, processes, shared memory) releases them in
    :meth:`finalize`; using it as a context manager calls :meth:`finalize` on
    exit. Its position is saved and restored through :meth:`serialize`.
    """

    def __iter__(self):
        """Return the iterator itself."""
        return self

    def __next__(self):
        """Return the next mini-batch; raise StopIteration at the end."""
        raise NotImplementedError

    def next(self):
        """Return the next mini-batch (same as ``next(iterator)``)."""
        return self.__next__()

    def finalize(self):
        """Release the resources the iterator holds; it must not be used afterwards."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.finalize()

    def serialize(self, serializer):
        """Save or load the iterator's position with ``serializer``."""
