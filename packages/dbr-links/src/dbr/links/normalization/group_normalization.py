"""GroupNormalization: normalization over groups of channels of each sample."""

import numpy

import dbr.functions as F
from dbr.core import get_dtype
from dbr.links._checks import is_int
from dbr.links.normalization._scale_shift import ScaleShift


class GroupNormalization(ScaleShift):
    """Group normalization layer (Wu and He, 2018).

    Computes :func:`dbr.functions.group_normalization`: the channels of each
    sample of ``x`` (shape ``(N, C, ...)``) are split into ``groups``
    consecutive groups, each normalized by its own mean and variance, then
    scaled by ``gamma`` and shifted by ``beta`` per channel. It behaves the
    same in training and test mode.

    Args:
        groups (int): the number of groups; a divisor of the channel count.
            As in Chainer, it is checked when the link is called: a
            non-int is a TypeError, a non-divisor a ValueError.
        size (int or None): the number of channels ``C``; None infers it
            from the first input (``x.shape[1]``).
        eps (float): added to the variances (default 1e-5).
        initial_gamma: initializer of ``gamma``; None fills it with ones.
        initial_beta: initializer of ``beta``; None fills it with zeros.

    Attributes:
        gamma, beta (Parameter): scale and shift, of shape ``(C,)``, of the
            ``config.dtype`` at construction (float32 when it is
            :data:`dbr.core.mixed16`, for float16 inputs).
        groups, eps: as given.

    >>> import numpy
    >>> gn = GroupNormalization(2)
    >>> gn(numpy.random.randn(3, 4, 5).astype(numpy.float32)).shape
    (3, 4, 5)
    >>> gn.gamma.shape
    (4,)
    """

    def __init__(self, groups, size=None, eps=1e-5, initial_gamma=None, initial_beta=None):
        super().__init__()
        self.groups = groups
        self.eps = eps
        self._add_scale_shift(
            size, initial_gamma, initial_beta, dtype=get_dtype(map_mixed16=numpy.float32)
        )

    def forward(self, x):
        """Normalize ``x`` of shape ``(N, C, ...)`` (at least two axes); same shape and dtype."""
        if self.gamma.array is None:
            if x.ndim < 2:
                raise ValueError(
                    "GroupNormalization: the input needs at least 2 axes (batch and "
                    f"channels), got shape {x.shape}"
                )
            self._initialize_params(x.shape[1])
        groups = self.groups
        # Chainer's ValueError (the function reports it as InvalidType); a bad groups
        # itself is the function's TypeError or ValueError.
        if x.ndim >= 2 and is_int(groups) and groups > 0 and x.shape[1] % groups:
            raise ValueError(
                f"GroupNormalization: expected the channels x.shape[1] to be divisible by "
                f"groups={groups}, got x.shape {x.shape}"
            )
        return F.group_normalization(x, self.groups, self.gamma, self.beta, self.eps)
