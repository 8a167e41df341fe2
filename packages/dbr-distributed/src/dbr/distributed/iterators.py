"""Iterators that give several processes the same batches (for model parallelism)."""

import numpy

from dbr.core.serializers import Deserializer, DictionarySerializer
from dbr.datasets import Iterator, ShuffleOrderSampler

__all__ = ["create_multi_node_iterator", "create_synchronized_iterator"]

_POSITION = ("epoch", "current_position", "is_new_epoch")


def _build_ctrl_msg(stop, is_valid_data_type, is_paired_dataset, is_new_epoch, current_position):
    """The control header the master sends ahead of each batch, as ChainerMN lays it out.

    Five numbers in a float32 array: whether the iteration stopped, whether a
    batch follows, whether its examples are ``(x, y)`` pairs, whether the
    batch started a new epoch, and the position in the epoch after it.
    """
    return numpy.array(
        [int(stop), int(is_valid_data_type), int(is_paired_dataset), int(is_new_epoch),
         int(current_position)],
        dtype=numpy.float32,
    )  # fmt: skip


def _parse_ctrl_msg(msg):
    """The fields of :func:`_build_ctrl_msg`'s header, in its argument order."""
    stop, valid, paired, new_epoch, position = (msg[i] for i in range(5))
    return bool(stop), bool(valid), bool(paired), bool(new_epoch), int(position)


def _is_paired(batch):
    return (
        isinstance(batch, list)
        and bool(batch)
        and all(isinstance(example, tuple) and len(example) == 2 for example in batch)
    )


class _MultiNodeIteratorMaster(Iterator):
    """Draws batches from the actual iterator and broadcasts each to the other ranks."""

    def __init__(self, actual_iterator, communicator, rank_master):
        state = self.__dict__
        state["actual_iterator"] = actual_iterator
        state["communicator"] = communicator
        state["rank_master"] = rank_master
        self._share_state()

    def _share_state(self):
        """Broadcast the actual iterator's serialized state and its position to the other ranks."""
        it = self.actual_iterator
        state = {}
        it.serialize(DictionarySerializer(state))
        position = {name: getattr(it, name) for name in _POSITION}
        position["epoch_detail"] = it.epoch_detail
        position["previous_epoch_detail"] = getattr(it, "previous_epoch_detail", None)
        self.communicator.bcast_obj((state, position), root=self.rank_master)

    def _send(self, batch):
        """Broadcast the control header, the batch (None at the stop) and the epoch counters."""
        it = self.actual_iterator
        stop = batch is None
        ctrl = _build_ctrl_msg(
            stop, not stop, _is_paired(batch), it.is_new_epoch, it.current_position
        )
        counters = (it.epoch, it.epoch_detail, getattr(it, "previous_epoch_detail", None))
        self.communicator.bcast_obj((ctrl, batch, counters), root=self.rank_master)

    def __next__(self):
        try:
            batch = next(self.actual_iterator)
        except StopIteration:
            self._send(None)
            raise
        self._send(batch)
        return batch

    next = __next__

    def serialize(self, serializer):
        """Serialize the actual iterator; the other ranks take its state and position."""
        self.actual_iterator.serialize(serializer)
        self._share_state()

    def __getattr__(self, name):
        return getattr(self.__dict__["actual_iterator"], name)

    def __setattr__(self, name, value):
        setattr(self.actual_iterator, name, value)


class _MultiNodeIteratorSlave(Iterator):
    """Receives the master's batches and mirrors its position."""

    def __init__(self, communicator, rank_master):
        self.communicator = communicator
        self.rank_master = rank_master
        self._order = None
        self._take_state()

    def _take_state(self):
        """Receive the master's serialized state and position; mirror them. Return the state."""
        state, position = self.communicator.bcast_obj(None, root=self.rank_master)
        for name, value in position.items():
            setattr(self, name, value)
        order = state.get("order")
        if order is None or self._order is None or self._order.shape != order.shape:
            self._order = None if order is None else numpy.array(order)
        else:
            # In place: the order array handed out before stays this iterator's.
            self._order[...] = order
        return state

    def __next__(self):
        ctrl, batch, counters = self.communicator.bcast_obj(None, root=self.rank_master)
        stop, _, _, self.is_new_epoch, self.current_position = _parse_ctrl_msg(ctrl)
        self.epoch, self.epoch_detail, self.previous_epoch_detail = counters
        if stop:
            raise StopIteration
        return batch

    next = __next__

    def serialize(self, serializer):
        """Write the master's iterator state, so that any iterator can resume from this file.

        Loading, the file is read but the master's state rules: this rank
        takes the position (and order) that the master has after its load.
        """
        state = self._take_state()
        if self._order is not None and not isinstance(serializer, Deserializer):
            state["order"] = self._order
        for key, value in sorted(state.items()):
            *path, leaf = key.split("/")
            target = serializer
            try:
                for name in path:
                    target = target[name]
            except NotImplementedError:
                # A flat serializer has no place for nested state (a sampler's).
                continue
            target(leaf, value)


def create_multi_node_iterator(actual_iterator, communicator, rank_master=0):
    """An iterator that gives every rank the batches ``actual_iterator`` yields on ``rank_master``.

    The master draws each batch and broadcasts it (pickled: any picklable
    batch goes) after a control header (stop, ``is_new_epoch``,
    ``current_position``) and with the epoch counters (``epoch``,
    ``epoch_detail``, ``previous_epoch_detail``), which the other ranks mirror; the
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
