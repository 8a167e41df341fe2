"""The batch-order state machine that every dbr iterator shares.

An iterator's position is an :class:`IteratorState`; :func:`iterate` maps a
state to the next state and the dataset indices of the next batch. Keeping
this free of dataset access (only the order sampler is called) lets SerialIterator,
MultithreadIterator and MultiprocessIterator yield the same batches for the
same order, prefetch a batch before committing to it, and resume from a
serialized state exactly. :class:`SweepIterator` is the shell around it that
those iterators share: arguments, position properties, reset and serialize.
"""

import numbers
from collections import namedtuple

import numpy

from dbr.core.serializers import Deserializer, Serializer, stored_keys
from dbr.datasets.iterator import Iterator
from dbr.datasets.order_samplers import ShuffleOrderSampler

IteratorState = namedtuple("IteratorState", ["current_position", "epoch", "is_new_epoch", "order"])
IteratorState.__doc__ = """Where an iterator stands.

Attributes:
    current_position: index (into ``order``, or into the dataset when
        ``order`` is None) of the next example of the current epoch.
    epoch: number of completed sweeps over the dataset.
    is_new_epoch: whether the last batch completed a sweep.
    order: 1-D integer array giving the visiting order of this epoch, or
        None to visit the dataset in index order.
"""


def epoch_size(state, dataset_len):
    """The number of examples in one sweep: ``len(order)``, else ``dataset_len``."""
    return dataset_len if state.order is None else len(state.order)


def initial_state(order_sampler, dataset_len):
    """The state of a fresh iterator: position 0, epoch 0, first order from the sampler."""
    order = None
    if order_sampler is not None:
        order = _checked_order(order_sampler(numpy.arange(dataset_len), 0))
    return IteratorState(0, 0, False, order)


def iterate(state, batch_size, repeat, order_sampler, dataset_len):
    """Advance ``state`` by one batch.

    A batch that reaches the end of an epoch wraps into the next one when
    ``repeat`` is True (drawing a new order from ``order_sampler``), so every
    batch of a repeating iterator has exactly ``batch_size`` examples, even
    when ``batch_size`` exceeds the epoch. Without ``repeat`` the epoch's last
    batch is short and the iterator is then exhausted.

    Returns:
        ``(next_state, indices)``: ``indices`` is a new 1-D ``intp`` array of
        dataset indices, or None when a non-repeating iterator is exhausted
        (an empty epoch exhausts it at once).

    Raises:
        ValueError: ``repeat`` is True and the epoch is empty, or the sampler
            returned an order of another length.
    """
    position, epoch, _, order = state
    if not repeat and epoch > 0:
        return state, None
    n = epoch_size(state, dataset_len)
    if n == 0:
        if repeat:
            raise ValueError(
                "iterator: the dataset is empty; an iterator with repeat=True needs "
                "at least one example"
            )
        return IteratorState(0, epoch + 1, True, order), None

    end = position + batch_size if repeat else min(position + batch_size, n)
    parts = []
    is_new_epoch = False
    while end >= n:
        parts.append(_take(order, position, n))
        epoch += 1
        is_new_epoch = True
        end -= n
        if not repeat:
            break
        if order is not None:
            order = _checked_order(order_sampler(order, position), n)
        position = 0
    else:
        parts.append(_take(order, position, end))
    indices = numpy.concatenate(parts) if len(parts) > 1 else parts[0].copy()
    return IteratorState(end, epoch, is_new_epoch, order), indices


def _take(order, start, stop):
    if order is None:
        return numpy.arange(start, stop, dtype=numpy.intp)
    return numpy.asarray(order[start:stop], dtype=numpy.intp)


def _checked_order(order, n=None):
    order = numpy.asarray(order)
    if order.ndim != 1 or order.dtype.kind not in "iu":
        raise ValueError(
            f"order_sampler: expected a 1-D integer array as the new order, got "
            f"{order.dtype} array of shape {order.shape}"
        )
    if n is not None and len(order) != n:
        raise ValueError(
            f"order_sampler: the new order has {len(order)} indices, but the previous "
            f"order had {n}; an order sampler must keep the epoch size"
        )
    return order


