"""Order samplers: the rule by which an iterator chooses each epoch's visiting order."""

import numpy

from dbr.core.serializers import Deserializer


class OrderSampler:
    """Base class of order samplers.

    An iterator calls its sampler once when it is created or reset, with
    ``numpy.arange(len(dataset))`` and position 0, and again at each epoch
    boundary, with the finished epoch's order and the position at which the
    last batch started. The sampler returns the order of the next epoch: a 1-D
    integer array of the same length, whose entries index the dataset.
    """

    def __call__(self, current_order, current_position):
        """Return the order of the next epoch.

        Args:
            current_order (numpy.ndarray): the order of the epoch just ended.
            current_position (int): the position in ``current_order`` at which
                the batch that ended the epoch started.

        Returns:
            numpy.ndarray: the new order, of length ``len(current_order)``.
        """
        raise NotImplementedError


class ShuffleOrderSampler(OrderSampler):
    """Order sampler that draws a fresh random permutation for every epoch.

    Args:
        random_state (numpy.random.RandomState): the generator to draw from.
            If None, NumPy's global generator is used, so ``numpy.random.seed``
            makes the orders reproducible.
    """

    def __init__(self, random_state=None):
        if random_state is None:
            random_state = numpy.random.random.__self__
        self._random = random_state

    def __call__(self, current_order, current_position):
        """Return a random permutation of ``range(len(current_order))``."""
        return self._random.permutation(len(current_order))

    def serialize(self, serializer):
        """Save or load the generator's state, so that a resumed run draws the same orders.

        Keys (of ``RandomState.get_state()``): ``random_state/key`` (uint32,
        shape (624,)), ``random_state/pos``, ``random_state/has_gauss`` and
        ``random_state/cached_gaussian``. Loading sets the generator this
        sampler draws from: NumPy's global one for a sampler made without
        ``random_state``. Chainer saves no sampler state; its iterators
        ignore these keys.

        Raises:
            ValueError: a loaded ``pos`` is outside [0, 624] (before anything is set).
        """
        algorithm, key, pos, has_gauss, cached_gaussian = self._random.get_state()
        key = serializer("random_state/key", key)
        pos = serializer("random_state/pos", int(pos))
        has_gauss = serializer("random_state/has_gauss", int(has_gauss))
        cached_gaussian = serializer("random_state/cached_gaussian", float(cached_gaussian))
        if not isinstance(serializer, Deserializer) or serializer.dry_run:
            return
        if not 0 <= pos <= len(key):
            raise ValueError(
                f"ShuffleOrderSampler.serialize: loaded random_state/pos={pos}, expected "
                f"0 <= pos <= {len(key)}"
            )
        self._random.set_state((algorithm, key, pos, has_gauss, cached_gaussian))
