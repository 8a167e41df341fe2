"""The orthogonal initializer."""

import math

from dbr.core import backend
from dbr.core.initializers._sampling import standard_normal
from dbr.core.initializers.initializer import Initializer

_MODES = ("auto", "projection", "basis", "embedding")


class Orthogonal(Initializer):
    """Fills an array with a scaled random (semi-)orthogonal matrix.

    The array is seen as a matrix ``W`` of ``out_dim = shape[0]`` rows and
    ``in_dim = prod(shape[1:])`` columns (a convolution kernel's trailing axes
    are flattened; a 0-dimensional array is a 1 x 1 matrix, set to
    ``scale`` or ``-scale`` with equal probability). A Gaussian matrix is
    QR-decomposed, with the signs of ``R``'s diagonal folded into ``Q`` so
    that ``Q`` is uniformly (Haar) distributed, and ``W`` is ``scale`` times
    ``Q`` or its transpose:

    - ``'projection'`` (``out_dim <= in_dim``): orthonormal rows scaled,
      ``W @ W.T == scale**2 * I``;
    - ``'embedding'`` (``out_dim >= in_dim``): orthonormal columns scaled,
      ``W.T @ W == scale**2 * I``;
    - ``'basis'`` (``out_dim == in_dim``): both hold;
    - ``'auto'``: whichever of the three the shape allows.

    Reference: Saxe et al., https://arxiv.org/abs/1312.6120.

    Args:
        scale (float): A factor on the matrix.
        dtype: The dtype the initializer is meant for, or None for any.
        mode (str): ``'auto'``, ``'projection'``, ``'basis'`` or
            ``'embedding'``; a mode other than ``'auto'`` asserts the shape.
        rng: A random number generator with NumPy's ``normal(loc, scale,
            size)`` method, or None to use the array's module.

    Raises:
        ValueError: an unknown ``mode``; or, when called, an empty array or
            a shape that ``mode`` does not allow.
    """

    def __init__(self, scale=1.1, dtype=None, mode="auto", *, rng=None):
        super().__init__(dtype)
        if mode not in _MODES:
            raise ValueError(f"Orthogonal: mode must be one of {_MODES}, got {mode!r}")
        self.scale = scale
        self.mode = mode
        self.rng = rng

    def _fill(self, array):
        if array.size == 0:
            raise ValueError(f"Orthogonal cannot initialize an empty array (shape {array.shape})")
        # A 0-dimensional array is a 1 x 1 matrix: it gets +scale or -scale.
        out_dim = array.shape[0] if array.ndim else 1
        in_dim = math.prod(array.shape[1:])
        self._check_mode(out_dim, in_dim, array.shape)
        xp = backend.get_array_module(array)
        gaussian = standard_normal(
            xp, (max(out_dim, in_dim), min(out_dim, in_dim)), array.dtype, self.rng
        )
        gxp = backend.get_array_module(gaussian)
        q, r = gxp.linalg.qr(gaussian)
        signs = gxp.sign(gxp.diagonal(r))
        signs[signs == 0] = 1
        q *= signs
        matrix = q.T if out_dim < in_dim else q
        backend.copyto(array, (self.scale * matrix).reshape(array.shape))

    def _check_mode(self, out_dim, in_dim, shape):
        allowed = {
            "auto": True,
            "projection": out_dim <= in_dim,
            "basis": out_dim == in_dim,
            "embedding": out_dim >= in_dim,
        }[self.mode]
        if not allowed:
            raise ValueError(
                f"Orthogonal(mode={self.mode!r}) cannot initialize shape {shape}: "
                f"it has {out_dim} rows and {in_dim} columns"
            )
