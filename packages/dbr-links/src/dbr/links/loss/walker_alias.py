"""WalkerAlias: constant-time sampling from a fixed discrete distribution."""

import numpy

from dbr.core import backend
from dbr.core.device_resident import DeviceResident


class WalkerAlias(DeviceResident):
    """Walker's alias method: draws indices ``i`` with probability ``probs[i] / sum(probs)``.

    Building the tables takes :math:`O(n)` time (Vose's construction); each
    sample then costs one uniform draw and one comparison, whatever ``n``.
    The tables live on a device (the CPU at first) and samples are drawn with
    that device's ``xp.random`` module, so seeding it makes them reproducible.

    Args:
        probs (sequence or array of floats): the non-negative weights of the
            entries, shape ``(n,)`` with ``n >= 1``; they are normalised by
            their sum, which must be positive.

    Attributes:
        threshold (array): ``(n,)`` float64, the probability that a draw
            landing in column ``i`` keeps ``i`` rather than its alias.
        values (array): ``(n,)`` int32, the alias of each column.

    >>> import numpy as np
    >>> sampler = WalkerAlias([0.0, 3.0, 1.0])
    >>> s = sampler.sample((2, 3))
    >>> s.shape, s.dtype, bool((s != 0).all())
    ((2, 3), dtype('int32'), True)
    """

    def __init__(self, probs):
        p = numpy.asarray(probs, dtype=numpy.float64)
        if p.ndim != 1 or p.size == 0:
            raise ValueError(
                f"WalkerAlias: expected probs to be a non-empty 1-d sequence, got shape {p.shape}"
            )
        if not numpy.isfinite(p).all() or (p < 0).any():
            raise ValueError("WalkerAlias: expected probs to be finite and non-negative")
        total = p.sum()
        if total <= 0:
            raise ValueError(f"WalkerAlias: expected probs to have a positive sum, got {total}")
        n = p.size
        scaled = p * (n / total)
        threshold = numpy.ones(n, numpy.float64)
        values = numpy.arange(n, dtype=numpy.int32)
        small = [i for i in range(n) if scaled[i] < 1.0]
        large = [i for i in range(n) if scaled[i] >= 1.0]
        while small and large:
            s = small.pop()
            g = large[-1]
            threshold[s] = scaled[s]
            values[s] = g
            scaled[g] -= 1.0 - scaled[s]
            if scaled[g] < 1.0:
                small.append(large.pop())
        # What is left holds (up to rounding) exactly one column's worth: keep itself.
        self.threshold = threshold
        self.values = values
        self._device = backend.cpu

    @property
    def use_gpu(self):
        """True when the tables are on a GPU (Chainer's flag)."""
        return self._device.xp is not numpy

    def device_resident_accept(self, visitor):
        """Show ``visitor`` this sampler and its two tables (``to_device`` moves them)."""
        super().device_resident_accept(visitor)
        self.threshold = visitor.visit_array(self.threshold)
        self.values = visitor.visit_array(self.values)

    def sample(self, shape):
        """Draw indices from the distribution.

        Args:
            shape (int or tuple of ints): the shape of the result.

        Returns:
            array: int32 indices in ``[0, n)`` of that shape, on :attr:`device`.
        """
        xp = self._device.xp
        threshold = self.threshold
        n = threshold.shape[0]
        u = xp.asarray(xp.random.random_sample(shape)) * n
        # random_sample is in [0, 1), but u can round up to n.
        column = xp.minimum(u.astype(numpy.int32), numpy.int32(n - 1))
        return xp.where(u - column < threshold[column], column, self.values[column])
