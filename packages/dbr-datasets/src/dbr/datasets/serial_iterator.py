"""SerialIterator: mini-batches read in the calling thread."""

from dbr.datasets._statemachine import SweepIterator, iterate


class SerialIterator(SweepIterator):
    """Dataset iterator that reads the examples of each batch in the calling thread.

    Each batch is a list of ``batch_size`` examples, visited in the order
    given by the order sampler (a fresh random permutation per epoch by
    default). With ``repeat=True`` the iterator is endless and a batch that
    reaches the end of an epoch is filled up from the start of the next one,
    so every batch is full; with ``repeat=False`` it stops after one sweep,
    whose last batch may be short, by raising StopIteration.

    Args:
        dataset: the dataset to iterate (``len()`` and integer indexing).
        batch_size (int): number of examples per batch.
        repeat (bool): sweep endlessly (True) or once (False).
        shuffle (bool): True to visit the examples in a new random order each
            epoch, False to visit them in index order. None (the default)
            leaves the choice to ``order_sampler``, and shuffles if that is
            None as well.
        order_sampler (callable): ``order_sampler(current_order,
            current_position)`` returning the next epoch's order, such as
            :class:`~dbr.datasets.ShuffleOrderSampler`; only with
            ``shuffle=None``.

    Attributes:
        dataset: the dataset.
        batch_size (int): the batch size.
        order_sampler: the order sampler, or None for index order.
    """

    def __next__(self):
        """Return the next batch as a list of examples."""
        self._previous_epoch_detail = self.epoch_detail
        self._state, indices = iterate(
            self._state, self.batch_size, self._repeat, self.order_sampler, len(self.dataset)
        )
        if indices is None:
            raise StopIteration
        dataset = self.dataset
        return [dataset[index] for index in indices.tolist()]

    next = __next__

    def serialize(self, serializer):
        """Save or load the position (keys ``current_position``, ``epoch``,
        ``is_new_epoch``, ``order`` when shuffling, ``previous_epoch_detail``)
        and the order sampler's state under ``order_sampler/`` (a
        :class:`~dbr.datasets.ShuffleOrderSampler`'s generator).

        A run restored from these values yields exactly the batches the
        original run would have yielded next, also after the next epoch
        boundary. A Chainer snapshot, which holds no sampler state, loads too
        and leaves the sampler's generator as it is.
        """
        self._serialize_state(
            serializer, "order", with_sampler_state=True, legacy_order_key="_order"
        )
