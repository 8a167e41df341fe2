"""LayerNormalization: normalization of each sample by its own statistics."""

import dbr.functions as F
from dbr.links.normalization._scale_shift import ScaleShift


class LayerNormalization(ScaleShift):
    """Layer normalization layer (Ba et al., 2016).

    Computes :func:`dbr.functions.layer_normalization`: each row of ``x``
    (shape ``(N, size)``) is normalized by its mean and variance, then scaled
    by ``gamma`` and shifted by ``beta`` per unit. It behaves the same in
    training and test mode.

    Args:
        size (int or None): the number of units; None infers it from the
            first input (the size of one sample).
        eps (float): added to the variances (default 1e-6).
        initial_gamma: initializer of ``gamma``; None fills it with ones.
        initial_beta: initializer of ``beta``; None fills it with zeros.

    Attributes:
        gamma, beta (Parameter): scale and shift, of shape ``(size,)``.
        eps: as given.

    >>> import numpy
    >>> ln = LayerNormalization()
    >>> ln(numpy.random.randn(3, 5).astype(numpy.float32)).shape
    (3, 5)
    """

    def __init__(self, size=None, eps=1e-6, initial_gamma=None, initial_beta=None):
        super().__init__()
        self.eps = eps
        self._add_scale_shift(size, initial_gamma, initial_beta)

    def forward(self, x):
        """Normalize ``x`` of shape ``(N, size)``; same shape and dtype."""
        if self.gamma.array is None:
            size = 1
            for d in x.shape[1:]:
                size *= d
            self._initialize_params(size)
        return F.layer_normalization(x, self.gamma, self.beta, self.eps)
