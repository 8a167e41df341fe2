"""The per-feature scale ``gamma`` and shift ``beta`` of the group and layer normalizations."""

from dbr.core import Link, Parameter, initializers
from dbr.links.normalization.batch_normalization import _typed_initializer


class ScaleShift(Link):
    """Base of the normalization links whose only parameters are ``gamma`` and ``beta``.

    Both are 1-D, of the feature size, which is given or inferred from the
    first input (the subclass's ``forward`` calls ``_initialize_params``).
    """

    def _add_scale_shift(self, size, initial_gamma, initial_beta, dtype=None):
        """Register ``gamma`` (1 when ``initial_gamma`` is None) and ``beta`` (0 when None).

        ``dtype`` fixes their dtype now; None leaves it to the initializers
        (``config.dtype`` when the arrays are created).
        """
        with self.init_scope():
            if dtype is None:
                gamma = initializers.get_initializer(1 if initial_gamma is None else initial_gamma)
                beta = initializers.get_initializer(0 if initial_beta is None else initial_beta)
            else:
                gamma = _typed_initializer(initial_gamma, 1, dtype)
                beta = _typed_initializer(initial_beta, 0, dtype)
            self.gamma = Parameter(gamma)
            self.beta = Parameter(beta)
        if size is not None:
            self._initialize_params(size)

    def _initialize_params(self, size):
        self.gamma.initialize(size)
        self.beta.initialize(size)
