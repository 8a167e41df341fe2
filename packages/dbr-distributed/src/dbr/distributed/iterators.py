"""Iterators that give several processes the same batches (for model parallelism)."""

import numpy

from dbr.datasets import Iterator, ShuffleOrderSampler

__all__ = ["create_multi_node_iterator", "create_synchronized_iterator"]

_POSITION = ("epoch", "current_position", "is_new_epoch")


class _MultiNodeIteratorMaster(Iterator):
    """Draws batches from the actual iterator and broadcasts each to the other ranks."""

    def __init__(self, actual_iterator, communicator, rank_master):
        state = self.__dict__
        state["actual_iterator"] = actual_iterator
        state["communicator"] = communicator
        state["rank_master"] = rank_master
        communicator.bcast_obj(self._position(), root=rank_master)

    def _position(self):
        it = self.actual_iterator
        position = {name: getattr(it, name) for name in _POSITION}
        position["epoch_detail"] = it.epoch_detail
        position["previous_epoch_detail"] = getattr(it, "previous_epoch_detail", None)
        return position

    def __next__(self):
        try:
            batch = next(self.actual_iterator)
        except StopIteration:
            self.communicator.bcast_obj((None, self._position()), root=self.rank_master)
            raise
        self.communicator.bcast_obj((batch, self._position()), root=self.rank_master)
        return batch

    next = __next__

    def serialize(self, serializer):
        """Serialize the actual iterator; the other ranks take its position."""
        self.actual_iterator.serialize(serializer)
        self.communicator.bcast_obj(self._position(), root=self.rank_master)

    def __getattr__(self, name):
        return getattr(self.__dict__["actual_iterator"], name)

    def __setattr__(self, name, value):
        setattr(self.actual_iterator, name, value)


class _MultiNodeIteratorSlave(Iterator):
    """Receives the master's batches and mirrors its position."""

    def __init__(self, communicator, rank_master):
        self.communicator = communicator
        self.rank_master = rank_master
        self._set(communicator.bcast_obj(None, root=rank_master))

    def _set(self, position):
        for name, value in position.items():
            setattr(self, name, value)

    def __next__(self):
        batch, position = self.communicator.bcast_obj(None, root=self.rank_master)
        self._set(position)
        if batch is None:
            raise StopIteration
        return batch

    next = __next__

    def serialize(self, serializer):
        """Write (or, loading, read) the position; then take the master's, which rules."""
        for name in _POSITION:
            setattr(self, name, serializer(name, getattr(self, name)))
        self._set(self.communicator.bcast_obj(None, root=self.rank_master))


def create_multi_node_iterator(actual_iterator, communicator, rank_master=0):
    """An iterator that gives every rank the batches ``actual_iterator`` yields on ``rank_master``.

    The master draws each batch and broadcasts it (pickled) with the
    iterator's position (``epoch``, ``current_position``,
    ``is_new_epoch``, ``epoch_detail``), which the other ranks mirror; the
    other ranks' ``actual_iterator`` is not used. Creating it, every
    ``next`` and ``serialize`` must happen on every rank together.

    Args:
        actual_iterator: a dbr iterator (SerialIterator, ...), used on the master.
        communicator: a communicator.
        rank_master (int): the rank that reads the data.

    Returns:
        Iterator: the master's wraps ``actual_iterator`` (its other
        attributes are the actual iterator's); the others yield the
        broadcast batches.
    """
    if not 0 <= rank_master < communicator.size:
        raise ValueError(
            f"create_multi_node_iterator: rank_master must be in [0, {communicator.size}), "
            f"got {rank_master}"
        )
    if communicator.rank == rank_master:
        return _MultiNodeIteratorMaster(actual_iterator, communicator, rank_master)
    return _MultiNodeIteratorSlave(communicator, rank_master)


class _SynchronizedIterator(Iterator):
    """The actual iterator, shuffling with a generator seeded alike on every rank."""

    def __init__(self, actual_iterator, communicator):
        state = self.__dict__
        state["actual_iterator"] = actual_iterator
        state["communicator"] = communicator
        seed = numpy.random.randint(0, 2**32 - 1) if communicator.rank == 0 else None
        seed = communicator.bcast_obj(seed, root=0)
        actual_iterator.order_sampler = ShuffleOrderSampler(numpy.random.RandomState(seed))
        actual_iterator.reset()

    def __next__(self):
        return next(self.actual_iterator)

    next = __next__

    def serialize(self, serializer):
        """Serialize the actual iterator."""
        self.actual_iterator.serialize(serializer)

    def __getattr__(self, name):
        return getattr(self.__dict__["actual_iterator"], name)

    def __setattr__(self, name, value):
        setattr(self.actual_iterator, name, value)


def create_synchronized_iterator(actual_iterator, communicator):
    """``actual_iterator``, shuffling in the same order on every rank.

    Rank 0 draws a seed and broadcasts it; every rank's iterator gets a
    :class:`~dbr.datasets.ShuffleOrderSampler` on a generator with that seed
    and is reset, so ranks holding the same dataset draw the same batches
    without sending them. Its other attributes are the actual iterator's.

    Args:
        actual_iterator: a dbr iterator with an ``order_sampler`` (SerialIterator, ...).
        communicator: a communicator.

    Returns:
        Iterator: the synchronized iterator.
    """
    if not hasattr(actual_iterator, "order_sampler"):
        raise ValueError(
            f"create_synchronized_iterator: actual_iterator must have an order_sampler, "
            f"got a {type(actual_iterator).__name__}"
        )
    return _SynchronizedIterator(actual_iterator, communicator)