class SweepIterator(Iterator):
    """Base of the iterators that sweep a dataset in epochs along an order.

    It checks the arguments, resolves ``shuffle``/``order_sampler`` as
    Chainer does, holds the :class:`IteratorState`, and provides the position
    properties, :meth:`reset` and the state part of ``serialize``. Subclasses
    implement ``__next__`` with :func:`iterate`.
    """

    def __init__(self, dataset, batch_size, repeat=True, shuffle=None, order_sampler=None):
        who = type(self).__name__
        if not (hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")):
            raise TypeError(
                f"{who}: dataset must support len() and indexing, got {type(dataset).__name__}"
            )
        if (
            not isinstance(batch_size, numbers.Integral)
            or isinstance(batch_size, bool)
            or batch_size <= 0
        ):
            raise ValueError(f"{who}: batch_size must be a positive integer, got {batch_size!r}")
        if shuffle is not None and order_sampler is not None:
            raise ValueError(
                f"{who}: shuffle={shuffle!r} and an order_sampler were both given; "
                f"pass shuffle=None to use the order sampler"
            )
        if order_sampler is None and shuffle is not False:
            order_sampler = ShuffleOrderSampler()
        if order_sampler is not None and not callable(order_sampler):
            raise TypeError(
                f"{who}: order_sampler must be callable as order_sampler(order, position), "
                f"got {type(order_sampler).__name__}"
            )
        if repeat and len(dataset) == 0:
            raise ValueError(
                f"{who}: the dataset is empty; an iterator with repeat=True needs at least "
                f"one example"
            )
        self.dataset = dataset
        self.batch_size = int(batch_size)
        self._repeat = bool(repeat)
        self._shuffle = shuffle
        self.order_sampler = order_sampler
        self.reset()

    def reset(self):
        """Rewind to the start of epoch 0, drawing a new first order from the sampler."""
        self._state = initial_state(self.order_sampler, len(self.dataset))
        self._previous_epoch_detail = -1.0

    @property
    def current_position(self):
        """Position in the current epoch's order of the next example to be read."""
        return self._state.current_position

    @property
    def epoch(self):
        """Number of completed sweeps over the dataset."""
        return self._state.epoch

    @property
    def is_new_epoch(self):
        """Whether the last batch completed a sweep."""
        return self._state.is_new_epoch

    @property
    def repeat(self):
        """Whether the iterator sweeps the dataset endlessly (else it stops after one epoch)."""
        return self._repeat

    @property
    def epoch_detail(self):
        """Epochs completed, as a float: ``epoch + current_position / epoch size``."""
        size = epoch_size(self._state, len(self.dataset))
        if size == 0:
            return float(self.epoch)
        return self.epoch + self.current_position / size

    @property
    def previous_epoch_detail(self):
        """``epoch_detail`` before the last batch was drawn; None before the first batch."""
        if self._previous_epoch_detail < 0:
            return None
        return self._previous_epoch_detail

    def _serialize_sampler(self, serializer):
        serialize = getattr(self.order_sampler, "serialize", None)
        if serialize is None:
            return
        try:
            child = serializer["order_sampler"]
        except NotImplementedError:
            # A flat serializer (AbstractSerializer's own __getitem__, as in
            # Chainer) has no place for the sampler's state; Chainer keeps none.
            return
        if isinstance(serializer, Deserializer) and stored_keys(child) == frozenset():
            return
        serialize(child)

    def _serialize_state(
        self,
        serializer,
        order_key,
        store_none_order=False,
        with_sampler_state=False,
        legacy_order_key=None,
    ):
        """Save or load the position under Chainer's keys; return whether it changed.

        The order travels under ``order_key``; an iterator without an order
        writes nothing for it unless ``store_none_order`` is set. With
        ``with_sampler_state``, an order sampler that has ``serialize`` saves
        its state under ``order_sampler/``; a file without that key (Chainer's)
        leaves the sampler as it is. Loaded values are checked before the
        iterator is changed; saving, and the checking pass of a load,
        change nothing.

        Files of Chainer's older layouts load too: the order is read from
        ``legacy_order_key`` when the file has it instead of ``order_key``,
        and a file without ``previous_epoch_detail`` gets it guessed from the
        position as Chainer does (one batch back, clipped at the start of
        training; unknown at the very start).
        """
        who = type(self).__name__
        state = self._state
        # Saving, and the checking pass of a load (dry_run), change nothing.
        loading = not isinstance(serializer, Serializer) and not getattr(
            serializer, "dry_run", False
        )
        stored = stored_keys(serializer) if isinstance(serializer, Deserializer) else None
        position = serializer("current_position", state.current_position)
        epoch = serializer("epoch", state.epoch)
        is_new_epoch = serializer("is_new_epoch", state.is_new_epoch)
        order = state.order
        if order is not None or store_none_order:
            key = order_key
            if (
                stored is not None
                and legacy_order_key is not None
                and order_key not in stored
                and legacy_order_key in stored
            ):
                key = legacy_order_key
            # A copy, so that a deserializer filling it in place cannot touch an
            # array that the sampler or a prefetched batch still holds.
            order = serializer(key, None if order is None else order.copy())
        if stored is not None and "previous_epoch_detail" not in stored:
            previous = _GUESS_PREVIOUS
        else:
            previous = serializer("previous_epoch_detail", self._previous_epoch_detail)
        if not loading:
            if with_sampler_state:
                self._serialize_sampler(serializer)
            return False
        if order is not None:
            order = numpy.asarray(order)
            if order.ndim != 1 or order.dtype.kind not in "iu":
                raise ValueError(
                    f"{who}.serialize: {order_key!r} must be a 1-D integer array, got "
                    f"{order.dtype} array of shape {order.shape}"
                )
        size = len(self.dataset) if order is None else len(order)
        if not 0 <= position <= size or epoch < 0:
            raise ValueError(
                f"{who}.serialize: loaded current_position={position!r}, epoch={epoch!r} do "
                f"not fit an epoch of {size} examples"
            )
        if with_sampler_state:
            self._serialize_sampler(serializer)
        new_state = IteratorState(int(position), int(epoch), bool(is_new_epoch), order)
        changed = (
            new_state[:3] != state[:3]
            or (order is None) != (state.order is None)
            or (order is not None and not numpy.array_equal(order, state.order))
        )
        self._state = new_state
        if previous is _GUESS_PREVIOUS:
            previous = self._guess_previous_epoch_detail()
        self._previous_epoch_detail = -1.0 if previous is None else float(previous)
        return changed

    def _guess_previous_epoch_detail(self):
        """``epoch_detail`` one batch back (Chainer's guess for files without it); -1: unknown."""
        size = epoch_size(self._state, len(self.dataset))
        if size == 0:
            return -1.0
        guess = self.epoch + (self.current_position - self.batch_size) / size
        return max(guess, 0.0) if self.epoch_detail > 0 else -1.0


# Marks a previous_epoch_detail to guess from the loaded position.
_GUESS_PREVIOUS = object()
